// A POSIX shell script (what `sh -c SCRIPT`, cron and boot scripts run), read
// with the shell's grammar (XCU 2.3 token recognition, 2.9 simple commands):
// split at ; & | && || ( ) and newlines, with quoting, comments, here-document
// and other redirections, leading assignments and the reserved words that can
// precede a command. A word with an expansion ($, `, unquoted globs) is
// unknown: this reads the text, it does not run it. Pure.

/** One word of a command; null when its value is only known at run time. */
export type Word = string | null;

/** Words that may come before a command without being one. */
const LEADING_RESERVED = new Set(['!', 'if', 'then', 'else', 'elif', 'while', 'until', 'do', '{', '(', 'time']);
/** Characters the word loop below looks at (blanks, operators, redirections, quotes, expansions, globs); any other is literal. */
const SPECIAL = new Set([' ', '\t', '&', '|', ';', '(', ')', '\n', '<', '>', '\\', "'", '"', '$', '`', '*', '?', '[', '~']);

/**
 * The control operator starting at `i` (&&, ||, ;;, ;, &, |, (, ), newline;
 * the longest first), or undefined. One look at `s[i]` and `s[i + 1]`
 * decides it: trying each operator at every character of a word cost more
 * than the rest of the lexer.
 */
function operatorAt(s: string, i: number): string | undefined {
  switch (s[i]) {
    case '&':
    case '|':
    case ';':
      return s[i + 1] === s[i] ? s[i]! + s[i] : s[i];
    case '(':
    case ')':
    case '\n':
      return s[i];
    default:
      return undefined;
  }
}

export interface ShellToken {
  op: string | null;
  word: Word;
  /** The word is a NAME=value assignment (only meaningful before the command). */
  assignment: boolean;
  /** Offsets in the script: where the token starts and ends (for line numbers). */
  at: number;
  end: number;
  /** A redirection's operator text ("<<", ">", "2>&"): here-documents make the following lines data. */
  redirect?: string;
  /** A word that is exactly as written, without quoting or escapes (a reserved word counts only so). */
  plain?: boolean;
  /** An unterminated quote: the rest of the script is one unknown word. */
  unterminated?: boolean;
  /**
   * A word known only at run time whose expansions are all plain parameters
   * ($NAME, ${NAME}): its literal pieces and those names, so a reader that
   * knows the variables can put the word together. Absent for any other expansion.
   */
  template?: WordPart[];
  /** A word known only at run time: the literal text before its first expansion. */
  prefix?: string;
  /** The commands of the word's backquoted substitutions (`...`), as the shell runs them. */
  substitutions?: string[];
  /** A redirection's file descriptor when written before it ("2>"); absent: the operator's default. */
  fd?: number;
}

/** A piece of a word: literal text, or a parameter expansion ($NAME, ${NAME}); quoted ones are not field-split. */
export type WordPart = string | { name: string; quoted: boolean };

/** $NAME or ${NAME} at s[i] (s[i] === '$'): the name and the length of the expansion, or null for any other expansion. */
function plainParameter(s: string, i: number): { name: string; length: number } | null {
  const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(s.slice(i, i + 200));
  if (braced) return { name: braced[1]!, length: braced[0].length };
  const bare = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(s.slice(i, i + 200));
  return bare ? { name: bare[1]!, length: bare[0].length } : null;
}

/**
 * A backquoted command substitution at s[i] === '`' (XCU 2.6.3): one piece of
 * its word up to the next unescaped '`', spaces and operators included. In it a
 * backslash keeps its literal meaning except before $ ` \ (and " inside double
 * quotes). Null when it never closes (sh: "EOF in backquote substitution").
 */
function backquoted(s: string, i: number, inDoubleQuotes: boolean): { end: number; text: string } | null {
  let text = '';
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j]!;
    if (c === '`') return { end: j + 1, text };
    if (c === '\\' && j + 1 < s.length && ('$`\\'.includes(s[j + 1]!) || (inDoubleQuotes && s[j + 1] === '"'))) {
      text += s[++j];
      continue;
    }
    text += c;
  }
  return null;
}

