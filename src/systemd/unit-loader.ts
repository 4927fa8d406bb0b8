// The unit loader: every unit on systemd's unit search path, as the manager
// would load it (systemd.unit(5)), with the relations that can start a unit
// again. Names resolve through the search path (the first directory holding
// a name wins; a link to /dev/null or an empty file masks), aliases (a link
// to a unit of another name) and templates (foo@bar.service reads
// foo@.service). A unit's settings are its fragment, then its drop-ins
// (NAME.d/*.conf for each of its names, its template and the dashed
// prefixes, and the type-wide service.d/), the first directory winning for a
// drop-in's name, applied in the byte order of their names. Its
// dependencies come from [Unit] Wants=/Requires=/Upholds=/BindsTo=/PartOf=,
// from .wants/.requires/.upholds link directories in every unit directory,
// and from the trigger units (.socket Service=, .timer Unit=, .path Unit=,
// each defaulting to the same name .service).
//
// Reads go through Host only; everything after the reads is pure.
import path from 'node:path';
import { HostError } from '../errors.js';
import { NotRegularFileError } from '../regular-file.js';
import type { TargetFs, Host } from '../host.js';
import { unitKind } from './cgroup.js';
import { effectiveBoolean, parseUnitFile, type UnitDirective } from './unit-file.js';
import { byteOrder } from './conf-dirs.js';
import { templateOf } from './unit-links.js';
import { SYSTEMD_SYSTEM_ETC, SYSTEM_UNIT_PATH } from './unit-dirs.js';

/** Relations that start the unit they point at when their source starts (or fires, for a trigger). */
export type PullRelation = 'Wants' | 'Requires' | 'Upholds' | 'BindsTo' | 'Triggers';
/** PartOf= only carries stops and restarts, never a start at boot; kept so a report can name it. */
export type Relation = PullRelation | 'PartOf';

export const PULL_RELATIONS: ReadonlySet<Relation> = new Set<Relation>(['Wants', 'Requires', 'Upholds', 'BindsTo', 'Triggers']);

export interface UnitEdge {
  /** Canonical name of the unit the relation is declared for. */
  from: string;
  /** The name as written (an alias or instance); resolve with `UnitGraph.resolve`. */
  to: string;
  relation: Relation;
  /**
   * Where it is declared: a directive (file and line), a link in a
   * .wants/.requires/.upholds directory (file is the link, line null), or a
   * trigger's default (file is the trigger's fragment, line null).
   */
  how: 'directive' | 'link' | 'default';
  file: string;
  line: number | null;
  key: string;
}

export interface InstallSection {
  wantedBy: UnitDirective[];
  requiredBy: UnitDirective[];
  upheldBy: UnitDirective[];
  also: UnitDirective[];
  alias: UnitDirective[];
}

export interface LoadedUnit {
  /** Canonical name: the name its fragment file has (an instance keeps its instance name). */
  name: string;
  /** Every name it is known by on the search path (aliases), canonical included, sorted. */
  names: string[];
  /** The search-path entry that won for the canonical name (or its template); null when no file exists. */
  entry: string | null;
  /** Where the entry ends after every link, clamped to the root. */
  fragment: string | null;
  masked: boolean;
  /** foo@.service for foo@bar.service. */
  template: string | null;
  instance: string | null;
  /** Drop-ins in the order applied. */
  dropIns: string[];
  /** Fragment, then drop-ins. */
  directives: UnitDirective[];
  /**
   * [Install] as systemctl enable/disable read it: the fragment, then the
   * drop-ins of the unit's own name and of its template only (install.c's
   * unit_file_search: no dashed prefixes, no type-wide service.d/).
   */
  install: InstallSection;
}

export interface LoaderProblem {
  file: string;
  line: number | null;
  message: string;
}

export interface UnitGraph {
  dirs: readonly string[];
  units: Map<string, LoadedUnit>;
  edges: UnitEdge[];
  /** Name -> canonical name, for every name seen on the search path. */
  resolve(name: string): string;
  /** The unit default.target resolves to (following its alias link), or null when it does not exist. */
  defaultTarget: string | null;
  /** What the loader could not read or expand; every one names its file. */
  problems: LoaderProblem[];
}

