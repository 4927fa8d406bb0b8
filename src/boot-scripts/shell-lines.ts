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
import { shellSimpleCommandsAt, shellTokens, type ShellToken, type Word } from '../ports/command-line.js';
import { commandActions, type ScriptAction } from './commands.js';

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

/** Reads a shell script (byte string) for commands that touch swap, sysctls or modules. */
export function readShellScript(source: string): { commands: ScriptCommand[]; problems: ScriptProblem[] } {
  const text = blankHeredocs(source);
  const tokens = shellTokens(text);
  const lineOf = lineIndex(text);
  const problems: ScriptProblem[] = [];
  const cut = tokens.find((t) => t.unterminated);
  if (cut) problems.push({ line: lineOf(cut.at), message: 'an unterminated quote starts here; the rest of the script cannot be read' });
  const heredocs = tokens.filter((t) => t.redirect !== undefined && /^<<-?$/.test(t.redirect));
  const stmts = statements(tokens);
  const commands: ScriptCommand[] = [];
  for (const c of shellSimpleCommandsAt(text, tokens)) {
    // "[" and "[[" (test) look like globs to the tokenizer, which makes them unknown; as a command name they are the test builtin.
    if (c.words[0] === null && (c.nameText === '[' || c.nameText === '[[')) continue;
    const actions = commandActions(c.words);
    if (actions.length === 0) continue;
    const st = stmts.find((s) => s.at <= c.at && c.at < s.end) ?? { at: c.at, end: c.end, depth: 0, compound: false };
    const first = lineOf(st.at);
    const last = lineOf(Math.max(st.at, st.end - 1));
    let neutralisable: true | string = true;
    if (st.depth > 0 || st.compound) neutralisable = `line ${first} is part of a compound command (if, while, for, case, { }, ( ) or a function); commenting it out could leave an empty body, which sh refuses`;
    else if (heredocs.some((h) => st.at <= h.at && h.at < st.end)) neutralisable = `line ${first} starts a here-document; commenting it out would turn the document's lines into commands`;
    else if (cut && cut.at <= st.end) neutralisable = `an unterminated quote at line ${lineOf(cut.at)}`;
    commands.push({ words: c.words, actions, line: lineOf(c.at), first, last, neutralisable });
  }
  return { commands, problems };
}
