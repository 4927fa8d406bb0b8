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
import { sameSysctlValue } from './parse.js';
import type { SysctlAssignment } from './parse.js';

export type SysctlModel = 'boot' | 'system';
export const SYSCTL_MODELS: readonly SysctlModel[] = ['boot', 'system'];

/** Highest precedence first. */
export const SYSCTL_DIRS = [
  '/etc/sysctl.d',
  '/run/sysctl.d',
  '/usr/local/lib/sysctl.d',
  '/usr/lib/sysctl.d',
  '/lib/sysctl.d',
] as const;

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
  /** explicit: named; glob: via a pattern; excluded: a "-key" line cancels it; none. */
  via: 'explicit' | 'glob' | 'excluded' | 'none';
}

function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function dirRank(dir: string): number {
  return (SYSCTL_DIRS as readonly string[]).indexOf(dir);
}

/** Files each program reads, in the order it reads them. */
export function readOrder(tree: SysctlTree, model: SysctlModel): { file: SysctlConfFile; tail: boolean }[] {
  const byName = new Map<string, SysctlConfFile>();
  const candidates = tree.files
    .filter((f) => dirRank(path.posix.dirname(f.path)) >= 0)
    .filter((f) => f.path.endsWith('.conf'))
    // systemd's FOREACH_DIRENT skips hidden entries; procps reads them.
    .filter((f) => model === 'system' || !path.posix.basename(f.path).startsWith('.'))
    .sort((a, b) => dirRank(path.posix.dirname(a.path)) - dirRank(path.posix.dirname(b.path)));
  for (const f of candidates) {
    const name = path.posix.basename(f.path);
    if (!byName.has(name)) byName.set(name, f);
  }
  const ordered = [...byName.entries()].sort((a, b) => byteCompare(a[0], b[0])).map(([, file]) => ({ file, tail: false }));
  if (model === 'system' && tree.sysctlConf) ordered.push({ file: tree.sysctlConf, tail: true });
  return ordered;
}

/** The file entry that supplies a basename under `model`, or null if none does. */
export function effectiveFor(tree: SysctlTree, name: string, model: SysctlModel): SysctlConfFile | null {
  return readOrder(tree, model).find((o) => !o.tail && path.posix.basename(o.file.path) === name)?.file ?? null;
}

/** Every assignment in the order the program meets it. */
export function applySequence(tree: SysctlTree, model: SysctlModel): AppliedAssignment[] {
  const out: AppliedAssignment[] = [];
  for (const { file, tail } of readOrder(tree, model)) {
    if (file.masked) continue;
    for (const a of file.assignments) out.push({ assignment: tail ? { ...a, file: file.path } : a, source: file, tail });
  }
  return out;
}

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

/** systemd-sysctl's ordered hashmap after parsing every file. */
function bootOptions(seq: AppliedAssignment[]): Map<string, AppliedAssignment> {
  const map = new Map<string, AppliedAssignment>();
  for (const ap of seq) {
    const existing = map.get(ap.assignment.key);
    // streq_ptr: the same value (or two NULLs) keeps the earlier entry and its place.
    if (existing && existing.assignment.value === ap.assignment.value) continue;
    map.delete(ap.assignment.key);
    map.set(ap.assignment.key, ap);
  }
  return map;
}

export function verdict(tree: SysctlTree, key: string, model: SysctlModel): SysctlVerdict {
  const seq = applySequence(tree, model);
  if (model === 'boot') {
    const map = bootOptions(seq);
    const own = map.get(key);
    if (own) {
      if (own.assignment.value === null) return { key, model, value: null, winner: own, via: 'excluded' };
      return { key, model, value: own.assignment.value, winner: own, via: 'explicit' };
    }
    let glob: AppliedAssignment | null = null;
    for (const ap of map.values()) {
      if (ap.assignment.isGlob && ap.assignment.value !== null && sysctlGlobMatches(ap.assignment.key, key)) glob = ap;
    }
    return glob ? { key, model, value: glob.assignment.value, winner: glob, via: 'glob' } : { key, model, value: null, winner: null, via: 'none' };
  }
  const named = seq.filter((ap) => !ap.assignment.isGlob && ap.assignment.key === key);
  const explicit = named.filter((ap) => !ap.assignment.excludeOnly);
  const last = explicit[explicit.length - 1];
  if (last) return { key, model, value: last.assignment.value, winner: last, via: 'explicit' };
  const exclude = named[named.length - 1];
  if (exclude) return { key, model, value: null, winner: exclude, via: 'excluded' };
  const globs = seq.filter((ap) => ap.assignment.isGlob && !ap.assignment.excludeOnly && sysctlGlobMatches(ap.assignment.key, key));
  const g = globs[globs.length - 1];
  return g ? { key, model, value: g.assignment.value, winner: g, via: 'glob' } : { key, model, value: null, winner: null, via: 'none' };
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
  return { ...tree, files };
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
}

/**
 * Assignments to `key` that would make its value differ from `wanted` even
 * though `ownedPath` sets it: those met after the last assignment of the
 * wanted value (ours or a later agreeing one). Removing all of them, and only
 * them, makes the key come out right. Globs never appear: both programs skip
 * a key that is named explicitly, and ours names it.
 */
export function beatingAssignments(
  tree: SysctlTree,
  ownedPath: string,
  key: string,
  wanted: string,
  model: SysctlModel,
): BeatingAssignment[] {
  const seq = applySequence(tree, model);
  const ours = seq.findIndex((ap) => ap.source.path === ownedPath && !ap.tail && ap.assignment.key === key && !ap.assignment.isGlob);
  if (ours < 0) return [];
  // A later "-key" cancels an explicit value only under systemd.
  const relevant = (ap: AppliedAssignment) =>
    !ap.assignment.isGlob && ap.assignment.key === key && (model === 'boot' || !ap.assignment.excludeOnly);
  let lastGood = ours;
  seq.forEach((ap, i) => {
    if (i > ours && relevant(ap) && !ap.assignment.excludeOnly && sameSysctlValue(ap.assignment.value, wanted)) lastGood = i;
  });
  const out: BeatingAssignment[] = [];
  seq.forEach((ap, i) => {
    if (i > lastGood && relevant(ap) && !sameSysctlValue(ap.assignment.value, wanted)) out.push({ key, wanted, applied: ap, model });
  });
  return out;
}
