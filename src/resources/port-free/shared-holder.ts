// A holder that serves others (inetd, xinetd, a supervisor, a proxy with
// several listeners): what stopping its unit ends besides the wanted port,
// worded for the plan, and what to change instead when the desired state
// does not let the stop go ahead (stop_shared_holders: false). Pure.
import type { BusyPort, LivePortsObserved } from '../../ports/observed.js';
import type { OtherSocket, ServedService, UnitServes } from '../../ports/served.js';

/** What one stopped unit also ends; the --json plan's `ends` (detail of the change). */
export interface SharedEnd {
  unit: string;
  /** Its other configured services (inetd.conf entries, xinetd blocks, supervisord programs). */
  services: { name: string; port: number | null; proto: 'tcp' | 'udp' | null; file: string; line: number }[];
  /** Sockets on other ports no named service explains. */
  sockets: OtherSocket[];
  processes: { pid: number; comm: string | null }[];
  /** Processes in its cgroup outside this PID namespace (cgroup.procs lists them as 0): killed by the stop, not named. */
  hidden: number;
  /** The configured service that serves the wanted port: switch it off instead of stopping the unit. */
  serving: { by: ServedService['by']; name: string; file: string; line: number; text: string; disableLine: number | null; endLine: number | null } | null;
  /** What could not be read (a configuration file, the unit's cgroup); null when all was. */
  unknown: string | null;
  /** A server whose configuration was read (inetd, xinetd, supervisord): its unknown decides like something it serves; any other unit's is named only. */
  configured: boolean;
}

function endOf(s: UnitServes, port: number, holderSockets: OtherSocket[]): SharedEnd {
  const others = s.services.filter((x) => !x.wanted);
  const byKey = new Set(others.map((x) => `${x.proto}/${x.port}`));
  const sockets = [...new Map([...s.sockets, ...holderSockets].map((k) => [`${k.proto} ${k.address} ${k.port}`, k])).values()]
    .filter((k) => !byKey.has(`${k.proto}/${k.port}`))
    .sort((a, b) => a.port - b.port || a.proto.localeCompare(b.proto) || a.address.localeCompare(b.address));
  const w = s.services.find((x) => x.wanted && x.port === port) ?? null;
  return {
    unit: s.unit,
    services: others.map((x) => ({ name: x.name, port: x.port, proto: x.proto, file: x.file, line: x.line })),
    sockets,
    processes: s.processes,
    hidden: s.hidden ?? 0,
    serving: w ? { by: w.by, name: w.name, file: w.file, line: w.line, text: w.text, disableLine: w.disableLine ?? null, endLine: w.endLine ?? null } : null,
    unknown: s.unknown,
    configured: s.server !== null,
  };
}

/** The units of `units` whose stop ends more than the wanted port, each with what it ends. */
export function sharedEnds(o: LivePortsObserved, b: BusyPort, units: string[]): SharedEnd[] {
  const out: SharedEnd[] = [];
  for (const unit of units) {
    const holderSockets = b.holders.filter((h) => h.placement?.unit === unit).flatMap((h) => h.otherSockets ?? []);
    const seen = o.serves?.[unit] ?? { unit, server: null, services: [], sockets: [], processes: [], unknown: null };
    const e = endOf(seen, b.port, holderSockets);
    const known = e.services.length > 0 || e.sockets.length > 0 || e.processes.length > 0 || e.hidden > 0;
    if (known || (e.configured && e.unknown !== null)) out.push(e);
  }
  return out;
}

const proto = (p: number | null, t: string | null) => (p === null ? null : `${p}/${t}`);

/** "stopping inetd.service to free 10250 also ends its other services: discard (9/tcp, /etc/inetd.conf:3)...". */
export function endsText(port: number, ends: SharedEnd[]): string {
  return ends
    .map((e) => {
      const parts: string[] = [];
      if (e.services.length > 0) {
        const names = e.services.map((s) => `${s.name} (${[proto(s.port, s.proto), `${s.file}:${s.line}`].filter(Boolean).join(', ')})`);
        parts.push(`its other services: ${names.join(', ')}`);
      }
      if (e.sockets.length > 0) parts.push(`its other sockets: ${e.sockets.map((k) => `${k.address}:${k.port}/${k.proto}`).join(', ')}`);
      if (e.processes.length > 0) parts.push(`its other processes: ${e.processes.map((p) => `pid ${p.pid} (${p.comm ?? 'unknown'})`).join(', ')}`);
      if (e.hidden > 0) {
        const n = e.hidden === 1 ? '1 process' : `${e.hidden} processes`;
        parts.push(
          `${n} in its cgroup that this PID namespace cannot see (cgroup.procs lists ${e.hidden === 1 ? 'it' : 'them'} as pid 0: another PID namespace, such as a container sharing the cgroup)`,
        );
      }
      const unknown = e.unknown !== null ? `; unknown: ${e.unknown}, so it may end more` : '';
      return `stopping ${e.unit} to free ${port} also ends ${parts.length > 0 ? parts.join('; ') : 'what it could not be read for'}${unknown}`;
    })
    .join('; ');
}

/** How to free the port without stopping the unit, when its configuration names the service that serves it. */
function switchOff(e: SharedEnd, port: number): string {
  const s = e.serving;
  if (s === null) {
    if (e.configured) return `no entry of ${e.unit}'s configuration was found serving ${port}: find what makes ${e.unit} listen on ${port} and remove it`;
    return `change ${e.unit}'s configuration so it no longer listens on ${port}, then reload or restart it`;
  }
  if (s.by === 'inetd') {
    return `comment out ${s.file}:${s.line} (${JSON.stringify(s.text)}: put "#" before it; update-inetd --disable ${s.name} does that) and run systemctl reload ${e.unit} (inetd rereads its file on SIGHUP)`;
  }
  if (s.by === 'xinetd') {
    const where =
      s.disableLine !== null
        ? `change ${s.file}:${s.disableLine} to "disable = yes"`
        : `add "disable = yes" to ${s.file}:${s.line} (${s.text}) before its "}" at line ${s.endLine}`;
    return `${where} and run systemctl reload ${e.unit} (xinetd rereads its configuration on SIGHUP)`;
  }
  return `remove the program from ${s.file}:${s.line}, then supervisorctl reread && supervisorctl update`;
}

/** The operator line when stop_shared_holders is false: what the stop would end, what to change instead, the opt-in. */
export function sharedOperator(port: number, ends: SharedEnd[]): string {
  const instead = ends.map((e) => `to free ${port} and keep ${e.unit}: ${switchOff(e, port)}`).join('; ');
  const units = ends.map((e) => e.unit).join(' and ');
  return `${endsText(port, ends)}. It is not stopped for one port: ${instead}. Or set stop_shared_holders: true to stop and disable ${units} anyway`;
}

/** For a unit that is no server whose configuration is read: what could not be read of what its stop ends, named in its stop line. */
export function unreadNote(o: LivePortsObserved, units: string[]): string {
  return units
    .map((u) => o.serves?.[u])
    .filter((s): s is UnitServes => s !== undefined && s.server === null && s.unknown !== null)
    .map((s) => `; what else stopping ${s.unit} ends is not fully known: ${s.unknown}`)
    .join('');
}
