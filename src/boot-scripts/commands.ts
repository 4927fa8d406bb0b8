// What one simple command of a boot script does to the three things this
// tool keeps: swap (swapon), sysctls (sysctl -w / sysctl key=value, sysctl
// -p FILE, a write into /proc/sys by redirection or tee) and modules
// (modprobe -r, rmmod). Pure: words and redirections in
// (src/lex/shell.ts splits them, lex/shell-variables.ts resolves
// variables), actions out. Wrappers that run their arguments as a command
// (command, env, sudo, nohup, nice, ...) are looked through, and `sh -c
// SCRIPT` is handed to the caller's script reader; a program or argument
// known only at run time is `unknown`.
import path from 'node:path';
import { isShell, shellScriptOf, type Word } from '../lex/shell.js';
import { normalizeSysctlKey } from '../observe/sysctl-live.js';
import { canonicalModuleName } from '../observe/modules.js';

export type ScriptAction =
  /**
   * swapon with arguments that turn swap on (anything but --show, --summary,
   * --help, --version). `fstabOnly`: `swapon -a` naming no device or file
   * (no operand, no -L/-U, no -T FSTAB): it turns on only the swap lines of
   * /etc/fstab without noauto, so it is judged against that file.
   */
  | { kind: 'swapon'; argv: Word[]; fstabOnly?: true }
  /** A sysctl write: canonical dotted key and the value as written; `how` when it is no sysctl(8) argument ("echo > /proc/sys/..."). */
  | { kind: 'sysctl-write'; key: string; value: string; how?: string }
  /**
   * sysctl -p / -f / --load: procps reads each file in turn and writes its
   * lines in order. Absolute paths as written; reading them is the caller's.
   */
  | { kind: 'sysctl-load'; files: string[] }
  /** modprobe -r / rmmod of a module (canonical name: "_" for "-"). */
  | { kind: 'module-remove'; module: string; program: 'modprobe -r' | 'rmmod' }
  /**
   * systemd-run makes a transient unit of the system manager (its file lives
   * in /run/systemd/transient and is made again each time the line runs).
   * `unit`: the name it gets (systemd-run(1): a name without a suffix gets
   * ".service", ".scope" with --scope); null when --unit is absent (a
   * random run-*.service) or known only at run time. The command it runs is
   * read as any other (unwrap looks through systemd-run).
   */
  | { kind: 'transient-unit'; unit: string | null; scope: boolean }
  /**
   * What the command does depends on a word known only at run time. For a
   * sysctl, `path` narrows which key it may be: a /proc/sys path where "*"
   * stands for text known only at run time (any characters, "/" too).
   */
  | { kind: 'unknown'; what: 'program' | 'swapon' | 'sysctl' | 'module'; why: string; path?: string };

/** An output redirection with its target resolved: null when known only at run time, with the literal text it starts with. */
export interface ResolvedRedirect {
  op: string;
  fd: number;
  target: Word;
  /** The target's literal start, and a /proc/sys-style pattern of it ("*" for each unknown piece) when one can be made. */
  prefix: string;
  pattern: string | null;
}

/** What surrounds the command in the script: its redirections, and its standard input when a pipe feeds it. */
export interface CommandIo {
  redirects?: ResolvedRedirect[];
  /** undefined: not fed by a pipe; null: fed by a command whose output is known only at run time. */
  stdin?: string | null;
}

/** Reads a `sh -c` script into actions (shell-lines.ts); without one, such a script is unknown. */
export type ScriptReader = (script: string) => ScriptAction[];

function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? p : p.slice(i + 1);
}

