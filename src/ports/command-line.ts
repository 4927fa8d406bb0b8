// Command lines, read with their own grammar. Pure.
//
// - systemd's ExecStart*= (systemd.service(5) "Command lines"): prefixes
//   @ - : + ! !!, then words split at whitespace, with single and double
//   quotes and C escapes; $VAR / ${VAR} and %-specifiers are expanded by the
//   manager at start time, so such a word is unknown here.
// - A POSIX shell script (what `sh -c SCRIPT` and cron run): only its simple
//   commands are needed, split at ; & | && || ( ) { } and newlines, with
//   quoting, comments, leading assignments and the reserved words that can
//   precede a command. A word with an expansion ($, `, unquoted globs) is
//   unknown: this reads the text, it does not run it.

/** One word of a command; null when its value is only known at run time. */
export type Word = string | null;

export interface ExecCommand {
  /** The prefix characters, e.g. "-" or "+@". */
  prefixes: string;
  /** The executable: the first word (with "@", argv[0] is the second). */
  path: Word;
  /** argv as the started process sees it. */
  argv: Word[];
}

const C_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', s: ' ', '\\': '\\', '"': '"', "'": "'" };

/** Parses one ExecStart*= value. Null for an empty value (a reset). */
export function parseExecLine(value: string): ExecCommand | null {
  let i = 0;
  const v = value.trim();
  let prefixes = '';
  while (i < v.length && '@-:+!'.includes(v[i]!)) prefixes += v[i++];
  const noEnv = prefixes.includes(':');
  const words: Word[] = [];
  while (i < v.length) {
    while (i < v.length && /\s/.test(v[i]!)) i++;
    if (i >= v.length) break;
    let word = '';
    let unknown = false;
    let quote: '"' | "'" | null = null;
    for (; i < v.length; i++) {
      const ch = v[i]!;
      if (quote === null && /\s/.test(ch)) break;
      if (quote === null && (ch === '"' || ch === "'")) {
        quote = ch;
        continue;
      }
      if (quote !== null && ch === quote) {
        quote = null;
        continue;
      }
      if (ch === '\\' && i + 1 < v.length) {
        const n = v[++i]!;
        if (n in C_ESCAPES) word += C_ESCAPES[n];
        else if (n === 'x' && /^[0-9a-fA-F]{2}$/.test(v.slice(i + 1, i + 3))) {
          word += String.fromCharCode(parseInt(v.slice(i + 1, i + 3), 16));
          i += 2;
        } else word += n;
        continue;
      }
      if (ch === '%') {
        if (v[i + 1] === '%') {
          word += '%';
          i++;
        } else unknown = true; // a specifier (%n, %i, ...)
        continue;
      }
      if (ch === '$' && !noEnv) unknown = true; // $VAR and ${VAR}, expanded at start
      word += ch;
    }
    words.push(unknown ? null : word);
  }
  if (words.length === 0) return null;
  const argv = prefixes.includes('@') ? words.slice(1) : words;
  return { prefixes, path: words[0] ?? null, argv };
}

/** Words that may come before a command without being one. */
const LEADING_RESERVED = new Set(['!', 'if', 'then', 'else', 'elif', 'while', 'until', 'do', '{', '(', 'time']);
/** Tokens that end a simple command. */
const OPERATORS = ['&&', '||', ';;', ';', '&', '|', '(', ')', '\n'];

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
}

