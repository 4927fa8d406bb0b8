// Which assignment sets a sysctl, under the two programs that read sysctl.d.
// Pure functions over a description of the files; observe.ts builds it.
//
// Checked against the sources Debian 12 ships:
//
// boot: systemd-sysctl (systemd 252, src/sysctl/sysctl.c + src/basic/conf-files.c)
//   - conf_files_list_strv(".conf", flags 0) over /etc/sysctl.d, /run/sysctl.d,
//     /usr/local/lib/sysctl.d, /usr/lib/sysctl.d (+ /lib/sysctl.d on split-usr;
//     directories are resolved and de-duplicated first, so a /lib -> usr/lib
//     alias adds nothing). The first directory holding a basename wins it.
//     Hidden names ('.foo.conf') are skipped. There is no explicit mask
//     filter: a symlink to /dev/null simply wins the name and reads empty.
//   - Files are sorted by basename (strcmp) and parsed in that order into one
//     ordered hashmap keyed by the normalized key: a new value for a key
//     removes the old entry and appends; the same value keeps the old entry
//     in place; "-key" (no '=') stores a NULL value, which is never written
//     (so it cancels an earlier explicit assignment of that key).
//   - Written in map order; a glob is expanded against /proc/sys and skips
//     every key present in the map. /etc/sysctl.conf is not read, only via
//     Debian's /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf link.
//
// system: procps-ng 4.0.2 `sysctl --system` (src/sysctl.c PreloadSystem)
//   - Directories in the order /etc/sysctl.d, /run/sysctl.d,
//     /usr/local/lib/sysctl.d, /usr/lib/sysctl.d, /lib/sysctl.d; names ending
//     in ".conf" (hidden ones too); the first directory wins a basename
//     (procps 3.3.x listed /run first; 4.0 puts /etc first, as systemd).
//   - Sorted by basename (strcmp), then /etc/sysctl.conf is read last when it
//     is a regular file (stat follows links), so on Debian it runs twice.
//   - Every line goes into one list, written in order: explicit keys always,
//     globs only for keys no node in the whole list names, "-key" never.
import path from 'node:path';
import { sysctlProcPath } from '../observe/sysctl-live.js';
import { byteOrder, firstDirWins } from '../systemd/conf-dirs.js';
import { parseSysctlText, sameSysctlValue } from './parse.js';
import { couplingOf, followerValue, keysAffecting, sameKernelValue, SYSCTL_COUPLINGS } from './couplings.js';
import type { SysctlCoupling } from './couplings.js';
import type { SysctlAssignment } from './parse.js';

export type SysctlModel = 'boot' | 'system';
export const SYSCTL_MODELS: readonly SysctlModel[] = ['boot', 'system'];

/** Highest precedence first. */
export const SYSCTL_DIRS = ['/etc/sysctl.d', '/run/sysctl.d', '/usr/local/lib/sysctl.d', '/usr/lib/sysctl.d', '/lib/sysctl.d'] as const;

export const SYSCTL_CONF = '/etc/sysctl.conf';

/** One directory entry named *.conf, or /etc/sysctl.conf itself. */
export interface SysctlConfFile {
  /** Path as listed, e.g. /etc/sysctl.d/99-sysctl.conf. */
  path: string;
  /** A symlink to /dev/null: wins its name and contributes nothing. */
  masked: boolean;
  /** Where the bytes really live (symlinks resolved), e.g. /etc/sysctl.conf. */
  realPath: string;
  /** Text as read ("" for masks and unreadable entries); resolution rewrites it. */
  content: string;
  assignments: SysctlAssignment[];
}

export interface SysctlTree {
  /** Every *.conf entry of the sysctl.d directories that are read (aliases of another left out). */
  files: SysctlConfFile[];
  /** /etc/sysctl.conf when it is a regular file (procps reads it last). */
  sysctlConf: SysctlConfFile | null;
}

/** An assignment together with the file entry it was read through. */
export interface AppliedAssignment {
  assignment: SysctlAssignment;
  source: SysctlConfFile;
  /** procps only: read from the trailing /etc/sysctl.conf pass. */
  tail: boolean;
}

