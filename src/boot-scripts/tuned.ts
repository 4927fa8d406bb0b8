// What tuned.service writes into /proc/sys when it starts at boot, as tuned
// 2.20 (Debian 12's 2.20.0-1, /usr/lib/python3/dist-packages/tuned/) does;
// reads through TargetFs, the profile grammar and merge are tuned-profile.ts's.
// - /usr/sbin/tuned:53 reads /etc/tuned/tuned-main.conf (utils/global_config.py:
//   the file under a magic section header; reapply_sysctl getboolean, default
//   True, consts.py:128; recommend_command getboolean; default_instance_priority
//   getint); a missing file or a value getboolean/getint refuses stops tuned
//   before it tunes anything: unknown here, not judged.
// - daemon/daemon.py _init_profile and _get_startup_profile with
//   utils/commands.py get_active_profile: /etc/tuned/active_profile (stripped;
//   names split on whitespace), /etc/tuned/profile_mode ("", auto, manual; any
//   other value: no tuning), /etc/tuned/post_loaded_profile (appended). With no
//   mode, a named profile is manual; auto (or no name and no mode) asks
//   utils/profile_recommender.py, whose answer depends on the machine
//   (virt-what, /etc/system-release-cpe, processes, chassis): each candidate
//   it can name (a section of /etc/tuned/recommend.conf or of the recommend.d
//   files, ",suffix" dropped, or the default "balanced") is read, and what any
//   of them writes is unknown. _load_profiles refuses a name no load directory
//   has (no tuning at all).
// - profiles/loader.py _load_profile and locator.py get_config: a name is
//   NAME/tuned.conf in /etc/tuned, else /usr/lib/tuned (an /etc profile
//   replaces the /usr/lib one of its name; it inherits it only by include=); a
//   file already loaded is skipped, which is how an /etc profile includes the
//   /usr/lib one of its own name; "-NAME" may be missing; include= (in [main],
//   variables expanded, split on "," and ";") loads its profiles first, in
//   order, so the including profile's options win (merger.py).
// - loader.py load: the unit named "variables" becomes variables; units/manager.py
//   create: disabled units, and units whose cpuinfo_regex/uname_regex do not
//   match this machine, are skipped; the others sorted by priority (default
//   default_instance_priority), the option taken out.
// - plugins/plugin_sysctl.py _instance_apply_static: each option of a unit of
//   type sysctl is written to /proc/sys/ + the name with "." made "/", its value
//   unquoted (one pair of double quotes), variables and ${f:...} functions
//   expanded, a leading "<" or ">" compared with the value the key has then;
//   then, with reapply_sysctl, _apply_system_sysctl writes every line of
//   /run/sysctl.d and /etc/sysctl.d *.conf (a name in /run hides /etc's), sorted
//   by name, then /etc/sysctl.conf, so a key those files set ends at their value.
import path from 'node:path';
import type { TargetFs } from '../host.js';
import { readConfigParser, pyStrip } from '../lex/configparser.js';
import { mergeProfiles, readTunedIni, readTunedProfile, type TunedOption, type TunedProfile } from './tuned-profile.js';

export const TUNED_UNIT = 'tuned.service';
export const TUNED_MAIN_CONF = '/etc/tuned/tuned-main.conf';
export const ACTIVE_PROFILE = '/etc/tuned/active_profile';
const PROFILE_MODE = '/etc/tuned/profile_mode';
const POST_LOADED_PROFILE = '/etc/tuned/post_loaded_profile';
const RECOMMEND_CONF = '/etc/tuned/recommend.conf';
const RECOMMEND_DIRS = ['/usr/lib/tuned/recommend.d', '/etc/tuned/recommend.d'];
/** consts.py LOAD_DIRECTORIES; get_config looks from the last. */
export const TUNED_LOAD_DIRS = ['/usr/lib/tuned', '/etc/tuned'];
const DEFAULT_PROFILE = 'balanced';
const MAGIC = 'this_is_some_magic_section_header_because_of_compatibility';
/** plugin_sysctl.py SYSCTL_CONFIG_DIRS and the file it re-applies last. */
export const TUNED_REAPPLY_DIRS = ['/run/sysctl.d', '/etc/sysctl.d'];
export const TUNED_REAPPLY_LAST = '/etc/sysctl.conf';

