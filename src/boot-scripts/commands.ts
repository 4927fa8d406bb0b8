// What one simple command of a boot script does to the three things this
// tool keeps: swap (swapon), sysctls (sysctl -w / sysctl key=value) and
// modules (modprobe -r, rmmod). Pure: words in (src/ports/command-line.ts
// splits them), actions out. Wrappers that run their arguments as a command
// (command, env, sudo, nohup, nice, ...) and `sh -c SCRIPT` are looked
// through; a program or argument known only at run time is `unknown`.
import { isShell, shellScriptOf, shellSimpleCommands, type Word } from '../ports/command-line.js';
import { normalizeSysctlKey } from '../observe/sysctl-live.js';
import { canonicalModuleName } from '../observe/modules.js';

export type ScriptAction =
  /** swapon with arguments that turn swap on (anything but --show, --summary, --help, --version). */
  | { kind: 'swapon'; argv: Word[] }
  /** A sysctl write: canonical dotted key and the value as written. */
  | { kind: 'sysctl-write'; key: string; value: string }
  /** modprobe -r / rmmod of a module (canonical name: "_" for "-"). */
  | { kind: 'module-remove'; module: string; program: 'modprobe -r' | 'rmmod' }
  /** What the command does depends on a word known only at run time. */
  | { kind: 'unknown'; what: 'program' | 'swapon' | 'sysctl' | 'module'; why: string };

function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? p : p.slice(i + 1);
}

/** Options of the wrappers below that take a value as the next word. */
const WRAPPERS: Record<string, { valueOptions: Set<string>; leadingArgs?: number }> = {
  command: { valueOptions: new Set() },
  nohup: { valueOptions: new Set() },
  setsid: { valueOptions: new Set() },
  nice: { valueOptions: new Set(['-n', '--adjustment']) },
  ionice: { valueOptions: new Set(['-c', '-n', '-p', '-P', '-u', '--class', '--classdata']) },
  sudo: { valueOptions: new Set(['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-T', '-U', '--user', '--group', '--chdir', '--host', '--prompt', '--role', '--type', '--command-timeout', '--other-user', '--close-from']) },
  doas: { valueOptions: new Set(['-u', '-C']) },
  env: { valueOptions: new Set(['-u', '--unset', '-C', '--chdir']) },
  // timeout DURATION COMMAND: one leading argument after the options.
  timeout: { valueOptions: new Set(['-s', '--signal', '-k', '--kill-after']), leadingArgs: 1 },
  busybox: { valueOptions: new Set() },
};

/**
 * The command a wrapper runs, or the words unchanged when words[0] is no
 * wrapper. null: the wrapper only looks the name up (`command -v swapon`)
 * or runs nothing.
 */
function unwrap(words: Word[]): Word[] | null {
  let w = words;
  for (let guard = 0; guard < 8; guard++) {
    const prog = w[0];
    if (prog === null || prog === undefined) return w;
    const name = basename(prog);
    const spec = WRAPPERS[name];
    if (!spec) return w;
    let i = 1;
    let leading = spec.leadingArgs ?? 0;
    while (i < w.length) {
      const a = w[i];
      if (a === null || a === undefined) return [null];
      if (a === '--') {
        i++;
        break;
      }
      if (name === 'command' && (a === '-v' || a === '-V')) return null;
      if (name === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(a)) {
        i++;
        continue;
      }
      if (name === 'nice' && /^-\d+$/.test(a)) {
        i++;
        continue;
      }
      if (a.startsWith('-') && a !== '-') {
        i += spec.valueOptions.has(a) ? 2 : 1;
        continue;
      }
      if (leading > 0) {
        leading--;
        i++;
        continue;
      }
      break;
    }
    if (i >= w.length) return null;
    w = w.slice(i);
  }
  return w;
}

/** swapon options that only show or explain, never turn swap on (swapon(8)). */
const SWAPON_READ_ONLY = new Set(['-s', '--summary', '--show', '-h', '--help', '-V', '--version']);

function swaponAction(argv: Word[]): ScriptAction[] {
  const args = argv.slice(1);
  if (args.some((a) => a !== null && (SWAPON_READ_ONLY.has(a) || a.startsWith('--show=')))) return [];
  return [{ kind: 'swapon', argv }];
}

