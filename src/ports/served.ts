// What else a unit serves besides a wanted port, read before anything is
// stopped: the services its configuration names (inetd.conf, xinetd's
// service blocks, supervisord's programs), the sockets its processes hold on
// other ports, and the other processes in its cgroup. Stopping the unit to
// free one port ends all of them; the plan names them (diff-live.ts).
import path from 'node:path';
import type { TargetFs } from '../host.js';
import type { CgroupPlacement } from '../systemd/cgroup.js';
import { parseInetdConf, transportOf } from './inetd-conf.js';
import { isDisabled, parseXinetdConf, readInIncludedir, serviceId, xinetdTransport, type XinetdConf } from './xinetd-conf.js';
import { parseServices, servicePort, type ServicesDb, type Transport } from './services-db.js';
import { loadSupervisorPrograms } from './supervisor.js';

/** A socket on a port not wanted free. */
export interface OtherSocket {
  proto: Transport;
  address: string;
  port: number;
}

/** One service the unit runs, with the line that configures it. */
export interface ServedService {
  /** Which configuration names it. */
  by: 'inetd' | 'xinetd' | 'supervisor';
  name: string;
  /** Where it listens (null: a supervisor's program, or a name /etc/services does not know). */
  port: number | null;
  proto: Transport | null;
  file: string;
  line: number;
  /** The configuring line(s) as written (inetd: the entry; xinetd: the "service NAME" line). */
  text: string;
  /** It serves a wanted port: the one to switch off instead of stopping the unit. */
  wanted: boolean;
  /** xinetd: the block's "disable =" line, if it has one (else "disable = yes" goes before the closing brace). */
  disableLine?: number | null;
  endLine?: number;
}

/** What stopping one unit ends besides the wanted ports. */
export interface UnitServes {
  unit: string;
  /** The server whose configuration was read for it (inetd, xinetd, supervisord); null for any other unit. */
  server: ServedService['by'] | null;
  services: ServedService[];
  /** Sockets on other ports held by the unit's processes (its services' sockets among them). */
  sockets: OtherSocket[];
  /** Processes in the unit's cgroup that hold no wanted port and are not copies of a holder (a different command name). */
  processes: { pid: number; comm: string | null }[];
  /**
   * Processes in the unit's cgroup outside this PID namespace: cgroup.procs lists each as 0 (another container
   * sharing the cgroup, or the host seen from a container). Stopping the unit kills them too; who they are is not known.
   */
  hidden?: number;
  /** What could not be read, each naming the file; null when everything was. */
  unknown: string | null;
}

const INETD_STEMS = new Set(['inetd', 'openbsd-inetd', 'inetutils-inetd']);
const XINETD_STEMS = new Set(['xinetd']);
const SUPERVISOR_STEMS = new Set(['supervisor', 'supervisord']);

/** Which configuration a unit's services are read from, by the unit's name or the holder's command name. */
export function serverKind(unit: string, comm: string | null): ServedService['by'] | null {
  const names = [unit.replace(/\.service$/, ''), comm ?? ''];
  if (names.some((n) => INETD_STEMS.has(n))) return 'inetd';
  if (names.some((n) => XINETD_STEMS.has(n))) return 'xinetd';
  if (names.some((n) => SUPERVISOR_STEMS.has(n))) return 'supervisor';
  return null;
}

async function readOrProblem(host: TargetFs, file: string, problems: string[]): Promise<string | null> {
  try {
    return await host.readFile(file);
  } catch (e) {
    problems.push(`${file} could not be read (${e instanceof Error ? e.message : String(e)})`);
    return null;
  }
}

async function filesIn(host: TargetFs, dir: string, keep: (name: string) => boolean, problems: string[]): Promise<string[]> {
  try {
    const entries = (await host.readDir(dir)) ?? [];
    return entries
      .filter((e) => !e.isDirectory() && keep(e.name))
      .map((e) => path.posix.join(dir, e.name))
      .sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : a === b ? 0 : 1));
  } catch (e) {
    problems.push(`${dir} could not be listed (${e instanceof Error ? e.message : String(e)})`);
    return [];
  }
}