/** Options of the wrappers below that take a value as the next word. */
const WRAPPERS: Record<string, { valueOptions: Set<string>; leadingArgs?: number; shortValues?: Set<string> }> = {
  command: { valueOptions: new Set() },
  nohup: { valueOptions: new Set() },
  setsid: { valueOptions: new Set() },
  nice: { valueOptions: new Set(['-n', '--adjustment']) },
  ionice: { valueOptions: new Set(['-c', '-n', '-p', '-P', '-u', '--class', '--classdata']) },
  sudo: {
    valueOptions: new Set([
      '-u',
      '-g',
      '-C',
      '-D',
      '-h',
      '-p',
      '-r',
      '-t',
      '-T',
      '-U',
      '--user',
      '--group',
      '--chdir',
      '--host',
      '--prompt',
      '--role',
      '--type',
      '--command-timeout',
      '--other-user',
      '--close-from',
    ]),
  },
  doas: { valueOptions: new Set(['-u', '-C']) },
  env: { valueOptions: new Set(['-u', '--unset', '-C', '--chdir']) },
  // timeout DURATION COMMAND: one leading argument after the options.
  timeout: { valueOptions: new Set(['-s', '--signal', '-k', '--kill-after']), leadingArgs: 1 },
  busybox: { valueOptions: new Set() },
  // systemd-run(1) of systemd 252, getopt "+hrH:M:E:p:tPqGdSu:" (options end at the first operand).
  'systemd-run': {
    valueOptions: new Set([
      '-u',
      '--unit',
      '-p',
      '--property',
      '--description',
      '--slice',
      '--uid',
      '--gid',
      '--nice',
      '-E',
      '--setenv',
      '--working-directory',
      '--on-active',
      '--on-boot',
      '--on-startup',
      '--on-unit-active',
      '--on-unit-inactive',
      '--on-calendar',
      '--timer-property',
      '--path-property',
      '--socket-property',
      '--service-type',
      '-H',
      '--host',
      '-M',
      '--machine',
    ]),
    shortValues: new Set(['u', 'p', 'E', 'H', 'M']),
  },
};

/** A cluster of short options ("-qu") whose last letter takes its value from the next word. */
function takesNextWord(a: string, shortValues: Set<string> | undefined): boolean {
  if (shortValues === undefined || a.startsWith('--') || a.length < 2) return false;
  for (let j = 1; j < a.length; j++) if (shortValues.has(a[j]!)) return j === a.length - 1;
  return false;
}

/**
 * The transient units a command's systemd-run makes in the system manager
 * (one per systemd-run in its chain of wrappers: `nohup systemd-run ...`).
 * --user, --host and --machine make it in another manager: none here.
 */
export function transientUnits(words: Word[]): ScriptAction[] {
  const out: ScriptAction[] = [];
  let w: Word[] | null = words;
  for (let guard = 0; guard < 8 && w !== null && w.length > 0; guard++) {
    const prog = w[0];
    if (prog === null || prog === undefined || !WRAPPERS[basename(prog)]) break;
    if (basename(prog) === 'systemd-run') {
      const t = systemdRunUnit(w);
      if (t !== null) out.push(t);
    }
    const next = unwrapOnce(w);
    if (next === null || next === w) break;
    w = next;
  }
  return out;
}

/** The unit types of systemd.unit(5): a name ending in one keeps it. */
const UNIT_SUFFIXES = new Set(['service', 'socket', 'device', 'mount', 'automount', 'swap', 'target', 'path', 'timer', 'slice', 'scope']);