export interface SysctlVerdict {
  key: string;
  model: SysctlModel;
  /** null: nothing in the files sets the key; the kernel keeps its current value. */
  value: string | null;
  winner: AppliedAssignment | null;
  /** explicit: named; glob: via a pattern; coupled: a write to a key the kernel couples with it; excluded: a "-key" line cancels it; none. */
  via: 'explicit' | 'glob' | 'coupled' | 'excluded' | 'none';
  /** via coupled: the key the winning line writes. */
  through?: string;
}

function dirRank(dir: string): number {
  return (SYSCTL_DIRS as readonly string[]).indexOf(dir);
}

/**
 * Per tree and program, what readOrder, applySequence and the writes' indexes
 * computed. The engine asks the same tree again for every key, program and
 * resolution round; on a tree of 10,000 files recomputing made the plan
 * quadratic in practice. Trees are never changed in place (withFile,
 * treeAfterWrites and withoutLines make new ones), so a tree object is its
 * own key; callers must not mutate what comes back.
 */
interface Derived {
  order?: ReadonlyArray<{ file: SysctlConfFile; tail: boolean }>;
  seq?: Seq;
  /** A derived sequence written out, for applySequence's callers. */
  flat?: readonly AppliedAssignment[];
  boot?: Map<string, AppliedAssignment>;
  named?: Set<string>;
}
const derivedByTree = new WeakMap<SysctlTree, Record<SysctlModel, Derived>>();

function derived(tree: SysctlTree, model: SysctlModel): Derived {
  let d = derivedByTree.get(tree);
  if (!d) derivedByTree.set(tree, (d = { boot: {}, system: {} }));
  return d[model];
}

/** Files each program reads, in the order it reads them. */
export function readOrder(tree: SysctlTree, model: SysctlModel): ReadonlyArray<{ file: SysctlConfFile; tail: boolean }> {
  const d = derived(tree, model);
  return (d.order ??= computeReadOrder(tree, model));
}

/** Whether a program reads an entry of the sysctl.d directories at all (before one directory wins its name). */
function isCandidate(f: SysctlConfFile, model: SysctlModel): boolean {
  // systemd's FOREACH_DIRENT skips hidden entries; procps reads them.
  return dirRank(path.posix.dirname(f.path)) >= 0 && f.path.endsWith('.conf') && (model === 'system' || !path.posix.basename(f.path).startsWith('.'));
}

function computeReadOrder(tree: SysctlTree, model: SysctlModel): { file: SysctlConfFile; tail: boolean }[] {
  const delta = deltas.get(tree);
  if (delta) return deriveReadOrder(tree, delta, model);
  const candidates = tree.files.filter((f) => isCandidate(f, model)).sort((a, b) => dirRank(path.posix.dirname(a.path)) - dirRank(path.posix.dirname(b.path)));
  const ordered = firstDirWins(candidates, (f) => path.posix.basename(f.path)).map((file) => ({ file, tail: false }));
  if (model === 'system' && tree.sysctlConf) ordered.push({ file: tree.sysctlConf, tail: true });
  return ordered;
}

/**
 * A tree made by withFile differs from its base by one entry: one name of the
 * read order can change hands, and nothing else. The derived trees (as
 * planned, as kubespray leaves it) are read from their base's order, sequence
 * and index instead of from all their files again: on 10,000 files the full
 * reads were a third of the plan's work.
 */
interface Delta {
  base: SysctlTree;
  /** The basename whose winner may change; null for procps's trailing read of /etc/sysctl.conf. */
  name: string | null;
}
const deltas = new WeakMap<SysctlTree, Delta>();

/** Where `name` sits in a read order (its entry, or where one would go), by binary search over the sorted names; null: the trailing pass. */
function slotOf(order: ReadonlyArray<{ file: SysctlConfFile; tail: boolean }>, name: string | null): { at: number; found: boolean } {
  let lo = 0;
  let hi = order.length;
  while (hi > 0 && order[hi - 1]!.tail) hi--;
  if (name === null) return { at: hi, found: hi < order.length };
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = byteOrder(path.posix.basename(order[mid]!.file.path), name);
    if (c === 0) return { at: mid, found: true };
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return { at: lo, found: false };
}

