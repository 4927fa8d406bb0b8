// PortFree: frees control-plane ports by stopping and disabling the systemd
// unit behind each listener, never by killing a PID (Restart=always would
// bring it straight back). Offline it disables, in the image, the units that
// would take a wanted port at boot.
import type { Host } from '../host.js';
import type { PortFreeSpec } from '../desired-state.js';
import type { ApplyContext, Change, Provider } from './types.js';
import type { WriteDoor } from '../door/door.js';
import { readListeners, type Listener } from '../observe/listeners.js';
import { findSocketHolders } from '../ports/proc-fd.js';
import { parseCgroup, type CgroupPlacement } from '../ports/cgroup.js';
import { holdsSocket, readAncestry, readProcess, showArgv } from '../ports/proc.js';
import { argvMatches, isShell, parseExecLine, shebangShell, shellScriptOf, type ExecCommand } from '../ports/command-line.js';
import { loadCrontabs, parsePasswd, type Crontabs } from '../ports/crontab.js';
import { loadSupervisorPrograms, type SupervisorPrograms } from '../ports/supervisor.js';
import {
  attribute,
  cronOrigins,
  loginSessionOf,
  pidPath,
  SPAWNER_UNITS,
  spawnerHarm,
  type Ancestry,
  type Attribution,
  type UnitFacts,
} from '../ports/identity.js';
import {
  effectiveList,
  enablementOf,
  listenStreamPort,
  linkDelta,
  loadUnits,
  parseUnitText,
  removeUnitLinks,
  unitLinkSnapshot,
  serviceCandidates,
  socketUnitOf,
  socketUnitsForPorts,
  type ServiceCandidate,
  type SocketUnit,
  type UnitDirective,
  type UnitEnablement,
} from '../ports/socket-units.js';

// ---------------------------------------------------------------- observed

export interface PortHolder {
  pid: number;
  /** /proc/PID/comm; null when the process vanished or denied access. */
  comm: string | null;
  /** null when /proc/PID/cgroup could not be read. */
  placement: CgroupPlacement | null;
  /** The holder and its parents, read when it sits in a service (to tell whether the service is its own). */
  ancestry: Ancestry | null;
  /** Whether the main process of the holder's service holds the same listening socket; null when unknown or not read. */
  mainHoldsSocket: boolean | null;
}

/** A port whose listener systemd itself holds for a .socket unit. */
export interface SocketActivation {
  socket: string;
  /** The service the socket starts; null for Accept=yes (per-connection instances). */
  service: string | null;
  /** The service's MainPID before the stop, when it runs. */
  servicePid: number | null;
  /** How the socket unit was identified. */
  source: 'systemctl list-sockets' | 'unit files' | 'cgroup';
}

export interface BusyPort {
  port: number;
  listeners: Listener[];
  /** Distinct holders over all listeners, ascending PID. */
  holders: PortHolder[];
  activation: SocketActivation | null;
}

export interface LivePortsObserved {
  mode: 'live';
  busy: BusyPort[];
  /** The unit this program runs in (protected). */
  selfUnit: string | null;
  /** Processes whose fds could not be read; a missing holder may be among them. */
  unreadablePids: number;
  /** Manager and unit-file facts of every service a holder sits in. */
  units: Record<string, UnitFacts>;
  /** Crontabs, read when a holder sits in a cron daemon's unit. */
  crontabs: Crontabs | null;
  /** /etc/passwd user -> UID, read with the crontabs (a crontab names users, /proc gives UIDs). */
  uids: Record<string, number>;
  /** supervisord's programs, read when a holder sits in supervisord's unit. */
  supervisor: SupervisorPrograms | null;
}

export interface OfflineSocket {
  socket: SocketUnit;
  /** Wanted ports it listens on. */
  ports: number[];
  enablement: UnitEnablement;
  serviceEnablement: UnitEnablement | null;
}

export interface OfflineUnit {
  unit: string;
  /** A unit file with this name exists in the image. */
  exists: boolean;
  /** Target path of the winning fragment, when it exists. */
  fragment: string | null;
  enablement: UnitEnablement;
}

export interface OfflineCandidate {
  candidate: ServiceCandidate;
  enablement: UnitEnablement;
}

export interface OfflinePortsObserved {
  mode: 'offline';
  sockets: OfflineSocket[];
  disableUnits: OfflineUnit[];
  candidates: OfflineCandidate[];
  /** Fragment paths, to tell whether a mask link can be placed in /etc. */
  fragments: Record<string, string>;
}

export type PortFreeObserved = LivePortsObserved | OfflinePortsObserved;

// ---------------------------------------------------------------- ops

export interface StopOp {
  kind: 'stop';
  port: number;
  /** PID recorded before the stop (the service's process; PID 1 only when nothing else holds it). */
  pid: number;
  comm: string | null;
  /** The unit reported in ports.json: the service (for socket activation, the socket's service). */
  unit: string;
  /** Units to stop, disable (and mask), socket before its service so it cannot re-activate it. */
  units: string[];
  socket: string | null;
  mask: boolean;
  /** How the unit was identified as the holder's own (or released by stop_spawner_units). */
  proof: string;
}

export interface OfflineDisableOp {
  kind: 'disable-links';
  unit: string;
  /** Enablement links to remove (what `systemctl --root disable UNIT` removes); emptied directories go too. */
  links: string[];
}