export interface LoadOptions {
  /** Search path, highest precedence first; SYSTEM_UNIT_PATH by default. */
  dirs?: readonly string[];
  /**
   * Entries to treat as absent: the links `systemctl disable` would remove,
   * to ask what still starts a unit afterwards.
   */
  without?: ReadonlySet<string>;
  /** Extra names to load even if no file or link names them (instances, the units a caller asks about). */
  names?: Iterable<string>;
}

const DEP_KEYS: Record<string, Relation> = { Wants: 'Wants', Requires: 'Requires', Upholds: 'Upholds', BindsTo: 'BindsTo', PartOf: 'PartOf' };
const LINK_DIRS: Record<string, Relation> = { wants: 'Wants', requires: 'Requires', upholds: 'Upholds' };
const TRIGGER_KEYS: Record<string, { section: string; key: string }> = {
  socket: { section: 'Socket', key: 'Service' },
  timer: { section: 'Timer', key: 'Unit' },
  path: { section: 'Path', key: 'Unit' },
};

interface DirEntry {
  dir: string;
  name: string;
  path: string;
  kind: 'file' | 'link' | 'dir' | 'other';
}

/** Splits "a@b.service" into its template and instance; null parts for a plain name. */
export function splitInstance(name: string): { template: string | null; instance: string | null } {
  const t = templateOf(name);
  if (t === null) return { template: null, instance: null };
  const at = name.indexOf('@');
  const dot = name.lastIndexOf('.');
  return { template: t, instance: name.slice(at + 1, dot) };
}

/**
 * Expands the unit-name specifiers systemd allows in dependency and trigger
 * settings (systemd 252's unit_name_printf: %n %N %p %i, and %%). The others
 * make the value unknown: %H and friends depend on the running host, and
 * %I, %P and %j are not ones we expand (systemd's manager refuses %I and %P
 * in unit names and drops the word).
 */
export function expandSpecifiers(value: string, unit: string): { value: string } | { unknown: string } {
  const { instance } = splitInstance(unit);
  const dot = unit.lastIndexOf('.');
  const stem = dot > 0 ? unit.slice(0, dot) : unit;
  const prefix = unit.includes('@') ? unit.slice(0, unit.indexOf('@')) : stem;
  const table: Record<string, string> = { n: unit, N: stem, p: prefix, i: instance ?? '', '%': '%' };
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    const s = value[++i];
    if (s === undefined || table[s] === undefined) return { unknown: `%${s ?? ''}` };
    out += table[s];
  }
  return { value: out };
}

/** The dashed-prefix drop-in names of a unit (systemd 246+): "a-b-c.service" -> ["a-.service", "a-b-.service"]. */
export function dashPrefixes(name: string): string[] {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return [];
  const stem = name.slice(0, dot);
  const suffix = name.slice(dot);
  const base = stem.includes('@') ? stem.slice(0, stem.indexOf('@')) : stem;
  const out: string[] = [];
  for (let i = base.indexOf('-'); i > 0; i = base.indexOf('-', i + 1)) out.push(`${base.slice(0, i + 1)}${suffix}`);
  return out;
}

function emptyInstall(): InstallSection {
  return { wantedBy: [], requiredBy: [], upheldBy: [], also: [], alias: [] };
}

export function installOf(directives: UnitDirective[]): InstallSection {
  const out = emptyInstall();
  const keys: Record<string, keyof InstallSection> = { WantedBy: 'wantedBy', RequiredBy: 'requiredBy', UpheldBy: 'upheldBy', Also: 'also', Alias: 'alias' };
  for (const d of directives) {
    const k = d.section === 'Install' ? keys[d.key] : undefined;
    // These are string lists (systemd's config_parse_strv): an empty assignment resets the list.
    if (k && d.value === '') out[k] = [];
    else if (k) out[k].push(d);
  }
  return out;
}

/** The words of a list-valued setting (Wants=a b c), split at systemd's WHITESPACE only: a vertical tab or a no-break space is part of a (then invalid) name. */
function words(value: string): string[] {
  return value.split(/[ \t\n\r]+/).filter(Boolean);
}