export interface Where {
  file: string;
  line: number;
}

/** One key tuned's [sysctl] writes: its value, or why the value cannot be known; at the option that sets it. */
export type TunedWrite = Where & { key: string } & ({ value: string } | { unknown: string });

export interface TunedBoot {
  /** Writes of the profile(s) tuned applies at boot; a key once (the instance applied last). */
  writes: TunedWrite[];
  /** What keeps the whole run from being judged (a profile refused, a setting tuned stops on). */
  unknown: Array<Where & { message: string }>;
  /** reapply_sysctl, and the line that decides it (null: the default, on). */
  reapply: { on: boolean; at: Where | null };
  read: string[];
}

type Read = { text: string; file: string } | null | { unknown: string; file: string };

// Python's utf-8 codec keeps a byte order mark as U+FEFF (configparser then finds no section header): so does this one.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Texts that stand in for files (a profile line commented out, to judge what tuned does then). */
export type Overrides = ReadonlyMap<string, string>;

/** A file as Python's open() reads it: links followed, UTF-8 strictly; null when missing. */
async function readText(host: TargetFs, file: string, overrides?: Overrides): Promise<Read> {
  const o = overrides?.get(file);
  if (o !== undefined) return { text: o, file };
  try {
    const real = await host.realTarget(file);
    const st = await host.lstat(real);
    if (st === null) return null;
    if (!st.isFile()) return { unknown: `${file} is not a regular file`, file };
    const b = await host.readHead(real, st.size + 1);
    return b === null ? null : { text: utf8.decode(b), file };
  } catch (e) {
    return { unknown: `${file} cannot be read as UTF-8 text (${(e as Error).message})`, file };
  }
}

/** get_active_profile's strip() of a state file: "" when missing. */
async function stateFile(host: TargetFs, file: string, read: string[]): Promise<string | { unknown: string; file: string }> {
  const r = await readText(host, file);
  if (r === null) return '';
  if ('unknown' in r) return r;
  read.push(file);
  return pyStrip(r.text);
}

interface MainConf {
  /** An option of a later tuned that changes what is read here (profile_dirs: 2.23, reapply_sysctl_exclude: 2.27). */
  later: (Where & { name: string }) | null;
  reapply: { on: boolean; at: Where | null };
  recommend: boolean;
  priority: number;
}

const BOOLEAN: Record<string, boolean> = { '1': true, yes: true, true: true, on: true, '0': false, no: false, false: false, off: false };

/** tuned-main.conf as GlobalConfig.load_config reads it, or why tuned would stop on it. */
export function readMainConf(text: string): MainConf | (Where & { message: string }) {
  const r = readConfigParser(`[${MAGIC}]\n${text}`, { delimiters: ['='], inlineCommentPrefixes: ['#'], strict: false, optionxform: (n) => n });
  if ('error' in r) return { file: TUNED_MAIN_CONF, line: Math.max(r.line - 1, 0), message: `tuned stops on it (${r.error})` };
  const opts = r.ok.sections.get(MAGIC) ?? new Map();
  const out: MainConf = { later: null, reapply: { on: true, at: null }, recommend: true, priority: 0 };
  for (const [name, o] of opts) {
    const at = { file: TUNED_MAIN_CONF, line: o.line - 1 };
    const v = o.value ?? '';
    if (name === 'profile_dirs' || name === 'reapply_sysctl_exclude') out.later ??= { ...at, name };
    if (name === 'reapply_sysctl' || name === 'recommend_command') {
      const b = BOOLEAN[v.toLowerCase()];
      if (b === undefined) return { ...at, message: `${name} = ${v} is not a boolean: tuned stops ("Not a boolean")` };
      if (name === 'reapply_sysctl') out.reapply = { on: b, at };
      else out.recommend = b;
    }
    if (name === 'default_instance_priority') {
      if (!/^[+-]?\d+(?:_\d+)*$/.test(v)) return { ...at, message: `default_instance_priority = ${v} is not an integer: tuned stops` };
      out.priority = Number(v.replace(/_/g, ''));
    }
  }
  return out;
}

