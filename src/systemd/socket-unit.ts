// A .socket unit as systemd.socket(5) defines it: its ListenStream= addresses
// and the service it triggers (Service=, else NAME@.service with Accept=yes,
// else NAME.service), read from the directives the unit loader assembled
// (fragment, then drop-ins). Pure.
import { isIPv4, isIPv6 } from 'node:net';
import type { UnitGraph } from './unit-loader.js';
import { effectiveBoolean, effectiveList, lastAccepted, type UnitDirective } from './unit-file.js';

/**
 * parse_ip_port(): strtoul() with base 0 (so "0x1f90" is 8080 and "010" is
 * 8, while "080" is no number), a "+" allowed, a leading blank or "-"
 * refused, 1 to 65535.
 */
function ipPort(s: string): number | null {
  const m = /^\+?(?:0[xX]([0-9a-fA-F]+)|0([0-7]*)|([1-9][0-9]*))$/.exec(s);
  if (!m) return null;
  const n = m[1] !== undefined ? parseInt(m[1], 16) : m[3] !== undefined ? Number(m[3]) : m[2] ? parseInt(m[2], 8) : 0;
  return n >= 1 && n <= 65535 ? n : null;
}

/** ifname_valid_full() with alternative and numeric names: what may follow "%" before systemd asks the kernel for the interface. */
function interfaceNameValid(name: string): boolean {
  return name.length > 0 && name.length < 128 && name !== '.' && name !== '..' && !/[\s/:%]/.test(name);
}

/**
 * The TCP port of a ListenStream= value, as socket_address_parse() and
 * in_addr_port_ifindex_name_from_string_auto() read it (systemd 252); null
 * for a non-IP socket (a path, "@abstract", "vsock:") and for a value systemd
 * refuses. Forms (systemd.socket(5)): "10250", "0.0.0.0:10250",
 * "[::]:10250", and a scope after the port ("[fe80::1]:10250%eth0"). An
 * address is what inet_pton() takes: four decimal octets without leading
 * zeros, or an IPv6 address in brackets. systemd refuses a scope naming an
 * interface the host lacks; that is the host's state, not the file's, so a
 * well-formed scope keeps the port.
 */
export function listenStreamPort(value: string): number | null {
  let v = value.trim();
  if (v.startsWith('/') || v.startsWith('@') || v.startsWith('vsock:')) return null;
  const only = ipPort(v);
  if (only !== null) return only;
  if (v.includes('#')) return null; // a server name: not for a listening socket
  const percent = v.indexOf('%');
  if (percent >= 0) {
    if (!interfaceNameValid(v.slice(percent + 1))) return null;
    v = v.slice(0, percent);
  }
  const colon = v.lastIndexOf(':');
  if (colon < 0) return null; // an address without a port
  if (v.startsWith('[')) return v[colon - 1] === ']' && isIPv6(v.slice(1, colon - 1)) ? ipPort(v.slice(colon + 1)) : null;
  if (isIPv6(v)) return null; // an IPv6 address without brackets, so without a port
  return isIPv4(v.slice(0, colon)) ? ipPort(v.slice(colon + 1)) : null;
}

/** Specifiers that expand to an absolute path (systemd.unit(5)): a value that starts with one names a file, never a TCP port. */
const PATH_SPECIFIERS = new Set(['t', 'S', 'C', 'L', 'E', 'T', 'V', 'h']);

/** unit_name_unescape(): "-" is "/", "\\xNN" a byte; null for an escape this reader does not take. */
function unescapeInstance(instance: string): string | null {
  let out = '';
  for (let i = 0; i < instance.length; i++) {
    const c = instance[i]!;
    if (c === '-') out += '/';
    else if (c !== '\\') out += c;
    else {
      const m = /^x([0-9a-fA-F]{2})/.exec(instance.slice(i + 1));
      if (!m) return null;
      out += String.fromCharCode(parseInt(m[1]!, 16));
      i += 3;
    }
  }
  return out;
}