/** /etc/inetd.conf (openbsd-inetd) and /etc/inetd.d/* (inetutils-inetd reads both). */
async function inetdServices(host: TargetFs, db: ServicesDb, wanted: ReadonlySet<number>, problems: string[]): Promise<ServedService[]> {
  const files = ['/etc/inetd.conf', ...(await filesIn(host, '/etc/inetd.d', (n) => !n.startsWith('.'), problems))];
  const out: ServedService[] = [];
  for (const file of files) {
    const text = await readOrProblem(host, file, problems);
    if (text === null) continue;
    const conf = parseInetdConf(text, file);
    problems.push(...conf.problems.map((p) => p.message));
    for (const e of conf.entries) {
      const proto = transportOf(e.protocol);
      const port = proto === null ? null : servicePort(db, e.service, proto);
      if (proto !== null && port === null) problems.push(`${file}:${e.line}: service ${e.service} is not in /etc/services, so its port is unknown`);
      out.push({ by: 'inetd', name: e.service, port, proto, file, line: e.line, text: e.text, wanted: proto === 'tcp' && port !== null && wanted.has(port) });
    }
  }
  return out;
}

/** Every block of /etc/xinetd.conf and what it includes (each file once), without the disabled ones. */
async function xinetdServices(host: TargetFs, db: ServicesDb, wanted: ReadonlySet<number>, problems: string[]): Promise<ServedService[]> {
  const confs: XinetdConf[] = [];
  const seen = new Set<string>();
  const read = async (file: string, depth: number): Promise<void> => {
    if (seen.has(file) || depth > 8) return;
    seen.add(file);
    const text = await readOrProblem(host, file, problems);
    if (text === null) return;
    const conf = parseXinetdConf(text, file);
    confs.push(conf);
    problems.push(...conf.problems);
    for (const inc of conf.includes) {
      const files = inc.kind === 'includefile' ? [inc.path] : await filesIn(host, inc.path, readInIncludedir, problems);
      for (const f of files) await read(f, depth + 1);
    }
  };
  await read('/etc/xinetd.conf', 0);
  const defaults = Object.assign({}, ...confs.map((c) => c.defaults)) as Record<string, string[]>;
  const out: ServedService[] = [];
  for (const s of confs.flatMap((c) => c.services)) {
    if (isDisabled(s, defaults)) continue;
    const proto = xinetdTransport(s);
    const given = s.attrs.port?.[0];
    const port = proto === null ? null : given !== undefined ? servicePort(new Map(), given, proto) : servicePort(db, s.name, proto);
    const name = serviceId(s) === s.name ? s.name : `${s.name} (id ${serviceId(s)})`;
    out.push({
      by: 'xinetd',
      name,
      port,
      proto,
      file: s.file,
      line: s.line,
      text: `service ${s.name}`,
      wanted: proto === 'tcp' && port !== null && wanted.has(port),
      disableLine: s.disableLine,
      endLine: s.endLine,
    });
  }
  return out;
}

/** The services a unit's configuration names; empty for a unit this program cannot read the configuration of. */
export async function configuredServices(
  host: TargetFs,
  kind: ServedService['by'],
  wanted: ReadonlySet<number>,
): Promise<{ services: ServedService[]; problems: string[] }> {
  const problems: string[] = [];
  if (kind === 'supervisor') {
    const p = await loadSupervisorPrograms(host);
    problems.push(...p.unreadable.map((f) => `${f} could not be read`));
    const services = p.programs.map((x) => ({
      by: kind,
      name: x.name,
      port: null,
      proto: null,
      file: x.file,
      line: x.line,
      text: `command=${x.command}`,
      wanted: false,
    }));
    return { services, problems };
  }
  const db = parseServices((await readOrProblem(host, '/etc/services', problems)) ?? '');
  const services = kind === 'inetd' ? await inetdServices(host, db, wanted, problems) : await xinetdServices(host, db, wanted, problems);
  return { services, problems };
}

/** The cgroup directory of a placement's unit under /sys/fs/cgroup, or null (another v1 controller's path names no unit's processes). */
export function unitCgroupDir(p: CgroupPlacement): string | null {
  if (p.unit === null) return null;
  const base = p.hierarchy === 'v2' ? '/sys/fs/cgroup' : p.hierarchy === 'v1-systemd' ? '/sys/fs/cgroup/systemd' : null;
  if (base === null) return null;
  const parts = p.path.split('/').filter(Boolean);
  const at = parts.findIndex((x) => x === p.unit || x === `_${p.unit}`);
  return at < 0 ? null : `${base}/${parts.slice(0, at + 1).join('/')}`;
}

