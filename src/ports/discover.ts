// Port discovery: listeners from /proc/net, their holders from an fd scan,
// each holder's unit, socket activation; offline, the image's unit files.
import type { TargetFs, TargetHost } from '../host.js';
import { readListeners, readUdpSockets, type Listener } from '../observe/listeners.js';
import { findSocketHolders, type InodeHolders } from './proc-fd.js';
import { parseCgroup, type CgroupPlacement } from '../systemd/cgroup.js';
import { holdsSocket, readAncestry } from './proc.js';
import { loadCrontabs, parsePasswd, type Crontabs } from './crontab.js';
import { loadSupervisorPrograms } from './supervisor.js';
import type { UnitFacts } from './identity.js';
import { serviceCandidates, socketUnitsForPorts } from './socket-units.js';
import { bootStarters, unreadBootSockets } from './boot-starters.js';
import { unitFilesOf } from '../systemd/socket-unit.js';
import { disableLinks, enablementOf } from '../systemd/unit-links.js';
import { findActivation } from './activation.js';
import { mainPidOf, unitFacts } from './unit-facts.js';
import type { BusyPort, LivePortsObserved, OfflinePortsObserved, PortHolder, UserUnitFacts } from './observed.js';
import { accountOf, userComeback, userManagerUid, userRouteOf, userSystemctl } from './user-manager.js';
import { systemUnitGraph } from '../systemd/system-graph.js';
import { splitInstance } from '../systemd/unit-loader.js';
import { bootPaths, describeBootPath } from '../systemd/boot-reach.js';
import { comebackOf, graphUnknown, showReverse, unexplainedLive, wouldStartAgain, type Comeback } from './stays-free.js';
import { liveTriggers, withTriggers } from './triggers.js';
import { maskSpotOf } from '../systemd/unit-mask.js';
import { generatorLinksTo } from '../systemd/sysv.js';
import { SYSTEMD_SYSTEM_ETC } from '../systemd/unit-dirs.js';
import { unitServes, type HeldUnit, type ScannedSocket, type UnitServes } from './served.js';
import { containersOf } from '../containers/holder.js';

async function readComm(host: TargetFs, pid: number): Promise<string | null> {
  try {
    return (await host.readKernel(`/proc/${pid}/comm`))?.trim() || null;
  } catch {
    return null;
  }
}

