// The boot watch's record, read back: one event per line as the tracer
// (script.ts) prints it, tab-separated, every field a process chooses
// escaped by bpftrace's %r (\xNN for each unprintable byte). Pure.
//
// The record is untrusted in its fields (a process names itself), not in
// its shape: a line that is not one of the tracer's is a problem named by
// its line number, never guessed at.

/** The control-plane ports watched (kubeadm's preflight Port-* checks). */
export const WATCHED_PORTS = [2379, 2380, 6443, 10250, 10257, 10259] as const;
/** The promised sysctls, as their /proc/sys file's directory and name. */
export const WATCHED_SYSCTLS = [
  ['ipv4', 'ip_forward'],
  ['bridge', 'bridge-nf-call-iptables'],
  ['bridge', 'bridge-nf-call-ip6tables'],
] as const;
/** The tracer's key number (from 1) -> the dotted key. */
const SYSCTL_KEYS: ReadonlyMap<string, string> = new Map(WATCHED_SYSCTLS.map(([d, n], i) => [String(i + 1), `net.${d}.${n}`]));

/** Who did it, as the kernel saw the calling task. */
export interface Writer {
  pid: number;
  ppid: number;
  /** The network namespace the event is in (the writer's, or the socket's). */
  netns: number;
  /** The task's cgroup v2 name, the last component of its path: its unit (foo.service, init.scope, session-1.scope). */
  cgroup: string;
  comm: string;
  /** argv, as far as the tracer read it. */
  argv: string[];
  /** The tracer read only part of the cmdline. */
  cut: boolean;
}

interface Base {
  /** Line in the record, from 1. */
  line: number;
  /** Time since boot (CLOCK_MONOTONIC), ns. */
  ns: number;
  who: Writer;
}
export type WatchEvent =
  | (Base & { kind: 'sysctl'; key: string; value: string })
  | (Base & { kind: 'swapon'; path: string; ret: number | null })
  | (Base & { kind: 'delete_module'; module: string; ret: number | null })
  | (Base & { kind: 'bind'; port: number; sockType: number })
  | (Base & { kind: 'listen'; port: number });

export interface WatchRecord {
  /** When the tracer was attached (its ready line), ns since boot; null: it never said so. */
  readyNs: number | null;
  /** The tracer's own network namespace: the host's. */
  hostNetns: number | null;
  events: WatchEvent[];
  problems: { line: number; message: string }[];
}