async function listDir(host: TargetFs, dir: string, problems: LoaderProblem[]): Promise<DirEntry[]> {
  let entries;
  try {
    entries = (await host.readDir(dir)) ?? [];
  } catch (e) {
    problems.push({ file: dir, line: null, message: `cannot list ${dir}: ${(e as Error).message}` });
    return [];
  }
  return entries.map((e) => ({
    dir,
    name: e.name,
    path: path.posix.join(dir, e.name),
    kind: e.isSymbolicLink() ? 'link' : e.isDirectory() ? 'dir' : e.isFile() ? 'file' : 'other',
  }));
}

/** Why `file` could not be read, once (the error already names it). A fifo or device is not opened at all. */
function readProblem(file: string, e: unknown): string {
  if (e instanceof NotRegularFileError) return `${file} is a ${e.kind}, not a regular file: not read`;
  return e instanceof HostError ? e.message : `cannot read ${file}: ${(e as Error).message}`;
}

/** Where a link ends, clamped; null for a loop (systemd skips it, with a warning). */
async function finalOf(host: TargetFs, p: string, problems: LoaderProblem[]): Promise<string | null> {
  try {
    return await host.realTarget(p);
  } catch (e) {
    if (e instanceof HostError && e.code === 'ELOOP') {
      problems.push({ file: p, line: null, message: `${p} is a symbolic link loop; systemd skips it` });
      return null;
    }
    throw e;
  }
}

/**
 * Whether systemd passes over a link entry (systemd 252's unit_file_build_name_map): a link whose target lies
 * inside the search path names its unit by the target's name, so a target whose name is no unit name, or a unit
 * of another type, makes systemd skip the link, and the name comes from a later directory if one has it
 * (systemd --test agrees). Keeps the link's final target in `finals` for the later steps.
 */
async function ignoredLink(
  host: TargetFs,
  e: DirEntry,
  dirs: readonly string[],
  finals: Map<string, string | null>,
  problems: LoaderProblem[],
): Promise<boolean> {
  if ((await host.readLink(e.path)) === '/dev/null') {
    finals.set(e.path, '/dev/null');
    return false;
  }
  const final = await finalOf(host, e.path, problems);
  finals.set(e.path, final);
  if (final === null || final === '/dev/null' || !dirs.some((d) => final.startsWith(`${d}/`))) return false;
  const kind = unitKind(path.posix.basename(final));
  return kind === null || kind !== unitKind(e.name);
}

/** A unit entry of a .wants/.requires/.upholds directory on the search path, as listed. */
export interface DependencyLink {
  /** The unit whose directory it is in ("multi-user.target" for multi-user.target.wants/). */
  owner: string;
  relation: Relation;
  /** The unit it names (the entry's own name). */
  name: string;
  /** Target path of the link. */
  path: string;
  /** A link to /dev/null: it adds no edge to the graph. */
  masked: boolean;
}

/** A NAME.d/*.conf file, with the search directory it lies in. */
interface DropInFile {
  dir: string;
  name: string;
  path: string;
}

/**
 * What the listing of the search path found, kept with each graph so that
 * more names can be loaded later without reading the tree again
 * (extendUnitGraph). Not part of UnitGraph: a graph stays plain data.
 */
interface Tree {
  host: TargetFs;
  dirs: readonly string[];
  entries: Map<string, DirEntry>;
  finals: Map<string, string | null>;
  resolve: (name: string) => string;
  namesOf: Map<string, Set<string>>;
  depLinks: DependencyLink[];
  dropIns: Map<string, DropInFile[]>;
  /** Names in a loop of alias links: not loaded. */
  loops: ReadonlySet<string>;
}

const trees = new WeakMap<UnitGraph, Tree>();

/** What step 1 of a load finds on the search path, before any name is resolved. */
interface Listing {
  /** Name -> winning entry. */
  entries: Map<string, DirEntry>;
  /** Link entry path -> final target ('/dev/null' for a mask). */
  finals: Map<string, string | null>;
  dropDirs: DirEntry[];
  linkDirs: DirEntry[];
}

