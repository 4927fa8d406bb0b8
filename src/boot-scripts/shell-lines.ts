// A shell script read line by line for the boot-script scan: each simple
// command with its actions (commands.ts), the physical lines of the
// statement it belongs to, and whether commenting out those lines leaves a
// script that still runs the rest. Pure. Tokens come from
// src/ports/command-line.ts (quoting, comments, continuation lines).
//
// A statement here is what one "\n" ends: `a; b && c`, including the lines a
// backslash-newline, a quote, or a trailing `&&`/`||`/`|` carries it over.
// Commenting out every physical line of such a statement at the top level
// removes exactly it. Inside a compound command (if/while/for/case, `{ }`,
// `( )`, a function body) an emptied body is a syntax error in sh, so those
// are never commented out: a person decides. Here-document bodies are data
// and are blanked before reading.
//
// Variables: a word made of literal text and plain parameters ($NAME,
// ${NAME}) is put together when every assignment of each NAME in the script
// gives the same literal value (after the same resolution), one of them
// comes before the word, and no `.`, `source` or `eval` between the first
// of them and the word can have changed it. Anything else (a variable from
// the environment, a loop variable, `read`, a command substitution, a
// different value in another branch) stays known only at run time. An
// unquoted parameter whose value would be split into fields or globbed
// (spaces, tabs, newlines, * ? [) or vanish (empty) stays unknown too.
import { shellSimpleCommandsAt, shellTokens, type ShellCommand, type ShellToken, type Word, type WordPart } from '../ports/command-line.js';
import { commandActions, printedText, type CommandIo, type ResolvedRedirect, type ScriptAction } from './commands.js';

export interface ScriptCommand {
  words: Word[];
  actions: ScriptAction[];
  /** 1-based line where the command starts. */
  line: number;
  /** The physical lines of its statement: what commenting it out touches. */
  first: number;
  last: number;
  /** true when commenting out first..last is safe; otherwise the reason it is not. */
  neutralisable: true | string;
}

/** Every simple command with its words resolved, for following the programs it runs into their files (scan.ts). */
export interface ScriptProgram {
  words: Word[];
  line: number;
}

export interface ScriptProblem {
  line: number;
  message: string;
}

const OPENERS = new Set(['if', 'while', 'until', 'for', 'case', '{']);
const CLOSERS = new Set(['fi', 'done', 'esac', '}']);
/** Reserved words after which the next word is again a command name. */
const THEN_LIKE = new Set(['then', 'do', 'else', 'elif', '!', 'time']);

interface Statement {
  at: number;
  end: number;
  /** Nesting depth when the statement starts. */
  depth: number;
  /** The statement opens, closes or continues a compound command. */
  compound: boolean;
}

/** 1-based line of an offset. */
function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

function statements(tokens: ShellToken[]): Statement[] {
  const out: Statement[] = [];
  const stack: string[] = [];
  let cur: ShellToken[] = [];
  let depthAtStart = 0;
  let compound = false;
  let cmdPos = true;
  const close = () => {
    if (cur.length > 0) out.push({ at: cur[0]!.at, end: cur[cur.length - 1]!.end, depth: depthAtStart, compound });
    cur = [];
    compound = false;
    depthAtStart = stack.length;
  };
  for (const t of tokens) {
    if (t.op === '\n') {
      const prev = cur[cur.length - 1];
      // After && || | the list goes on past the newline.
      if (prev && (prev.op === '&&' || prev.op === '||' || prev.op === '|')) continue;
      close();
      cmdPos = true;
      continue;
    }
    if (cur.length === 0) depthAtStart = stack.length;
    cur.push(t);
    if (t.op === 'redirect') continue;
    if (t.op === '(') {
      stack.push('(');
      compound = true;
      cmdPos = true;
      continue;
    }
    if (t.op === ')') {
      if (stack[stack.length - 1] === '(') stack.pop();
      compound = true;
      cmdPos = true;
      continue;
    }
    if (t.op !== null) {
      cmdPos = true;
      continue;
    }
    if (cmdPos && t.plain && t.word !== null) {
      if (OPENERS.has(t.word)) {
        stack.push(t.word);
        compound = true;
        // for NAME in ...; case WORD in: the next words are no command.
        cmdPos = t.word !== 'for' && t.word !== 'case';
        continue;
      }
      if (CLOSERS.has(t.word)) {
        stack.pop();
        compound = true;
        cmdPos = false;
        continue;
      }
      if (THEN_LIKE.has(t.word)) {
        if (t.word !== '!' && t.word !== 'time') compound = true;
        continue;
      }
    }
    if (!t.assignment) cmdPos = false;
  }
  close();
  return out;
}

/**
 * The script with every here-document body blanked (spaces, newlines kept, so
 * offsets and line numbers stay): the body is data for the command's stdin.
 * The body starts on the line after the `<<WORD`, and ends at a line that is
 * exactly WORD (tabs stripped first for `<<-`); WORD's quotes are removed.
 */