function systemdRunUnit(w: Word[]): ScriptAction | null {
  let unit: Word | undefined;
  let scope = false;
  for (let i = 1; i < w.length; i++) {
    const a = w[i];
    if (a === null || a === undefined) {
      // An option known only at run time may be --unit or --user: the name is unknown.
      unit = null;
      break;
    }
    if (a === '--' || !a.startsWith('-') || a === '-') break;
    if (a === '--user' || a === '--host' || a === '--machine' || a.startsWith('--host=') || a.startsWith('--machine=')) return null;
    if (a === '--scope') scope = true;
    if (a === '--unit' || a === '-u') unit = w[i + 1] ?? null;
    else if (a.startsWith('--unit=')) unit = a.slice('--unit='.length);
    else if (!a.startsWith('--')) {
      // A cluster: -H/-M name another host; -uNAME, or u last with the name in the next word.
      for (let j = 1; j < a.length; j++) {
        const o = a[j]!;
        if (o === 'H' || o === 'M') return null;
        if (o === 'u') {
          unit = j + 1 < a.length ? a.slice(j + 1) : (w[i + 1] ?? null);
          break;
        }
        if (WRAPPERS['systemd-run']!.shortValues!.has(o)) break;
      }
    }
    if (WRAPPERS['systemd-run']!.valueOptions.has(a) || takesNextWord(a, WRAPPERS['systemd-run']!.shortValues)) i++;
  }
  if (unit === undefined) return { kind: 'transient-unit', unit: null, scope };
  if (unit === null) return { kind: 'transient-unit', unit: null, scope };
  // systemd-run appends the type's suffix to a name without one (unit_name_mangle_with_suffix).
  const suffix = scope ? '.scope' : '.service';
  const dot = unit.lastIndexOf('.');
  const named = dot > 0 && UNIT_SUFFIXES.has(unit.slice(dot + 1)) ? unit : unit + suffix;
  return { kind: 'transient-unit', unit: named, scope };
}

/**
 * The command a wrapper runs, or the words unchanged when words[0] is no
 * wrapper. null: the wrapper only looks the name up (`command -v swapon`)
 * or runs nothing.
 */
export function unwrap(words: Word[]): Word[] | null {
  let w = words;
  for (let guard = 0; guard < 8; guard++) {
    const next = unwrapOnce(w);
    if (next === null || next === w) return next;
    w = next;
  }
  return w;
}

/** One wrapper looked through: the words it runs; the same array when words[0] is no wrapper; [null] when known only at run time. */
function unwrapOnce(w: Word[]): Word[] | null {
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
      i += spec.valueOptions.has(a) || takesNextWord(a, spec.shortValues) ? 2 : 1;
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
  return w.slice(i);
}

/** swapon options that only show or explain, never turn swap on (swapon(8)). */
const SWAPON_READ_ONLY = new Set(['-s', '--summary', '--show', '-h', '--help', '-V', '--version']);

/**
 * swapon(8) of util-linux 2.38 as its getopt_long reads argv (short options
 * "ahd::efo:p:svVL:U:T:", GNU permutation until "--"): -o, -p, -L, -U, -T
 * take a value (glued or the next word), -d and --discard, --show an
 * optional one glued to them. -L LABEL and -U UUID name a device; -T PATH
 * reads another fstab; every operand names a device or file.
 */
const SWAPON_VALUE_SHORT = new Set(['o', 'p', 'L', 'U', 'T']);
const SWAPON_VALUE_LONG = new Set(['--options', '--priority', '--fstab']);
const SWAPON_NAMING = new Set(['L', 'U', 'T']);

function swaponAction(argv: Word[]): ScriptAction[] {
  const args = argv.slice(1);
  if (args.some((a) => a !== null && (SWAPON_READ_ONLY.has(a) || a.startsWith('--show=')))) return [];
  let all = false;
  let names = false;
  let options = true;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === null) {
      // A word known only at run time may be an option or a device.
      names = true;
      continue;
    }
    if (!options || !a.startsWith('-') || a === '-') {
      names = true;
      continue;
    }
    if (a === '--') {
      options = false;
      continue;
    }
    if (a.startsWith('--')) {
      const name = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
      if (name === '--all') all = true;
      else if (name === '--fstab') names = true;
      else if (name !== '--ifexists' && name !== '--verbose' && name !== '--fixpgsz' && name !== '--discard' && !SWAPON_VALUE_LONG.has(name)) names = true;
      if (SWAPON_VALUE_LONG.has(name) && !a.includes('=')) i++;
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const o = a[j]!;
      if (o === 'a') all = true;
      else if (SWAPON_NAMING.has(o)) names = true;
      else if (!'defvop'.includes(o)) names = true; // an option this reading does not know: not judged
      if (o === 'd') break; // -d takes the rest of the word as its policy
      if (SWAPON_VALUE_SHORT.has(o)) {
        if (j + 1 === a.length) i++;
        break;
      }
    }
  }
  return [all && !names ? { kind: 'swapon', argv, fstabOnly: true } : { kind: 'swapon', argv }];
}