/** The tokens of a shell script, with their offsets (see shellSimpleCommands). */
export function shellTokens(script: string): ShellToken[] {
  const out: ShellToken[] = [];
  let i = 0;
  const s = script;
  while (i < s.length) {
    const ch = s[i]!;
    if (ch === ' ' || ch === '\t') {
      i++;
      continue;
    }
    if (ch === '\\' && s[i + 1] === '\n') {
      i += 2; // line continuation
      continue;
    }
    if (ch === '#') {
      while (i < s.length && s[i] !== '\n') i++;
      continue;
    }
    const op = OPERATORS.find((o) => s.startsWith(o, i));
    if (op !== undefined) {
      out.push({ op, word: null, assignment: false, at: i, end: i + op.length });
      i += op.length;
      continue;
    }
    let word = '';
    let unknown = false;
    let quotedAny = false;
    const start = i;
    while (i < s.length) {
      const c = s[i]!;
      if (c === ' ' || c === '\t' || OPERATORS.some((o) => s.startsWith(o, i)) || c === '<' || c === '>') break;
      if (c === '\\') {
        if (s[i + 1] === '\n') i += 2;
        else {
          word += s[i + 1] ?? '';
          i += 2;
        }
        continue;
      }
      if (c === "'") {
        const end = s.indexOf("'", i + 1);
        if (end < 0) return [...out, { op: null, word: null, assignment: false, at: start, end: s.length, unterminated: true }]; // unterminated: unknown
        word += s.slice(i + 1, end);
        quotedAny = true;
        i = end + 1;
        continue;
      }
      if (c === '"') {
        i++;
        while (i < s.length && s[i] !== '"') {
          const d = s[i]!;
          if (d === '\\' && i + 1 < s.length && '$`"\\\n'.includes(s[i + 1]!)) {
            if (s[i + 1] !== '\n') word += s[i + 1];
            i += 2;
            continue;
          }
          if (d === '$' || d === '`') unknown = true;
          word += d;
          i++;
        }
        if (i >= s.length) return [...out, { op: null, word: null, assignment: false, at: start, end: s.length, unterminated: true }];
        quotedAny = true;
        i++;
        continue;
      }
      if (c === '$' || c === '`' || c === '*' || c === '?' || c === '[' || (c === '~' && i === start)) unknown = true;
      word += c;
      i++;
    }
    if (i === start) {
      // A redirection: skip the operator and its target word; neither is an argument.
      while (i < s.length && (s[i] === '<' || s[i] === '>' || s[i] === '&' || s[i] === '|')) i++;
      out.push({ op: 'redirect', word: null, assignment: false, at: start, end: i, redirect: s.slice(start, i) });
      continue;
    }
    // "2>file": a leading fd number glued to a redirection is not a word.
    if (/^\d+$/.test(word) && !quotedAny && (s[i] === '<' || s[i] === '>')) {
      continue;
    }
    // NAME=value, judged on the raw text before the first '=' (a quoted value is still an assignment).
    const rawEq = s.indexOf('=', start);
    const assignment = rawEq > start && rawEq < i && /^[A-Za-z_][A-Za-z0-9_]*$/.test(s.slice(start, rawEq));
    out.push({ op: null, word: unknown ? null : word, assignment, at: start, end: i, plain: !unknown && !quotedAny && word === s.slice(start, i) });
  }
  return out;
}

/** A simple command with where it sits in the script. */
export interface ShellCommand {
  words: Word[];
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
  return shellSimpleCommandsAt(script).map((c) => c.words);
}

/** shellSimpleCommands with each command's offsets, for line numbers. */
export function shellSimpleCommandsAt(script: string, tokens: ShellToken[] = shellTokens(script)): ShellCommand[] {
  const cmds: ShellCommand[] = [];
  let cur: Word[] = [];
  let at = -1;
  let end = -1;
  let nameText: string | undefined;
  let skipTarget = false;
  const flush = () => {
    if (cur.length > 0) cmds.push({ words: cur, at, end, nameText });
    cur = [];
    at = -1;
    nameText = undefined;
  };
  for (const t of tokens) {
    if (t.op === 'redirect') {
      skipTarget = true;
      if (at < 0) at = t.at;
      end = t.end;
      continue;
    }
    if (t.op !== null) {
      flush();
      continue;
    }
    if (at < 0) at = t.at;
    end = t.end;
    if (skipTarget) {
      skipTarget = false;
      continue;
    }
    if (cur.length === 0 && (t.assignment || (t.word !== null && LEADING_RESERVED.has(t.word)))) continue;
    if (cur.length === 0 && t.word === 'exec') continue;
    if (cur.length === 0) nameText = script.slice(t.at, t.end);
    cur.push(t.word);
  }
  flush();
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

/**
 * Whether a process's argv is the command `words`: the same arguments, and
 * the same program (equal argv[0], or equal base names when one of them was
 * found through PATH). Unknown words never match.
 */
export function argvMatches(argv: string[] | null, words: Word[]): boolean {
  if (argv === null || argv.length !== words.length || words.length === 0) return false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w === null || w === undefined) return false;
    if (i === 0) {
      const a = argv[0]!;
      if (a === w) continue;
      if ((!a.includes('/') || !w.includes('/')) && basename(a) === basename(w)) continue;
      return false;
    }
    if (argv[i] !== w) return false;
  }
  return true;
}
