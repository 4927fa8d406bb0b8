// Which systemd units would take a TCP port: .socket units by their
// ListenStream= (exact), services by their ExecStart=/Environment= (a
// candidate only). Reads unit files, so it works live and on an unbooted
// image alike. Parsing is pure; the loaders go through Host.
import path from 'node:path';
import type { WriteDoor } from '../door/door.js';
import type { LinkDelta } from '../door/journal.js';
import { HostError } from '../errors.js';
import type { Host } from '../host.js';
import { unitKind } from './cgroup.js';

/** Unit search path of the system manager, highest precedence first (systemd.unit(5)). */
export const UNIT_DIRS = [
  '/etc/systemd/system',
  '/run/systemd/system',
  '/usr/local/lib/systemd/system',
  '/usr/lib/systemd/system',
  '/lib/systemd/system',
] as const;

/** Where a mask link overrides every vendor unit. */
const CONFIG_DIRS = new Set<string>(['/etc/systemd/system', '/run/systemd/system']);

export interface UnitDirective {
  section: string;
  key: string;
  value: string;
  /** Target path of the file the line is in (fragment or drop-in). */
  file: string;
  /** 1-based line of the directive's first physical line. */
  line: number;
}

/** Parses unit-file text (systemd.syntax(7)): sections, comments, backslash continuations. */
export function parseUnitText(text: string, file: string): UnitDirective[] {
  const out: UnitDirective[] = [];
  const lines = text.split('\n');
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let line = lines[i]!.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    // A trailing backslash joins the next line (replaced by a space); comment
    // lines inside a continuation are skipped, as systemd does.
    while (line.endsWith('\\') && i + 1 < lines.length) {
      line = line.slice(0, -1);
      let next = lines[++i]!.trim();
      while ((next.startsWith('#') || next.startsWith(';')) && i + 1 < lines.length) next = lines[++i]!.trim();
      line = `${line} ${next}`;
    }
    if (line.startsWith('[') && line.endsWith(']')) {
      section = line.slice(1, -1);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    out.push({ section, key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim(), file, line: start });
  }
  return out;
}

/**
 * The effective values of a list-valued setting (ListenStream=, ExecStart=,
 * Environment=) across fragment and drop-ins in order: an empty assignment
 * resets the list, as in systemd.
 */
export function effectiveList(directives: UnitDirective[], section: string, key: string): UnitDirective[] {
  let out: UnitDirective[] = [];
  for (const d of directives) {
    if (d.section !== section || d.key !== key) continue;
    if (d.value === '') out = [];
    else out.push(d);
  }
  return out;
}

/** The last assignment of a single-valued setting, or null. */
export function effectiveValue(directives: UnitDirective[], section: string, key: string): string | null {
  let v: string | null = null;
  for (const d of directives) if (d.section === section && d.key === key) v = d.value === '' ? null : d.value;
  return v;
}

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

/** strcmp over UTF-8 bytes, as systemd sorts file names. */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

async function isMaskEntry(host: Host, target: string): Promise<boolean> {
  const link = await host.readLink(target);
  if (link !== null) return link === '/dev/null';
  const st = await host.lstat(target);
  return st !== null && st.isFile() && st.size === 0;
}

/**
 * Loads every .socket and .service unit on the search path (the first
 * directory holding a name wins), with drop-ins. Alias links (a name linking
 * to a differently named unit) and template instances are skipped: the unit
 * they name is loaded under its own name.
 */
export async function loadUnits(host: Host, kinds: string[] = ['.socket', '.service']): Promise<Map<string, UnitFile>> {
  const fragments = new Map<string, string>();
  const dropIns = new Map<string, Map<string, string>>(); // unit -> conf basename -> path (first dir wins)
  for (const dir of UNIT_DIRS) {
    for (const e of (await host.readDir(dir)) ?? []) {
      const full = path.posix.join(dir, e.name);
      if (e.isDirectory() && e.name.endsWith('.d')) {
        const unit = e.name.slice(0, -2);
        if (!kinds.some((k) => unit.endsWith(k))) continue;
        const confs = dropIns.get(unit) ?? new Map<string, string>();
        for (const c of (await host.readDir(full)) ?? []) {
          if (c.name.endsWith('.conf') && !confs.has(c.name)) confs.set(c.name, path.posix.join(full, c.name));
        }
        dropIns.set(unit, confs);
        continue;
      }
      if (!kinds.some((k) => e.name.endsWith(k)) || unitKind(e.name) === null || fragments.has(e.name)) continue;
      if (e.isSymbolicLink()) {
        const link = await host.readLink(full);
        if (link !== null && link !== '/dev/null' && path.posix.basename(link) !== e.name) continue; // alias
      } else if (!e.isFile()) continue;
      fragments.set(e.name, full);
    }
  }
  const units = new Map<string, UnitFile>();
  for (const [name, fragment] of fragments) {
    if (name.includes('@') && !name.includes('@.')) continue; // instance link; the template is loaded by itself
    const masked = await isMaskEntry(host, fragment);
    const directives = masked ? [] : parseUnitText((await host.readFile(fragment)) ?? '', fragment);
    if (!masked) {
      // systemd orders drop-ins by the bytes of their names (strcmp), not by locale: "10-y" before "10_x", "Z" before "a".
      const confs = [...(dropIns.get(name) ?? new Map<string, string>()).entries()].sort(([a], [b]) => byteOrder(a, b));
      for (const [, p] of confs) directives.push(...parseUnitText((await host.readFile(p)) ?? '', p));
    }
    units.set(name, { name, fragment, masked, directives });
  }
  return units;
}

