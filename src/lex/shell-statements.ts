// A shell script's statements and here-documents, for a reader that comments
// lines out. A statement is what one "\n" ends: `a; b && c`, including the
// lines a backslash-newline, a quote, or a trailing `&&`/`||`/`|` carries it
// over. Compound commands (if/while/for/case, `{ }`, `( )`) are tracked by
// depth. Here-document bodies (XCU 2.7.4) are data and are blanked before
// reading. Pure.
import { shellTokens, type ShellToken } from './shell.js';

const OPENERS = new Set(['if', 'while', 'until', 'for', 'case', '{']);
const CLOSERS = new Set(['fi', 'done', 'esac', '}']);
/** Reserved words after which the next word is again a command name. */
const THEN_LIKE = new Set(['then', 'do', 'else', 'elif', '!', 'time']);

export interface Statement {
  at: number;
  end: number;
  /** Nesting depth when the statement starts. */
  depth: number;
  /** The statement opens, closes or continues a compound command. */
  compound: boolean;
}

export function statements(tokens: ShellToken[]): Statement[] {
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
  // Where lexing resumes: the end of the last delimiter word. Blanking a body changes nothing before it, so the
  // tokens from there on are those of the whole text, and each part of the script is lexed about once.
  let resume = 0;
  const heredocAfter = (t: ShellToken): boolean => t.at >= from && (t.redirect === '<<' || t.redirect === '<<-');
  for (let guard = 0; guard < 1000; guard++) {
    const tokens = shellTokens(s, resume, heredocAfter);
    const i = tokens.findIndex(heredocAfter);
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
    resume = delim.end;
  }
  return s;
}