/** The entry that wins `name` among a tree's files under `model`, or null. */
function winnerOf(tree: SysctlTree, name: string, model: SysctlModel): SysctlConfFile | null {
  let best: SysctlConfFile | null = null;
  for (const f of tree.files) {
    if (!f.path.endsWith(`/${name}`) || !isCandidate(f, model)) continue;
    if (best === null || dirRank(path.posix.dirname(f.path)) < dirRank(path.posix.dirname(best.path))) best = f;
  }
  return best;
}

function deriveReadOrder(tree: SysctlTree, delta: Delta, model: SysctlModel): { file: SysctlConfFile; tail: boolean }[] {
  const order = [...readOrder(delta.base, model)];
  const { at, found } = slotOf(order, delta.name);
  const winner = delta.name === null ? (model === 'system' ? tree.sysctlConf : null) : winnerOf(tree, delta.name, model);
  const entry = winner && { file: winner, tail: delta.name === null };
  if (found && entry) order[at] = entry;
  else if (found) order.splice(at, 1);
  else if (entry) order.splice(at, 0, entry);
  return order;
}

/** The file entry that supplies a basename under `model`, or null if none does. */
export function effectiveFor(tree: SysctlTree, name: string, model: SysctlModel): SysctlConfFile | null {
  const order = readOrder(tree, model);
  const { at, found } = slotOf(order, name);
  return found ? order[at]!.file : null;
}

/**
 * A program's lines in the order it meets them, read by position: a tree read
 * in full holds them in an array; a derived tree reads them through its
 * base's (deriveApplySequence), so the planned trees of 10,000 files copy no
 * list of 100,000 lines.
 */
interface Seq {
  readonly length: number;
  /** The line at position i, for i from 0 to length - 1 (positions an index gave). */
  at(i: number): AppliedAssignment | undefined;
}

/** Every assignment in the order the program meets it (shared: do not mutate). */
export function applySequence(tree: SysctlTree, model: SysctlModel): readonly AppliedAssignment[] {
  const seq = sequence(tree, model);
  if (Array.isArray(seq)) return seq as readonly AppliedAssignment[];
  const d = derived(tree, model);
  return (d.flat ??= Array.from({ length: seq.length }, (_, i) => seq.at(i)!));
}

function sequence(tree: SysctlTree, model: SysctlModel): Seq {
  const d = derived(tree, model);
  return (d.seq ??= computeApplySequence(tree, model));
}

/** The line at a position the sequence's index gave. */
function lineAt(seq: Seq, i: number): AppliedAssignment {
  return seq.at(i)!;
}

function computeApplySequence(tree: SysctlTree, model: SysctlModel): Seq {
  const delta = deltas.get(tree);
  if (delta) return deriveApplySequence(tree, delta, model);
  const out: AppliedAssignment[] = [];
  for (const { file, tail } of readOrder(tree, model)) {
    if (file.masked) continue;
    for (const ap of appliedOf(file, tail)) out.push(ap);
  }
  return out;
}

/** A derived sequence: where the base's lines of the changed name were, how many, and what replaced them. */
interface SeqDelta {
  base: Seq;
  start: number;
  removed: number;
  inserted: readonly AppliedAssignment[];
}
const seqDeltas = new WeakMap<Seq, SeqDelta>();

function linesOf(entry: { file: SysctlConfFile; tail: boolean } | undefined): readonly AppliedAssignment[] {
  return entry === undefined || entry.file.masked ? [] : appliedOf(entry.file, entry.tail);
}

function deriveApplySequence(tree: SysctlTree, delta: Delta, model: SysctlModel): Seq {
  const base = sequence(delta.base, model);
  const before = readOrder(delta.base, model);
  const after = readOrder(tree, model);
  const old = slotOf(before, delta.name);
  const now = slotOf(after, delta.name);
  let start = 0;
  for (let i = 0; i < old.at; i++) start += linesOf(before[i]).length;
  const removed = old.found ? linesOf(before[old.at]).length : 0;
  const inserted = now.found ? linesOf(after[now.at]) : [];
  const shift = inserted.length - removed;
  const mid = start + inserted.length;
  const seq: Seq = {
    length: base.length + shift,
    at: (i) => (i < start ? base.at(i) : i < mid ? inserted[i - start] : base.at(i - shift)),
  };
  seqDeltas.set(seq, { base, start, removed, inserted });
  return seq;
}