// ------------------------------------------------ systemctl disable, offline
//
// `systemctl disable` (systemd's install.c) works on names, not files:
// 1. it marks each name, the names its unit file resolves through (an alias
//    or a linked file) and, recursively, the Also= units of [Install]; a
//    masked unit marks nothing, a missing one still marks its name;
// 2. it removes every symlink anywhere under /etc/systemd/system (not /run,
//    not vendor directories) whose name is marked, whose name's template is
//    marked ("foo@x.service" for "foo@.service"), or whose resolved target
//    has a marked name — then any symlink to a link it removed;
// 3. it removes the directories that leaves empty, up to /etc/systemd/system.
// test/unit-links.test.ts checks this against `systemctl --root`.

/** The one directory `systemctl disable` (without --runtime) and `mask` change. */
export const PERSISTENT_CONFIG = '/etc/systemd/system';

/** "foo@.service" for "foo@bar.service"; null for a name that is not an instance. */
export function templateOf(name: string): string | null {
  const m = /^([^@]+)@([^@]+)(\.[a-z]+)$/.exec(name);
  return m ? `${m[1]}@${m[3]}` : null;
}

/** A symlink under /etc/systemd/system, as `systemctl disable` judges it. */
export interface ConfigLink {
  /** Target path of the link. */
  path: string;
  name: string;
  /** Where the link itself points, normalized to a target path (one hop). */
  next: string;
  /** Where it ends after every hop, clamped to the root. */
  final: string;
}

/** Every symlink with a unit name under /etc/systemd/system, recursively. */
export async function readConfigLinks(host: Host): Promise<ConfigLink[]> {
  const out: ConfigLink[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const e of (await host.readDir(dir)) ?? []) {
      const full = path.posix.join(dir, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isSymbolicLink() && unitKind(e.name) !== null) {
        const text = await host.readLink(full);
        if (text === null) continue;
        const next = path.posix.resolve(dir, text);
        // A link loop points at no unit; systemd skips it, and so does every reader here.
        const final = await host.realTarget(full).catch((err: unknown) => {
          if (err instanceof HostError && err.code === 'ELOOP') return null;
          throw err;
        });
        if (final !== null) out.push({ path: full, name: e.name, next, final });
      }
    }
  };
  await walk(PERSISTENT_CONFIG);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/** The first entry named `name` on the unit search path (an instance falls back to its template). */
async function lookupUnitEntry(host: Host, name: string): Promise<string | null> {
  const tpl = templateOf(name);
  for (const n of tpl ? [name, tpl] : [name]) {
    for (const dir of UNIT_DIRS) {
      const p = path.posix.join(dir, n);
      if ((await host.lstat(p)) !== null) return p;
    }
  }
  return null;
}

/**
 * The names `systemctl disable NAMES` marks: each name, the name its unit
 * file resolves to (alias), and with `also` the Also= units, recursively.
 * [Install] is read from the unit file alone, as install.c does (drop-ins
 * have no [Install]).
 */
export async function disableMarks(host: Host, names: Iterable<string>, opts: { also: boolean }): Promise<Set<string>> {
  const marks = new Set<string>();
  const seen = new Set<string>();
  const queue = [...names];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const entry = await lookupUnitEntry(host, name);
    if (entry === null) {
      marks.add(name); // "does not exist", yet its links still go
      continue;
    }
    const real = await host.realTarget(entry);
    if (real === '/dev/null' || (await isMaskEntry(host, real))) continue; // masked: "ignoring"
    marks.add(name);
    // An alias (or a linked file of another name) marks the unit it names too;
    // an instance read through its template marks only itself.
    const resolved = path.posix.basename(real);
    const viaTemplate = path.posix.basename(entry) !== name;
    if (!viaTemplate && resolved !== name && unitKind(resolved) !== null) queue.push(resolved);
    if (!opts.also) continue;
    const install = parseUnitText((await host.readFile(real)) ?? '', real);
    for (const d of install) {
      if (d.section === 'Install' && d.key === 'Also') queue.push(...d.value.split(/\s+/).filter((n) => unitKind(n) !== null));
    }
  }
  return marks;
}