/** procps sysctl's short options that take no argument (getopt string "bneNwfp::qoxaAXr:Vdh"). */
const SYSCTL_FLAGS = new Set('bneNwqoxaAXVdh'.split(''));

/**
 * sysctl(8) of procps-ng 4.0 as its getopt reads argv (checked with
 * `sysctl --help` and runs in a private network namespace,
 * test/boot-scripts/sysctl-writes.test.ts): options and operands mix (GNU
 * permutation) until "--"; -p and -f take an optional argument glued to
 * them ("-pFILE"), --load one after "="; with -p/-f/--load every operand is
 * a file to load, in order, and without any the file is /etc/sysctl.conf;
 * --system returns at once (the sysctl.d tree, which SysctlFile keeps right
 * under the same rules, so it writes nothing this check adds); otherwise an
 * operand with "=" is a write (with or without -w). -r PATTERN filters the
 * keys written, by a regular expression this scan does not evaluate.
 */
function sysctlActions(argv: Word[]): ScriptAction[] {
  const read = readSysctlArgv(argv);
  if (read === 'system') return [];
  return read.load ? sysctlLoadActions(read) : sysctlWriteActions(read);
}

/** What sysctl's getopt makes of an argv: its operands, the files glued to -p/-f/--load, and the modes they set. */
interface SysctlArgv {
  operands: Word[];
  glued: string[];
  /** -p, -f or --load: the operands are files to load. */
  load: boolean;
  /** -r or --pattern: only the keys a regular expression matches. */
  pattern: boolean;
}

/** The argv read option by option; 'system' for --system, which returns at once. */
function readSysctlArgv(argv: Word[]): SysctlArgv | 'system' {
  const read: SysctlArgv = { operands: [], glued: [], load: false, pattern: false };
  let options = true;
  const args = argv.slice(1);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!options || a === null || !a.startsWith('-') || a === '-') {
      read.operands.push(a);
      continue;
    }
    if (a === '--') {
      options = false;
      continue;
    }
    if (a.startsWith('--')) {
      const [name, value] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, null];
      if (name === '--system') return 'system';
      if (name === '--load') {
        read.load = true;
        if (value !== null) read.glued.push(value);
      }
      if (name === '--pattern') {
        read.pattern = true;
        if (value === null) i++;
      }
      continue;
    }
    if (readSysctlShortOptions(a, read)) i++;
  }
  return read;
}

/** A cluster of short options: p and f take the rest of the word as their file, r the next word. True when r takes the next word. */
function readSysctlShortOptions(a: string, read: SysctlArgv): boolean {
  for (let j = 1; j < a.length; j++) {
    const o = a[j]!;
    if (o === 'p' || o === 'f') {
      read.load = true;
      if (j + 1 < a.length) read.glued.push(a.slice(j + 1));
      return false;
    }
    if (o === 'r') {
      read.pattern = true;
      return j + 1 === a.length;
    }
    if (!SYSCTL_FLAGS.has(o)) return false;
  }
  return false;
}

/** sysctl -p/-f/--load: every operand is a file to load, in order; without any, /etc/sysctl.conf. */
function sysctlLoadActions({ glued, operands, pattern }: SysctlArgv): ScriptAction[] {
  const files = [...glued, ...operands];
  if (files.length === 0) files.push('/etc/sysctl.conf');
  if (pattern)
    return [
      { kind: 'unknown', what: 'sysctl', why: 'sysctl -r PATTERN -p loads only the keys the regular expression matches, which this scan does not evaluate' },
    ];
  if (files.some((f) => f === null)) return [{ kind: 'unknown', what: 'sysctl', why: 'sysctl -p loads a file whose name is known only at run time' }];
  const named = files as string[];
  const odd = named.find((f) => f === '-' || !f.startsWith('/'));
  if (odd !== undefined) {
    return [
      {
        kind: 'unknown',
        what: 'sysctl',
        why: odd === '-' ? 'sysctl -p - loads its standard input' : `sysctl -p ${odd} names a file relative to a working directory this scan does not know`,
      },
    ];
  }
  return [{ kind: 'sysctl-load', files: named }];
}