/** 1. One listing per directory: unit entries, NAME.d drop-in dirs, NAME.wants/... link dirs. */
async function listSearchPath(host: TargetFs, dirs: readonly string[], without: ReadonlySet<string>, problems: LoaderProblem[]): Promise<Listing> {
  const listing: Listing = { entries: new Map(), finals: new Map(), dropDirs: [], linkDirs: [] };
  const { entries, finals, dropDirs, linkDirs } = listing;
  for (const dir of dirs) {
    for (const e of await listDir(host, dir, problems)) {
      if (without.has(e.path)) continue;
      // Only a real directory: systemd 252 builds its unit path cache from the directory entries' types, so a
      // link named foo.service.d or foo.service.wants is skipped even when it leads to a directory.
      if (e.kind === 'dir') {
        const m = /^(.+)\.(d|wants|requires|upholds)$/.exec(e.name);
        if (m) {
          if (m[2] === 'd') dropDirs.push(e);
          else linkDirs.push(e);
          continue;
        }
      }
      if (e.kind === 'dir' || e.kind === 'other' || unitKind(e.name) === null) continue;
      if (entries.has(e.name)) continue;
      if (e.kind === 'link' && (await ignoredLink(host, e, dirs, finals, problems))) continue;
      entries.set(e.name, e);
    }
  }
  return listing;
}

/** 2. Names: an entry whose link ends at a unit file of another name is an alias of it. Alias name -> the name it links to (one hop of naming). */
function aliasLinks(listing: Listing, dirs: readonly string[]): Map<string, string> {
  const aliasTo = new Map<string, string>();
  for (const [name, e] of listing.entries) {
    if (e.kind !== 'link') continue;
    const final = listing.finals.get(e.path)!;
    if (final === null || final === '/dev/null') continue;
    const base = path.posix.basename(final);
    // A link that leaves the search path is a linked unit file under the link's own name, whatever the file
    // is called (systemd's unit_file_build_name_map: "we don't care about the target name").
    if (!dirs.some((d) => final.startsWith(`${d}/`))) continue;
    // An instance linked to its own template (getty@tty1.service -> getty@.service) is that instance, not an alias.
    // (The target's name is a unit name of the link's type: ignoredLink passed over any other.)
    if (base !== name && base !== templateOf(name)) aliasTo.set(name, base);
  }
  return aliasTo;
}

/**
 * Names whose alias links lead back to themselves (a.service -> b's file, b.service -> a's file): systemd
 * loads none of them (not-found), so they are no aliases and no units here either.
 */
function aliasLoops(aliasTo: ReadonlyMap<string, string>): Set<string> {
  const loops = new Set<string>();
  for (const start of aliasTo.keys()) {
    const walk: string[] = [];
    let n: string | undefined = start;
    while (n !== undefined && aliasTo.has(n) && !walk.includes(n)) {
      walk.push(n);
      n = aliasTo.get(n);
    }
    if (n !== undefined && walk.includes(n)) for (const x of walk.slice(walk.indexOf(n))) loops.add(x);
  }
  return loops;
}

/** How the search path names units: its entries and the alias links between them (loops taken out). */
interface Naming {
  entries: ReadonlyMap<string, DirEntry>;
  aliasTo: ReadonlyMap<string, string>;
}

/** The canonical name `name` resolves to. */
function resolveName(naming: Naming, name: string): string {
  const { entries, aliasTo } = naming;
  let n = name;
  for (let hops = 0; hops < 40 && aliasTo.has(n); hops++) n = aliasTo.get(n)!;
  if (n === name && !entries.has(n)) {
    // An instance of an aliased template: foo-alias@x.service -> foo@x.service.
    const { template, instance } = splitInstance(n);
    if (template !== null && instance !== null && aliasTo.has(template)) return resolveName(naming, template).replace('@.', `@${instance}.`);
  }
  return n;
}

/** 3. Link directories, read once. */
async function readDependencyLinks(host: TargetFs, linkDirs: DirEntry[], without: ReadonlySet<string>, problems: LoaderProblem[]): Promise<DependencyLink[]> {
  const depLinks: DependencyLink[] = [];
  for (const d of linkDirs) {
    const m = /^(.+)\.(wants|requires|upholds)$/.exec(d.name)!;
    for (const l of await listDir(host, d.path, problems)) {
      if (without.has(l.path) || unitKind(l.name) === null || l.kind === 'dir') continue;
      const masked = l.kind === 'link' && (await host.readLink(l.path)) === '/dev/null'; // a masked entry adds nothing
      depLinks.push({ owner: m[1]!, relation: LINK_DIRS[m[2]!]!, name: l.name, path: l.path, masked });
    }
  }
  return depLinks;
}

