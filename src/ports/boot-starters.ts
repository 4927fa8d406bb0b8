// On a running host, a wanted port that is free now can still be taken at the
// next boot, or the moment a timer fires: by a .socket unit that listens on it,
// or by a service whose ExecStart=/Environment= names it (a candidate only),
// when something starts that unit at boot. A look at /proc/net cannot see
// either (a timer that has not fired yet, a service started later in the
// boot), so the live plan names them instead of promising the port free.
// Pure: over the unit graph the discovery has already read.
import type { UnitDirective } from '../systemd/unit-file.js';
import type { UnitGraph } from '../systemd/unit-loader.js';
import { socketInstancesOf, socketUnitOf, unitFilesOf, type UnreadListen } from '../systemd/socket-unit.js';
import { bootPaths, describeBootPath } from '../systemd/boot-reach.js';
import { serviceCandidates, socketUnitsForPorts } from './socket-units.js';
import { byteOrder } from '../systemd/conf-dirs.js';

export interface BootStarter {
  port: number;
  unit: string;
  /** 'socket': its ListenStream= takes the port; 'candidate': a service whose command line or environment names it. */
  kind: 'socket' | 'candidate';
  /** The directive that names the port. */
  evidence: UnitDirective;
  /** What starts it at boot, as one sentence (describeBootPath). */
  reach: string;
  /** A .timer, .path or .socket is on that chain: it can start between now and any later look, not only at boot. */
  triggered: boolean;
}

/** Units started at boot (or by a trigger that is) that would take one of `freePorts`, sorted by port and name. */
export function bootStarters(graph: UnitGraph, freePorts: number[]): BootStarter[] {
  if (freePorts.length === 0) return [];
  const units = unitFilesOf(graph);
  const found: Array<Omit<BootStarter, 'reach' | 'triggered'>> = [];
  for (const s of socketUnitsForPorts([...units.values(), ...socketInstancesOf(graph)], freePorts))
    for (const l of s.listens) if (freePorts.includes(l.port)) found.push({ port: l.port, unit: s.name, kind: 'socket', evidence: l.directive });
  for (const c of serviceCandidates(units.values(), freePorts)) found.push({ port: c.port, unit: c.unit, kind: 'candidate', evidence: c.evidence });
  const paths = bootPaths(
    graph,
    found.map((f) => f.unit),
  );
  const out: BootStarter[] = [];
  const seen = new Set<string>();
  for (const f of found) {
    const p = paths.get(f.unit);
    const key = `${f.port} ${f.unit}`;
    if (p === undefined || seen.has(key)) continue;
    seen.add(key);
    out.push({ ...f, reach: describeBootPath(graph, p, { still: false }), triggered: p.edges.some((e) => e.relation === 'Triggers') });
  }
  return out.sort((a, b) => a.port - b.port || byteOrder(a.unit, b.unit));
}

/** A socket something starts at boot whose ListenStream= may name a port: its specifier is not resolved here. */
export interface UnreadBootSocket {
  unit: string;
  listen: UnreadListen;
  /** What starts it at boot, as one sentence (describeBootPath). */
  reach: string;
  triggered: boolean;
}

/**
 * Sockets (plain, or instances of a template) that something starts at boot
 * and whose ListenStream= depends on a specifier not resolved here (%H, or a
 * letter systemd does not know): any port may be theirs. Sorted by unit.
 */
export function unreadBootSockets(graph: UnitGraph): UnreadBootSocket[] {
  const sockets = [...unitFilesOf(graph).values(), ...socketInstancesOf(graph)].filter((u) => u.name.endsWith('.socket') && !u.masked);
  const unread = sockets.flatMap((u) => socketUnitOf(u).unread.map((listen) => ({ unit: u.name, listen })));
  if (unread.length === 0) return [];
  const paths = bootPaths(
    graph,
    unread.map((x) => x.unit),
  );
  const out: UnreadBootSocket[] = [];
  for (const x of unread) {
    const p = paths.get(x.unit);
    if (p !== undefined) out.push({ ...x, reach: describeBootPath(graph, p, { still: false }), triggered: p.edges.some((e) => e.relation === 'Triggers') });
  }
  return out.sort((a, b) => byteOrder(a.unit, b.unit) || a.listen.directive.line - b.listen.directive.line);
}