export interface OfflineMaskOp {
  kind: 'mask-link';
  unit: string;
}

export interface OperatorOp {
  kind: 'operator';
  port: number | null;
  unit: string | null;
  pid: number | null;
}

/** Offline, with a first boot: a candidate the first-boot run waits for (never applied by the bake). */
export interface FirstBootWaitOp {
  kind: 'first-boot-wait';
  port: number;
  unit: string;
}

export type PortFreeOp = StopOp | OfflineDisableOp | OfflineMaskOp | OperatorOp | FirstBootWaitOp;

// ---------------------------------------------------------------- protection

/**
 * Units PortFree never stops, whatever holds a port: the manager itself and
 * what keeps the host reachable. An ssh session or a console login on a host
 * without logind leaves its processes in ssh.service or getty@.service, so
 * these are also spawners of processes that are not theirs.
 */
export const BUILTIN_PROTECTED: readonly { pattern: string; why: string }[] = [
  { pattern: 'init.scope', why: 'it is the service manager (PID 1)' },
  { pattern: '-.slice', why: 'it is the root of the unit tree' },
  { pattern: 'systemd-logind', why: 'it keeps every login session and seat' },
  { pattern: 'systemd-*', why: 'it is part of systemd' },
  { pattern: 'dbus*', why: 'every service talks through the message bus' },
  ...['ssh*', 'sshd*'].map((pattern) => ({ pattern, why: 'it carries every remote login (and, without logind, the processes started in them)' })),
  ...['getty@*', 'serial-getty@*', 'autovt@*', 'console-getty', 'container-getty@*'].map((pattern) => ({
    pattern,
    why: 'it carries console logins (and, without logind, the processes started in them)',
  })),
];

