// What an `install MODULE COMMAND` line of modprobe.d does. libkmod runs
// COMMAND with system(), i.e. `/bin/sh -c COMMAND`, instead of loading the
// module; the line is harmless only when the command itself ends up loading
// MODULE (usually `modprobe --ignore-install MODULE`). So the command is
// judged by what it does: it is read as a shell command list (words, quotes,
// `;` `&&` `||` `|` `&`, `sh -c`, `exit`) and walked with the exit status of
// each step, which programs with a known meaning have (true, false, :, echo,
// modprobe ...). A program or construct of unknown effect makes the verdict
// `unknown`, never a guess.
import { canonicalModuleName } from '../observe/modules.js';

export type InstallVerdict = ({ loads: 'yes' } | { loads: 'no'; reason: string } | { loads: 'unknown'; reason: string }) & {
  /** The command's exit status: libkmod stops a probe whose install command fails. */
  status: 0 | 1 | '?';
};

type Tri = 'yes' | 'no' | 'maybe';
/** 0, non-zero, or not known. */
type Status = 0 | 1 | '?';

interface State {
  loaded: Tri;
  status: Status;
  /** The script has stopped (exit). */
  exited: Tri;
  unknown: string[];
}

type Token = { op: string } | { word: string; raw: string };

class Unsupported extends Error {}

/** Stands for every module name: "does this command load anything at all". */
export const ANY_MODULE = '*';

/** POSIX shell tokens for the subset we judge; anything richer is Unsupported. */
export function tokenize(cmd: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < cmd.length) {
    const c = cmd[i]!;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '\n') {
      out.push({ op: ';' });
      i++;
      continue;
    }
    if (c === '#') {
      while (i < cmd.length && cmd[i] !== '\n') i++;
      continue;
    }
    const two = cmd.slice(i, i + 2);
    if (two === '&&' || two === '||') {
      out.push({ op: two });
      i += 2;
      continue;
    }
    if (c === ';' || c === '|' || c === '&') {
      if (two === ';;') throw new Unsupported('case syntax');
      out.push({ op: c });
      i++;
      continue;
    }
    if (c === '(' || c === ')' || (c === '{' && isWordEnd(cmd[i + 1])) || c === '`') throw new Unsupported(`"${c}"`);
    const w = readWord(cmd, i);
    i = w.end;
    out.push({ word: w.word, raw: w.raw });
  }
  return out;
}

/** One word from `i`, its quotes removed (`word`) and as written (`raw`), and where it ends. */
function readWord(cmd: string, i: number): { word: string; raw: string; end: number } {
  let word = '';
  let raw = '';
  while (i < cmd.length) {
    const d = cmd[i]!;
    // ">&" and "<&" belong to a redirection word (2>&1), not an "&" operator.
    if (d === '&' && (raw.endsWith('>') || raw.endsWith('<'))) {
      word += d;
      raw += d;
      i++;
      continue;
    }
    if (' \t\n;&|()'.includes(d)) break;
    if (d === '`') throw new Unsupported('command substitution');
    if (d === '$' && cmd[i + 1] === '(') throw new Unsupported('command substitution');
    if (d === '\\') {
      if (i + 1 < cmd.length && cmd[i + 1] !== '\n') word += cmd[i + 1];
      raw += cmd.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (d === "'") {
      const end = cmd.indexOf("'", i + 1);
      if (end < 0) throw new Unsupported('an unterminated quote');
      word += cmd.slice(i + 1, end);
      raw += cmd.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    if (d === '"') {
      const q = readDoubleQuoted(cmd, i);
      word += q.inner;
      raw += cmd.slice(i, q.end);
      i = q.end;
      continue;
    }
    word += d;
    raw += d;
    i++;
  }
  return { word, raw, end: i };
}

/** A double-quoted part from the quote at `i`: backslash escapes only $ ` " \\ and newline. */
function readDoubleQuoted(cmd: string, i: number): { inner: string; end: number } {
  let j = i + 1;
  let inner = '';
  while (j < cmd.length && cmd[j] !== '"') {
    if (cmd[j] === '\\' && j + 1 < cmd.length && '$`"\\\n'.includes(cmd[j + 1]!)) {
      if (cmd[j + 1] !== '\n') inner += cmd[j + 1];
      j += 2;
      continue;
    }
    if (cmd[j] === '`' || (cmd[j] === '$' && cmd[j + 1] === '(')) throw new Unsupported('command substitution');
    inner += cmd[j];
    j++;
  }
  if (j >= cmd.length) throw new Unsupported('an unterminated quote');
  return { inner, end: j + 1 };
}

function isWordEnd(c: string | undefined): boolean {
  return c === undefined || c === ' ' || c === '\t' || c === '\n';
}

const TRUE = new Set([':', 'true', '/bin/true', '/usr/bin/true']);
const FALSE = new Set(['false', '/bin/false', '/usr/bin/false']);
/** Programs that only print or log: status 0, nothing loaded. */
const QUIET = new Set(['echo', '/bin/echo', '/usr/bin/echo', 'printf', '/usr/bin/printf', 'logger', '/usr/bin/logger', '/bin/logger']);
const MODPROBE = new Set(['modprobe', '/sbin/modprobe', '/usr/sbin/modprobe', '/bin/modprobe', '/usr/bin/modprobe']);
const INSMOD = new Set(['insmod', '/sbin/insmod', '/usr/sbin/insmod', '/bin/insmod', '/usr/bin/insmod']);
const SHELLS = new Set(['sh', '/bin/sh', '/usr/bin/sh', 'bash', '/bin/bash', '/usr/bin/bash', 'dash', '/bin/dash', '/usr/bin/dash']);
const RESERVED = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'for',
  'while',
  'until',
  'do',
  'done',
  'case',
  'esac',
  'function',
  '!',
  '{',
  '}',
  '[[',
  'eval',
  'exec',
  '.',
  'source',
]);

