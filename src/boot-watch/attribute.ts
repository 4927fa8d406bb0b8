// A broken promise and its writer, named from the boot watch's record: the
// last event in the host's network namespace that did what the running host
// shows (wrote the value it has, turned on swap, removed the module, took the
// port). Pure.
import { lastOf, type WatchEvent, type WatchRecord, type Writer } from './record.js';

/** A promise the booted host does not keep, as the plan's promise names it. */
export interface Broken {
  /** The promise's id (sysctl:net.ipv4.ip_forward, swap:off). */
  id: string;
  kind: string;
  subject: string;
  /** What the running host shows instead (the promise judge's words). */
  seen: string;
  /** For a sysctl: the value it has now. */
  value?: string;
}

export interface Attribution {
  broken: Broken;
  /** The event that did it, or null when the record has none. */
  event: WatchEvent | null;
  /** One line: "net.ipv4.ip_forward set to 0 at 2.4 s by ufw.service: /usr/sbin/sysctl -p /etc/ufw/sysctl.conf". */
  text: string;
}

const SOCK_STREAM = 1;

const seconds = (ns: number): string => `${(ns / 1e9).toFixed(1)} s`;

/** Printable: controls as \xNN, so a name a process chose cannot forge a line. */
const shown = (s: string): string => s.replace(/[\x00-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

/** Units a process can run in (systemd.unit(5)); a cgroup named otherwise is no unit. */
const UNIT_SUFFIXES = ['.service', '.scope', '.socket', '.mount', '.swap'];

/**
 * The unit a cgroup v2 path belongs to: its last component when that is a
 * unit's name (/system.slice/ufw.service), else null (a process in a
 * sub-cgroup a unit made, or no systemd). bpftrace prints the path itself.
 */
export function unitOf(cgroupPath: string): string | null {
  const last = cgroupPath.slice(cgroupPath.lastIndexOf('/') + 1);
  return UNIT_SUFFIXES.some((s) => last.endsWith(s) && last.length > s.length) ? last : null;
}

/** "ufw.service: /usr/sbin/sysctl -p /etc/ufw/sysctl.conf (pid 412, comm sysctl, cgroup /system.slice/ufw.service)". */
export function writerText(w: Writer): string {
  const cmd = w.argv.length > 0 ? w.argv.join(' ') : `[${w.comm}]`;
  const unit = unitOf(w.cgroup);
  return `${shown(unit ?? `cgroup ${w.cgroup || '(none)'}`)}: ${shown(cmd)}${w.cut ? ' …' : ''} (pid ${w.pid}, comm ${shown(w.comm)}, cgroup ${shown(w.cgroup)})`;
}

/** Events of the host's namespace: a write or a socket in a container's own namespace changes nothing of the host's. */
const inHost = (r: WatchRecord, e: WatchEvent): boolean => r.hostNetns === null || e.who.netns === r.hostNetns;

function culprit(r: WatchRecord, b: Broken): WatchEvent | null {
  const matches = (e: WatchEvent): boolean => {
    if (b.kind === 'sysctl') return e.kind === 'sysctl' && e.key === b.subject && inHost(r, e) && (b.value === undefined || e.value === b.value);
    if (b.kind === 'swap') return e.kind === 'swapon' && e.ret === 0;
    if (b.kind === 'module') return e.kind === 'delete_module' && e.module === b.subject && e.ret === 0;
    if (b.kind === 'port')
      return inHost(r, e) && String((e as { port?: number }).port) === b.subject && (e.kind === 'listen' || (e.kind === 'bind' && e.sockType === SOCK_STREAM));
    return false;
  };
  return lastOf(r.events, matches) ?? null;
}

function didWhat(e: WatchEvent): string {
  switch (e.kind) {
    case 'sysctl':
      return `${e.key} set to ${shown(e.value)}`;
    case 'swapon':
      return `swap turned on (${shown(e.path)})`;
    case 'delete_module':
      return `module ${shown(e.module)} removed`;
    case 'bind':
      return `port ${e.port} bound (TCP)`;
    case 'listen':
      return `port ${e.port} listened on`;
  }
}

/** What the record cannot say, and why, in one line. */
function noWriter(r: WatchRecord, b: Broken): string {
  const window = r.readyNs === null ? 'the tracer never said it was attached' : `the watch was attached from ${seconds(r.readyNs)} after boot`;
  const what =
    b.kind === 'module' ? 'no removal' : b.kind === 'swap' ? 'no successful swapon' : b.kind === 'port' ? 'no bind or listen' : 'no write of this value';
  return `${b.seen}: ${what} was recorded (${window}); it was done before the watch attached, after it stopped, or by what the watch does not see`;
}

/** Each broken promise with its writer from the record. */
export function attribute(r: WatchRecord, broken: Broken[]): Attribution[] {
  return broken.map((b) => {
    const event = culprit(r, b);
    return { broken: b, event, text: event ? `${didWhat(event)} at ${seconds(event.ns)} by ${writerText(event.who)}` : noWriter(r, b) };
  });
}