async function readPlacement(host: TargetFs, pid: number | 'self'): Promise<CgroupPlacement | null> {
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

/** What reading the holders of the busy ports shares: the scan, the other listeners, and the units read so far. */
interface HolderReads {
  host: TargetHost;
  scan: InodeHolders;
  /** Sockets on ports not wanted free (TCP listeners, bound UDP sockets): what else a holder answers on. */
  others: ScannedSocket[];
  /** Our own unit: never asked about (it is protected whatever it runs). */
  self: string | null;
  units: Record<string, UnitFacts>;
  userUnits: Record<string, UserUnitFacts>;
}

async function busyPortOf(st: HolderReads, port: number, ls: Listener[]): Promise<BusyPort> {
  const inodes = new Set(ls.map((l) => l.inode));
  const pids = [...new Set(ls.flatMap((l) => st.scan.holders.get(l.inode) ?? []))].sort((a, b) => a - b);
  const holders: PortHolder[] = [];
  for (const pid of pids) holders.push(await readHolder(st, pid, inodes));
  const socketUnit = holders.find((h) => h.placement?.unitKind === 'socket')?.placement?.unit ?? null;
  // PID 1 holding a listener means socket activation only when PID 1 is systemd
  // (in a container PID 1 may be anything, with unit files that mean nothing).
  const byManager = holders.some((h) => h.pid === 1 && (h.comm === 'systemd' || h.placement?.unit === 'init.scope'));
  const activation = byManager || socketUnit !== null ? await findActivation(st.host, port, socketUnit) : null;
  return { port, listeners: ls, holders, activation };
}

async function readHolder(st: HolderReads, pid: number, inodes: Set<number>): Promise<PortHolder> {
  const { host } = st;
  const placement = await readPlacement(host, pid);
  const holder: PortHolder = {
    pid,
    comm: await readComm(host, pid),
    placement,
    ancestry: null,
    mainHoldsSocket: null,
    otherSockets: st.others
      .filter((l) => st.scan.holders.get(l.inode)?.includes(pid))
      .map((l) => ({ proto: l.proto, address: l.family === 'ipv6' ? `[${l.address}]` : l.address, port: l.port }))
      .sort((a, b) => a.port - b.port || a.proto.localeCompare(b.proto)),
  };
  // Only a service could be stopped for it, so only then does its origin decide anything.
  // (Our own unit is protected whatever it runs, so it is not asked about.)
  const service = placement?.unitKind === 'service' && placement.container === null && placement.userUnit === null ? placement.unit : null;
  const uid = placement?.unit ? userManagerUid(placement.unit) : null;
  const userService = uid !== null && placement?.container === null && placement.userUnit?.endsWith('.service') ? placement.userUnit : null;
  if (uid !== null && userService !== null) {
    // A user manager's service: asked through that user's manager, with the same proof of ownership.
    const facts = await userUnitOf(st, uid, userService);
    holder.ancestry = await readAncestry(host, pid);
    const main = mainPidOf(facts);
    if (main !== null && main !== pid) holder.mainHoldsSocket = await holdsSocket(host, main, inodes);
  } else if (pid !== 1 && service !== null && service !== st.self) {
    const facts = (st.units[service] ??= await unitFacts(host, service));
    holder.ancestry = await readAncestry(host, pid);
    const main = mainPidOf(facts);
    if (main !== null && main !== pid) holder.mainHoldsSocket = await holdsSocket(host, main, inodes);
  } else if (placement?.container != null) {
    // A container runtime's own cgroup (podman's cgroupfs manager: /libpod_parent/libpod-ID): its conmon ancestor names the container.
    holder.ancestry = await readAncestry(host, pid);
  }
  return holder;
}

async function userUnitOf(st: HolderReads, uid: number, userService: string): Promise<UnitFacts> {
  const key = `${uid}:${userService}`;
  if (!st.userUnits[key]) {
    const account = await accountOf(st.host, uid);
    const route = await userRouteOf(st.host, uid);
    const facts = account
      ? await unitFacts(st.host, userService, userSystemctl({ ...account, route }))
      : { ...(await unitFactsUnknown(userService)), error: `no /etc/passwd line has UID ${uid}, so user@${uid}.service's user is unknown` };
    st.userUnits[key] = { uid, unit: userService, account, route, facts, comeback: account ? await userComeback(st.host, account, [userService]) : null };
  }
  return st.userUnits[key]!.facts;
}

/** What the port observers need of a wanted state: the ports, and (offline) the units to disable whatever they hold. */
export interface WantedPorts {
  ports: number[];
  disable_units?: string[];
}

export async function observeLive(host: TargetHost, spec: WantedPorts): Promise<LivePortsObserved> {
  const want = new Set(spec.ports);
  const all = await readListeners(host);
  const listeners = all.filter((l) => want.has(l.port));
  // Every socket's holders, once a wanted port is busy: a unit stopped for it also ends what it serves on the others.
  const udp = listeners.length > 0 ? await readUdpSockets(host) : [];
  const others: ScannedSocket[] = [
    ...all.filter((l) => !want.has(l.port)).map((l) => ({ ...l, proto: 'tcp' as const })),
    ...udp.map((l) => ({ ...l, proto: 'udp' as const })),
  ];
  const scan = await findSocketHolders(host, new Set(listeners.length > 0 ? [...listeners, ...others].map((l) => l.inode) : []));
  const self = await readPlacement(host, 'self');
  const busy: BusyPort[] = [];
  const units: Record<string, UnitFacts> = {};
  const userUnits: Record<string, UserUnitFacts> = {};
  const st: HolderReads = { host, scan, others, self: self?.unit ?? null, units, userUnits };
  for (const port of [...new Set(listeners.map((l) => l.port))].sort((a, b) => a - b)) {
    busy.push(
      await busyPortOf(
        st,
        port,
        listeners.filter((l) => l.port === port),
      ),
    );
  }
  const serves = await servesOf(host, busy, units, others, scan, want);
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
  // The manager's reverse dependencies, asked once per unit: for the triggers, then for what starts it again.
  const shows = new Map<string, Promise<Map<string, string> | null>>();
  const show = (u: string) => shows.get(u) ?? (shows.set(u, showReverse(host, u)), shows.get(u)!);
  const held = stopGroups(busy, undefined).flat();
  const triggers = held.length > 0 ? await liveTriggers(show, await systemUnitGraph(host, held), held) : {};
  const sysv = new Set(
    Object.values(units)
      .filter((f) => f.sysv)
      .map((f) => f.unit),
  );
  // An admin's unit file where a mask link would go: the plan says a mask sets it aside.
  const etcFiles: Record<string, string> = {};
  for (const u of stopGroups(busy, triggers).flat()) {
    const spot = await maskSpotOf(host, SYSTEMD_SYSTEM_ETC, u);
    if (spot.kind === 'taken' && spot.file) etcFiles[u] = spot.path;
  }
  const comeback = await liveComeback(host, busy, triggers, show, sysv);
  const busyPorts = new Set(busy.map((b) => b.port));
  const free = spec.ports.filter((p) => !busyPorts.has(p));
  const graph = free.length > 0 ? await systemUnitGraph(host) : null;
  return {
    mode: 'live',
    busy,
    selfUnit: self?.unit ?? null,
    unreadablePids: scan.unreadable.length,
    units,
    crontabs,
    uids,
    supervisor,
    serves,
    comeback,
    containers: await containersOf(host, busy),
    userUnits,
    triggers,
    etcFiles,
    bootStarters: graph ? bootStarters(graph, free) : [],
    bootStartersUnknown: graph ? graphUnknown(graph) : null,
    unreadSockets: graph ? unreadBootSockets(graph) : [],
  };
}

/** For every system service a busy port's holders sit in: what else stopping it ends (served.ts). */
async function servesOf(
  host: TargetHost,
  busy: BusyPort[],
  units: Record<string, UnitFacts>,
  others: ScannedSocket[],
  scan: InodeHolders,
  want: ReadonlySet<number>,
): Promise<Record<string, UnitServes>> {
  const held = new Map<string, HeldUnit>();
  for (const h of busy.flatMap((b) => b.holders)) {
    const p = h.placement;
    if (h.pid === 1 || p === null || p.unit === null || p.unitKind !== 'service' || p.container !== null || p.userUnit !== null) continue;
    const facts = units[p.unit];
    const main = facts ? mainPidOf(facts) : null;
    const u = held.get(p.unit) ?? { unit: p.unit, placement: p, holders: [], chain: main !== null ? [main] : [] };
    if (!u.holders.some((x) => x.pid === h.pid)) u.holders.push({ pid: h.pid, comm: h.comm });
    u.chain.push(...(h.ancestry?.chain.map((a) => a.pid) ?? []));
    held.set(p.unit, u);
  }
  const out: Record<string, UnitServes> = {};
  for (const [unit, u] of held) out[unit] = await unitServes(host, u, others, scan.holders, want);
  return out;
}

/**
 * The units a stop of each busy port would disable together: the socket and
 * its service, or the holders' services, each group led by its triggers.
 */
export function stopGroups(busy: BusyPort[], triggers: Record<string, string[]> | undefined): string[][] {
  const out: string[][] = [];
  for (const b of busy) {
    if (b.activation) out.push(withTriggers([b.activation.socket, ...(b.activation.service ? [b.activation.service] : [])], triggers));
    else {
      const units = [...new Set(b.holders.map((h) => h.placement?.unit ?? null))];
      if (units.length > 0 && units.every((u): u is string => u !== null && userManagerUid(u) === null && (u.endsWith('.service') || u.endsWith('.socket'))))
        out.push(withTriggers(units, triggers));
    }
  }
  return out;
}

/**
 * For each group: the chains that still start it at boot once `systemctl
 * disable GROUP` has removed its links, plus any reverse dependency the
 * running manager reports that the unit files do not explain.
 */
async function liveComeback(
  host: TargetHost,
  busy: BusyPort[],
  triggers: Record<string, string[]>,
  showOf: (unit: string) => Promise<Map<string, string> | null>,
  sysv: ReadonlySet<string>,
): Promise<Record<string, Comeback>> {
  const groups = stopGroups(busy, triggers);
  const out: Record<string, Comeback> = {};
  if (groups.length === 0) return out;
  const graph = await systemUnitGraph(host, groups.flat());
  for (const g of groups) {
    const key = g.join(' ');
    if (out[key]) continue;
    // For an init script, disable turns its S links into K links, and the generator then writes no .wants link for it.
    const removed = [
      ...(await disableLinks(host, g)),
      ...generatorLinksTo(
        graph,
        g.filter((u) => sysv.has(u)),
      ),
    ];
    const cb = await wouldStartAgain(host, g, removed, graph);
    const removedSet = new Set(removed);
    for (const u of g) {
      const show = await showOf(u);
      if (show === null) {
        cb.unknown ??= `systemctl show could not list what depends on ${u}`;
        continue;
      }
      cb.reasons.push(...unexplainedLive(graph, u, show, removedSet).filter((r) => !g.some((x) => r.includes(`=${x} `))));
    }
    out[key] = cb;
  }
  return out;
}

export async function observeOffline(host: TargetFs, spec: WantedPorts): Promise<OfflinePortsObserved> {
  const units = unitFilesOf(await systemUnitGraph(host));
  const sockets = socketUnitsForPorts(units.values(), spec.ports);
  const candidates = serviceCandidates(units.values(), spec.ports);
  const names = new Set<string>([...sockets.flatMap((s) => [s.name, s.service]), ...(spec.disable_units ?? []), ...candidates.map((c) => c.unit)]);
  const en = await enablementOf(host, names);
  // An admin's unit file where a mask link would go: a mask sets it aside first.
  const etcFiles: Record<string, string> = {};
  for (const n of names) {
    const spot = await maskSpotOf(host, SYSTEMD_SYSTEM_ETC, n);
    if (spot.kind === 'taken' && spot.file) etcFiles[n] = spot.path;
  }
  // What starts each unit at boot now, and what still would once it (with its socket or service) is disabled.
  const graph = await systemUnitGraph(host, names);
  const reachNow: Record<string, string> = {};
  for (const [n, p] of bootPaths(graph, names)) reachNow[n] = describeBootPath(graph, p);
  const comeback: Record<string, Comeback> = {};
  const groups = [...sockets.map((s) => (s.accept ? [s.name] : [s.name, s.service])), ...[...names].map((n) => [n])];
  for (const g of groups) {
    if (g.every((n) => comeback[n] !== undefined)) continue;
    const links = g.flatMap((n) => [...(en.get(n)?.links ?? []), ...(en.get(n)?.alsoLinks ?? [])]);
    const cb = links.length === 0 ? comebackOf(graph, g) : await wouldStartAgain(host, g, links, graph);
    for (const n of g) comeback[n] ??= { ...cb, reasons: cb.reasons.filter((r) => r.startsWith(`${n} `)) };
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
    etcFiles,
    comeback,
    reachNow,
    graphUnknown: graphUnknown(graph),
    instanceSockets: bootStarters(graph, spec.ports).filter((s) => s.kind === 'socket' && splitInstance(s.unit).instance !== null),
    unreadSockets: unreadBootSockets(graph),
  };
}

/** Facts of a unit nobody could be asked about. */
async function unitFactsUnknown(unit: string): Promise<UnitFacts> {
  return { unit, error: null, mainPid: null, type: null, pidFile: null, pidFilePid: null, pidFileError: null, execStart: [], execError: null, main: null };
}