/** The links `systemctl disable` removes for `marks`. Pure. */
export function linksRemovedBy(links: ConfigLink[], marks: ReadonlySet<string>): string[] {
  const removed = new Set<string>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const l of links) {
      if (removed.has(l.path)) continue;
      const tpl = templateOf(l.name);
      const hit =
        marks.has(l.name) ||
        (tpl !== null && marks.has(tpl)) ||
        marks.has(path.posix.basename(l.final)) ||
        removed.has(l.next); // a link to a link that goes
      if (hit) {
        removed.add(l.path);
        changed = true;
      }
    }
  }
  return [...removed].sort();
}

/** What `systemctl disable NAMES` (Also= included) would remove from the tree. */
export async function disableLinks(host: Host, names: Iterable<string>): Promise<string[]> {
  return linksRemovedBy(await readConfigLinks(host), await disableMarks(host, names, { also: true }));
}

/**
 * Removes enablement links as `systemctl disable` does: each link (backed
 * up), then the directories under /etc/systemd/system that leaves empty.
 */
export async function removeUnitLinks(door: WriteDoor, links: Iterable<string>): Promise<void> {
  for (const link of links) {
    await door.remove(link);
    for (let dir = path.posix.dirname(link); dir.startsWith(`${PERSISTENT_CONFIG}/`); dir = path.posix.dirname(dir)) {
      if (!(await door.removeEmptyDir(dir))) break;
    }
  }
}

/** Every symlink under /etc/systemd/system with its raw text: what a live systemctl disable/mask changes. */
export async function unitLinkSnapshot(host: Host): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const l of await readConfigLinks(host)) {
    const text = await host.readLink(l.path);
    if (text !== null) out.set(l.path, text);
  }
  return out;
}

/** Pure: which links went and which came between two snapshots. */
export function linkDelta(before: Map<string, string>, after: Map<string, string>): LinkDelta {
  const removed = [...before].filter(([p, t]) => after.get(p) !== t).map(([p, t]) => ({ path: p, link: t }));
  const added = [...after].filter(([p, t]) => before.get(p) !== t).map(([p, t]) => ({ path: p, link: t }));
  return { removed, added };
}

export interface UnitEnablement {
  unit: string;
  /** Links of the unit itself that `systemctl disable UNIT` removes (dependency dirs and aliases in /etc). */
  links: string[];
  /** Links of its Also= units that `systemctl disable UNIT` removes too. */
  alsoLinks: string[];
  /** Links in vendor directories and /run: disable leaves them, only masking overrides them. */
  vendorLinks: string[];
  /** /etc/systemd/system/UNIT (or /run) links to /dev/null. */
  masked: boolean;
}

const DEP_DIR = /\.(wants|requires|upholds)$/;

/** Enablement links of the named units: what disable removes in /etc, and the links it cannot remove elsewhere. */
export async function enablementOf(host: Host, names: Iterable<string>): Promise<Map<string, UnitEnablement>> {
  const out = new Map<string, UnitEnablement>();
  const config = await readConfigLinks(host);
  for (const n of names) {
    const links = linksRemovedBy(config, await disableMarks(host, [n], { also: false }));
    const all = linksRemovedBy(config, await disableMarks(host, [n], { also: true }));
    out.set(n, { unit: n, links, alsoLinks: all.filter((l) => !links.includes(l)), vendorLinks: [], masked: false });
  }
  for (const dir of UNIT_DIRS) {
    for (const e of (await host.readDir(dir)) ?? []) {
      const full = path.posix.join(dir, e.name);
      if (e.isDirectory() && DEP_DIR.test(e.name) && dir !== PERSISTENT_CONFIG) {
        for (const l of (await host.readDir(full)) ?? []) {
          const lp = path.posix.join(full, l.name);
          const text = await host.readLink(lp);
          if (text === null) continue;
          // "foo.service" in a .wants dir, or an instance "foo@x.service" of template "foo@.service".
          const target = path.posix.basename(text);
          const unit = out.has(l.name) ? l.name : target !== l.name && out.has(target) ? target : null;
          if (unit !== null) out.get(unit)!.vendorLinks.push(lp);
        }
      } else if (e.isSymbolicLink() && CONFIG_DIRS.has(dir)) {
        const ent = out.get(e.name);
        if (ent && (await host.readLink(full)) === '/dev/null') ent.masked = true;
      }
    }
  }
  for (const e of out.values()) e.vendorLinks.sort();
  return out;
}
