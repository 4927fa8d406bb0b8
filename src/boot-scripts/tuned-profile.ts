// One tuned profile file, and profiles merged, as tuned 2.20 (Debian 12's
// 2.20.0-1; /usr/lib/python3/dist-packages/tuned/) builds them; pure. The
// include chain and which file a name means are tuned.ts's.
// - profiles/loader.py _load_config_data: ConfigParser(delimiters=('='),
//   inline_comment_prefixes=('#'), strict=False), optionxform=str, every
//   section's options(section) read raw (so [DEFAULT]'s options are in every
//   section), "${i:PROFILE_DIR}" not after a backslash replaced by the
//   profile's directory; a file configparser refuses raises
//   InvalidProfileException, and the daemon then enables no profile at all
//   (daemon/daemon.py Daemon.__init__: "Cannot set initial profile").
// - profiles/profile.py: [main] holds the profile's options (include=), every
//   other section is a unit; profiles/unit.py pops type (default: the
//   section's name), enabled (true unless not one of True/true/1),
//   replace, drop, devices, cpuinfo_regex, uname_regex, script_pre/post;
//   what is left are the plugin's options.
// - profiles/merger.py _merge_two, folded over the profiles in load order:
//   [main] options updated; a unit that is new or says replace=true takes
//   the place of the older one, else type and enabled are the newer unit's,
//   drop= removes options from the older, and the newer options update it.
import { readConfigParser, sectionOptions, type IniFile } from '../lex/configparser.js';

/** One option of a unit, with where it was set (the last file and line that set it). */
export interface TunedOption {
  value: string;
  file: string;
  line: number;
}

export interface TunedUnit {
  name: string;
  type: string;
  enabled: boolean;
  /** replace=, drop=, cpuinfo_regex=, uname_regex= as profiles/unit.py pops them (null: not given). */
  replace: boolean;
  drop: string[] | null;
  cpuinfoRegex: TunedOption | null;
  unameRegex: TunedOption | null;
  options: Map<string, TunedOption>;
}

export interface TunedProfile {
  name: string;
  file: string;
  main: Map<string, TunedOption>;
  units: Map<string, TunedUnit>;
}

export type ProfileRead = { profile: TunedProfile } | { unknown: string; file: string; line: number };

export const MAIN_UNIT = 'main';

/** tuned's reading of a profile or of its other INI files (recommend files: same parser). */
export function readTunedIni(text: string): ReturnType<typeof readConfigParser> {
  return readConfigParser(text, { delimiters: ['='], inlineCommentPrefixes: ['#'], strict: false, optionxform: (n) => n });
}

const PROFILE_DIR = /(?<!\\)\$\{i:PROFILE_DIR\}/g;
const TRUE = new Set(['True', 'true', '1']);

function unitOf(name: string, options: Map<string, TunedOption>): TunedUnit {
  const pop = (k: string): TunedOption | null => {
    const v = options.get(k) ?? null;
    options.delete(k);
    return v;
  };
  const type = pop('type')?.value ?? name;
  const enabled = pop('enabled');
  const replace = pop('replace');
  const drop = pop('drop');
  const cpuinfoRegex = pop('cpuinfo_regex');
  const unameRegex = pop('uname_regex');
  for (const k of ['devices', 'devices_udev_regex', 'script_pre', 'script_post']) pop(k);
  return {
    name,
    type,
    enabled: enabled === null || TRUE.has(enabled.value),
    replace: replace !== null && TRUE.has(replace.value),
    // unit.py: re.split(r"\b\s*[,;]\s*", str(drop)).
    drop: drop === null ? null : drop.value.split(/\b\s*[,;]\s*/u),
    cpuinfoRegex,
    unameRegex,
    options,
  };
}

function profileOf(name: string, file: string, ini: IniFile): TunedProfile {
  const dir = file.slice(0, file.lastIndexOf('/')) || '/';
  const opts = (section: string): Map<string, TunedOption> =>
    new Map([...sectionOptions(ini, section)].map(([k, o]) => [k, { value: (o.value ?? '').replace(PROFILE_DIR, () => dir), file, line: o.line }] as const));
  const units = new Map<string, TunedUnit>();
  for (const section of ini.sections.keys()) if (section !== MAIN_UNIT) units.set(section, unitOf(section, opts(section)));
  return { name, file, main: ini.sections.has(MAIN_UNIT) ? opts(MAIN_UNIT) : new Map(), units };
}

/** Pure: one profile file as loader.py loads it, or why tuned refuses it. */
export function readTunedProfile(name: string, file: string, text: string): ProfileRead {
  if (text.includes('\uFFFD')) return { unknown: 'the file is not UTF-8 text, which tuned cannot read', file, line: 0 };
  const r = readTunedIni(text);
  if ('error' in r) return { unknown: `tuned refuses the profile (${r.error}) and then enables no profile at all`, file, line: r.line };
  return { profile: profileOf(name, file, r.ok) };
}

function mergeUnit(a: TunedUnit, b: TunedUnit): void {
  a.type = b.type;
  a.enabled = b.enabled;
  if (b.cpuinfoRegex !== null) a.cpuinfoRegex = b.cpuinfoRegex;
  if (b.unameRegex !== null) a.unameRegex = b.unameRegex;
  for (const k of b.drop ?? []) a.options.delete(k);
  // The script unit's script lists are concatenated (merger.py); no sysctl key is in them.
  for (const [k, v] of b.options) a.options.set(k, v);
}

/** Pure: merger.py's fold over the profiles in load order (the first is changed in place, as tuned does). */
export function mergeProfiles(profiles: TunedProfile[]): TunedProfile {
  const [first, ...rest] = profiles;
  for (const b of rest) {
    for (const [k, v] of b.main) first!.main.set(k, v);
    for (const [name, unit] of b.units) {
      const a = first!.units.get(name);
      if (unit.replace || a === undefined) first!.units.set(name, unit);
      else mergeUnit(a, unit);
    }
  }
  return first!;
}