/** 4. Drop-in files per directory name: "foo.service" -> confs, in search order. */
async function readDropInDirs(
  host: TargetFs,
  dropDirs: DirEntry[],
  without: ReadonlySet<string>,
  problems: LoaderProblem[],
): Promise<Map<string, DropInFile[]>> {
  const dropIns = new Map<string, DropInFile[]>();
  for (const d of dropDirs) {
    const owner = d.name.slice(0, -2);
    const list = dropIns.get(owner) ?? [];
    for (const c of await listDir(host, d.path, problems)) {
      if (!c.name.endsWith('.conf') || without.has(c.path)) continue;
      list.push({ dir: d.dir, name: c.name, path: c.path });
    }
    dropIns.set(owner, list);
  }
  return dropIns;
}

/** Canonical name -> every name on the search path that resolves to it. */
function namesByUnit(names: Iterable<string>, resolve: (name: string) => string): Map<string, Set<string>> {
  const namesOf = new Map<string, Set<string>>();
  for (const name of names) {
    const c = resolve(name);
    (namesOf.get(c) ?? namesOf.set(c, new Set()).get(c)!).add(name);
  }
  return namesOf;
}

/** Lists the search path once: unit entries, aliases, dependency links and drop-ins (steps 1-4 of a load). */
async function readTree(host: TargetFs, dirs: readonly string[], without: ReadonlySet<string>, problems: LoaderProblem[]): Promise<Tree> {
  const listing = await listSearchPath(host, dirs, without, problems);
  const { entries, finals } = listing;
  const aliasTo = aliasLinks(listing, dirs);
  const loops = aliasLoops(aliasTo);
  for (const n of loops) {
    aliasTo.delete(n);
    const p = entries.get(n)!.path;
    problems.push({ file: p, line: null, message: `${p} is one of a loop of alias links; systemd does not load it` });
  }
  const naming: Naming = { entries, aliasTo };
  const resolve = (name: string): string => resolveName(naming, name);
  const depLinks = await readDependencyLinks(host, listing.linkDirs, without, problems);
  const dropIns = await readDropInDirs(host, listing.dropDirs, without, problems);
  const namesOf = namesByUnit([...entries.keys(), ...aliasTo.keys()], resolve);
  return { host, dirs, entries, finals, resolve, namesOf, depLinks, dropIns, loops };
}

/** One loadQueue: the listing it loads from and what it loads into. */
interface QueueRun {
  tree: Tree;
  units: Map<string, LoadedUnit>;
  edges: UnitEdge[];
  problems: LoaderProblem[];
}

/** Where a unit's file is found: the entry that won for its name (else its template's) and where that leads. */
interface Located {
  entry: DirEntry | null;
  /** '/dev/null' or null when masked. */
  fragment: string | null;
  masked: boolean;
}

async function locateFragment(tree: Tree, canonical: string, template: string | null, problems: LoaderProblem[]): Promise<Located> {
  const { host, entries, finals, loops } = tree;
  const own = loops.has(canonical) ? null : (entries.get(canonical) ?? null);
  const entry = own ?? (template !== null ? (entries.get(template) ?? null) : null);
  if (entry === null) return { entry, fragment: null, masked: false };
  if (entry.kind === 'link' && (await host.readLink(entry.path)) === '/dev/null') return { entry, fragment: null, masked: true };
  const fragment = entry.kind === 'link' ? (finals.get(entry.path) ?? (await finalOf(host, entry.path, problems))) : entry.path;
  return { entry, fragment, masked: fragment === '/dev/null' };
}

/** Every name of the unit on the search path, sorted, its canonical name among them. */
function unitNames(tree: Tree, canonical: string): string[] {
  const names = [...(tree.namesOf.get(canonical) ?? new Set([canonical]))].sort(byteOrder);
  if (!names.includes(canonical)) names.unshift(canonical);
  return names;
}

