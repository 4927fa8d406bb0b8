// Which systemd units would take a TCP port: .socket units by their
// ListenStream= (exact), services by their ExecStart=/Environment= (a
// candidate only). Reads unit files, so it works live and on an unbooted
// image alike. Parsing is pure; the loaders go through Host.
import path from 'node:path';
import type { TargetFs, Host } from '../host.js';
import { firstDirWins, listConfDirs } from '../systemd/conf-dirs.js';
import { isMaskEntry, UNIT_DIRS } from '../systemd/unit-dirs.js';
import { unitKind } from './cgroup.js';
import { effectiveList, effectiveValue, parseUnitText, type UnitDirective } from '../systemd/unit-file.js';

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
  /** Target path of the fragment that wins by precedence. */
  fragment: string;
  /** Masked: the winning entry is a link to /dev/null or an empty file. */
  masked: boolean;
  /** Fragment then drop-ins (NAME.d/*.conf, by file name across directories). */
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
  const accept = /^(yes|true|on|1)$/i.test(effectiveValue(unit.directives, 'Socket', 'Accept') ?? '');
  const service = effectiveValue(unit.directives, 'Socket', 'Service') ?? (accept ? `${stem}@.service` : `${stem}.service`);
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
 * Loads every .socket and .service unit on the search path (the first
 * directory holding a name wins), with drop-ins. Alias links (a name linking
 * to a differently named unit) and template instances are skipped: the unit
 * they name is loaded under its own name.
 */
export async function loadUnits(host: TargetFs, kinds: string[] = ['.socket', '.service']): Promise<Map<string, UnitFile>> {
  const fragments: Array<{ name: string; path: string }> = []; // in directory order
  const dropIns = new Map<string, Array<{ name: string; path: string }>>(); // unit -> its .conf entries, in directory order
  for (const { name, path: full, entry: e } of await listConfDirs(host, UNIT_DIRS)) {
    if (e.isDirectory() && name.endsWith('.d')) {
      const unit = name.slice(0, -2);
      if (!kinds.some((k) => unit.endsWith(k))) continue;
      const confs = dropIns.get(unit) ?? [];
      for (const c of (await host.readDir(full)) ?? []) {
        if (c.name.endsWith('.conf')) confs.push({ name: c.name, path: path.posix.join(full, c.name) });
      }
      dropIns.set(unit, confs);
      continue;
    }
    if (!kinds.some((k) => name.endsWith(k)) || unitKind(name) === null) continue;
    if (e.isSymbolicLink()) {
      const link = await host.readLink(full);
      if (link !== null && link !== '/dev/null' && path.posix.basename(link) !== name) continue; // alias
    } else if (!e.isFile()) continue;
    fragments.push({ name, path: full });
  }
  const units = new Map<string, UnitFile>();
  for (const { name, path: fragment } of firstDirWins(fragments, (f) => f.name)) {
    if (name.includes('@') && !name.includes('@.')) continue; // instance link; the template is loaded by itself
    const masked = await isMaskEntry(host, fragment);
    const directives = masked ? [] : parseUnitText((await host.readFile(fragment)) ?? '', fragment);
    if (!masked) {
      for (const c of firstDirWins(dropIns.get(name) ?? [], (c) => c.name)) directives.push(...parseUnitText((await host.readFile(c.path)) ?? '', c.path));
    }
    units.set(name, { name, fragment, masked, directives });
  }
  return units;
}