/** sysctl without a file to load: each operand with "=" is a write, in order. */
function sysctlWriteActions({ operands, pattern }: SysctlArgv): ScriptAction[] {
  const out: ScriptAction[] = [];
  for (const a of operands) {
    if (a === null) {
      out.push({ kind: 'unknown', what: 'sysctl', why: 'an argument of sysctl is known only at run time' });
      continue;
    }
    const eq = a.indexOf('=');
    if (eq <= 0) continue; // a read
    if (pattern) {
      out.push({
        kind: 'unknown',
        what: 'sysctl',
        why: 'sysctl -r PATTERN writes only the keys the regular expression matches, which this scan does not evaluate',
      });
      continue;
    }
    out.push({ kind: 'sysctl-write', key: normalizeSysctlKey(a.slice(0, eq).trim()), value: a.slice(eq + 1).trim() });
  }
  return out;
}

const PROC_SYS = '/proc/sys/';

/** The canonical key of a /proc/sys path, or null when the path is elsewhere. */
function procSysKey(file: string): string | null {
  const p = path.posix.normalize(file);
  if (!p.startsWith(PROC_SYS) || p.length === PROC_SYS.length) return null;
  return normalizeSysctlKey(p.slice(PROC_SYS.length - 1));
}

/** Whether a path known only in part (its literal start) may lie under /proc/sys. */
function mayBeProcSys(prefix: string): boolean {
  if (prefix === '') return false;
  const p = prefix.replace(/\/+/g, '/');
  return p.startsWith(PROC_SYS) || PROC_SYS.startsWith(p);
}

/**
 * What a command prints, when the words say it exactly: echo and printf
 * with plain text (the kernel takes the value without the newline). null:
 * known only at run time, or something the two shells print differently
 * (dash's echo reads backslashes and no option but -n).
 */
export function printedText(argv: Word[], stdin: string | null | undefined): string | null {
  const prog = argv[0];
  if (prog === null || prog === undefined || argv.some((w) => w === null)) return null;
  const args = argv.slice(1) as string[];
  switch (basename(prog)) {
    case 'echo': {
      const rest = args[0] === '-n' ? args.slice(1) : args;
      if (rest.some((a) => a.includes('\\')) || (rest[0]?.startsWith('-') ?? false)) return null;
      return rest.join(' ');
    }
    case 'printf': {
      const [format, ...values] = args;
      if (format === undefined) return null;
      const f = format.replace(/\\n$/, '');
      if (!f.includes('%') && !f.includes('\\')) return values.length === 0 ? f : null;
      if (/^%[sdi]$/.test(f) && values.length === 1 && (f === '%s' || /^(0|-?[1-9][0-9]*)$/.test(values[0]!))) return values[0]!;
      return null;
    }
    case 'cat':
      return args.length === 0 && typeof stdin === 'string' ? stdin : null;
    default:
      return null;
  }
}