/** Where shellTokens is in the script, and what it has read. */
interface ShellLex {
  readonly s: string;
  i: number;
  readonly out: ShellToken[];
  /** A leading fd number read just before a redirection ("2>"), for that redirection's token. */
  pendingFd: number | null;
}

/** The word being read, from `start`: its value so far and what is known of it. */
interface WordRead {
  readonly start: number;
  word: string;
  /** It has an expansion: its value is known only at run time. */
  unknown: boolean;
  quotedAny: boolean;
  // The word as literal pieces and plain parameters; null once another expansion (or a glob) shows up.
  parts: WordPart[] | null;
  /** The word before its first expansion. */
  prefix: string | null;
  readonly substitutions: string[];
}

/** Literal text of the word. */
function literal(w: WordRead, text: string): void {
  w.word += text;
  if (w.parts === null) return;
  const last = w.parts[w.parts.length - 1];
  if (typeof last === 'string') w.parts[w.parts.length - 1] = last + text;
  else w.parts.push(text);
}

/** An expansion in the word: a plain parameter (kept in its template) or, when null, any other. */
function expansion(w: WordRead, plain: { name: string; length: number } | null, quoted: boolean): void {
  if (!w.unknown) w.prefix = w.word;
  w.unknown = true;
  if (plain === null) w.parts = null;
  else w.parts?.push({ name: plain.name, quoted });
}

/** Blanks, a line continuation or a comment at lex.i, skipped; false when none is there. */
function skipBlank(lex: ShellLex): boolean {
  const s = lex.s;
  const ch = s[lex.i]!;
  if (ch === ' ' || ch === '\t') {
    lex.i++;
    return true;
  }
  if (ch === '\\' && s[lex.i + 1] === '\n') {
    lex.i += 2; // line continuation
    return true;
  }
  if (ch === '#') {
    while (lex.i < s.length && s[lex.i] !== '\n') lex.i++;
    return true;
  }
  return false;
}

/** An unquoted backslash: the next character literally, or a line continuation. */
function readEscape(lex: ShellLex, w: WordRead): void {
  const s = lex.s;
  if (s[lex.i + 1] === '\n') lex.i += 2;
  else {
    literal(w, s[lex.i + 1] ?? '');
    lex.i += 2;
  }
}

/** '...': false when it never closes. */
function readSingleQuoted(lex: ShellLex, w: WordRead): boolean {
  const end = lex.s.indexOf("'", lex.i + 1);
  if (end < 0) return false;
  literal(w, lex.s.slice(lex.i + 1, end));
  w.quotedAny = true;
  lex.i = end + 1;
  return true;
}

/** "...": false when it (or a backquote in it) never closes. */
function readDoubleQuoted(lex: ShellLex, w: WordRead): boolean {
  const s = lex.s;
  lex.i++;
  while (lex.i < s.length && s[lex.i] !== '"') if (!readDoubleQuotedChar(lex, w)) return false;
  if (lex.i >= s.length) return false;
  w.quotedAny = true;
  lex.i++;
  return true;
}

/** One piece inside double quotes: an escape, an expansion or a character. */
function readDoubleQuotedChar(lex: ShellLex, w: WordRead): boolean {
  const s = lex.s;
  const d = s[lex.i]!;
  if (d === '\\' && lex.i + 1 < s.length && '$`"\\\n'.includes(s[lex.i + 1]!)) {
    if (s[lex.i + 1] !== '\n') literal(w, s[lex.i + 1]!);
    lex.i += 2;
    return true;
  }
  if (d === '$') {
    readDollar(lex, w, true);
    return true;
  }
  if (d === '`') return readBackquote(lex, w, true);
  literal(w, d);
  lex.i++;
  return true;
}

/** '$': a plain parameter, else an expansion the word cannot know ($(...), ${...:-x}, $1, ...). */
function readDollar(lex: ShellLex, w: WordRead, quoted: boolean): void {
  const p = plainParameter(lex.s, lex.i);
  expansion(w, p, quoted);
  if (p !== null) {
    w.word += lex.s.slice(lex.i, lex.i + p.length);
    lex.i += p.length;
    return;
  }
  w.word += '$';
  lex.i++;
}

