// NetworkManager's configuration as NetworkManager reads it
// (NetworkManager.conf(5), "DESCRIPTION" and "Device List Format"), for one
// key: [keyfile] unmanaged-devices. The files come in NM's order: the
// system conf.d (/usr/lib), then the runtime one (/run), then the main file,
// then /etc's conf.d; within a directory by file name, asciibetically; a
// name in /etc's conf.d shadows the same name in /run and /usr/lib, one in
// /run shadows /usr/lib. Each file is a GLib key file; a later `key=`
// replaces the list, `key+=` appends the specs not there yet, `key-=`
// removes them. NetworkManager --print-config is the oracle the tests hold
// this to (test/acceptance/nm-conf.test.ts). Pure: the files are given.
import type { Known } from './checker.js';
import { known, notKnown } from './checker.js';

export const NM_MAIN = '/etc/NetworkManager/NetworkManager.conf';
/** The conf.d directories in the order NM reads them: /usr/lib, /run before the main file, /etc after it. */
export const NM_CONF_DIRS = ['/usr/lib/NetworkManager/conf.d', '/run/NetworkManager/conf.d', '/etc/NetworkManager/conf.d'] as const;
const ETC_DIR = NM_CONF_DIRS[2];

export interface NmConfFile {
  path: string;
  text: string;
}

/** The files NM reads, in its order: `dirs` maps each conf.d directory to its `*.conf` files. */
export function readOrder(main: NmConfFile | null, dirs: Record<string, NmConfFile[]>): NmConfFile[] {
  const base = (p: string) => p.slice(p.lastIndexOf('/') + 1);
  // NM sorts with strcmp: byte order, which Buffer.compare gives for any name.
  const sorted = (fs: NmConfFile[]) => [...fs].sort((a, b) => Buffer.compare(Buffer.from(base(a.path)), Buffer.from(base(b.path))));
  const names = (d: string) => new Set((dirs[d] ?? []).map((f) => base(f.path)));
  const [lib, run, etc] = NM_CONF_DIRS;
  const inRun = names(run);
  const inEtc = names(etc);
  const libFiles = (dirs[lib] ?? []).filter((f) => !inRun.has(base(f.path)) && !inEtc.has(base(f.path)));
  const runFiles = (dirs[run] ?? []).filter((f) => !inEtc.has(base(f.path)));
  return [...sorted(libFiles), ...sorted(runFiles), ...(main ? [main] : []), ...sorted(dirs[etc] ?? [])];
}

/** Whether NM reads a conf.d entry by its name (nm-config.c reads every name ending in .conf). */
export const isConfName = (name: string): boolean => name.endsWith('.conf');

type Op = '=' | '+=' | '-=';
interface Assignment {
  op: Op;
  value: string;
  line: number;
}

/**
 * The assignments to [keyfile] unmanaged-devices in one key file, as GLib
 * reads it: a key's last line wins and keys are applied in the order of
 * those last lines (`unmanaged-devices` and `unmanaged-devices+` are two keys).
 * Not known when a line is not one GLib accepts (NM refuses the whole file).
 */
export function keyfileAssignments(f: NmConfFile, group = 'keyfile', key = 'unmanaged-devices'): Known<Assignment[]> {
  let current: string | null = null;
  const keys = new Map<string, Assignment>();
  const lines = f.text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    const line = raw.replace(/^[ \t]+/, '');
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) {
      if (!line.endsWith(']') || line.length < 3) return notKnown(`${f.path}:${i + 1} is not a group header GLib reads`);
      current = line.slice(1, -1);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0 || current === null) return notKnown(`${f.path}:${i + 1} is not a key=value line in a group`);
    if (current !== group) continue;
    const name = line.slice(0, eq).replace(/[ \t]+$/, '');
    const value = line.slice(eq + 1).replace(/^[ \t]+/, '');
    const op: Op | null = name === key ? '=' : name === `${key}+` ? '+=' : name === `${key}-` ? '-=' : null;
    if (op === null) continue;
    // A backslash escapes in both GLib's and NM's readers: not judged here, never guessed.
    if (value.includes('\\')) return notKnown(`${f.path}:${i + 1}: ${name}= has a backslash escape, which is not read here`);
    // GLib replaces a repeated key by a new one at the end of its group (NM --print-config shows it): the last line's place counts.
    keys.delete(name);
    keys.set(name, { op, value, line: i + 1 });
  }
  return known([...keys.values()]);
}

/** A device list split as nm_match_spec_split does: on `,` and `;`, each spec trimmed, empty ones dropped. */
export const splitSpecs = (value: string): string[] =>
  value
    .split(/[,;]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** The merged [keyfile] unmanaged-devices, and the file:line of each assignment that made it. */
export interface Unmanaged {
  specs: string[];
  from: string[];
}

export function mergeUnmanaged(files: NmConfFile[]): Known<Unmanaged> {
  let specs: string[] = [];
  const from: string[] = [];
  for (const f of files) {
    const a = keyfileAssignments(f);
    if (!a.known) return a;
    for (const { op, value, line } of a.value) {
      const given = splitSpecs(value);
      if (op === '=')
        specs = given; // NM keeps a repeated spec of a plain assignment (--print-config shows it twice)
      // += skips a spec the list has already, not one repeated in its own value (--print-config shows both).
      else if (op === '+=') specs = [...specs, ...given.filter((s) => !specs.includes(s))];
      else specs = specs.filter((s) => !given.includes(s));
      from.push(`${f.path}:${line}`);
    }
  }
  return known({ specs, from });
}

export { ETC_DIR as NM_ETC_CONF_DIR };