/** The profile directories of tuned 2.24.1 and later (consts.py SYSTEM_PROFILES_DIR, USER_PROFILES_DIR). */
const LATER_PROFILE_DIRS = ['/usr/lib/tuned/profiles', '/etc/tuned/profiles'];

/**
 * A tuned later than the one modelled (2.20): its profiles in
 * LATER_PROFILE_DIRS, or an option of its tuned-main.conf this reader does
 * not model. Its profiles would be looked for in the wrong places, so the
 * whole is unknown rather than judged.
 */
async function laterTuned(host: TargetFs, conf: MainConf): Promise<(Where & { message: string }) | null> {
  const why = 'this reader models tuned 2.20 (Debian 12)';
  if (conf.later) return { file: conf.later.file, line: conf.later.line, message: `${conf.later.name} is an option of a later tuned: ${why}` };
  for (const dir of LATER_PROFILE_DIRS) {
    const st = await host.lstat(await host.realTarget(dir)).catch(() => null);
    if (st?.isDirectory()) return { file: dir, line: 0, message: `tuned 2.24.1 and later keep their profiles in ${dir}: ${why}` };
  }
  return null;
}

/** os.path.isfile, links followed inside the root. */
async function isFile(host: TargetFs, file: string): Promise<boolean> {
  try {
    return (await host.lstat(await host.realTarget(file)))?.isFile() ?? false;
  } catch {
    return false;
  }
}

/** locator.py get_config: the file a name means, "" to skip it, null when there is none. */
async function locate(host: TargetFs, name: string, skip: string[]): Promise<string | null> {
  const conditional = name.startsWith('-');
  const bare = conditional ? name.slice(1) : name;
  let ret: string | null = null;
  for (const dir of [...TUNED_LOAD_DIRS].reverse()) {
    const file = path.posix.normalize(path.posix.join(dir, path.posix.basename(bare), 'tuned.conf'));
    if (skip.includes(file)) {
      ret = '';
      continue;
    }
    if (await isFile(host, file)) return file;
  }
  return conditional && ret === null ? '' : ret;
}

type Loaded = { profiles: TunedProfile[] } | (Where & { message: string });

/**
 * The includes whose expansion is a choice tuned makes at start:
 * `${f:virt_check:A:B}` (profiles/functions/function_virt_check.py: A when
 * virt-what names a hypervisor, else B; openshift's include). Each run of the
 * loader takes the branches in `picks` (0: A, 1: B; missing: A) and counts
 * the choices it met, so every combination can be read.
 */
interface Branches {
  picks: number[];
  seen: Where[];
}

const VIRT_CHECK = /^\$\{f:virt_check:([^:${}\\]+):([^:${}\\]+)\}$/;

/** include='s profile names, or why they cannot be known. */
function includeNames(o: TunedOption, br: Branches): string[] | (Where & { message: string }) {
  const v = VIRT_CHECK.exec(o.value);
  if (v) {
    const pick = br.picks[br.seen.length] ?? 0;
    br.seen.push({ file: o.file, line: o.line });
    return pick === 0 ? [v[1]!] : [v[2]!];
  }
  if (o.value.includes('${'))
    return {
      file: o.file,
      line: o.line,
      message: `include=${o.value} expands variables, which this reader does not evaluate: which profiles tuned loads cannot be known`,
    };
  return o.value.split(/\s*[,;]\s*/);
}