function globToRegExp(glob: string): RegExp {
  const esc = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${esc}$`);
}

/** Whether a unit-name pattern (* and ?) covers `unit`; "ssh" also covers "ssh.service". */
function unitPatternHit(pattern: string, unit: string): boolean {
  const re = globToRegExp(pattern);
  return re.test(unit) || re.test(unit.replace(/\.[a-z]+$/, ''));
}

/** What a general-purpose spawner unit is, or null for any other unit. */
export function spawnerKind(unit: string): string | null {
  return SPAWNER_UNITS.find((s) => unitPatternHit(s.pattern, unit))?.what ?? null;
}

/**
 * Why `unit` is protected, or null. Order: this program's own unit, the
 * built-in list, protected_units, then the general-purpose spawners (cron,
 * atd, supervisors, container runtimes, CI runners), which stop_spawner_units
 * releases by exact name.
 */
export function protectionOf(
  unit: string,
  spec: { protected_units?: string[]; stop_spawner_units?: string[] },
  selfUnit: string | null,
): string | null {
  if (selfUnit !== null && unit === selfUnit) return `${unit} is the unit this program runs in`;
  const b = BUILTIN_PROTECTED.find((p) => unitPatternHit(p.pattern, unit));
  if (b) return `${unit} is protected by the built-in list (${b.pattern}): ${b.why}`;
  const s = (spec.protected_units ?? []).find((p) => unitPatternHit(p, unit));
  if (s) return `${unit} is listed in protected_units (${s})`;
  const what = spawnerKind(unit);
  if (what !== null && !(spec.stop_spawner_units ?? []).includes(unit)) {
    return `${unit} is protected by the built-in list of spawners: it is ${what} (name it in stop_spawner_units to allow stopping it)`;
  }
  return null;
}

// ---------------------------------------------------------------- observe

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

/** `systemctl list-sockets` lines: LISTEN UNIT ACTIVATES... Pure. */
export function parseListSockets(text: string): { listen: string; port: number | null; unit: string; activates: string[] }[] {
  const out: { listen: string; port: number | null; unit: string; activates: string[] }[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 2 || !f[1]!.endsWith('.socket')) continue;
    out.push({
      listen: f[0]!,
      port: listenStreamPort(f[0]!),
      unit: f[1]!,
      activates: f.slice(2).flatMap((a) => a.split(',')).filter((a) => a.endsWith('.service')),
    });
  }
  return out;
}

/** The systemd timespan syntax of RestartUSec= ("100ms", "5s", "1min 30s") in ms; null when unparsable. */
export function parseTimespanMs(text: string): number | null {
  const t = text.trim();
  if (t === '' || t === 'infinity') return null;
  const units: Record<string, number> = {
    us: 0.001, usec: 0.001, µs: 0.001,
    ms: 1, msec: 1,
    s: 1000, sec: 1000, second: 1000, seconds: 1000,
    m: 60_000, min: 60_000, minute: 60_000, minutes: 60_000,
    h: 3_600_000, hr: 3_600_000, hour: 3_600_000, hours: 3_600_000,
    d: 86_400_000, day: 86_400_000, days: 86_400_000,
  };
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000; // bare number = seconds
  let total = 0;
  const re = /(\d+(?:\.\d+)?)\s*([a-zµ]+)/gy;
  const compact = t.replace(/\s+/g, ' ');
  let pos = 0;
  while (pos < compact.length) {
    if (compact[pos] === ' ') {
      pos++;
      continue;
    }
    re.lastIndex = pos;
    const m = re.exec(compact);
    if (!m) return null;
    const factor = units[m[2]!];
    if (factor === undefined) return null;
    total += Number(m[1]) * factor;
    pos = re.lastIndex;
  }
  return Math.round(total);
}

async function systemctlValue(host: Host, prop: string, unit: string): Promise<string | null> {
  try {
    const r = await host.run('systemctl', ['show', '-p', prop, '--value', unit]);
    return r.exitCode === 0 ? r.stdout.trim() : null;
  } catch {
    return null;
  }
}

async function findActivation(host: Host, port: number, socketFromCgroup: string | null): Promise<SocketActivation | null> {
  let socket: string | null = socketFromCgroup;
  let service: string | null = null;
  let source: SocketActivation['source'] = 'cgroup';
  if (socket === null) {
    // The manager's own view first: it includes generated and transient sockets.
    try {
      const r = await host.run('systemctl', ['list-sockets', '--full', '--no-legend', '--no-pager']);
      const hit = r.exitCode === 0 ? parseListSockets(r.stdout).find((s) => s.port === port) : undefined;
      if (hit) {
        socket = hit.unit;
        service = hit.activates[0] ?? null;
        source = 'systemctl list-sockets';
      }
    } catch {
      // systemctl missing or not talking to a manager: the unit files still tell.
    }
  }
  const units = await loadUnits(host, ['.socket']);
  if (socket === null) {
    const declared = socketUnitsForPorts(units.values(), [port]);
    if (declared.length === 0) return null;
    socket = declared[0]!.name;
    source = 'unit files';
  }
  if (service === null) {
    const file = units.get(socket);
    // Accept=yes starts one instance per connection: there is no single service to stop.
    service = file ? (socketUnitOf(file).accept ? null : socketUnitOf(file).service) : socket.replace(/\.socket$/, '.service');
  }
  let servicePid: number | null = null;
  if (service !== null) {
    const v = Number(await systemctlValue(host, 'MainPID', service));
    servicePid = Number.isInteger(v) && v > 0 ? v : null;
  }
  return { socket, service, servicePid, source };
}

/** `systemctl show -p A -p B UNIT` output: one KEY=VALUE per line. Pure. */
export function parseShowProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out.set(line.slice(0, eq), line.slice(eq + 1).trim());
  }
  return out;
}

/** The manager's view of a service (main process, type, PID file, unit files) and its effective ExecStart=. */
async function unitFacts(host: Host, unit: string): Promise<UnitFacts> {
  const facts: UnitFacts = { unit, error: null, mainPid: null, type: null, pidFile: null, pidFilePid: null, pidFileError: null, execStart: [], execError: null, main: null };
  const props = ['MainPID', 'Type', 'PIDFile', 'FragmentPath', 'DropInPaths'];
  let show: Map<string, string>;
  try {
    const r = await host.run('systemctl', ['show', ...props.flatMap((p) => ['-p', p]), unit]);
    if (r.exitCode !== 0) return { ...facts, error: `systemctl show ${unit} exited ${r.exitCode}: ${r.stderr.trim() || r.stdout.trim()}` };
    show = parseShowProperties(r.stdout);
  } catch (e) {
    return { ...facts, error: `systemctl show ${unit} failed: ${(e as Error).message}` };
  }
  const main = Number(show.get('MainPID'));
  if (!show.has('MainPID') || !Number.isInteger(main) || main < 0) {
    return { ...facts, error: `systemctl show ${unit} gave no MainPID (${JSON.stringify(show.get('MainPID') ?? null)})` };
  }
  facts.mainPid = main > 0 ? main : null;
  facts.type = show.get('Type') || null;
  facts.pidFile = show.get('PIDFile') || null;
  if (facts.type === 'forking' && facts.pidFile !== null) {
    try {
      const text = await host.readFile(facts.pidFile);
      const n = text === null ? NaN : Number(text.trim().split(/\s+/)[0]);
      if (text === null) facts.pidFileError = `PIDFile=${facts.pidFile} does not exist`;
      else if (Number.isInteger(n) && n > 0) facts.pidFilePid = n;
      else facts.pidFileError = `PIDFile=${facts.pidFile} holds no PID`;
    } catch (e) {
      facts.pidFileError = `PIDFile=${facts.pidFile} could not be read: ${(e as Error).message}`;
    }
  }
  // ExecStart= from exactly the files the manager loaded, read with the unit-file grammar.
  const fragment = show.get('FragmentPath') || null;
  if (fragment === null) facts.execError = `systemctl shows no unit file (FragmentPath=) for ${unit}`;
  else {
    const files = [fragment, ...(show.get('DropInPaths') ?? '').split(/\s+/).filter(Boolean)];
    const directives: UnitDirective[] = [];
    for (const f of files) {
      let text: string | null;
      try {
        text = await host.readFile(f);
      } catch (e) {
        facts.execError ??= `${f} could not be read: ${(e as Error).message}`;
        continue;
      }
      if (text === null) {
        facts.execError ??= `${f} (a unit file systemctl names for ${unit}) does not exist`;
        continue;
      }
      directives.push(...parseUnitText(text, f));
    }
    facts.execStart = [];
    for (const d of effectiveList(directives, 'Service', 'ExecStart')) {
      const command = parseExecLine(d.value);
      facts.execStart.push({ file: d.file, line: d.line, value: d.value, command, script: command ? await execScript(host, command) : null });
    }
  }
  const mainPid = mainPidOf(facts);
  if (mainPid !== null) facts.main = await readProcess(host, mainPid);
  return facts;
}

/** Largest wrapper script read; anything bigger is not a wrapper. */
const MAX_SCRIPT_BYTES = 256 * 1024;

/** The shell script an ExecStart= command runs: `sh FILE ...`, or FILE itself with a shell "#!" line. */
async function execScript(host: Host, c: ExecCommand): Promise<{ path: string; text: string } | null> {
  const first = c.argv[0];
  const arg = c.argv[1];
  let file: string | null = null;
  if (first && isShell(first) && shellScriptOf(c.argv) === null && arg && !arg.startsWith('-') && arg.startsWith('/')) file = arg;
  else if (c.path && c.path.startsWith('/') && !isShell(c.path)) file = c.path;
  if (file === null) return null;
  try {
    const st = await host.lstat(await host.realTarget(file));
    if (st === null || !st.isFile() || st.size > MAX_SCRIPT_BYTES) return null;
    const text = await host.readFile(file);
    if (text === null) return null;
    // Run as `sh FILE` any text is a script; run directly, only with a shell "#!".
    if (file === c.path && shebangShell(text.split('\n', 1)[0]!) === null) return null;
    return { path: file, text };
  } catch {
    return null;
  }
}

/** The main process as far as the facts tell: MainPID, else a forking unit's PIDFile=. */
function mainPidOf(f: UnitFacts): number | null {
  return f.mainPid ?? (f.type === 'forking' ? f.pidFilePid : null);
}

const CRON_UNIT_STEMS = new Set(['cron', 'crond', 'cronie', 'fcron', 'anacron']);
const SUPERVISOR_UNIT_STEMS = new Set(['supervisor', 'supervisord']);

function stemOf(unit: string): string {
  return unit.replace(/\.[a-z]+$/, '');
}

async function observeLive(host: Host, spec: PortFreeSpec): Promise<LivePortsObserved> {
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

async function observeOffline(host: Host, spec: PortFreeSpec): Promise<OfflinePortsObserved> {
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

// ---------------------------------------------------------------- diff

function describeHolder(h: PortHolder): string {
  const where = h.placement?.unit ? ` in ${h.placement.unit}` : '';
  return `pid ${h.pid} (${h.comm ?? 'unknown'})${where}`;
}

/** Why a holder cannot be handled by stopping a system service, or null when it can. */
function holderProblem(h: PortHolder): string | null {
  const p = h.placement;
  const who = `pid ${h.pid} (${h.comm ?? 'unknown'})`;
  if (p === null) return `${who}: its cgroup (/proc/${h.pid}/cgroup) could not be read, so its unit is unknown`;
  if (p.container) return `${who} runs in a container (${p.container}); stop it with its container runtime`;
  if (p.unit === null) return `${who} is not in any systemd unit (cgroup ${p.path}); it was started by hand or by a non-systemd init, so stop it by hand`;
  if (p.userUnit !== null || /^user@\d+\.service$/.test(p.unit)) {
    return `${who} belongs to ${p.userUnit ? `user unit ${p.userUnit} of ` : ''}the per-user manager ${p.unit}; stop it with systemctl --user as that user`;
  }
  if (p.unitKind === 'scope') return `${who} runs in ${p.unit}, a scope (login session or transient process), not a service that can be stopped and disabled; stop it by hand`;
  if (p.unitKind !== 'service' && p.unitKind !== 'socket') return `${who} runs in ${p.unit}, which is not a service`;
  return null;
}

/** Whether the holder's cgroup unit is its own; unknown when it was not observed. */
function attributionOf(o: LivePortsObserved, h: PortHolder): Attribution {
  const unit = h.placement?.unit ?? '(none)';
  const facts = o.units[unit];
  if (facts === undefined || h.ancestry === null) {
    return { own: false, unit, reason: `pid ${h.pid}'s origin in ${unit} was not read`, unknown: true, path: [] };
  }
  return attribute(h.ancestry, facts, h.mainHoldsSocket);
}