/** '`...`': its command kept among the word's substitutions; false when it never closes. */
function readBackquote(lex: ShellLex, w: WordRead, inDoubleQuotes: boolean): boolean {
  const b = backquoted(lex.s, lex.i, inDoubleQuotes);
  if (b === null) return false;
  expansion(w, null, inDoubleQuotes);
  w.substitutions.push(b.text);
  w.word += lex.s.slice(lex.i, b.end);
  lex.i = b.end;
  return true;
}

/** One piece of a word at lex.i; false on a quote that never closes. */
function readWordPiece(lex: ShellLex, w: WordRead): boolean {
  const s = lex.s;
  const c = s[lex.i]!;
  if (c === '\\') readEscape(lex, w);
  else if (c === "'") return readSingleQuoted(lex, w);
  else if (c === '"') return readDoubleQuoted(lex, w);
  else if (c === '$') readDollar(lex, w, false);
  else if (c === '`') return readBackquote(lex, w, false);
  else if (c === '*' || c === '?' || c === '[' || (c === '~' && lex.i === w.start)) {
    expansion(w, null, false);
    w.word += c;
    lex.i++;
  } else {
    // A run of characters that mean nothing to the lexer goes in as one piece, not one at a time.
    let j = lex.i + 1;
    while (j < s.length && !SPECIAL.has(s[j]!)) j++;
    literal(w, s.slice(lex.i, j));
    lex.i = j;
  }
  return true;
}

/** The word at lex.i, up to a blank, an operator or a redirection; null on a quote that never closes. */
function readWord(lex: ShellLex): WordRead | null {
  const s = lex.s;
  const w: WordRead = { start: lex.i, word: '', unknown: false, quotedAny: false, parts: [], prefix: null, substitutions: [] };
  while (lex.i < s.length) {
    const c = s[lex.i]!;
    if (c === ' ' || c === '\t' || operatorAt(s, lex.i) !== undefined || c === '<' || c === '>') break;
    if (!readWordPiece(lex, w)) return null;
  }
  return w;
}

/** A redirection operator at `start`, with the fd written before it. */
function pushRedirect(lex: ShellLex, start: number): void {
  const s = lex.s;
  // A redirection: skip the operator; its target is the next word, which is no argument.
  while (lex.i < s.length && (s[lex.i] === '<' || s[lex.i] === '>' || s[lex.i] === '&' || s[lex.i] === '|')) lex.i++;
  if (s.slice(start, lex.i).endsWith('<<') && s[lex.i] === '-') lex.i++; // "<<-" is one operator (POSIX 2.10.1), not "<<" and a word "-EOF"
  lex.out.push({
    op: 'redirect',
    word: null,
    assignment: false,
    at: start,
    end: lex.i,
    redirect: s.slice(start, lex.i),
    ...(lex.pendingFd !== null ? { fd: lex.pendingFd } : {}),
  });
  lex.pendingFd = null;
}

/** The word just read as a token, or as the fd of the redirection right after it. */
function pushWord(lex: ShellLex, w: WordRead): void {
  const s = lex.s;
  const { start, word, unknown, quotedAny, parts, prefix, substitutions } = w;
  const i = lex.i;
  lex.pendingFd = null;
  // "2>file": a leading fd number glued to a redirection is not a word.
  if (/^\d+$/.test(word) && !quotedAny && (s[i] === '<' || s[i] === '>')) {
    lex.pendingFd = Number(word);
    return;
  }
  // NAME=value, judged on the raw text before the first '=' (a quoted value is still an assignment).
  // (Looked for within the token only: a search to the script's next '=' made lexing quadratic.)
  let rawEq = -1;
  for (let j = start; j < i && rawEq < 0; j++) if (s.charCodeAt(j) === 61) rawEq = j;
  const assignment = rawEq > start && /^[A-Za-z_][A-Za-z0-9_]*$/.test(s.slice(start, rawEq));
  lex.out.push({
    op: null,
    word: unknown ? null : word,
    assignment,
    at: start,
    end: i,
    plain: !unknown && !quotedAny && word === s.slice(start, i),
    ...(unknown && parts !== null ? { template: parts } : {}),
    ...(unknown ? { prefix: prefix ?? '' } : {}),
    ...(substitutions.length > 0 ? { substitutions } : {}),
  });
}