/**
 * Every PID in a cgroup and the cgroups below it (depth 4), ascending, and how many entries were 0 (a process of
 * another PID namespace: the kernel cannot name it here); null when the unit's cgroup.procs cannot be read. Live only.
 */
export async function cgroupPids(host: TargetFs, dir: string): Promise<{ pids: number[]; hidden: number } | null> {
  const pids = new Set<number>();
  let hidden = 0;
  const walk = async (d: string, depth: number): Promise<boolean> => {
    let procs: string | null;
    try {
      procs = await host.readKernel(`${d}/cgroup.procs`);
    } catch {
      return false;
    }
    if (procs === null) return false;
    for (const l of procs.split('\n')) {
      if (!/^\d+$/.test(l)) continue;
      if (Number(l) === 0) hidden++;
      else pids.add(Number(l));
    }
    if (depth >= 4) return true;
    const entries = (await host.readDir(d).catch(() => null)) ?? [];
    for (const e of entries) if (e.isDirectory()) await walk(`${d}/${e.name}`, depth + 1);
    return true;
  };
  return (await walk(dir, 0)) ? { pids: [...pids].sort((a, b) => a - b), hidden } : null;
}

/** Whether stopping the unit ends anything besides the wanted ports. */
export function servesOthers(s: UnitServes): boolean {
  return s.services.some((x) => !x.wanted) || s.sockets.length > 0 || s.processes.length > 0 || (s.hidden ?? 0) > 0;
}

/** A socket of the scan, with its transport. */
export interface ScannedSocket {
  proto: Transport;
  address: string;
  port: number;
  family: 'ipv4' | 'ipv6';
  inode: number;
}

/** One unit a busy port's holders sit in, and those holders. */
export interface HeldUnit {
  unit: string;
  placement: CgroupPlacement;
  holders: { pid: number; comm: string | null }[];
  /** The unit's main process and the holders' ancestors: the chain that runs the listener, not another service. */
  chain: number[];
}

async function commOf(host: TargetFs, pid: number): Promise<string | null> {
  try {
    return (await host.readKernel(`/proc/${pid}/comm`))?.trim() || null;
  } catch {
    return null;
  }
}

/** Live: what stopping `held.unit` ends besides the wanted ports (its configuration, its other sockets, its other processes). */
export async function unitServes(
  host: TargetFs,
  held: HeldUnit,
  others: ScannedSocket[],
  socketHolders: ReadonlyMap<number, number[]>,
  wanted: ReadonlySet<number>,
): Promise<UnitServes> {
  const problems: string[] = [];
  const kind = serverKind(held.unit, held.holders[0]?.comm ?? null);
  const services = kind === null ? [] : await configuredServices(host, kind, wanted).then((r) => (problems.push(...r.problems), r.services));
  const dir = unitCgroupDir(held.placement);
  const listed = dir === null ? null : await cgroupPids(host, dir);
  const pids = listed?.pids ?? null;
  if (listed === null) problems.push(`the processes of ${held.unit} could not be listed (${dir ?? held.placement.path}/cgroup.procs)`);
  const mine = new Set([...(pids ?? []), ...held.holders.map((h) => h.pid)]);
  const sockets = others
    .filter((s) => (socketHolders.get(s.inode) ?? []).some((p) => mine.has(p)))
    .map((s) => ({ proto: s.proto, address: s.family === 'ipv6' ? `[${s.address}]` : s.address, port: s.port }));
  const holderPids = new Set([...held.holders.map((h) => h.pid), ...held.chain]);
  const holderComms = new Set(held.holders.map((h) => h.comm));
  const processes: UnitServes['processes'] = [];
  for (const pid of pids ?? []) {
    if (holderPids.has(pid)) continue;
    const comm = await commOf(host, pid);
    // A copy of a holder (nginx's workers, a forking server's children) is the same service, not another one.
    if (comm !== null && holderComms.has(comm)) continue;
    processes.push({ pid, comm });
  }
  const unique = [...new Map(sockets.map((s) => [`${s.proto} ${s.address} ${s.port}`, s])).values()];
  unique.sort((a, b) => a.port - b.port || a.proto.localeCompare(b.proto) || a.address.localeCompare(b.address));
  const hidden = listed?.hidden ?? 0;
  return {
    unit: held.unit,
    server: kind,
    services,
    sockets: unique,
    processes,
    ...(hidden > 0 ? { hidden } : {}),
    unknown: problems.length > 0 ? problems.join('; ') : null,
  };
}