/** Where the listener really comes from, when it can be found: a crontab line, a login session. */
function originOf(o: LivePortsObserved, a: Attribution & { own: false }): string | null {
  if (a.path.length === 0) return null;
  if (o.crontabs !== null) {
    const uids = new Map(Object.entries(o.uids));
    const hits = cronOrigins(a.path, o.crontabs.entries, uids);
    if (hits.length > 0) {
      const lines = hits.map((e) => `${e.file}:${e.line}: ${e.text}`).join(' and ');
      return `It was started by the crontab line ${lines}: remove or change that line, then stop pid ${a.path[0]!.pid}`;
    }
    const unreadable = o.crontabs.unreadable.length > 0 ? `; unreadable: ${o.crontabs.unreadable.join(', ')}` : '';
    return `Its origin is unknown: no crontab line runs its command (read ${o.crontabs.read.join(', ') || 'no crontab'}${unreadable})`;
  }
  if (o.supervisor !== null && SUPERVISOR_UNIT_STEMS.has(stemOf(a.unit))) {
    // supervisord execs command= itself, without a shell.
    const below = a.path.slice(0, -1);
    const hits = o.supervisor.programs.filter((p) => p.argv !== null && below.some((q) => argvMatches(q.argv, p.argv!)));
    if (hits.length > 0) {
      const names = hits.map((p) => `program "${p.name}" (${p.file}:${p.line}: command=${p.command})`).join(' and ');
      return `It is supervisord's ${names}: remove it there, then supervisorctl reread && supervisorctl update`;
    }
    const unreadable = o.supervisor.unreadable.length > 0 ? `; unreadable: ${o.supervisor.unreadable.join(', ')}` : '';
    return `Its origin is unknown: no supervisord program runs its command (read ${o.supervisor.read.join(', ') || 'no supervisord configuration'}${unreadable})`;
  }
  const session = loginSessionOf(a.path.slice(0, -1));
  if (session !== null) return `It was started in the login session of pid ${session.pid} (${showArgv(session.argv)}): stop it there`;
  return null;
}