/** modprobe options that make it load nothing. */
const MODPROBE_NOLOAD =
  /^(-[a-zA-Z]*[rnDcR]|--(remove|dry-run|show|show-depends|showconfig|show-config|show-modversions|dump-modversions|show-exports|resolve-alias|help|version))/;
/** modprobe options that take the next word as their value. */
const MODPROBE_WITH_ARG = new Set(['-C', '--config', '-d', '--dirname', '-S', '--set-version']);

interface Simple {
  words: string[];
}

/** Splits into and-or lists separated by ; and &, each a list of pipelines joined by && or ||. */
function parseList(tokens: Token[]): Array<{ pipelines: Simple[][]; ops: string[] }> {
  const lists: Array<{ pipelines: Simple[][]; ops: string[] }> = [];
  let cur: { pipelines: Simple[][]; ops: string[] } = { pipelines: [], ops: [] };
  let pipe: Simple[] = [];
  let simple: string[] = [];
  const endSimple = () => {
    if (simple.length === 0) throw new Unsupported('an empty command');
    pipe.push({ words: simple });
    simple = [];
  };
  const endPipe = () => {
    endSimple();
    cur.pipelines.push(pipe);
    pipe = [];
  };
  for (const t of tokens) {
    if ('word' in t) {
      simple.push(t.word);
      continue;
    }
    if (t.op === '|') endSimple();
    else if (t.op === '&&' || t.op === '||') {
      endPipe();
      cur.ops.push(t.op);
    } else {
      // ; or &: a background job still runs to its end before anything reads the result.
      if (simple.length === 0 && pipe.length === 0 && cur.pipelines.length === 0) continue;
      endPipe();
      lists.push(cur);
      cur = { pipelines: [], ops: [] };
    }
  }
  if (simple.length > 0 || pipe.length > 0) endPipe();
  else if (cur.ops.length > 0 && cur.ops.length >= cur.pipelines.length) throw new Unsupported('a dangling operator');
  if (cur.pipelines.length > 0) lists.push(cur);
  return lists;
}

function merge(a: Tri, b: Tri): Tri {
  return a === b ? a : 'maybe';
}

function or(a: Tri, b: Tri): Tri {
  if (a === 'yes' || b === 'yes') return 'yes';
  if (a === 'no' && b === 'no') return 'no';
  return 'maybe';
}

/** One simple command: its exit status and whether it loaded the module. */
function runSimple(words: string[], module: string, depth: number): { status: Status; loaded: Tri; exit: Status | null; unknown?: string } {
  // Leading assignments (FOO=bar cmd) and redirections change nothing we judge.
  const w = words.filter((x, i) => !/^\d*[<>]/.test(x) && !(i > 0 && /^\d*[<>]&?$/.test(words[i - 1]!)));
  while (w.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]!)) w.shift();
  if (w.length === 0) return { status: 0, loaded: 'no', exit: null };
  const prog = w[0]!;
  const args = w.slice(1);
  if (RESERVED.has(prog)) return { status: '?', loaded: 'maybe', exit: null, unknown: `the shell keyword ${prog}` };
  if (prog.includes('$')) return { status: '?', loaded: 'maybe', exit: null, unknown: `the program ${prog} is a variable` };
  if (prog === 'exit') {
    const n = args[0];
    if (n === undefined) return { status: '?', loaded: 'no', exit: '?' }; // exits with the last status, which this step does not know
    if (!/^\d+$/.test(n)) return { status: '?', loaded: 'no', exit: '?' };
    return { status: Number(n) % 256 === 0 ? 0 : 1, loaded: 'no', exit: Number(n) % 256 === 0 ? 0 : 1 };
  }
  if (TRUE.has(prog)) return { status: 0, loaded: 'no', exit: null };
  if (FALSE.has(prog)) return { status: 1, loaded: 'no', exit: null };
  if (QUIET.has(prog)) return { status: 0, loaded: 'no', exit: null };
  if (MODPROBE.has(prog)) return runModprobe(args, module);
  if (INSMOD.has(prog)) {
    const file = args.find((a) => !a.startsWith('-'));
    if (file === undefined) return { status: 1, loaded: 'no', exit: null };
    if (file.includes('$')) return { status: '?', loaded: 'maybe', exit: null, unknown: `insmod of ${file}` };
    const base = file.replace(/^.*\//, '').replace(/\.ko(\.(xz|gz|zst))?$/, '');
    return module === ANY_MODULE || canonicalModuleName(base) === module
      ? { status: '?', loaded: 'yes', exit: null }
      : { status: '?', loaded: 'no', exit: null };
  }
  if (SHELLS.has(prog)) {
    const c = args.indexOf('-c');
    const script = c >= 0 ? args[c + 1] : undefined;
    if (script === undefined || args.slice(0, c).some((a) => !/^-[a-z]+$/.test(a))) {
      return { status: '?', loaded: 'maybe', exit: null, unknown: `${prog} runs a script file` };
    }
    if (depth > 8) return { status: '?', loaded: 'maybe', exit: null, unknown: 'shells nested too deep' };
    const inner = evaluate(script, module, depth + 1);
    return { status: inner.status, loaded: inner.loaded, exit: null, unknown: inner.unknown[0] };
  }
  return { status: '?', loaded: 'maybe', exit: null, unknown: `the program ${prog}` };
}

