// `systemctl enable/disable/mask` offline: which links disable removes and
// how they are removed, and which links enable a unit.
import path from 'node:path';
import type { WriteDoor } from '../door/door.js';
import type { LinkDelta } from '../door/journal.js';
import { HostError } from '../errors.js';
import type { TargetFs } from '../host.js';
import { unitKind } from './cgroup.js';
import { byteOrder } from './conf-dirs.js';
import { parseUnitText } from './unit-file.js';
import { isMaskEntry, SYSTEMD_SYSTEM_ETC, SYSTEM_UNIT_PATH } from './unit-dirs.js';

// `systemctl disable` (systemd's install.c) works on names, not files:
// 1. it marks each name, the names its unit file resolves through (an alias
//    or a linked file) and, recursively, the Also= units of [Install]; a
//    masked unit marks nothing, a missing one still marks its name;
// 2. it removes every symlink anywhere under /etc/systemd/system (not /run,
//    not vendor directories) whose name is marked, whose name's template is
//    marked ("foo@x.service" for "foo@.service"), or whose resolved target
//    has a marked name — then any symlink to a link it removed;
// 3. it removes the directories that leaves empty, up to /etc/systemd/system.
// test/systemd/unit-links.providers.test.ts checks this against `systemctl --root`.

/**
 * "foo@.service" for "foo@bar.service"; null for a name that is not an instance.
 * The first '@' starts the instance, which may hold more (unit_name_is_valid):
 * "foo@a@b.service" is an instance of foo@.service.
 */
export function templateOf(name: string): string | null {
  const m = /^([^@]+)@(.+)(\.[a-z]+)$/.exec(name);
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

/** Every symlink with a unit name under `dir` (/etc/systemd/system, or a user's ~/.config/systemd/user), recursively. */
export async function readConfigLinks(host: TargetFs, dir: string = SYSTEMD_SYSTEM_ETC): Promise<ConfigLink[]> {
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
  await walk(dir);
  return out.sort((a, b) => byteOrder(a.path, b.path));
}

/** The first entry named `name` on the unit search path (an instance falls back to its template). */
async function lookupUnitEntry(host: TargetFs, name: string): Promise<string | null> {
  const tpl = templateOf(name);
  for (const n of tpl ? [name, tpl] : [name]) {
    for (const dir of SYSTEM_UNIT_PATH) {
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
export async function disableMarks(host: TargetFs, names: Iterable<string>, opts: { also: boolean }): Promise<Set<string>> {
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
      if (d.section === 'Install' && d.key === 'Also') queue.push(...d.value.split(/[ \t\n\r]+/).filter((n) => unitKind(n) !== null));
    }
  }
  return marks;
}

/** The links `systemctl disable` removes for `marks`. Pure. */
export function linksRemovedBy(links: ConfigLink[], marks: ReadonlySet<string>): string[] {
  const removed = new Set<string>();
  for (let changed = true; changed;) {
    changed = false;
    for (const l of links) {
      if (removed.has(l.path)) continue;
      const tpl = templateOf(l.name);
      const hit = marks.has(l.name) || (tpl !== null && marks.has(tpl)) || marks.has(path.posix.basename(l.final)) || removed.has(l.next); // a link to a link that goes
      if (hit) {
        removed.add(l.path);
        changed = true;
      }
    }
  }
  return [...removed].sort();
}

/** What `systemctl disable NAMES` (Also= included) would remove from the tree. */
export async function disableLinks(host: TargetFs, names: Iterable<string>): Promise<string[]> {
  return linksRemovedBy(await readConfigLinks(host), await disableMarks(host, names, { also: true }));
}

/**
 * Removes enablement links as `systemctl disable` does: each link (backed
 * up), then the directories under /etc/systemd/system that leaves empty.
 */
export async function removeUnitLinks(door: WriteDoor, links: Iterable<string>): Promise<void> {
  for (const link of links) {
    await door.remove(link);
    for (let dir = path.posix.dirname(link); dir.startsWith(`${SYSTEMD_SYSTEM_ETC}/`); dir = path.posix.dirname(dir)) {
      if (!(await door.removeEmptyDir(dir))) break;
    }
  }
}

/** Every symlink under /etc/systemd/system with its raw text: what a live systemctl disable/mask changes. */
export async function unitLinkSnapshot(host: TargetFs): Promise<Map<string, string>> {
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
  /** `systemctl is-enabled` says masked: the unit's winning entry on the search path links to /dev/null or is empty. */
  masked: boolean;
}

const DEP_DIR = /\.(wants|requires|upholds)$/;

/** Enablement links of the named units: what disable removes in /etc, and the links it cannot remove elsewhere. */
export async function enablementOf(host: TargetFs, names: Iterable<string>): Promise<Map<string, UnitEnablement>> {
  const out = new Map<string, UnitEnablement>();
  const config = await readConfigLinks(host);
  for (const n of names) {
    const links = linksRemovedBy(config, await disableMarks(host, [n], { also: false }));
    const all = linksRemovedBy(config, await disableMarks(host, [n], { also: true }));
    out.set(n, { unit: n, links, alsoLinks: all.filter((l) => !links.includes(l)), vendorLinks: [], masked: false });
  }
  for (const dir of SYSTEM_UNIT_PATH) {
    for (const e of (await host.readDir(dir)) ?? []) {
      const full = path.posix.join(dir, e.name);
      if (e.isDirectory() && DEP_DIR.test(e.name) && dir !== SYSTEMD_SYSTEM_ETC) {
        for (const l of (await host.readDir(full)) ?? []) {
          const lp = path.posix.join(full, l.name);
          const text = await host.readLink(lp);
          if (text === null) continue;
          // "foo.service" in a .wants dir, or an instance "foo@x.service" of template "foo@.service".
          const target = path.posix.basename(text);
          const unit = out.has(l.name) ? l.name : target !== l.name && out.has(target) ? target : null;
          if (unit !== null) out.get(unit)!.vendorLinks.push(lp);
        }
      }
    }
  }
  for (const e of out.values()) {
    e.vendorLinks.sort();
    // As `systemctl is-enabled` says "masked": the entry that wins on the search path (an instance's
    // own, else its template's) is a link to /dev/null or an empty file, in any directory. A mask in
    // /run under a unit file in /etc masks nothing.
    const entry = await lookupUnitEntry(host, e.unit);
    if (entry !== null) {
      const real = await host.realTarget(entry);
      e.masked = real === '/dev/null' || (await isMaskEntry(host, real));
    }
  }
  return out;
}