/** sysctl(8) of procps: an argument with "=" is a write (with or without -w); -p/--load FILE and the rest read. */
function sysctlActions(argv: Word[]): ScriptAction[] {
  const out: ScriptAction[] = [];
  let load = false;
  for (const a of argv.slice(1)) {
    if (a === null) {
      out.push({ kind: 'unknown', what: 'sysctl', why: 'an argument of sysctl is known only at run time' });
      continue;
    }
    if (a.startsWith('-')) {
      if (a === '-p' || a === '--load' || a.startsWith('--load=') || (/^-[a-zA-Z]+$/.test(a) && a.includes('p'))) load = true;
      continue;
    }
    if (load) {
      out.push({ kind: 'unknown', what: 'sysctl', why: `sysctl -p ${a} loads a file this scan does not read` });
      continue;
    }
    const eq = a.indexOf('=');
    if (eq <= 0) continue; // a read
    out.push({ kind: 'sysctl-write', key: normalizeSysctlKey(a.slice(0, eq).trim()), value: a.slice(eq + 1).trim() });
  }
  return out;
}

/** Options of modprobe(8) that take a value as the next word. */
const MODPROBE_VALUE_OPTIONS = new Set(['-C', '--config', '-d', '--dirname', '-S', '--set-version']);

function modprobeActions(argv: Word[]): ScriptAction[] {
  let remove = false;
  let all = false;
  const names: Word[] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === null) {
      names.push(null);
      continue;
    }
    if (a.startsWith('--')) {
      if (a === '--remove') remove = true;
      if (a === '--all') all = true;
      if (MODPROBE_VALUE_OPTIONS.has(a)) i++;
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      if (MODPROBE_VALUE_OPTIONS.has(a)) {
        i++;
        continue;
      }
      const cluster = a.slice(1);
      if (cluster.includes('r')) remove = true;
      if (cluster.includes('a')) all = true;
      continue;
    }
    names.push(a);
  }
  if (!remove) return [];
  // Without -a, modprobe -r still takes every name as a module to remove (modprobe(8): "-r ... can remove several").
  void all;
  return names.map((n) =>
    n === null ? { kind: 'unknown', what: 'module', why: 'a module name of modprobe -r is known only at run time' } : { kind: 'module-remove', module: canonicalModuleName(n), program: 'modprobe -r' },
  );
}

function rmmodActions(argv: Word[]): ScriptAction[] {
  return argv
    .slice(1)
    .filter((a) => a === null || !a.startsWith('-'))
    .map((n) =>
      n === null ? { kind: 'unknown', what: 'module', why: 'a module name of rmmod is known only at run time' } : { kind: 'module-remove', module: canonicalModuleName(n), program: 'rmmod' },
    );
}

/** The actions of one simple command; `sh -c SCRIPT` is read as the script it runs (depth-limited). */
export function commandActions(words: Word[], depth = 0): ScriptAction[] {
  const argv = unwrap(words);
  if (argv === null || argv.length === 0) return [];
  const prog = argv[0];
  if (prog === null || prog === undefined) return [{ kind: 'unknown', what: 'program', why: 'the program is known only at run time' }];
  const script = shellScriptOf(argv);
  if (script !== null) {
    if (depth >= 4) return [{ kind: 'unknown', what: 'program', why: 'sh -c nested too deeply to read' }];
    return shellSimpleCommands(script).flatMap((c) => commandActions(c, depth + 1));
  }
  // `sh -c "$CMD"`: a shell runs a script this scan cannot see.
  if (isShell(prog) && argv.some((x, i) => i > 0 && x !== null && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(x))) {
    return [{ kind: 'unknown', what: 'program', why: `${basename(prog)} -c runs a script known only at run time` }];
  }
  const a = argv.slice();
  switch (basename(prog)) {
    case 'swapon':
      return swaponAction(a);
    case 'sysctl':
      return sysctlActions(a);
    case 'modprobe':
      return modprobeActions(a);
    case 'rmmod':
      return rmmodActions(a);
    default:
      return [];
  }
}
