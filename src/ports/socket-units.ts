// Which systemd units would take a TCP port: .socket units by their
// ListenStream= (exact, as systemd/socket-unit.ts reads them), services by
// their ExecStart=/Environment= (a candidate only). Read from the unit files
// as src/systemd/unit-loader.ts loads them, so it works live and on an
// unbooted image alike. Pure.
import { effectiveList, lastAccepted, parseUnitBoolean, type UnitDirective } from '../systemd/unit-file.js';
import { listenStreamPort, socketUnitOf, type SocketUnit, type UnitFile } from '../systemd/socket-unit.js';
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

const at = (d: UnitDirective): string => `${d.key}=${d.value} at ${d.file}:${d.line}`;

/**
 * Whether the unit's own processes run in a network namespace other than
 * the host's (systemd.exec(5)): PrivateNetwork=yes gives it a new one (with
 * JoinsNamespaceOf= it shares another unit's, which systemd honours only
 * when that unit has PrivateNetwork= too: a private one either way);
 * NetworkNamespacePath= a named namespace of `ip netns` (/run/netns/NAME).
 * Any other path (/proc/1/ns/net is the host's) is not taken as private.
 */
function privateNetwork(u: UnitFile, section: string): UnitDirective | null {
  const pn = lastAccepted(u.directives, section, 'PrivateNetwork', (v) => parseUnitBoolean(v) !== null);
  if (pn !== null && parseUnitBoolean(pn.value) === true) return pn;
  const nsp = effectiveList(u.directives, section, 'NetworkNamespacePath').at(-1);
  if (nsp !== undefined && /^\/(var\/)?run\/netns\/[^/]+$/.test(nsp.value) && !nsp.value.endsWith('/..') && !nsp.value.endsWith('/.')) return nsp;
  return null;
}

/**
 * Why a service that names `port` cannot itself take the host's TCP port,
 * or null when it may. A socket that starts it and listens on TCP (in the
 * host's namespace) hands it the host's sockets whatever namespace the
 * service runs in: such a service stays a candidate. Otherwise: it runs in
 * a network namespace of its own (its listeners are not the host's), or the
 * socket that starts it hands it `port` as a datagram (UDP) socket,
 * ListenDatagram=, and no stream socket at all.
 */
export function notHostTcp(u: UnitFile, port: number, sockets: SocketUnitFiles): string | null {
  const starters = sockets.filter((s) => !s.file.masked && s.unit.service === u.name);
  const hostStream = starters.filter((s) => privateNetwork(s.file, 'Socket') === null && effectiveList(s.file.directives, 'Socket', 'ListenStream').length > 0);
  if (hostStream.length > 0) return null;
  const ns = privateNetwork(u, 'Service');
  if (ns !== null) return `it runs in a network namespace of its own (${at(ns)}), so a listener of its own is not on the host's port ${port}`;
  for (const s of starters) {
    const dgram = effectiveList(s.file.directives, 'Socket', 'ListenDatagram').find((d) => listenStreamPort(d.value) === port);
    if (dgram !== undefined) return `${s.unit.name} starts it and hands it port ${port} as a UDP socket (${at(dgram)}), with no stream socket`;
  }
  return null;
}

/** The .socket units among unit files, each with its reading. */
export type SocketUnitFiles = Array<{ file: UnitFile; unit: SocketUnit }>;

/** Services whose ExecStart=/ExecStartPre=/Environment= name a wanted port: they may bind it when they start. */
export function serviceCandidates(units: Iterable<UnitFile>, ports: number[]): ServiceCandidate[] {
  const out: ServiceCandidate[] = [];
  const all = [...units];
  const sockets: SocketUnitFiles = all.filter((u) => u.name.endsWith('.socket')).map((file) => ({ file, unit: socketUnitOf(file) }));
  for (const u of all) {
    if (!u.name.endsWith('.service') || u.masked) continue;
    const directives = [...effectiveList(u.directives, 'Service', 'ExecStart'), ...effectiveList(u.directives, 'Service', 'Environment')];
    for (const port of ports) {
      const hit = directives.find((d) => mentionsPort(d.value, port));
      if (hit && notHostTcp(u, port, sockets) === null) out.push({ unit: u.name, port, evidence: hit });
    }
  }
  return out.sort((a, b) => a.port - b.port || byteOrder(a.unit, b.unit));
}