/** The operator line for a holder whose unit is not its own (or whose origin could not be told). */
function spawnerReason(spec: PortFreeSpec, o: LivePortsObserved, h: PortHolder, a: Attribution & { own: false }): string {
  const self = h.ancestry?.chain[0];
  const who = `pid ${h.pid} (${self ? showArgv(self.argv) : (h.comm ?? 'unknown')})`;
  const optIn = `name ${a.unit} in stop_spawner_units to stop and disable it anyway`;
  const prot = protectionOf(a.unit, { ...spec, stop_spawner_units: [] }, o.selfUnit);
  // The core built-ins (ssh, getty, systemd-*) and protected_units are never released.
  const release = prot !== null && spawnerKind(a.unit) === null ? '' : ` Or ${optIn}.`;
  if (a.unknown) return `${who} in ${a.unit}: ${a.reason}. A unit is never stopped on a guess: find what started pid ${h.pid}.${release}`;
  const path = a.path.length > 0 ? ` (${pidPath(a.path)})` : '';
  const origin = originOf(o, a);
  const harm = prot !== null && spawnerKind(a.unit) === null ? `${prot}; it is never stopped automatically` : spawnerHarm(a.unit, spawnerKind(a.unit));
  return `${who} is not ${a.unit}'s own process: ${a.reason}. ${a.unit} only spawned it${path}: ${harm}.${origin ? ` ${origin}.` : ''}${release}`;
}

function operatorChange(id: string, summary: string, reason: string, op: Omit<OperatorOp, 'kind'>): Change<PortFreeOp> {
  // The renderer prints `operator` as the reason, so the summary only names what was found.
  return { id, action: 'operator', summary, operator: reason, op: { kind: 'operator', ...op } };
}

function diffLivePort(spec: PortFreeSpec, o: LivePortsObserved, b: BusyPort): Change<PortFreeOp> {
  const id = `port-${b.port}`;
  const addrs = b.listeners.map((l) => (l.family === 'ipv6' ? `[${l.address}]:${l.port}` : `${l.address}:${l.port}`)).join(', ');
  const head = `port ${b.port} (${addrs})`;
  if (b.holders.length === 0) {
    const hint = o.unreadablePids > 0 ? `; ${o.unreadablePids} processes' fds could not be read (run as root)` : '';
    return operatorChange(id, head, `no process holding the listening socket was found${hint}; look with ss -ltnp 'sport = :${b.port}'`, {
      port: b.port,
      unit: null,
      pid: null,
    });
  }
  const first = b.holders[0]!;
  const opBase = { port: b.port, unit: first.placement?.unit ?? null, pid: first.pid };

  let units: string[];
  let reportUnit: string;
  let pid = first.pid;
  let comm = first.comm;
  let socket: string | null = null;
  let proof: string;
  if (b.activation) {
    socket = b.activation.socket;
    proof = `the listening socket is ${b.activation.socket}'s, handed to ${b.activation.service ?? 'its per-connection services'} by systemd (found by ${b.activation.source})`;
    units = [b.activation.socket, ...(b.activation.service ? [b.activation.service] : [])];
    reportUnit = b.activation.service ?? b.activation.socket;
    const svc = b.holders.find((h) => h.pid !== 1 && h.placement?.unit === b.activation!.service);
    if (b.activation.servicePid !== null) pid = b.activation.servicePid;
    else if (svc) pid = svc.pid;
    if (svc) comm = svc.comm;
    // Any holder outside the socket/service pair still needs a person.
    const stray = b.holders.filter((h) => h.pid !== 1 && !units.includes(h.placement?.unit ?? ''));
    const problems = stray.map((h) => holderProblem(h) ?? `${describeHolder(h)} also holds the port`);
    if (problems.length > 0) return operatorChange(id, `${head} held by ${b.holders.map(describeHolder).join(', ')}`, problems.join('; '), opBase);
  } else {
    const init = b.holders.find((h) => h.pid === 1);
    if (init) {
      const why =
        init.comm === 'systemd' || init.placement?.unit === 'init.scope'
          ? `systemd (PID 1) holds the socket but no .socket unit declares ListenStream= on ${b.port}`
          : `PID 1 (${init.comm ?? 'unknown'}) holds the socket and is not systemd, so no unit can be stopped for it`;
      return operatorChange(id, `${head} held by ${b.holders.map(describeHolder).join(', ')}`, why, opBase);
    }
    const problems = b.holders.map(holderProblem).filter((p): p is string => p !== null);
    if (problems.length > 0) return operatorChange(id, `${head} held by ${b.holders.map(describeHolder).join(', ')}`, problems.join('; '), opBase);
    // The cgroup only names where each holder lives; stop a unit only for a holder that is its own.
    const proofs: string[] = [];
    const refused: string[] = [];
    for (const h of b.holders) {
      if (o.selfUnit !== null && h.placement?.unit === o.selfUnit) {
        refused.push(`${describeHolder(h)}: ${protectionOf(o.selfUnit, spec, o.selfUnit)}; it is never stopped automatically`);
        continue;
      }
      const a = attributionOf(o, h);
      if (a.own) proofs.push(a.proof);
      else if (spec.stop_spawner_units.includes(a.unit) && protectionOf(a.unit, { ...spec, stop_spawner_units: [a.unit] }, o.selfUnit) === null) {
        proofs.push(`pid ${h.pid} is not ${a.unit}'s own process (${a.reason}), but stop_spawner_units names ${a.unit}`);
      } else refused.push(spawnerReason(spec, o, h, a));
    }
    if (refused.length > 0) return operatorChange(id, `${head} held by ${b.holders.map(describeHolder).join(', ')}`, refused.join('; '), opBase);
    units = [...new Set(b.holders.map((h) => h.placement!.unit!))];
    reportUnit = units[0]!;
    proof = proofs.join('; ');
  }
  const protectedWhy = units.map((u) => protectionOf(u, spec, o.selfUnit)).filter((p): p is string => p !== null);
  if (protectedWhy.length > 0) {
    return operatorChange(id, `${head} held by ${b.holders.map(describeHolder).join(', ')}`, `${protectedWhy.join('; ')}; it is never stopped automatically`, opBase);
  }
  const verbs = spec.mask ? 'stop, disable and mask' : 'stop and disable';
  const via = socket ? ` (socket-activated by ${socket})` : '';
  return {
    id,
    action: 'stop',
    runtime: true,
    summary: `${head} held by pid ${pid} (${comm ?? 'unknown'}) in ${reportUnit}${via}; ${proof}: ${verbs} ${units.join(' and ')}`,
    op: { kind: 'stop', port: b.port, pid, comm, unit: reportUnit, units, socket, mask: spec.mask, proof },
  };
}

