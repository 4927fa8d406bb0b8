// Port discovery: listeners from /proc/net, their holders from an fd scan,
// each holder's unit, socket activation; offline, the image's unit files.
import type { Host } from '../host.js';
import type { PortFreeSpec } from '../desired-state.js';
import { readListeners } from '../observe/listeners.js';
import { findSocketHolders } from './proc-fd.js';
import { parseCgroup, type CgroupPlacement } from './cgroup.js';
import { holdsSocket, readAncestry } from './proc.js';
import { loadCrontabs, parsePasswd, type Crontabs } from './crontab.js';
import { loadSupervisorPrograms } from './supervisor.js';
import type { UnitFacts } from './identity.js';
import { loadUnits, serviceCandidates, socketUnitsForPorts } from './socket-units.js';
import { enablementOf } from '../systemd/unit-links.js';
import { findActivation } from './activation.js';
import { mainPidOf, unitFacts } from './unit-facts.js';
import type { BusyPort, LivePortsObserved, OfflinePortsObserved, PortHolder } from './observed.js';

async function readComm(host: Host, pid: number): Promise<string | null> {
  try {
    return (await host.readKernel(`/proc/${pid}/comm`))?.trim() || null;
  } catch {
    return null;
  }
}

async function readPlacement(host: Host, pid: number | 'self'): Promise<CgroupPlacement | null> {
  try {
    const text = await host.readKernel(`/proc/${pid}/cgroup`);
    return text === null ? null : parseCgroup(text);
  } catch {
    return null;
  }
}

const CRON_UNIT_STEMS = new Set(['cron', 'crond', 'cronie', 'fcron', 'anacron']);
export const SUPERVISOR_UNIT_STEMS = new Set(['supervisor', 'supervisord']);

export function stemOf(unit: string): string {
  return unit.replace(/\.[a-z]+$/, '');
}

export async function observeLive(host: Host, spec: PortFreeSpec): Promise<LivePortsObserved> {
  const want = new Set(spec.ports);
  const listeners = (await readListeners(host)).filter((l) => want.has(l.port));
  const scan = await findSocketHolders(host, new Set(listeners.map((l) => l.inode)));
  const self = await readPlacement(host, 'self');
  const busy: BusyPort[] = [];
  const units: Record<string, UnitFacts> = {};
  for (const port of [...new Set(listeners.map((l) => l.port))].sort((a, b) => a - b)) {
    const ls = listeners.filter((l) => l.port === port);
    const inodes = new Set(ls.map((l) => l.inode));
    const pids = [...new Set(ls.flatMap((l) => scan.holders.get(l.inode) ?? []))].sort((a, b) => a - b);
    const holders: PortHolder[] = [];
    for (const pid of pids) {
      const placement = await readPlacement(host, pid);
      const holder: PortHolder = { pid, comm: await readComm(host, pid), placement, ancestry: null, mainHoldsSocket: null };
      // Only a service could be stopped for it, so only then does its origin decide anything.
      // (Our own unit is protected whatever it runs, so it is not asked about.)
      const service = placement?.unitKind === 'service' && placement.container === null && placement.userUnit === null ? placement.unit : null;
      if (pid !== 1 && service !== null && service !== self?.unit) {
        const facts = (units[service] ??= await unitFacts(host, service));
        holder.ancestry = await readAncestry(host, pid);
        const main = mainPidOf(facts);
        if (main !== null && main !== pid) holder.mainHoldsSocket = await holdsSocket(host, main, inodes);
      }
      holders.push(holder);
    }
    const socketUnit = holders.find((h) => h.placement?.unitKind === 'socket')?.placement?.unit ?? null;
    // PID 1 holding a listener means socket activation only when PID 1 is systemd
    // (in a container PID 1 may be anything, with unit files that mean nothing).
    const byManager = holders.some((h) => h.pid === 1 && (h.comm === 'systemd' || h.placement?.unit === 'init.scope'));
    const activation = byManager || socketUnit !== null ? await findActivation(host, port, socketUnit) : null;
    busy.push({ port, listeners: ls, holders, activation });
  }
  let crontabs: Crontabs | null = null;
  const uids: Record<string, number> = {};
  if (Object.keys(units).some((u) => CRON_UNIT_STEMS.has(stemOf(u)))) {
    crontabs = await loadCrontabs(host);
    try {
      for (const [name, uid] of parsePasswd((await host.readFile('/etc/passwd')) ?? '')) uids[name] = uid;
    } catch {
      // Without /etc/passwd a crontab's user cannot be checked; the command still matches.
    }
  }
  const supervisor = Object.keys(units).some((u) => SUPERVISOR_UNIT_STEMS.has(stemOf(u))) ? await loadSupervisorPrograms(host) : null;
  return { mode: 'live', busy, selfUnit: self?.unit ?? null, unreadablePids: scan.unreadable.length, units, crontabs, uids, supervisor };
}

export async function observeOffline(host: Host, spec: PortFreeSpec): Promise<OfflinePortsObserved> {
  const units = await loadUnits(host);
  const sockets = socketUnitsForPorts(units.values(), spec.ports);
  const candidates = serviceCandidates(units.values(), spec.ports);
  const names = new Set<string>([
    ...sockets.flatMap((s) => [s.name, s.service]),
    ...(spec.disable_units ?? []),
    ...candidates.map((c) => c.unit),
  ]);
  const en = await enablementOf(host, names);
  const fragments: Record<string, string> = {};
  for (const n of names) {
    const u = units.get(n);
    if (u) fragments[n] = u.fragment;
  }
  return {
    mode: 'offline',
    sockets: sockets.map((s) => ({
      socket: s,
      ports: [...new Set(s.listens.map((l) => l.port).filter((p) => spec.ports.includes(p)))].sort((a, b) => a - b),
      enablement: en.get(s.name)!,
      serviceEnablement: s.accept ? null : (en.get(s.service) ?? null),
    })),
    disableUnits: (spec.disable_units ?? []).map((u) => ({
      unit: u,
      exists: units.has(u),
      fragment: units.get(u)?.fragment ?? null,
      enablement: en.get(u)!,
    })),
    candidates: candidates.map((c) => ({ candidate: c, enablement: en.get(c.unit)! })),
    fragments,
  };
}