/**
 * The tokens of a shell script, with their offsets (see shellSimpleCommands).
 * `from` must be 0 or where a word token of an earlier lexing of the same
 * text up to there ended: lexing from a token boundary gives the tokens that
 * lexing from 0 gives after it. With `stopAfter`, lexing ends one token after
 * the first token it accepts.
 */
export function shellTokens(script: string, from = 0, stopAfter?: (t: ShellToken) => boolean): ShellToken[] {
  const lex: ShellLex = { s: script, i: from, out: [], pendingFd: null };
  const { s, out } = lex;
  while (lex.i < s.length) {
    if (stopAfter !== undefined && out.length >= 2 && stopAfter(out[out.length - 2]!)) break;
    if (skipBlank(lex)) continue;
    const op = operatorAt(s, lex.i);
    if (op !== undefined) {
      out.push({ op, word: null, assignment: false, at: lex.i, end: lex.i + op.length });
      lex.i += op.length;
      continue;
    }
    const start = lex.i;
    const w = readWord(lex);
    // An unterminated quote: the rest of the script is one unknown word.
    if (w === null) return [...out, { op: null, word: null, assignment: false, at: start, end: s.length, unterminated: true }];
    if (lex.i === start) pushRedirect(lex, start);
    else pushWord(lex, w);
  }
  return out;
}

/** A redirection of a simple command: operator, file descriptor, target word (with its token, for resolving variables). */
export interface ShellRedirect {
  /** ">", ">>", ">|", "<", "<>", ">&", "<&", "<<", "<<-". */
  op: string;
  /** The descriptor it applies to: written before the operator, else 1 for output and 0 for input (POSIX 2.7). */
  fd: number;
  target: ShellToken | null;
}

/** A simple command with where it sits in the script. */
export interface ShellCommand {
  words: Word[];
  /** The tokens of `words`, for a reader that resolves variables. */
  wordTokens?: ShellToken[];
  /** Leading NAME=value assignments; a command of assignments alone has no words. */
  assignments?: ShellToken[];
  redirects?: ShellRedirect[];
  /** Its standard input is the previous command's output (it follows a "|"). */
  pipeIn?: boolean;
  /** Offsets of its first and last token (words, assignments and redirections). */
  at: number;
  end: number;
  /** The command name as written (before quote removal), e.g. "[" for the test command. */
  nameText?: string;
}

/**
 * The simple commands of a shell script, each as its words (leading
 * assignments, reserved words and redirections removed; `exec` dropped,
 * since the shell then becomes that command). A command with an unknown
 * word keeps it as null.
 */
export function shellSimpleCommands(script: string): Word[][] {
  return shellSimpleCommandsAt(script)
    .filter((c) => c.words.length > 0)
    .map((c) => c.words);
}

function redirectFd(op: string, fd: number | undefined): number {
  return fd ?? (op.startsWith('<') && op !== '<>' ? 0 : op === '<>' ? 0 : 1);
}

/**
 * shellSimpleCommands with each command's offsets, redirections, leading
 * assignments and pipe input, for line numbers and a reader that follows
 * variables. A case item's patterns (`a|b)`) are no commands: after
 * `case WORD in` and after each `;;`, words up to the `)` are patterns.
 * A command of assignments alone is kept with no words.
 */