function fileLine(d: UnitDirective): string {
  return `${d.file}:${d.line}`;
}

function diffOffline(spec: PortFreeSpec, o: OfflinePortsObserved, firstBoot = false): Change<PortFreeOp>[] {
  const changes: Change<PortFreeOp>[] = [];
  const handled = new Set<string>();
  const disable = (unit: string, en: UnitEnablement, why: string) => {
    if (handled.has(unit)) return;
    handled.add(unit);
    const prot = protectionOf(unit, spec, null);
    if (prot !== null && en.links.length + en.vendorLinks.length > 0) {
      changes.push(operatorChange(`disable-${unit}`, `${unit} ${why}`, `${prot}; it is never disabled automatically`, { port: null, unit, pid: null }));
      return;
    }
    // Exactly what `systemctl disable UNIT` removes, Also= units' links included.
    const links = [...en.links, ...en.alsoLinks];
    if (links.length > 0) {
      changes.push({
        id: `disable-${unit}`,
        action: 'disable',
        summary: `disable ${unit} in the image: ${why}; remove ${links.join(', ')}`,
        op: { kind: 'disable-links', unit, links },
      });
    }
    if (en.masked || prot !== null) return;
    if (spec.mask) {
      const frag = o.fragments[unit];
      // A unit file in /etc blocks the mask link (systemctl mask refuses too),
      // unless it is a linked file that the disable above already unlinks.
      if (frag !== undefined && frag.startsWith('/etc/systemd/system/') && !frag.includes('.d/') && !links.includes(frag)) {
        changes.push(operatorChange(`mask-${unit}`, `mask ${unit}`, `its unit file ${frag} is in /etc/systemd/system, where the mask link would have to replace it`, { port: null, unit, pid: null }));
      } else {
        changes.push({ id: `mask-${unit}`, action: 'mask', summary: `mask ${unit} in the image (link /etc/systemd/system/${unit} to /dev/null)`, op: { kind: 'mask-link', unit } });
      }
    } else if (en.vendorLinks.length > 0) {
      changes.push(operatorChange(`disable-${unit}-vendor`, `${unit} ${why}`, `it is enabled by vendor links (${en.vendorLinks.join(', ')}) that disable cannot remove; set mask: true`, { port: null, unit, pid: null }));
    }
  };

  for (const s of o.sockets) {
    const listen = s.socket.listens.filter((l) => s.ports.includes(l.port)).map((l) => `ListenStream=${l.directive.value} (${fileLine(l.directive)})`).join(', ');
    const enabled = s.enablement.links.length + s.enablement.vendorLinks.length > 0;
    if (!enabled) continue; // nothing starts it at boot
    disable(s.socket.name, s.enablement, `would listen on ${s.ports.join(', ')} at boot: ${listen}`);
    if (s.serviceEnablement && s.serviceEnablement.links.length + s.serviceEnablement.vendorLinks.length > 0) {
      disable(s.socket.service, s.serviceEnablement, `is the service of ${s.socket.name}`);
    }
  }
  for (const d of o.disableUnits) {
    if (!d.exists && d.enablement.links.length === 0) continue; // nothing in the image to disable
    disable(d.unit, d.enablement, 'is listed in disable_units');
  }
  const seen = new Set<string>();
  for (const c of o.candidates) {
    const { unit, port, evidence } = c.candidate;
    if (handled.has(unit) || seen.has(unit)) continue;
    // Listing a candidate as protected is how an operator says "it does not bind the port".
    if (protectionOf(unit, spec, null) !== null) continue;
    const enabled = c.enablement.links.length + c.enablement.vendorLinks.length > 0;
    if (!enabled || c.enablement.masked) continue;
    seen.add(unit);
    if (firstBoot) {
      // Whether it really binds the port is a run-time truth: the first boot waits for it and frees the port if it does.
      changes.push({
        id: `candidate-${unit}`,
        action: 'deferred',
        deferred: true,
        summary: `at first boot: wait (up to ${spec.timeout_seconds} s) for ${unit}, which may listen on ${port} (${evidence.key}= at ${fileLine(evidence)} mentions ${port}); stop and disable it if it does`,
        op: { kind: 'first-boot-wait', port, unit },
      });
      continue;
    }
    changes.push(
      operatorChange(
        `candidate-${unit}`,
        `${unit} may listen on ${port} at boot (${evidence.key}= at ${fileLine(evidence)} mentions ${port})`,
        `a service that names the port is only a candidate; add ${unit} to disable_units to disable it in the image, or to protected_units if it does not bind the port`,
        { port, unit, pid: null },
      ),
    );
  }
  return changes;
}