export function blankHeredocs(text: string): string {
  let s = text;
  let from = 0;
  for (let guard = 0; guard < 1000; guard++) {
    const tokens = shellTokens(s);
    const i = tokens.findIndex((t) => t.at >= from && t.redirect !== undefined && /^<<-?$/.test(t.redirect));
    if (i < 0) return s;
    const redirect = tokens[i]!;
    const delim = tokens[i + 1];
    if (!delim || delim.op !== null) return s;
    const word = s.slice(delim.at, delim.end).replace(/\\(.)/g, '$1').replace(/["']/g, '');
    const bodyStart = s.indexOf('\n', delim.end);
    if (bodyStart < 0) return s;
    let at = bodyStart + 1;
    let end = s.length;
    while (at < s.length) {
      const nl = s.indexOf('\n', at);
      const lineEnd = nl < 0 ? s.length : nl;
      const line = s.slice(at, lineEnd);
      if ((redirect.redirect === '<<-' ? line.replace(/^\t+/, '') : line) === word) {
        end = at;
        break;
      }
      at = lineEnd + 1;
    }
    s = s.slice(0, bodyStart + 1) + s.slice(bodyStart + 1, end).replace(/[^\n]/g, ' ') + s.slice(end);
    // Past the body and its delimiter line.
    from = end;
  }
  return s;
}

/** Builtins that assign the variables named by their NAME=value operands. */
const DECLARERS = new Set(['export', 'readonly', 'local', 'declare', 'typeset']);

interface Assignment {
  name: string;
  at: number;
  /** The value's token (the whole NAME=value word), or null when the value is known only at run time. */
  token: ShellToken | null;
}

/** The script's variables: what a word resolves to at an offset. */
export class ShellVariables {
  private readonly byName = new Map<string, Assignment[]>();
  private readonly barriers: number[] = [];
  private readonly memo = new Map<ShellToken, Word>();

  constructor(commands: ShellCommand[]) {
    const add = (name: string, at: number, token: ShellToken | null) => this.byName.set(name, [...(this.byName.get(name) ?? []), { name, at, token }]);
    const nameOf = (t: ShellToken) => /^[A-Za-z_][A-Za-z0-9_]*/.exec((t.word ?? '') || '')?.[0] ?? null;
    for (const c of commands) {
      const toks = c.wordTokens ?? [];
      if (c.words.length === 0) {
        for (const t of c.assignments ?? []) add(assignmentName(t), t.at, t);
        continue;
      }
      const prog = c.words[0];
      if (prog === null || prog === undefined) continue;
      if (DECLARERS.has(prog)) {
        for (const t of toks.slice(1)) {
          if (t.assignment) add(assignmentName(t), t.at, t);
          // `local NAME`: a fresh, empty variable in the function.
          else if (prog === 'local' && t.word !== null && /^[A-Za-z_][A-Za-z0-9_]*$/.test(t.word)) add(t.word, t.at, null);
        }
      } else if (prog === 'for' || prog === 'unset' || prog === 'read' || prog === 'getopts') {
        const operands = toks.slice(1).filter((t) => !(t.word ?? '').startsWith('-'));
        const names = prog === 'for' ? operands.slice(0, 1) : prog === 'getopts' ? operands.slice(1, 2) : operands;
        for (const t of names) {
          const n = nameOf(t);
          if (n !== null) add(n, t.at, null);
        }
      } else if (prog === '.' || prog === 'source' || prog === 'eval') {
        this.barriers.push(c.at);
      }
    }
  }

  /** The value of $name at offset `at`, or null when it is known only at run time. */
  value(name: string, at: number, depth = 0): string | null {
    const list = this.byName.get(name);
    if (!list || list.length === 0 || depth > 16) return null;
    const first = Math.min(...list.map((a) => a.at));
    if (first >= at || this.barriers.some((b) => b > first && b < at)) return null;
    let value: string | null = null;
    for (const a of list) {
      if (a.token === null) return null;
      const whole = this.word(a.token, a.at, depth + 1, true);
      if (whole === null) return null;
      const v = whole.slice(a.name.length + 1);
      if (value !== null && v !== value) return null;
      value = v;
    }
    return value;
  }

  /** A token's word with its variables put in, or null. `assignment`: no field splitting or globbing (a NAME=value word). */
  word(t: ShellToken, at: number = t.at, depth = 0, assignment = false): Word {
    if (t.word !== null) return t.word;
    if (!t.template) return null;
    if (depth === 0 && this.memo.has(t)) return this.memo.get(t)!;
    const out = this.put(t.template, at, depth, assignment);
    if (depth === 0) this.memo.set(t, out);
    return out;
  }

  private put(parts: WordPart[], at: number, depth: number, assignment: boolean): string | null {
    let s = '';
    for (const p of parts) {
      if (typeof p === 'string') {
        s += p;
        continue;
      }
      const v = this.value(p.name, at, depth);
      if (v === null) return null;
      if (!p.quoted && !assignment && (v === '' || /[\s*?[]/.test(v))) return null;
      s += v;
    }
    return s;
  }

  /** The word as a /proc/sys-style pattern: known pieces as they are, "*" for each unknown one; null when it has another expansion. */
  pattern(t: ShellToken, at: number): string | null {
    if (!t.template) return null;
    return t.template.map((p) => (typeof p === 'string' ? p : (this.value(p.name, at) ?? '*'))).join('');
  }
}

function assignmentName(t: ShellToken): string {
  // The raw text up to "=" is the name (command-line.ts judged it so).
  return /^[A-Za-z_][A-Za-z0-9_]*/.exec(t.word ?? '')?.[0] ?? (t.template && typeof t.template[0] === 'string' ? /^[A-Za-z_][A-Za-z0-9_]*/.exec(t.template[0])?.[0] ?? '' : '');
}

/** Reads a shell script (byte string) for commands that touch swap, sysctls or modules. */
export function readShellScript(source: string, depth = 0): { commands: ScriptCommand[]; problems: ScriptProblem[]; programs: ScriptProgram[] } {
  const text = blankHeredocs(source);
  const tokens = shellTokens(text);
  const lineOf = lineIndex(text);
  const problems: ScriptProblem[] = [];
  const cut = tokens.find((t) => t.unterminated);
  if (cut) problems.push({ line: lineOf(cut.at), message: 'an unterminated quote starts here; the rest of the script cannot be read' });
  const heredocs = tokens.filter((t) => t.redirect !== undefined && /^<<-?$/.test(t.redirect));
  const stmts = statements(tokens);
  const commands: ScriptCommand[] = [];
  const programs: ScriptProgram[] = [];
  const all = shellSimpleCommandsAt(text, tokens);
  const vars = new ShellVariables(all);
  const resolved = all.map((c) => (c.wordTokens ?? []).map((t) => vars.word(t, c.at)));
  all.forEach((c, i) => {
    if (c.words.length === 0) return;
    // "[" and "[[" (test) look like globs to the tokenizer, which makes them unknown; as a command name they are the test builtin.
    if (c.words[0] === null && (c.nameText === '[' || c.nameText === '[[')) return;
    const words = resolved[i]!;
    programs.push({ words, line: lineOf(c.at) });
    const io: CommandIo = { redirects: (c.redirects ?? []).map((r): ResolvedRedirect => ({ op: r.op, fd: r.fd, target: r.target ? vars.word(r.target, c.at) : null, prefix: r.target?.prefix ?? '', pattern: r.target ? vars.pattern(r.target, c.at) : null })) };
    if (c.pipeIn) {
      const prev = all[i - 1];
      // Its output goes down the pipe unless the previous command sent it elsewhere.
      const redirected = (prev?.redirects ?? []).some((r) => r.fd === 1 && r.op.startsWith('>'));
      io.stdin = !prev || prev.words.length === 0 ? null : redirected ? '' : printedText(resolved[i - 1]!, undefined);
    }
    const actions = commandActions(words, io, nestedReader(depth + 1));
    if (actions.length === 0) return;
    const st = stmts.find((s) => s.at <= c.at && c.at < s.end) ?? { at: c.at, end: c.end, depth: 0, compound: false };
    const first = lineOf(st.at);
    const last = lineOf(Math.max(st.at, st.end - 1));
    let neutralisable: true | string = true;
    if (st.depth > 0 || st.compound) neutralisable = `line ${first} is part of a compound command (if, while, for, case, { }, ( ) or a function); commenting it out could leave an empty body, which sh refuses`;
    else if (heredocs.some((h) => st.at <= h.at && h.at < st.end)) neutralisable = `line ${first} starts a here-document; commenting it out would turn the document's lines into commands`;
    else if (cut && cut.at <= st.end) neutralisable = `an unterminated quote at line ${lineOf(cut.at)}`;
    commands.push({ words, actions, line: lineOf(c.at), first, last, neutralisable });
  });
  return { commands, problems, programs };
}

/** The reader `sh -c SCRIPT` gets: the same grammar, a fresh set of variables (the script is a new shell), nesting bounded. */
function nestedReader(depth: number): (script: string) => ScriptAction[] {
  return (script) => {
    if (depth > 4) return [{ kind: 'unknown', what: 'program', why: 'sh -c nested too deeply to read' }];
    const r = readShellScript(script, depth);
    return [...r.problems.map((p): ScriptAction => ({ kind: 'unknown', what: 'program', why: `sh -c script: ${p.message}` })), ...r.commands.flatMap((c) => c.actions)];
  };
}

/** The actions of a command line run without a shell around it (a unit's ExecStart=): `sh -c` in it is read as a script. */
export function execActions(words: Word[]): ScriptAction[] {
  return commandActions(words, {}, nestedReader(1));
}