/** bpftrace's %r: printable ASCII kept, every other byte \xNN. Back to bytes, as a latin1 string. */
export function unescapeField(s: string): string {
  return s.replace(/\\x([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** A fixed-size buffer field: up to its first NUL. */
const cString = (s: string): string => {
  const raw = unescapeField(s);
  const nul = raw.indexOf('\0');
  return nul < 0 ? raw : raw.slice(0, nul);
};

const INT = /^-?[0-9]+$/;
const num = (s: string | undefined): number | null => (s !== undefined && INT.test(s) ? Number(s) : null);

/** The fields every event line starts with, after its kind and time. */
const WHO_FIELDS = 6;

/** Fields 2..7 of an event line: pid, ppid, netns, comm, the cmdline's length and its bytes. */
function writerOf(f: string[]): Writer | null {
  const [pid, ppid, netns, len] = [num(f[2]), num(f[3]), num(f[4]), num(f[6])];
  if (pid === null || ppid === null || netns === null || len === null || f[7] === undefined) return null;
  const raw = unescapeField(f[7]);
  const argv = raw.split('\0');
  if (argv.at(-1) === '') argv.pop();
  return { pid, ppid, netns, cgroup: '', comm: cString(f[5]!), argv, cut: len > raw.length };
}

type Parsed = WatchEvent | { kind: 'ret'; event: 'swapon' | 'delete_module'; ns: number; pid: number; ret: number };

/** One line, or why it is not one of the tracer's. */
function parseLine(f: string[], line: number): Parsed | string {
  const kind = f[0]!;
  const ns = num(f[1]);
  if (ns === null) return `no time in a ${JSON.stringify(kind.slice(0, 20))} line`;
  if (kind === 'swapon-ret' || kind === 'delete_module-ret') {
    const [pid, ret] = [num(f[2]), num(f[3])];
    if (pid === null || ret === null || f.length !== 4) return `a ${kind} line without pid and result`;
    return { kind: 'ret', event: kind === 'swapon-ret' ? 'swapon' : 'delete_module', ns, pid, ret };
  }
  // kind-specific fields after the writer's; the cgroup is the next line's (attachCgroup).
  const own = kind === 'sysctl' || kind === 'bind' ? 2 : kind === 'swapon' || kind === 'delete_module' || kind === 'listen' ? 1 : -1;
  if (own < 0) return `not a line of the tracer (${JSON.stringify(kind.slice(0, 20))})`;
  const at = 2 + WHO_FIELDS;
  if (f.length !== at + own) return `a ${kind} line with ${f.length} fields`;
  const who = writerOf(f);
  if (who === null) return `a ${kind} line without its writer`;
  const base = { line, ns, who };
  const [a, b] = [f[at]!, f[at + 1]!];
  if (kind === 'sysctl') {
    const key = SYSCTL_KEYS.get(a);
    if (key === undefined) return `a sysctl line for key number ${JSON.stringify(a)}, which the tracer does not watch`;
    // echo and sysctl(8) write the value and a newline; the kernel ignores surrounding whitespace.
    return { ...base, kind, key, value: unescapeField(b).trim() };
  }
  if (kind === 'swapon') return { ...base, kind, path: cString(a), ret: null };
  if (kind === 'delete_module') return { ...base, kind, module: cString(a), ret: null };
  const port = num(a);
  if (port === null) return `a ${kind} line without a port`;
  if (kind === 'listen') return { ...base, kind, port };
  const sockType = num(b);
  return sockType === null ? `a bind line without a socket type` : { ...base, kind: 'bind', port, sockType };
}

/**
 * "cgroup PID NAME": the cgroup of the event just before it (the tracer prints it from the same probe, so it is
 * the next record of that CPU's buffer). The name is the rest of the line: a tab in it stays in it.
 */
function attachCgroup(record: WatchRecord, f: string[], named: Set<WatchEvent>): string | null {
  const pid = num(f[1]);
  const last = record.events.at(-1);
  if (pid === null || f.length < 3) return 'a cgroup line without pid and name';
  if (!last || last.who.pid !== pid || named.has(last)) return `a cgroup line for pid ${pid} after no event of that process`;
  last.who.cgroup = f.slice(2).join('\t');
  named.add(last);
  return null;
}

/** The last element that holds (Array.prototype.findLast is not in the bundle's ES2022 lib). */
export function lastOf<T>(xs: readonly T[], holds: (x: T) => boolean): T | undefined {
  for (let i = xs.length - 1; i >= 0; i--) if (holds(xs[i]!)) return xs[i];
  return undefined;
}

/** The record of one watched boot. */
export function parseWatchLog(text: string): WatchRecord {
  const record: WatchRecord = { readyNs: null, hostNetns: null, events: [], problems: [] };
  const named = new Set<WatchEvent>();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((l, i) => {
    const f = l.split('\t');
    // bpftrace's own lines ("Attaching 9 probes...") carry no tab.
    if (f.length === 1) return;
    if (f[0] === 'cgroup') {
      const problem = attachCgroup(record, f, named);
      if (problem) record.problems.push({ line: i + 1, message: problem });
      return;
    }
    if (f[0] === 'ready' && f.length === 3 && num(f[1]) !== null && num(f[2]) !== null) {
      [record.readyNs, record.hostNetns] = [num(f[1]), num(f[2])];
      return;
    }
    const p = parseLine(f, i + 1);
    if (typeof p === 'string') record.problems.push({ line: i + 1, message: p });
    else if (p.kind !== 'ret') record.events.push(p);
    else {
      // The exit of a syscall is the latest enter of the same process without one.
      const enter = lastOf(record.events, (e) => e.kind === p.event && e.who.pid === p.pid && 'ret' in e && e.ret === null);
      if (enter && (enter.kind === 'swapon' || enter.kind === 'delete_module')) enter.ret = p.ret;
    }
  });
  return record;
}