/** loader.py _load_profile: each name's file, its includes first; the profiles in load order. */
async function loadNames(
  host: TargetFs,
  names: string[],
  ctx: { done: string[]; read: string[]; br: Branches; ov?: Overrides },
  out: TunedProfile[],
  from: Where,
): Promise<Loaded> {
  const { done, read, ov } = ctx;
  for (const name of names) {
    const file = await locate(host, name, done);
    if (file === '') continue;
    if (file === null) return { ...from, message: `tuned finds no profile ${name} and then enables no profile at all` };
    done.push(file);
    const r = await readText(host, file, ov);
    if (r === null || 'unknown' in r) return { file, line: 0, message: r === null ? `${file} vanished while read` : r.unknown };
    read.push(file);
    const p = readTunedProfile(name, file, r.text);
    if ('unknown' in p) return { file: p.file, line: p.line, message: p.unknown };
    const include = p.profile.main.get('include');
    p.profile.main.delete('include');
    if (include !== undefined) {
      const inc = includeNames(include, ctx.br);
      if (!Array.isArray(inc)) return inc;
      const sub = await loadNames(host, inc, ctx, out, { file: include.file, line: include.line });
      if (!('profiles' in sub)) return sub;
    }
    out.push(p.profile);
  }
  return { profiles: out };
}

/** The profiles a list of names loads, merged (loader.py load), or why tuned would enable none. */
async function loadProfile(
  host: TargetFs,
  names: string[],
  read: string[],
  br: Branches,
  ov?: Overrides,
): Promise<{ profile: TunedProfile } | (Where & { message: string })> {
  // daemon.py _load_profiles: every name must be a known profile (a NAME/tuned.conf in a load directory).
  for (const name of names) {
    const known = await Promise.all(TUNED_LOAD_DIRS.map((d) => isFile(host, path.posix.join(d, name, 'tuned.conf'))));
    if (name.includes('/') || !known.some(Boolean))
      return { file: ACTIVE_PROFILE, line: 1, message: `tuned finds no profile ${name} and then enables no profile at all` };
    if (name.startsWith('-') || !/^[a-zA-Z0-9_.-]+$/.test(name)) return { file: ACTIVE_PROFILE, line: 1, message: `profile name ${name} is not judged` };
  }
  const r = await loadNames(host, names, { done: [], read, br, ov }, [], { file: ACTIVE_PROFILE, line: 1 });
  if (!('profiles' in r)) return r;
  return { profile: mergeProfiles(r.profiles) };
}

