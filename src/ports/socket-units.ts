// Which systemd units would take a TCP port: .socket units by their
// ListenStream= (exact, as systemd/socket-unit.ts reads them), services by
// their ExecStart=/Environment= (a candidate only). Read from the unit files
// as src/systemd/unit-loader.ts loads them, so it works live and on an
// unbooted image alike. Pure.
import { effectiveList, type UnitDirective } from '../systemd/unit-file.js';
import { socketUnitOf, type SocketUnit, type UnitFile } from '../systemd/socket-unit.js';
import { byteOrder } from '../systemd/conf-dirs.js';

/** True when `text` holds `port` as a whole token: "--port 10250", "--port=10250", ":10250", "PORT=10250", not "110250". */
export function mentionsPort(text: string, port: number): boolean {
  return new RegExp(`(?<![\\w.])${port}(?![\\w]|\\.\\d)`).test(text);
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
  return out.sort((a, b) => byteOrder(a.name, b.name));
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
    const directives = [...effectiveList(u.directives, 'Service', 'ExecStart'), ...effectiveList(u.directives, 'Service', 'Environment')];
    for (const port of ports) {
      const hit = directives.find((d) => mentionsPort(d.value, port));
      if (hit) out.push({ unit: u.name, port, evidence: hit });
    }
  }
  return out.sort((a, b) => a.port - b.port || byteOrder(a.unit, b.unit));
}