/** The fragment's text; null when there is none to parse (a problem said why, or an empty file masked the unit). */
async function fragmentText(run: QueueRun, unit: LoadedUnit, entry: DirEntry, fragment: string): Promise<string | null> {
  let text: string | null;
  try {
    text = await run.tree.host.readFile(fragment);
  } catch (e) {
    run.problems.push({ file: fragment, line: null, message: readProblem(fragment, e) });
    return null;
  }
  if (text === null) {
    // systemd finds no fragment there and says not-found, though the link has a unit's name.
    run.problems.push({ file: entry.path, line: null, message: `${entry.path} leads to ${fragment}, which does not exist` });
    unit.fragment = null;
    return null;
  }
  if (text === '') {
    unit.masked = true; // a file of 0 bytes masks, as /dev/null does (systemd's null_or_empty: st_size <= 0; a lone newline does not)
    unit.fragment = null;
    return null;
  }
  return text;
}

/**
 * Drop-in path -> its directives, read and parsed once for the manager's and systemctl's choice; null when it
 * cannot be read.
 */
interface DropInCache {
  host: TargetFs;
  problems: LoaderProblem[];
  parsed: Map<string, UnitDirective[] | null>;
}

/** An error in a drop-in only ends that drop-in (systemd applies the lines before it). */
async function readDropIn(cache: DropInCache, p: string): Promise<UnitDirective[] | null> {
  if (cache.parsed.has(p)) return cache.parsed.get(p)!;
  let ds: UnitDirective[] | null = null;
  try {
    const t = await cache.host.readFile(p);
    if (t !== null) ds = parseUnitFile(t, p).directives;
  } catch (e) {
    cache.problems.push({ file: p, line: null, message: `drop-in ${readProblem(p, e)}` });
  }
  cache.parsed.set(p, ds);
  return ds;
}