/**
 * A file entry's lines as the program meets them. Made once per entry and
 * read pass, and shared by every tree holding the entry and by both programs
 * (a tree of 10,000 files is judged as observed, as planned and as kubespray
 * leaves it): the same objects, not six copies.
 */
function appliedOf(file: SysctlConfFile, tail: boolean): readonly AppliedAssignment[] {
  const cache = tail ? appliedTail : appliedListed;
  let list = cache.get(file);
  if (!list) cache.set(file, (list = file.assignments.map((a) => ({ assignment: tail ? { ...a, file: file.path } : a, source: file, tail }))));
  return list;
}
const appliedListed = new WeakMap<SysctlConfFile, readonly AppliedAssignment[]>();
const appliedTail = new WeakMap<SysctlConfFile, readonly AppliedAssignment[]>();

/** glob(3) semantics on the /proc/sys path: '*' and '?' stop at '/', [...] classes, '\' escapes. */
export function sysctlGlobMatches(pattern: string, key: string): boolean {
  const pat = sysctlProcPath(pattern);
  const target = sysctlProcPath(key);
  let re = '^';
  for (let i = 0; i < pat.length; i++) {
    const c = pat[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '\\' && i + 1 < pat.length) re += escapeRe(pat[++i]!);
    else if (c === '[') {
      const close = pat.indexOf(']', i + 2);
      if (close < 0) {
        re += '\\[';
        continue;
      }
      let body = pat.slice(i + 1, close);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      re += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, (m) => '\\' + m)}]`;
      i = close;
    } else re += escapeRe(c);
  }
  return new RegExp(re + '$').test(target);
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * Where a sequence names each key (lines without a glob, "-key" lines too)
 * and where its globs are, by position: a question about one key visits its
 * own lines, not every line of every file.
 */
interface SeqIndex {
  /** The positions of the lines (no glob) naming a key, in order; empty or undefined when none does. */
  byKey: { get(key: string): number[] | undefined };
  globs: number[];
}
const seqIndexes = new WeakMap<Seq, SeqIndex>();

function seqIndex(seq: Seq): SeqIndex {
  const known = seqIndexes.get(seq);
  if (known) return known;
  const delta = seqDeltas.get(seq);
  // A sequence without a delta was read in full: an array.
  const index = delta ? derivedIndex(delta) : fullIndex(seq as readonly AppliedAssignment[]);
  seqIndexes.set(seq, index);
  return index;
}

function fullIndex(seq: readonly AppliedAssignment[]): SeqIndex {
  const byKey = new Map<string, number[]>();
  const globs: number[] = [];
  for (let i = 0; i < seq.length; i++) {
    const a = seq[i]!.assignment;
    if (a.isGlob) globs.push(i);
    else {
      const at = byKey.get(a.key);
      if (at) at.push(i);
      else byKey.set(a.key, [i]);
    }
  }
  return { byKey, globs };
}

/**
 * A derived sequence's index from its base's: positions before the changed
 * lines stay, the changed lines' go, the inserted lines' come in, the rest
 * move by the difference. Only the keys asked about are worked out.
 */
function derivedIndex(d: SeqDelta): SeqIndex {
  const base = seqIndex(d.base);
  const end = d.start + d.removed;
  const shift = d.inserted.length - d.removed;
  const move = (positions: readonly number[], own: number[]): number[] => [
    ...positions.filter((i) => i < d.start),
    ...own,
    ...positions.filter((i) => i >= end).map((i) => i + shift),
  ];
  const ownGlobs: number[] = [];
  const ownKeys = new Map<string, number[]>();
  d.inserted.forEach((ap, j) => {
    if (ap.assignment.isGlob) ownGlobs.push(d.start + j);
    else (ownKeys.get(ap.assignment.key) ?? ownKeys.set(ap.assignment.key, []).get(ap.assignment.key)!).push(d.start + j);
  });
  const cache = new Map<string, number[]>();
  const get = (key: string): number[] | undefined => {
    const known = cache.get(key);
    if (known) return known;
    const at = move(base.byKey.get(key) ?? [], ownKeys.get(key) ?? []);
    cache.set(key, at);
    return at;
  };
  return { byKey: { get }, globs: move(base.globs, ownGlobs) };
}

/** The positions of the lines naming one of `keys`, and of every glob, in sequence order. */
function positionsFor(index: SeqIndex, keys: Iterable<string>): number[] {
  const at = [...index.globs];
  for (const k of new Set(keys)) at.push(...(index.byKey.get(k) ?? []));
  return at.sort((a, b) => a - b);
}

/** One value a program writes into /proc/sys, in the order it writes them. */
export interface KernelWrite {
  key: string;
  value: string;
  applied: AppliedAssignment;
  via: 'explicit' | 'glob';
}

/**
 * What the program writes that can change `key`: to it, its aliases and the
 * groups it follows (keysAffecting), globs expanded against those keys only
 * (offline there is no /proc/sys to expand them against). At boot that is
 * systemd-sysctl's ordered map (a repeated key with the same value keeps its
 * entry and place, a glob skips every key the map holds); under --system,
 * procps's one list (a glob skips every key any line names). followKey touches the
 * key at the same writes, in the same order, with the same values: a write
 * to any other key never touches it, and the coupled groups it follows are
 * kept whole. Only the lines naming those keys, and the globs, are visited.
 *
 * `gone` (lineId-like "realPath\0line" strings) reads the tree as if those
 * lines were commented out, in every entry that reads their file, without
 * building that tree: a line's absence changes nothing but its own key.
 */
function writesFor(tree: SysctlTree, model: SysctlModel, key: string, gone: ReadonlySet<string> | null = null): KernelWrite[] {
  const universe = keysAffecting(key);
  const only = new Set(universe);
  const seq = sequence(tree, model);
  const index = seqIndex(seq);
  const isGone = goneTest(gone);
  const kept = (i: number) => isGone === null || !isGone(lineAt(seq, i));
  // A key is named (by a line the program still reads) when one of its lines is kept.
  const named = (u: string) => (index.byKey.get(u) ?? []).some(kept);
  const at = positionsFor(index, only).filter(kept);
  const out: KernelWrite[] = [];
  if (model === 'boot') {
    // systemd's ordered map restricted to these keys and every glob: a key's
    // entry and its place come from its own lines alone (streq_ptr), so
    // the map's order is the order of each entry's last insertion.
    const last = new Map<string, { ap: AppliedAssignment; at: number }>();
    for (const i of at) {
      const ap = lineAt(seq, i);
      const existing = last.get(ap.assignment.key);
      if (existing && existing.ap.assignment.value === ap.assignment.value) continue;
      last.set(ap.assignment.key, { ap, at: i });
    }
    for (const { ap } of [...last.values()].sort((a, b) => a.at - b.at)) {
      const a = ap.assignment;
      if (a.value === null) continue;
      if (!a.isGlob) out.push({ key: a.key, value: a.value, applied: ap, via: 'explicit' });
      // The map holds a key once any kept line names it, a glob line too (its pattern is its key);
      // every line naming a key of the universe was visited.
      else for (const u of universe) if (!last.has(u) && sysctlGlobMatches(a.key, u)) out.push({ key: u, value: a.value, applied: ap, via: 'glob' });
    }
    return out;
  }
  for (const i of at) {
    const ap = lineAt(seq, i);
    const a = ap.assignment;
    if (a.excludeOnly || a.value === null) continue;
    if (!a.isGlob) out.push({ key: a.key, value: a.value, applied: ap, via: 'explicit' });
    else for (const u of universe) if (!named(u) && sysctlGlobMatches(a.key, u)) out.push({ key: u, value: a.value, applied: ap, via: 'glob' });
  }
  return out;
}

/** The file whose bytes hold a line, and the line: what commenting it out removes from every entry reading the file. */
export function lineKey(ap: AppliedAssignment): string {
  return `${ap.source.realPath}\u0000${ap.assignment.line}`;
}

/**
 * The lines of a program's sequence that name `key` without a glob ("-key"
 * lines too), in order: what a question about one key visits instead of the
 * whole sequence. Shared with the sequence's index: callers must not mutate it.
 */
export function linesNaming(tree: SysctlTree, model: SysctlModel, key: string): readonly AppliedAssignment[] {
  const seq = sequence(tree, model);
  return keptLines(seq, key, null).map((i) => lineAt(seq, i));
}

/**
 * Whether a line is one of `gone` (lineKey strings), asked without building
 * each line's key: a key repeated in 10,000 files has 10,000 lines to ask
 * about, and findConflicts asks again each round. Null: nothing is gone.
 */
function goneTest(gone: ReadonlySet<string> | null): ((ap: AppliedAssignment) => boolean) | null {
  if (gone === null || gone.size === 0) return null;
  const byFile = new Map<string, Set<number>>();
  for (const k of gone) {
    const cut = k.lastIndexOf('\u0000');
    const file = k.slice(0, cut);
    (byFile.get(file) ?? byFile.set(file, new Set()).get(file)!).add(Number(k.slice(cut + 1)));
  }
  return (ap) => byFile.get(ap.source.realPath)?.has(ap.assignment.line) === true;
}

/** Positions of the lines (no glob) naming `key` that are not `gone`, in order. */
function keptLines(seq: Seq, key: string, gone: ReadonlySet<string> | null): number[] {
  const named = seqIndex(seq).byKey.get(key) ?? [];
  const isGone = goneTest(gone);
  return isGone === null ? named : named.filter((i) => !isGone(lineAt(seq, i)));
}

/** procps's one list: explicit keys in order, globs only for keys no line of the list names, "-key" never. */
function listWrites(seq: readonly AppliedAssignment[], universe: string[]): KernelWrite[] {
  const out: KernelWrite[] = [];
  const named = seqIndex(seq).byKey;
  for (const ap of seq) {
    const a = ap.assignment;
    if (a.excludeOnly || a.value === null) continue;
    if (!a.isGlob) out.push({ key: a.key, value: a.value, applied: ap, via: 'explicit' });
    else
      for (const u of universe) if (!(named.get(u)?.length ?? 0) && sysctlGlobMatches(a.key, u)) out.push({ key: u, value: a.value, applied: ap, via: 'glob' });
  }
  return out;
}

/**
 * What `sysctl -p A B ...` writes: procps reads the files in turn into the
 * same one list as --system (a glob in B skips a key A names; checked in a
 * private network namespace, test/boot-scripts/sysctl-writes.test.ts).
 */
export function loadWrites(files: Array<{ path: string; content: string }>, universe: string[]): KernelWrite[] {
  const seq = files.flatMap((f) => {
    const source: SysctlConfFile = {
      path: f.path,
      masked: false,
      realPath: f.path,
      content: f.content,
      assignments: parseSysctlText(f.content, f.path).assignments,
    };
    return source.assignments.map((assignment) => ({ assignment, source, tail: false }));
  });
  return listWrites(seq, universe);
}

/** After each write: `key`'s value and the write that set it (directly, or through a coupled key). */
export interface KeyStep {
  write: KernelWrite;
  /** The key's value after this write; unchanged when the write did not touch it. */
  value: string | null;
  /** This write changed or set the key. */
  touched: boolean;
}

/**
 * Replays the writes through the kernel's couplings (couplings.ts) and
 * follows one key. `initial` gives a coupled group's value before the first
 * write (the kernel default at boot; unknown, so any write counts as a
 * change, under `sysctl --system` on a running host).
 */
export function followKey(writes: KernelWrite[], key: string, model: SysctlModel): KeyStep[] {
  const group = new Map<SysctlCoupling, string | null>();
  for (const c of SYSCTL_COUPLINGS) group.set(c, model === 'boot' ? c.kernelDefault : null);
  let value: string | null = null;
  return writes.map((w) => {
    let touched = false;
    if (w.key === key) {
      value = w.value;
      touched = true;
    }
    const c = couplingOf(w.key);
    if (c) {
      const prior = group.get(c) ?? null;
      group.set(c, w.value);
      if (c.same.includes(key) && w.key !== key) {
        value = w.value;
        touched = true;
      }
      const follows = followerValue(c, key, w.value);
      if (follows !== null && (prior === null || !sameKernelValue(prior, w.value))) {
        value = follows;
        touched = true;
      }
    }
    return { write: w, value, touched };
  });
}

export function verdict(tree: SysctlTree, key: string, model: SysctlModel): SysctlVerdict {
  return verdictWithout(tree, key, model, null);
}

/** verdict over the tree read without the `gone` lines (lineKey), as once they are commented out. */
function verdictWithout(tree: SysctlTree, key: string, model: SysctlModel, gone: ReadonlySet<string> | null): SysctlVerdict {
  const steps = followKey(writesFor(tree, model, key, gone), key, model);
  let last: KeyStep | undefined;
  for (let i = steps.length - 1; i >= 0 && !last; i--) if (steps[i]!.touched) last = steps[i];
  if (last) {
    const via = last.write.key !== key ? 'coupled' : last.write.via;
    return { key, model, value: last.value, winner: last.write.applied, via, ...(via === 'coupled' ? { through: last.write.key } : {}) };
  }
  const seq = sequence(tree, model);
  const named = keptLines(seq, key, gone);
  if (model === 'boot') {
    // The key's own entry in systemd's map: its lines alone decide it.
    let own: AppliedAssignment | undefined;
    for (const i of named) if (!(own && own.assignment.value === lineAt(seq, i).assignment.value)) own = lineAt(seq, i);
    if (own && own.assignment.value === null) return { key, model, value: null, winner: own, via: 'excluded' };
    return { key, model, value: null, winner: null, via: 'none' };
  }
  const exclude = named.length > 0 ? lineAt(seq, named[named.length - 1]!) : undefined;
  return exclude ? { key, model, value: null, winner: exclude, via: 'excluded' } : { key, model, value: null, winner: null, via: 'none' };
}

export function verdicts(tree: SysctlTree, keys: string[]): Record<SysctlModel, SysctlVerdict[]> {
  return {
    boot: keys.map((k) => verdict(tree, k, 'boot')),
    system: keys.map((k) => verdict(tree, k, 'system')),
  };
}

/**
 * The tree as it will be once `filePath` holds `assignments` (our owned file
 * after it is written): a mask or symlink at that path is replaced by a
 * regular file.
 */
export function withFile(tree: SysctlTree, filePath: string, content: string, assignments: SysctlAssignment[]): SysctlTree {
  const entry: SysctlConfFile = { path: filePath, masked: false, realPath: filePath, content, assignments };
  const files = tree.files.filter((f) => f.path !== filePath);
  files.push(entry);
  const next = { ...tree, files };
  deltas.set(next, { base: tree, name: path.posix.basename(filePath) });
  return next;
}

/** The tree with `entry` in place of the entry of the same path (added when there is none), kept where it was in `files`. */
export function withEntry(tree: SysctlTree, entry: SysctlConfFile): SysctlTree {
  const at = tree.files.findIndex((f) => f.path === entry.path);
  const files = at < 0 ? [...tree.files, entry] : tree.files.map((f, i) => (i === at ? entry : f));
  const next = { ...tree, files };
  deltas.set(next, { base: tree, name: path.posix.basename(entry.path) });
  return next;
}

/** The tree with another /etc/sysctl.conf (procps's trailing read), or none. */
export function withSysctlConf(tree: SysctlTree, sysctlConf: SysctlConfFile | null): SysctlTree {
  const next = { ...tree, sysctlConf };
  deltas.set(next, { base: tree, name: null });
  return next;
}

/**
 * The tree once `writes` are done: a write to a path replaces its entry (a
 * link there becomes a regular file) and reaches every entry that reads the
 * same bytes through a link; a path new to a sysctl.d directory is added.
 */
export function treeAfterWrites(tree: SysctlTree, writes: Array<{ path: string; content: string }>): SysctlTree {
  let files = tree.files.map((f) => ({ ...f }));
  let sysctlConf = tree.sysctlConf ? { ...tree.sysctlConf } : null;
  for (const w of writes) {
    const assignments = (p: string) => parseSysctlText(w.content, p).assignments;
    let found = false;
    files = files.map((f) => {
      if (f.path === w.path) {
        found = true;
        return { path: f.path, masked: false, realPath: f.path, content: w.content, assignments: assignments(f.path) };
      }
      if (!f.masked && f.realPath === w.path) return { ...f, content: w.content, assignments: assignments(f.path) };
      return f;
    });
    if (sysctlConf && (sysctlConf.realPath === w.path || sysctlConf.path === w.path)) {
      sysctlConf = { ...sysctlConf, content: w.content, assignments: assignments(sysctlConf.path) };
      found = true;
    }
    if (!found && dirRank(path.posix.dirname(w.path)) >= 0 && w.path.endsWith('.conf')) {
      files.push({ path: w.path, masked: false, realPath: w.path, content: w.content, assignments: assignments(w.path) });
    }
  }
  return { files, sysctlConf };
}

/** Why the owned file is not read under a model, or null when it is. */
export function ownedFileProblem(tree: SysctlTree, ownedPath: string, model: SysctlModel): string | null {
  const dir = path.posix.dirname(ownedPath);
  const name = path.posix.basename(ownedPath);
  if (dirRank(dir) < 0) return `${ownedPath} is not in a sysctl.d directory (${SYSCTL_DIRS.join(', ')})`;
  if (!name.endsWith('.conf')) return `${ownedPath} does not end in .conf, so it is never read`;
  if (model === 'boot' && name.startsWith('.')) return `${ownedPath} is a hidden file, which systemd-sysctl skips`;
  const winner = effectiveFor(tree, name, model);
  if (winner && winner.path !== ownedPath) {
    return `${ownedPath} is shadowed by ${winner.path}${winner.masked ? ' (a mask)' : ''}, which has the same name in a higher-precedence directory`;
  }
  return null;
}

/** One assignment that would beat ours, with the models under which it does. */
export interface BeatingAssignment {
  key: string;
  wanted: string;
  applied: AppliedAssignment;
  model: SysctlModel;
  /** The line writes this coupled key, not `key` itself. */
  through?: string;
}

/**
 * Assignments to `key` that would make its value differ from `wanted` even
 * though `ownedPath` sets it: those met after the last assignment of the
 * wanted value (ours or a later agreeing one), plus writes to keys the
 * kernel couples with it that land after the key last holds the wanted
 * value. Removing all of them, and only them, makes the key come out right.
 * Globs on the key itself never appear: both programs skip a key that is
 * named explicitly, and ours names it. With `gone` (lineKey), the tree is
 * read as if those lines were commented out.
 */
export function beatingAssignments(
  tree: SysctlTree,
  ownedPath: string,
  key: string,
  wanted: string,
  model: SysctlModel,
  gone: ReadonlySet<string> | null = null,
): BeatingAssignment[] {
  const seq = sequence(tree, model);
  // Every line that is not a glob and names the key, in order.
  const named = keptLines(seq, key, gone);
  const ours = named.find((i) => lineAt(seq, i).source.path === ownedPath && !lineAt(seq, i).tail) ?? -1;
  if (ours < 0) return [];
  const final = verdictWithout(tree, key, model, gone);
  if (final.value !== null && sameSysctlValue(final.value, wanted)) return [];
  // `named` holds the key's own lines, none a glob. A later "-key" cancels an explicit value only under systemd.
  const relevant = (ap: AppliedAssignment) => model === 'boot' || !ap.assignment.excludeOnly;
  let lastGood = ours;
  for (const i of named) {
    const ap = lineAt(seq, i);
    if (i > ours && !ap.assignment.excludeOnly && sameSysctlValue(ap.assignment.value, wanted)) lastGood = i;
  }
  const out: BeatingAssignment[] = [];
  for (const i of named) {
    const ap = lineAt(seq, i);
    if (i > lastGood && relevant(ap) && !sameSysctlValue(ap.assignment.value, wanted)) out.push({ key, wanted, applied: ap, model });
  }
  // Coupled writes, in the order the program writes (at boot a key keeps the
  // place of its first assignment when later files repeat the same value),
  // over the tree without the lines named so far: taking those out moves what
  // the program writes (at boot our value goes back to its place), so a
  // coupled write before that place no longer matters.
  const steps = followKey(writesFor(tree, model, key, new Set([...(gone ?? []), ...out.map((o) => lineKey(o.applied))])), key, model);
  let good = -1;
  steps.forEach((s, i) => {
    if (s.touched && s.value !== null && sameSysctlValue(s.value, wanted)) good = i;
  });
  steps.forEach((s, i) => {
    if (i > good && s.touched && s.write.key !== key && !(s.value !== null && sameSysctlValue(s.value, wanted))) {
      if (!out.some((o) => o.applied.assignment === s.write.applied.assignment))
        out.push({ key, wanted, applied: s.write.applied, model, through: s.write.key });
    }
  });
  return out;
}