function runModprobe(args: string[], module: string): { status: Status; loaded: Tri; exit: null; unknown?: string } {
  const names: string[] = [];
  let all = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      names.push(...args.slice(i + 1));
      break;
    }
    if (MODPROBE_WITH_ARG.has(a)) {
      i++;
      continue;
    }
    if (a.startsWith('-')) {
      if (MODPROBE_NOLOAD.test(a)) return { status: '?', loaded: 'no', exit: null };
      if (a === '-a' || a === '--all' || /^-[a-zA-Z]*a/.test(a)) all = true;
      continue;
    }
    names.push(a);
  }
  // Without -a, modprobe loads the first name; the rest are its parameters.
  const loadedNames = all ? names : names.slice(0, 1);
  if (loadedNames.some((n) => n.includes('$'))) return { status: '?', loaded: 'maybe', exit: null, unknown: `modprobe ${loadedNames.join(' ')}` };
  return loadedNames.some((n) => module === ANY_MODULE || canonicalModuleName(n) === module)
    ? { status: '?', loaded: 'yes', exit: null }
    : { status: '?', loaded: 'no', exit: null };
}

function evaluate(cmd: string, module: string, depth: number): State {
  let tokens: Token[];
  let lists: ReturnType<typeof parseList>;
  try {
    tokens = tokenize(cmd);
    lists = parseList(tokens);
  } catch (e) {
    if (e instanceof Unsupported) return { loaded: 'maybe', status: '?', exited: 'no', unknown: [`the command uses ${e.message}`] };
    throw e;
  }
  const st: State = { loaded: 'no', status: 0, exited: 'no', unknown: [] };
  for (const list of lists) {
    if (st.exited === 'yes') break;
    for (const [i, pipeline] of list.pipelines.entries()) {
      // Whether this pipeline runs: the script has not exited, and the last
      // status that was set (skipped pipelines set none) satisfies && or ||.
      const base: Tri = st.exited === 'maybe' ? 'maybe' : 'yes';
      let cond: Tri = 'yes';
      if (i > 0) {
        const op = list.ops[i - 1]!;
        cond = st.status === '?' ? 'maybe' : (op === '&&') === (st.status === 0) ? 'yes' : 'no';
      }
      const running: Tri = cond === 'no' ? 'no' : base === 'yes' && cond === 'yes' ? 'yes' : 'maybe';
      if (running === 'no') continue;
      let loaded: Tri = 'no';
      let status: Status = 0;
      let exit: Status | null = null;
      for (const s of pipeline) {
        const r = runSimple(s.words, module, depth);
        loaded = or(loaded, r.loaded);
        status = r.status;
        // `exit` inside a pipeline ends only its own subshell.
        exit = pipeline.length === 1 ? r.exit : null;
        if (r.unknown) st.unknown.push(r.unknown);
      }
      if (running === 'yes') {
        st.loaded = or(st.loaded, loaded);
        st.status = status;
        if (exit !== null) st.exited = 'yes';
      } else {
        st.loaded = st.loaded === 'yes' ? 'yes' : merge(st.loaded, or(st.loaded, loaded));
        st.status = st.status === status ? status : '?';
        if (exit !== null) st.exited = 'maybe';
      }
      if (st.exited === 'yes') break;
    }
  }
  return st;
}

/** Whether running `command` for `install MODULE command` loads MODULE. */
export function judgeInstallCommand(module: string, command: string): InstallVerdict {
  const st = evaluate(command, module === ANY_MODULE ? ANY_MODULE : canonicalModuleName(module), 0);
  const status = st.exited === 'maybe' ? '?' : st.status;
  if (st.loaded === 'yes') return { loads: 'yes', status };
  if (st.loaded === 'no') return { loads: 'no', status, reason: `\`${command.trim()}\` never loads ${module}` };
  return {
    loads: 'unknown',
    status,
    reason: `cannot tell whether \`${command.trim()}\` loads ${module}: ${st.unknown[0] ?? 'it depends on a status only known when it runs'}`,
  };
}