/**
 * The TCP port of a ListenStream= line of unit `unit` (an instance, a template
 * or a plain name): systemd resolves its specifiers first (unit_full_printf:
 * "%%" is "%", "%i" the instance), then parses the address. A specifier this
 * reader does not resolve makes the port unknown: a host-dependent one (%H,
 * %m), one the value names on a template file (whose instances each listen
 * on their own), and a letter systemd has no specifier for, whose line it
 * ignores ("Failed to resolve unit specifiers"). A value that starts with
 * "/", "@" or a path specifier (%t/...) names a file: no TCP port, whatever
 * follows.
 */
export function listenPortOf(value: string, unit: string): { port: number | null } | { unknown: string } {
  const v = value.trim();
  if (v.startsWith('/') || v.startsWith('@') || (v[0] === '%' && PATH_SPECIFIERS.has(v[1] ?? ''))) return { port: null };
  if (!v.includes('%')) return { port: listenStreamPort(v) };
  const at = unit.indexOf('@');
  const dot = unit.lastIndexOf('.');
  // A plain unit's instance is empty; a template file's is not known until an instance is named.
  const instance = at < 0 ? '' : dot > at + 1 ? unit.slice(at + 1, dot) : null;
  const stem = dot > 0 ? unit.slice(0, dot) : unit;
  const table: Record<string, string | null> = {
    '%': '%',
    n: unit,
    N: stem,
    p: at >= 0 ? unit.slice(0, at) : stem,
    i: instance,
    I: instance === null ? null : unescapeInstance(instance),
  };
  let out = '';
  for (let i = 0; i < v.length; i++) {
    if (v[i] !== '%') {
      out += v[i];
      continue;
    }
    // A stray "%" at the end stays itself (specifier_printf).
    if (i === v.length - 1) {
      out += '%';
      break;
    }
    const letter = v[++i]!;
    const x = table[letter];
    if (x === undefined || x === null) return { unknown: `%${letter}` };
    out += x;
  }
  return { port: listenStreamPort(out) };
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

/** A ListenStream= whose port depends on a specifier not resolved here (listenPortOf). */
export interface UnreadListen {
  directive: UnitDirective;
  specifier: string;
}

export interface SocketUnit {
  name: string;
  fragment: string;
  /** ListenStream= entries with a TCP port. */
  listens: SocketListen[];
  /** ListenStream= entries that may or may not name a TCP port: their port is unknown. */
  unread: UnreadListen[];
  /** The service it activates: Service=, else NAME@.service with Accept=yes, else NAME.service. */
  service: string;
  accept: boolean;
}

/** A .socket unit's TCP listens and the service it triggers (socket.c socket_load / unit_load_related_unit). */
export function socketUnitOf(unit: UnitFile): SocketUnit {
  const listens: SocketListen[] = [];
  const unread: UnreadListen[] = [];
  for (const d of effectiveList(unit.directives, 'Socket', 'ListenStream')) {
    const p = listenPortOf(d.value, unit.name);
    if ('unknown' in p) unread.push({ directive: d, specifier: p.unknown });
    else if (p.port !== null) listens.push({ port: p.port, directive: d });
  }
  const stem = unit.name.replace(/\.socket$/, '');
  // systemd ignores an Accept= it cannot parse and a Service= that names no .service (also an empty one): the earlier value stays.
  const accept = effectiveBoolean(unit.directives, 'Socket', 'Accept') === true;
  const service = lastAccepted(unit.directives, 'Socket', 'Service', (v) => v.endsWith('.service'))?.value ?? (accept ? `${stem}@.service` : `${stem}.service`);
  return { name: unit.name, fragment: unit.fragment, listens, unread, service, accept };
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

/**
 * The instances of template sockets the graph names (sockets.target.wants/
 * foo@10250.socket), each under its instance name with its template's
 * directives: unitFilesOf leaves them to their template, but an instance
 * listens on what its own name makes of ListenStream=%i.
 */
export function socketInstancesOf(graph: UnitGraph): UnitFile[] {
  const out: UnitFile[] = [];
  for (const u of graph.units.values())
    if (u.entry !== null && u.instance !== null && u.instance !== '' && u.name.endsWith('.socket'))
      out.push({ name: u.name, fragment: u.entry, masked: u.masked, directives: u.directives });
  return out;
}
