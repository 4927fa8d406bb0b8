// A .socket unit as systemd.socket(5) defines it: its ListenStream= addresses
// and the service it triggers (Service=, else NAME@.service with Accept=yes,
// else NAME.service), read from the directives the unit loader assembled
// (fragment, then drop-ins). Pure.
import type { UnitGraph } from './unit-loader.js';
import { effectiveBoolean, effectiveList, lastAccepted, type UnitDirective } from './unit-file.js';

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

/** A ListenStream= with a TCP port, and the directive that says so. */
export interface SocketListen {
  port: number;
  directive: UnitDirective;
}

export interface SocketUnit {
  name: string;
  fragment: string;
  /** ListenStream= entries with a TCP port. */
  listens: SocketListen[];
  /** The service it activates: Service=, else NAME@.service with Accept=yes, else NAME.service. */
  service: string;
  accept: boolean;
}

/** A .socket unit's TCP listens and the service it triggers (socket.c socket_load / unit_load_related_unit). */
export function socketUnitOf(unit: UnitFile): SocketUnit {
  const listens = effectiveList(unit.directives, 'Socket', 'ListenStream')
    .map((d) => ({ port: listenStreamPort(d.value), directive: d }))
    .filter((l): l is SocketListen => l.port !== null);
  const stem = unit.name.replace(/\.socket$/, '');
  // systemd ignores an Accept= it cannot parse and a Service= that names no .service (also an empty one): the earlier value stays.
  const accept = effectiveBoolean(unit.directives, 'Socket', 'Accept') === true;
  const service = lastAccepted(unit.directives, 'Socket', 'Service', (v) => v.endsWith('.service'))?.value ?? (accept ? `${stem}@.service` : `${stem}.service`);
  return { name: unit.name, fragment: unit.fragment, listens, service, accept };
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