/** The writes into /proc/sys this command makes by redirection (> >> >|) and through tee. */
function procSysWrites(argv: Word[], io: CommandIo): ScriptAction[] {
  const out: ScriptAction[] = [];
  const write = (file: string, value: string | null | undefined, how: string) => {
    const key = procSysKey(file);
    if (key === null) return;
    // Nothing written (an empty output): opening the file alone changes no value.
    if (value === '') return;
    if (typeof value === 'string') out.push({ kind: 'sysctl-write', key, value: value.trim(), how });
    else out.push({ kind: 'unknown', what: 'sysctl', why: `${how}: what it writes is known only at run time`, path: path.posix.normalize(file) });
  };
  const prog = argv[0] === null || argv[0] === undefined ? null : basename(argv[0]);
  const printed = prog === 'tee' ? (typeof io.stdin === 'string' ? io.stdin : null) : printedText(argv, io.stdin);
  for (const r of io.redirects ?? []) {
    if (r.op !== '>' && r.op !== '>>' && r.op !== '>|') continue;
    if (r.target === null) {
      if (mayBeProcSys(r.prefix) || (r.pattern !== null && mayBeProcSys(r.pattern.split('*')[0]!))) {
        out.push({
          kind: 'unknown',
          what: 'sysctl',
          why: `writes ${r.op} ${r.pattern ?? r.prefix + '…'}, a path known only at run time that may lie under /proc/sys`,
          ...(r.pattern !== null && r.pattern.startsWith(PROC_SYS) ? { path: r.pattern } : {}),
        });
      }
      continue;
    }
    // echo and printf print nothing on other descriptors; anything else may.
    write(r.target, r.fd === 1 ? printed : printed !== null ? '' : null, `${prog ?? '…'} ${r.op} ${r.target}`);
  }
  if (prog === 'tee') {
    // tee [-a] [-i] [-p] [--output-error[=MODE]] FILE...: every operand is a file it copies its input to.
    let options = true;
    for (const a of argv.slice(1)) {
      if (options && a === '--') {
        options = false;
        continue;
      }
      if (options && a !== null && a.startsWith('-') && a !== '-') continue;
      if (a === null) {
        out.push({ kind: 'unknown', what: 'sysctl', why: 'tee writes to a file whose name is known only at run time' });
        continue;
      }
      write(a, typeof io.stdin === 'string' ? io.stdin : null, `tee ${a}`);
    }
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
    n === null
      ? { kind: 'unknown', what: 'module', why: 'a module name of modprobe -r is known only at run time' }
      : { kind: 'module-remove', module: canonicalModuleName(n), program: 'modprobe -r' },
  );
}

function rmmodActions(argv: Word[]): ScriptAction[] {
  return argv
    .slice(1)
    .filter((a) => a === null || !a.startsWith('-'))
    .map((n) =>
      n === null
        ? { kind: 'unknown', what: 'module', why: 'a module name of rmmod is known only at run time' }
        : { kind: 'module-remove', module: canonicalModuleName(n), program: 'rmmod' },
    );
}

/**
 * The actions of one simple command. `sh -c SCRIPT` is read by `readScript`
 * (shell-lines.ts reads it with the same grammar as a script file); a
 * command whose program is known and is none of the above does nothing this
 * tool keeps, apart from what it writes into /proc/sys.
 */
export function commandActions(words: Word[], io: CommandIo = {}, readScript?: ScriptReader): ScriptAction[] {
  const made = transientUnits(words);
  return made.length === 0 ? programActions(words, io, readScript) : [...made, ...programActions(words, io, readScript)];
}

function programActions(words: Word[], io: CommandIo, readScript?: ScriptReader): ScriptAction[] {
  const argv = unwrap(words);
  if (argv === null || argv.length === 0) return [];
  const prog = argv[0];
  if (prog === null || prog === undefined) return [{ kind: 'unknown', what: 'program', why: 'the program is known only at run time' }];
  const writes = procSysWrites(argv, io);
  const script = shellScriptOf(argv);
  if (script !== null) {
    if (!readScript) return [...writes, { kind: 'unknown', what: 'program', why: `${basename(prog)} -c runs a script this caller does not read` }];
    return [...writes, ...readScript(script)];
  }
  // `sh -c "$CMD"`: a shell runs a script this scan cannot see.
  if (isShell(prog) && argv.some((x, i) => i > 0 && x !== null && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(x))) {
    return [...writes, { kind: 'unknown', what: 'program', why: `${basename(prog)} -c runs a script known only at run time` }];
  }
  const a = argv.slice();
  switch (basename(prog)) {
    case 'swapon':
      return [...writes, ...swaponAction(a)];
    case 'sysctl':
      return [...writes, ...sysctlActions(a)];
    case 'modprobe':
      return [...writes, ...modprobeActions(a)];
    case 'rmmod':
      return [...writes, ...rmmodActions(a)];
    default:
      return writes;
  }
}