/** Pure: the keys a merged profile's sysctl units write, in the order the units apply (a later unit's value wins). */
export function profileWrites(profile: TunedProfile, defaultPriority: number): TunedWrite[] | (Where & { message: string }) {
  const units = [...profile.units.values()].filter((u) => u.name !== 'variables' && u.enabled);
  const ordered: Array<{ priority: number; unit: (typeof units)[number] }> = [];
  for (const unit of units) {
    const p = unit.options.get('priority');
    if (p !== undefined && !/^[+-]?\d+(?:_\d+)*$/.test(p.value)) return { ...p, message: `priority=${p.value} is not an integer: tuned stops` };
    ordered.push({ priority: p === undefined ? defaultPriority : Number(p.value.replace(/_/g, '')), unit });
  }
  ordered.sort((a, b) => a.priority - b.priority);
  const writes = new Map<string, TunedWrite>();
  for (const { unit } of ordered) {
    if (unit.type !== 'sysctl') continue;
    const condition = unit.cpuinfoRegex ?? unit.unameRegex;
    for (const [name, o] of unit.options) {
      if (name === 'priority') continue;
      const key = name.replace(/\//g, '.');
      const w: TunedWrite = condition
        ? {
            key,
            file: o.file,
            line: o.line,
            unknown: `[${unit.name}] applies only where its ${unit.cpuinfoRegex ? 'cpuinfo_regex' : 'uname_regex'} (${condition.file}:${condition.line}) matches this machine`,
          }
        : { key, file: o.file, line: o.line, ...valueOf(o) };
      writes.delete(key);
      writes.set(key, w);
    }
  }
  return [...writes.values()];
}

/** plugin_sysctl.py: what one option writes (unquote, expand, modifiers), or why that cannot be known here. */
function valueOf(o: TunedOption): { value: string } | { unknown: string } {
  // commands.py unquote: re.sub('^"(.*)"$', r'\1', v).
  const v = /^"[^\n]*"$/.test(o.value) ? o.value.slice(1, -1) : o.value;
  if (v.includes('\n')) return { unknown: `the value spans lines, which this reader does not judge` };
  if (v.includes('${')) return { unknown: `${v} expands tuned variables or functions, which this reader does not evaluate` };
  if (v.length > 1 && (v[0] === '<' || v[0] === '>'))
    return { unknown: `${v} is written only if ${v.slice(1)} is ${v[0] === '<' ? 'below' : 'above'} the value the key has when tuned starts` };
  return { value: v };
}

/** utils/profile_recommender.py: every profile recommend() can answer (each file's sections, ",suffix" dropped, then the default). */
async function recommendCandidates(host: TargetFs, read: string[]): Promise<string[] | (Where & { message: string })> {
  const files = new Map<string, string>();
  for (const dir of RECOMMEND_DIRS) {
    const entries = await host.readDir(dir).catch(() => null);
    for (const e of entries ?? []) files.set(e.name, path.posix.join(dir, e.name));
  }
  const names: string[] = [];
  for (const file of [RECOMMEND_CONF, ...[...files.keys()].sort().map((n) => files.get(n)!)]) {
    if (!(await isFile(host, file))) continue;
    const r = await readText(host, file);
    if (r === null) continue;
    if ('unknown' in r) return { file, line: 0, message: r.unknown };
    read.push(file);
    const ini = readTunedIni(r.text);
    if ('error' in ini) return { file, line: ini.line, message: `the recommendation cannot be judged (${ini.error})` };
    names.push(...[...ini.ok.sections.keys()].map((s) => s.replace(/,[^,]*$/, '')));
  }
  return [...new Set([...names, DEFAULT_PROFILE])];
}

/** The profile names tuned loads at boot (each list one possible start), and whether the recommendation picks among them. */
async function startupProfiles(
  host: TargetFs,
  conf: MainConf,
  read: string[],
): Promise<{ lists: string[][]; recommended: boolean } | (Where & { message: string })> {
  const active = await stateFile(host, ACTIVE_PROFILE, read);
  const mode = await stateFile(host, PROFILE_MODE, read);
  const post = await stateFile(host, POST_LOADED_PROFILE, read);
  for (const s of [active, mode, post]) if (typeof s !== 'string') return { file: s.file, line: 0, message: s.unknown };
  const [a, m, p] = [active, mode, post] as string[];
  if (!['', 'auto', 'manual'].includes(m!))
    return { file: PROFILE_MODE, line: 1, message: `profile_mode ${m} is none of auto, manual: tuned enables no profile` };
  // daemon.py _set_post_loaded_profile: one name only, else no tuning.
  if (/\s/.test(p!)) return { file: POST_LOADED_PROFILE, line: 1, message: `post_loaded_profile names more than one profile: tuned enables no profile` };
  const manual = m === '' ? a !== '' : m === 'manual';
  const tail = p === '' ? [] : [p!];
  if (manual) return { lists: a === '' && tail.length === 0 ? [] : [[...a!.split(/\s+/).filter(Boolean), ...tail]], recommended: false };
  if (!conf.recommend) return { lists: [[DEFAULT_PROFILE, ...tail]], recommended: false };
  const candidates = await recommendCandidates(host, read);
  if (!Array.isArray(candidates)) return candidates;
  return { lists: candidates.map((c) => [c, ...tail]), recommended: true };
}

/**
 * What tuned.service does to /proc/sys when it starts at boot. Recommended
 * profiles: every candidate's writes become unknowns (which one the machine
 * picks is not read here), each naming its candidate.
 */
export async function tunedAtBoot(host: TargetFs, overrides?: Overrides): Promise<TunedBoot> {
  const read: string[] = [];
  const out: TunedBoot = { writes: [], unknown: [], reapply: { on: true, at: null }, read };
  const main = await readText(host, TUNED_MAIN_CONF);
  if (main === null || 'unknown' in main) {
    out.unknown.push({ file: TUNED_MAIN_CONF, line: 0, message: main === null ? 'tuned stops at start without it (/usr/sbin/tuned:53)' : main.unknown });
    return out;
  }
  read.push(TUNED_MAIN_CONF);
  const conf = readMainConf(main.text);
  if ('message' in conf) return { ...out, unknown: [conf] };
  out.reapply = conf.reapply;
  const later = await laterTuned(host, conf);
  if (later !== null) return { ...out, unknown: [later] };
  const start = await startupProfiles(host, conf, read);
  if ('message' in start) return { ...out, unknown: [start] };
  for (const names of start.lists) {
    const writes = await tunedWrites(host, names, conf.priority, read, overrides);
    if (!Array.isArray(writes)) {
      out.unknown.push(writes);
      continue;
    }
    const why = `tuned.service picks its profile at boot by recommendation (${names[0]} is one it may pick)`;
    out.writes.push(
      ...(start.recommended
        ? writes.map((w) => ({
            key: w.key,
            file: w.file,
            line: w.line,
            unknown: 'value' in w ? `${why}, which sets ${w.key} = ${w.value}` : `${why}: ${w.unknown}`,
          }))
        : writes),
    );
  }
  return out;
}

type Outcome = TunedWrite[] | (Where & { message: string });

/** Every outcome of the choices the includes make (at most 16), each with the choices met; null beyond that. */
async function branchOutcomes(host: TargetFs, names: string[], priority: number, read: string[], ov?: Overrides) {
  const out: Array<{ outcome: Outcome; seen: Where[] }> = [];
  const stack: number[][] = [[]];
  while (stack.length > 0) {
    if (out.length === 16) return null;
    const picks = stack.pop()!;
    const br: Branches = { picks, seen: [] };
    const loaded = await loadProfile(host, names, read, br, ov);
    out.push({ outcome: 'profile' in loaded ? profileWrites(loaded.profile, priority) : loaded, seen: br.seen });
    for (let i = picks.length; i < br.seen.length; i++) stack.push([...picks, ...new Array<number>(i - picks.length).fill(0), 1]);
  }
  return out;
}

/**
 * What the profiles named write, over every choice their includes make: a
 * key all choices leave alike is known, one they differ on is unknown naming
 * the choice; tuned refusing under one choice only makes the whole unknown.
 */
export async function tunedWrites(host: TargetFs, names: string[], priority: number, read: string[], ov?: Overrides): Promise<Outcome> {
  const all = await branchOutcomes(host, names, priority, read, ov);
  if (all === null) return { file: ACTIVE_PROFILE, line: 1, message: 'its profiles make more choices at start (virt_check) than this reader follows' };
  const first = all[0]!.outcome;
  if (all.length === 1) return first;
  const choice = all.flatMap((a) => a.seen)[0]!;
  const at = `${choice.file}:${choice.line}`;
  const lists = all.map((a) => a.outcome);
  if (lists.some((l) => !Array.isArray(l))) {
    const refused = lists.find((l) => !Array.isArray(l)) as Where & { message: string };
    return lists.every((l) => !Array.isArray(l)) ? refused : { ...choice, message: `under one of the choices of ${at} (virt_check): ${refused.message}` };
  }
  const keys = [...new Set((lists as TunedWrite[][]).flatMap((l) => l.map((w) => w.key)))];
  return keys.map((key) => {
    const ws = (lists as TunedWrite[][]).map((l) => l.find((w) => w.key === key));
    const w0 = ws.find((w) => w !== undefined)!;
    const same = ws.every((w) => w !== undefined && 'value' in w && 'value' in w0 && w.value === w0.value);
    return same
      ? w0
      : {
          key,
          file: choice.file,
          line: choice.line,
          unknown: `tuned picks the profile ${at} includes when it starts (virt_check: virt-what), and the choices differ for ${key}`,
        };
  });
}