// ---------------------------------------------------------------- apply

export interface FreedPort {
  port: number;
  unit: string;
  pid: number;
  /** Set for socket activation: the socket unit stopped with the service. */
  socket?: string;
}

const POLL_MS = 200;

async function restartDelayMs(host: Host, units: string[]): Promise<number> {
  let max = 0;
  for (const u of units) {
    const v = await systemctlValue(host, 'RestartUSec', u);
    const ms = v === null ? null : parseTimespanMs(v);
    if (ms !== null) max = Math.max(max, ms);
  }
  return max;
}

/**
 * Waits until every port is free and has stayed free for its hold time (the
 * unit's restart delay + 1 s), all within `timeoutMs`. Returns the ports that
 * did not get there, with why.
 */
async function waitFree(
  host: Host,
  holds: Map<number, number>,
  timeoutMs: number,
  progress: (m: string) => void,
): Promise<Map<number, string>> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  const freeSince = new Map<number, number>();
  const done = new Set<number>();
  const reappeared = new Set<number>();
  let lastReport = 0;
  for (;;) {
    const now = Date.now();
    const busy = new Set((await readListeners(host)).map((l) => l.port));
    for (const [port, hold] of holds) {
      if (done.has(port)) continue;
      if (busy.has(port)) {
        if (freeSince.has(port)) reappeared.add(port);
        freeSince.delete(port);
        continue;
      }
      if (!freeSince.has(port)) freeSince.set(port, now);
      // Hold past the restart delay, but never past the timeout.
      if (now - freeSince.get(port)! >= hold || now >= deadline) done.add(port);
    }
    if (done.size === holds.size) break;
    if (now >= deadline) break;
    if (now - lastReport >= 1000) {
      lastReport = now;
      const waiting = [...holds.keys()].filter((p) => !done.has(p));
      const states = waiting.map((p) => (freeSince.has(p) ? `${p} free for ${((now - freeSince.get(p)!) / 1000).toFixed(1)}s of ${(holds.get(p)! / 1000).toFixed(1)}s` : `${p} still listening`));
      progress(`PortFree: waiting (${((now - started) / 1000).toFixed(0)}s of ${timeoutMs / 1000}s): ${states.join(', ')}`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const failed = new Map<number, string>();
  for (const port of holds.keys()) {
    if (done.has(port) && freeSince.has(port)) {
      const held = Date.now() - freeSince.get(port)!;
      if (held < holds.get(port)!) progress(`PortFree: port ${port} free for only ${(held / 1000).toFixed(1)}s of its ${(holds.get(port)! / 1000).toFixed(1)}s hold when the timeout ran out`);
      continue;
    }
    failed.set(port, reappeared.has(port) ? `port ${port} was free and then listening again: something restarts it` : `port ${port} still listening after ${timeoutMs / 1000}s`);
  }
  return failed;
}

/**
 * `disable` removes [Install] links only. A unit that is still "static",
 * "indirect" or enabled afterwards can be pulled in at boot by something
 * else (a Wants= elsewhere, a vendor .wants link, a /run link); say so,
 * since only mask: true rules that out. A warning, not an error: a static
 * unit that nothing wants stays down.
 */
async function warnIfStillStartable(host: Host, unit: string, progress: (m: string) => void): Promise<void> {
  let state = '';
  try {
    state = (await host.run('systemctl', ['is-enabled', unit])).stdout.trim();
  } catch {
    return;
  }
  if (['static', 'indirect', 'enabled', 'enabled-runtime', 'generated', 'alias', 'linked', 'linked-runtime'].includes(state)) {
    progress(`PortFree: warning: ${unit} is "${state}" after disable; if another unit pulls it in at boot it comes back (mask: true prevents that)`);
  }
}

async function applyLive(
  host: Host,
  spec: PortFreeSpec,
  ops: StopOp[],
  ctx: ApplyContext,
): Promise<{ freed: FreedPort[]; error?: string }> {
  // 1. Record what holds each port before anything is touched.
  const records: FreedPort[] = ops.map((op) => ({ port: op.port, unit: op.unit, pid: op.pid, ...(op.socket ? { socket: op.socket } : {}) }));
  for (const r of records) ctx.progress(`PortFree: port ${r.port}: recorded unit ${r.unit}, pid ${r.pid}${r.socket ? `, socket ${r.socket}` : ''}`);

  const timeoutMs = spec.timeout_seconds * 1000;
  const errors: string[] = [];
  const holds = new Map<number, number>();
  const stopped = new Set<number>();
  // One unit may hold several ports (etcd: 2379 and 2380); act on it once.
  const done = new Map<string, number>(); // unit -> restart delay
  for (const op of ops) {
    try {
      const todo = op.units.filter((u) => !done.has(u));
      if (todo.length > 0) {
        // Read before the stop: a stopped unit may be garbage-collected and lose its properties.
        const restart = await restartDelayMs(host, todo);
        ctx.progress(`PortFree: port ${op.port}: systemctl stop ${todo.join(' ')}`);
        const door = ctx.door;
        // The journal gets the links systemctl itself changed, read before and after, so a rollback puts back exactly those.
        const changedLinks = async (before: Map<string, string>) => linkDelta(before, await unitLinkSnapshot(host));
        await door.runtime({ step: 'unit-stop', units: todo }, () => host.runChecked('systemctl', ['stop', ...todo], { timeoutMs }));
        const beforeDisable = await unitLinkSnapshot(host);
        await door.runtime({ step: 'unit-disable', units: todo }, () => host.runChecked('systemctl', ['disable', ...todo], { timeoutMs }), () => changedLinks(beforeDisable));
        if (op.mask) {
          const beforeMask = await unitLinkSnapshot(host);
          await door.runtime({ step: 'unit-mask', units: todo }, () => host.runChecked('systemctl', ['mask', ...todo], { timeoutMs }), () => changedLinks(beforeMask));
        }
        for (const u of todo) done.set(u, restart);
        if (!op.mask) await warnIfStillStartable(host, op.socket ?? op.unit, ctx.progress);
      }
      holds.set(op.port, Math.max(...op.units.map((u) => done.get(u) ?? 0)) + 1000);
      stopped.add(op.port);
    } catch (e) {
      errors.push(`port ${op.port} (${op.units.join(', ')}): ${(e as Error).message}`);
    }
  }
  const failed = holds.size > 0 ? await waitFree(host, holds, timeoutMs, ctx.progress) : new Map<number, string>();
  for (const [, why] of failed) errors.push(why);
  const freed = records.filter((r) => stopped.has(r.port) && !failed.has(r.port));
  if (errors.length > 0) {
    const ok = freed.length > 0 ? ` (freed: ${freed.map((f) => `${f.port} from ${f.unit}`).join(', ')})` : '';
    return { freed, error: `PortFree: ${errors.join('; ')}${ok}` };
  }
  return { freed };
}

async function applyOffline(door: WriteDoor, changes: Change<PortFreeOp>[]): Promise<void> {
  for (const c of changes) {
    const op = c.op;
    if (op.kind === 'disable-links') {
      await removeUnitLinks(door, op.links);
    } else if (op.kind === 'mask-link') {
      await door.symlink(`/etc/systemd/system/${op.unit}`, '/dev/null');
    }
  }
}

/** ports.json: the lowest freed port at top level, every freed port under `freed`. */
export function portsReport(freed: FreedPort[]): Record<string, unknown> | null {
  if (freed.length === 0) return null;
  const sorted = [...freed].sort((a, b) => a.port - b.port);
  const top = sorted[0]!;
  return { port: top.port, unit: top.unit, pid: top.pid, ...(top.socket ? { socket: top.socket } : {}), freed: sorted };
}

// ---------------------------------------------------------------- provider

export const portFreeProvider: Provider<PortFreeSpec, PortFreeObserved, PortFreeOp> = {
  type: 'PortFree',
  after: [],

  async observe(host, spec) {
    return host.live ? observeLive(host, spec) : observeOffline(host, spec);
  },

  diff(spec, observed, ctx) {
    if (observed.mode === 'live') return observed.busy.map((b) => diffLivePort(spec, observed, b));
    return diffOffline(spec, observed, ctx?.firstBoot === true);
  },

  async apply(host, spec, changes, ctx) {
    const actionable = changes.filter((c) => !c.operator && !c.deferred);
    if (!host.live) {
      await applyOffline(ctx.door, actionable);
      return;
    }
    const ops = actionable.map((c) => c.op).filter((op): op is StopOp => op.kind === 'stop');
    if (ops.length === 0) return;
    const { freed, error } = await applyLive(host, spec, ops, ctx);
    const report = portsReport(freed);
    return { ...(report ? { reports: { 'ports.json': report } } : {}), ...(error ? { error } : {}) };
  },
};
