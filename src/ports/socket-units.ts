// Which systemd units would take a TCP port: .socket units by their
// ListenStream= (exact), services by their ExecStart=/Environment= (a
// candidate only). Read from the unit files as src/systemd/unit-loader.ts
// loads them, so it works live and on an unbooted image alike. Pure.
import type { UnitGraph } from '../systemd/unit-loader.js';
import { effectiveBoolean, effectiveList, lastAccepted, type UnitDirective } from '../systemd/unit-file.js';

/**
 * The TCP port of a ListenStream= value, or null for a non-IP socket.
 * Forms (systemd.socket(5)): "10250", "0.0.0.0:10250", "[::]:10250",
 * "[fe80::1%eth0]:10250"; paths ("/run/x.sock"), abstract ("@x") and
 * "vsock:" sockets have no port.
 */
export function listenStreamPort(value: string): number | null {
  const v = value.trim();
  if (v.startsWith('/') || v.startsWith('@') || v.startsWith('vsock:')) return null;
  const m = /^(?:\d+|(?:\[[^\]]+\]|[0-9.]+(?:%[\w.-]+)?):(\d+))$/.exec(v);
  if (!m) return null;
  const n = Number(m[1] ?? v);
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? n : null;
}

/** True when `text` holds `port` as a whole token: "--port 10250", "--port=10250", ":10250", "PORT=10250", not "110250". */
export function mentionsPort(text: string, port: number): boolean {
  return new RegExp(`(?<![\\w.])${port}(?![\\w]|\\.\\d)`).test(text);
}

export interface UnitFile {
  name: string;
  /**
   * Target path of the search-path entry that wins the name (for a linked
   * unit the link in /etc/systemd/system, not the file it leads to).
   */
  fragment: string;
  /** Masked: the winning entry is a link to /dev/null or an empty file. */
  masked: boolean;
  /** Fragment then drop-ins, in the order systemd applies them (LoadedUnit.directives). */
  directives: UnitDirective[];
}

export interface SocketUnit {
  name: string;
  fragment: string;
  /** ListenStream= entries with a TCP port. */
  listens: { port: number; directive: UnitDirective }[];
  /** The service it activates: Service=, else NAME@.service with Accept=yes, else NAME.service. */
  service: string;
  accept: boolean;
}

export function socketUnitOf(unit: UnitFile): SocketUnit {
  const listens = effectiveList(unit.directives, 'Socket', 'ListenStream')
    .map((d) => ({ port: listenStreamPort(d.value), directive: d }))
    .filter((l): l is { port: number; directive: UnitDirective } => l.port !== null);
  const stem = unit.name.replace(/\.socket$/, '');
  // systemd ignores an Accept= it cannot parse and a Service= that names no .service (also an empty one): the earlier value stays.
  const accept = effectiveBoolean(unit.directives, 'Socket', 'Accept') === true;
  const service = lastAccepted(unit.directives, 'Socket', 'Service', (v) => v.endsWith('.service'))?.value ?? (accept ? `${stem}@.service` : `${stem}.service`);
  return { name: unit.name, fragment: unit.fragment, listens, service, accept };
}

/** .socket units with a ListenStream= on any of `ports`, sorted by name. */
export function socketUnitsForPorts(units: Iterable<UnitFile>, ports: number[]): SocketUnit[] {
  const want = new Set(ports);
  const out: SocketUnit[] = [];
  for (const u of units) {
    if (!u.name.endsWith('.socket') || u.masked) continue;
    const s = socketUnitOf(u);
    if (s.listens.some((l) => want.has(l.port))) out.push(s);
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export interface ServiceCandidate {
  unit: string;
  port: number;
  /** The directive that mentions the port. */
  evidence: UnitDirective;
}

/** Services whose ExecStart=/ExecStartPre=/Environment= name a wanted port: they may bind it when they start. */
export function serviceCandidates(units: Iterable<UnitFile>, ports: number[]): ServiceCandidate[] {
  const out: ServiceCandidate[] = [];
  for (const u of units) {
    if (!u.name.endsWith('.service') || u.masked) continue;
    const directives = [
      ...effectiveList(u.directives, 'Service', 'ExecStart'),
      ...effectiveList(u.directives, 'Service', 'Environment'),
    ];
    for (const port of ports) {
      const hit = directives.find((d) => mentionsPort(d.value, port));
      if (hit) out.push({ unit: u.name, port, evidence: hit });
    }
  }
  return out.sort((a, b) => a.port - b.port || a.unit.localeCompare(b.unit));
}

/**
 * The .socket and .service units of a loaded graph, each under the name of
 * its own file, as port discovery asks about them: an alias is found under
 * the unit it names, a template instance through its template, and a name
 * no file holds is absent.
 */
export function unitFilesOf(graph: UnitGraph): Map<string, UnitFile> {
  const out = new Map<string, UnitFile>();
  for (const u of graph.units.values()) {
    if (u.entry === null || u.instance !== null || !(u.name.endsWith('.socket') || u.name.endsWith('.service'))) continue;
    out.set(u.name, { name: u.name, fragment: u.entry, masked: u.masked, directives: u.directives });
  }
  return out;
}