export function shellSimpleCommandsAt(script: string, tokens: ShellToken[] = shellTokens(script)): ShellCommand[] {
  const cmds: ShellCommand[] = [];
  let cur: Word[] = [];
  let curTokens: ShellToken[] = [];
  let assignments: ShellToken[] = [];
  let redirects: ShellRedirect[] = [];
  let pipeIn = false;
  let at = -1;
  let end = -1;
  let nameText: string | undefined;
  let pendingRedirect: ShellToken | null = null;
  // Open case commands: 'head' (reading `case WORD in`), 'pattern' (up to ')'), 'body'.
  const cases: Array<'head' | 'pattern' | 'body'> = [];
  const flush = (nextPipeIn: boolean) => {
    if (cur.length > 0 || assignments.length > 0) cmds.push({ words: cur, wordTokens: curTokens, assignments, redirects, pipeIn, at, end, nameText });
    cur = [];
    curTokens = [];
    assignments = [];
    redirects = [];
    at = -1;
    nameText = undefined;
    pipeIn = nextPipeIn;
  };
  for (const t of tokens) {
    const mode = cases[cases.length - 1];
    if (mode === 'head') {
      // case WORD in: no command; "in" ends the head.
      if (t.op === null && t.plain && t.word === 'in') cases[cases.length - 1] = 'pattern';
      continue;
    }
    if (mode === 'pattern') {
      if (t.op === ')') cases[cases.length - 1] = 'body';
      else if (t.op === null && t.plain && t.word === 'esac') cases.pop();
      continue;
    }
    if (t.op === 'redirect') {
      pendingRedirect = t;
      if (at < 0) at = t.at;
      end = t.end;
      continue;
    }
    if (t.op !== null) {
      if (pendingRedirect) {
        redirects.push({ op: pendingRedirect.redirect!, fd: redirectFd(pendingRedirect.redirect!, pendingRedirect.fd), target: null });
        pendingRedirect = null;
      }
      flush(t.op === '|');
      if (t.op === ';;' && mode === 'body') cases[cases.length - 1] = 'pattern';
      continue;
    }
    if (at < 0) at = t.at;
    end = t.end;
    if (pendingRedirect) {
      redirects.push({ op: pendingRedirect.redirect!, fd: redirectFd(pendingRedirect.redirect!, pendingRedirect.fd), target: t });
      pendingRedirect = null;
      continue;
    }
    if (cur.length === 0 && t.plain && t.word === 'case') {
      cases.push('head');
      at = -1;
      continue;
    }
    if (cur.length === 0 && mode === 'body' && t.plain && t.word === 'esac') {
      cases.pop();
      at = -1;
      continue;
    }
    if (cur.length === 0 && t.assignment) {
      assignments.push(t);
      continue;
    }
    if (cur.length === 0 && t.word !== null && LEADING_RESERVED.has(t.word)) continue;
    if (cur.length === 0 && t.word === 'exec') continue;
    if (cur.length === 0) nameText = script.slice(t.at, t.end);
    cur.push(t.word);
    curTokens.push(t);
  }
  flush(false);
  return cmds.filter((c) => !(c.words.length === 1 && (c.words[0] === 'fi' || c.words[0] === 'done' || c.words[0] === '}' || c.words[0] === 'esac')));
}

/** Shells whose `-c SCRIPT` runs SCRIPT. */
const SHELLS = new Set(['sh', 'dash', 'bash', 'ash', 'ksh', 'mksh', 'zsh']);

/** Whether a program path or name is a POSIX-style shell. */
export function isShell(prog: string): boolean {
  return SHELLS.has(basename(prog).replace(/^-/, ''));
}

/** The interpreter of a "#!" line when it is a shell (directly or through env), else null. */
export function shebangShell(firstLine: string): string | null {
  if (!firstLine.startsWith('#!')) return null;
  const words = firstLine.slice(2).trim().split(/\s+/);
  const prog = basename(words[0] ?? '') === 'env' ? words.find((w, i) => i > 0 && !w.startsWith('-') && !w.includes('=')) : words[0];
  return prog !== undefined && isShell(prog) ? prog : null;
}

function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? p : p.slice(i + 1);
}

/**
 * The script of `SHELL [-opts] -c SCRIPT [...]`, or null when argv is not a
 * shell running a -c script. A leading "-" (a login shell's argv[0]) is allowed.
 */
export function shellScriptOf(argv: Word[] | null): string | null {
  const prog = argv?.[0];
  if (argv === null || argv.length < 3 || prog === null || prog === undefined) return null;
  if (!SHELLS.has(basename(prog).replace(/^-/, ''))) return null;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === null || a === undefined || !a.startsWith('-') || a === '-' || a === '--') return null;
    // Option clusters such as "-ec" or "-c": the script is the next argument.
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(a)) {
      const script = argv[i + 1];
      return script === undefined || script === null ? null : script;
    }
  }
  return null;
}