/** "service" for "foo.service". */
function typeSuffix(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

/** Drop-in name -> path, sorted in the byte order of the names. */
function byName(chosen: Map<string, string>): [string, string][] {
  return [...chosen].sort(([a], [b]) => byteOrder(a, b));
}

/** The manager's drop-ins, appended to the unit's directives. */
async function applyDropIns(tree: Tree, cache: DropInCache, unit: LoadedUnit): Promise<void> {
  const { name: canonical, names, template } = unit;
  // Drop-ins: for each search directory, the unit's own names, then its template, then the dashed prefixes, then the type.
  const dropNames = [...names, ...(template ? [template] : []), ...dashPrefixes(canonical).reverse(), typeSuffix(canonical)];
  const chosen = new Map<string, string>();
  for (const dir of tree.dirs) {
    for (const n of dropNames) {
      for (const c of tree.dropIns.get(n) ?? []) if (c.dir === dir && !chosen.has(c.name)) chosen.set(c.name, c.path);
    }
  }
  for (const [, p] of byName(chosen)) {
    const ds = await readDropIn(cache, p);
    if (ds === null) continue; // a dangling drop-in link is skipped
    unit.dropIns.push(p);
    // The manager ignores [Install]; systemctl reads it from its own choice of drop-ins (systemctlInstall).
    unit.directives.push(...ds.filter((d) => d.section !== 'Install'));
  }
}

/** [Install] as systemctl reads it: `fragmentInstall`, then its own choice of drop-ins. */
async function systemctlInstall(tree: Tree, cache: DropInCache, unit: LoadedUnit, fragmentInstall: UnitDirective[]): Promise<InstallSection> {
  // systemctl's drop-ins: every search directory for the name, then every one for the template; the first
  // file of a name wins, applied in byte order after the fragment.
  const installConfs = new Map<string, string>();
  for (const n of [unit.name, ...(unit.template ? [unit.template] : [])]) {
    for (const dir of tree.dirs) for (const c of tree.dropIns.get(n) ?? []) if (c.dir === dir && !installConfs.has(c.name)) installConfs.set(c.name, c.path);
  }
  const installDirectives = [...fragmentInstall];
  for (const [, p] of byName(installConfs)) {
    const ds = await readDropIn(cache, p);
    if (ds !== null) installDirectives.push(...ds.filter((d) => d.section === 'Install'));
  }
  return installOf(installDirectives);
}

/** [Unit] dependencies, fragment and drop-ins. */
function dependencyEdges(run: QueueRun, unit: LoadedUnit): void {
  for (const d of unit.directives) {
    const rel = d.section === 'Unit' ? DEP_KEYS[d.key] : undefined;
    if (!rel) continue;
    const x = expandSpecifiers(d.value, unit.name);
    if ('unknown' in x) {
      run.problems.push({
        file: d.file,
        line: d.line,
        message: `${d.key}=${d.value}: specifier ${x.unknown} is not expanded here, so the units it names are unknown`,
      });
      continue;
    }
    for (const w of words(x.value))
      if (unitKind(w) !== null) run.edges.push({ from: unit.name, to: w, relation: rel, how: 'directive', file: d.file, line: d.line, key: d.key });
  }
}

/** Whether a trigger setting's value is one systemd's parser keeps. */
function triggerTakes(value: string, canonical: string, suffix: string): boolean {
  const x = expandSpecifiers(value, canonical);
  if ('unknown' in x) return true;
  return suffix === 'socket' ? x.value.endsWith('.service') : unitKind(x.value) !== null;
}

/** Triggers. */
function triggerEdge(run: QueueRun, unit: LoadedUnit, fragment: string): void {
  const canonical = unit.name;
  const suffix = typeSuffix(canonical);
  const trig = TRIGGER_KEYS[suffix];
  if (!trig) return;
  // What systemd's parsers keep: a socket's Service= takes the last value naming a .service (an empty or other
  // one is ignored); a timer's or path's Unit= the first unit name ("Multiple units to trigger specified, ignoring").
  // A value whose specifier is not expanded here is kept, so that its problem is reported.
  const candidates = unit.directives.filter((d) => d.section === trig.section && d.key === trig.key && triggerTakes(d.value, canonical, suffix));
  const chosen = suffix === 'socket' ? candidates[candidates.length - 1] : candidates[0];
  if (chosen) {
    const x = expandSpecifiers(chosen.value, canonical);
    if ('unknown' in x)
      run.problems.push({ file: chosen.file, line: chosen.line, message: `${chosen.key}=${chosen.value}: specifier ${x.unknown} is not expanded here` });
    else run.edges.push({ from: canonical, to: x.value, relation: 'Triggers', how: 'directive', file: chosen.file, line: chosen.line, key: chosen.key });
    return;
  }
  // The last Accept= systemd can parse as a boolean; one it cannot (an empty one too) is ignored.
  const accept = suffix === 'socket' && effectiveBoolean(unit.directives, 'Socket', 'Accept') === true;
  const stem = canonical.slice(0, canonical.lastIndexOf('.'));
  run.edges.push({
    from: canonical,
    to: accept ? `${stem}@.service` : `${stem}.service`,
    relation: 'Triggers',
    how: 'default',
    file: fragment,
    line: null,
    key: trig.key,
  });
}

/** Link directories of every name (and of the template, for an instance). */
function linkEdges(run: QueueRun, unit: LoadedUnit): void {
  const owners = new Set([...unit.names, ...(unit.template ? [unit.template] : [])]);
  for (const l of run.tree.depLinks) {
    if (!l.masked && owners.has(l.owner))
      run.edges.push({
        from: unit.name,
        to: l.name,
        relation: l.relation,
        how: 'link',
        file: l.path,
        line: null,
        key: `${l.owner}.${l.relation.toLowerCase()}`,
      });
  }
}

/** Loads one unit by its canonical name into `run`: its file, drop-ins, [Install] and the edges it declares. */
async function loadOne(run: QueueRun, canonical: string): Promise<void> {
  const { tree, problems } = run;
  const { template, instance } = splitInstance(canonical);
  const { entry, fragment, masked } = await locateFragment(tree, canonical, template, problems);
  const unit: LoadedUnit = {
    name: canonical,
    names: unitNames(tree, canonical),
    entry: entry?.path ?? null,
    fragment: masked ? null : fragment,
    masked,
    template,
    instance,
    dropIns: [],
    directives: [],
    install: emptyInstall(),
  };
  run.units.set(canonical, unit);
  if (masked || fragment === null) return;
  const text = await fragmentText(run, unit, entry!, fragment);
  if (text === null) return;
  const parsed = parseUnitFile(text, fragment);
  unit.directives = parsed.directives;
  // systemd fails to load such a unit; the graph does not model that, so the verdicts that read it are unknown.
  for (const e of parsed.errors) problems.push({ ...e, message: `${e.message}: systemd refuses to load ${canonical} (${fragment} line ${e.line})` });
  const fragmentInstall = unit.directives.filter((d) => d.section === 'Install');
  const cache: DropInCache = { host: tree.host, problems, parsed: new Map() };
  await applyDropIns(tree, cache, unit);
  unit.install = await systemctlInstall(tree, cache, unit, fragmentInstall);
  dependencyEdges(run, unit);
  triggerEdge(run, unit, fragment);
  linkEdges(run, unit);
}

/**
 * A name that resolves to another unit without a link of its own (an instance of an aliased template,
 * foo-alias@x.service -> foo@x.service) becomes one of that unit's names, as systemd adds it when it loads it.
 */
function addName(units: Map<string, LoadedUnit>, c: string, asked: string): void {
  const u = units.get(c);
  if (u && asked !== c && !u.names.includes(asked)) u.names = [...u.names, asked].sort(byteOrder);
}

/**
 * 5. Loads units on demand: each name of `queue`, then every name a relation
 * of a loaded unit mentions, into `units`/`edges`/`problems`. Names in `seen`
 * are not loaded again.
 */
async function loadQueue(
  tree: Tree,
  queue: string[],
  seen: Set<string>,
  units: Map<string, LoadedUnit>,
  edges: UnitEdge[],
  problems: LoaderProblem[],
): Promise<void> {
  const run: QueueRun = { tree, units, edges, problems };
  while (queue.length > 0) {
    const asked = queue.shift()!;
    const c = tree.resolve(asked);
    if (seen.has(c)) {
      addName(units, c, asked);
      continue;
    }
    seen.add(c);
    if (c.includes('@.')) {
      // A bare template is not a unit; it is loaded only when a relation names it (Accept=yes sockets).
      if (!tree.entries.has(c)) continue;
    }
    const before = edges.length;
    await loadOne(run, c);
    addName(units, c, asked);
    for (const e of edges.slice(before)) queue.push(e.to);
  }
}

/** Loads the unit graph through `host`. */
export async function loadUnitGraph(host: TargetFs, opts: LoadOptions = {}): Promise<UnitGraph> {
  const dirs = opts.dirs ?? SYSTEM_UNIT_PATH;
  const problems: LoaderProblem[] = [];
  const tree = await readTree(host, dirs, opts.without ?? new Set<string>(), problems);
  const { entries, resolve } = tree;
  // Every name on the path, the names asked for, then every name a link directory holds.
  const queue: string[] = [...entries.keys(), ...(opts.names ?? [])];
  for (const l of tree.depLinks) if (!l.masked) queue.push(l.name);
  const units = new Map<string, LoadedUnit>();
  const edges: UnitEdge[] = [];
  await loadQueue(tree, queue, new Set(), units, edges, problems);

  // An alias link is an entry too, so this covers default.target -> graphical.target.
  const dt = entries.has('default.target') ? resolve('default.target') : null;
  const graph: UnitGraph = { dirs, units, edges, resolve, defaultTarget: dt !== null && units.get(dt)?.masked !== true ? dt : null, problems };
  trees.set(graph, tree);
  return graph;
}

/**
 * `graph` with `names` loaded too (instances, units no file names), read
 * from the listing it was loaded from: the search path is not read again.
 * `graph` itself when it holds them all; else a new graph, so a graph
 * shared by several readers never changes under them. The units it adds are
 * ones nothing in `graph` reaches, so what `graph` says of its own units
 * stays as it was.
 */
export async function extendUnitGraph(graph: UnitGraph, names: Iterable<string>): Promise<UnitGraph> {
  const missing = [...names].filter((n) => !graph.units.has(graph.resolve(n)));
  if (missing.length === 0) return graph;
  const tree = trees.get(graph);
  if (tree === undefined) throw new Error('extendUnitGraph: the graph was not made by loadUnitGraph');
  const units = new Map(graph.units);
  const edges = [...graph.edges];
  const problems = [...graph.problems];
  await loadQueue(tree, missing, new Set(units.keys()), units, edges, problems);
  if (units.size === graph.units.size) return graph;
  const out: UnitGraph = { ...graph, units, edges, problems };
  trees.set(out, tree);
  return out;
}

/** Every unit entry of the dependency link directories on `graph`'s search path, /dev/null links included. */
export function dependencyLinks(graph: UnitGraph): readonly DependencyLink[] {
  const tree = trees.get(graph);
  if (tree === undefined) throw new Error('dependencyLinks: the graph was not made by loadUnitGraph');
  return tree.depLinks;
}
