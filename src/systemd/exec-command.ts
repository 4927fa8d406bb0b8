// systemd's ExecStart*= command lines (systemd.service(5) "Command lines";
// load-fragment.c config_parse_exec, extract-word.c extract_first_word,
// escape.c cunescape_one, as of systemd 252). A value holds one or more
// commands separated by a lone ";". Each word is unquoted and C-unescaped
// first (an escape systemd does not know stays as written, backslash and
// all), then %-specifiers are resolved: a specifier other than "%%" depends
// on the unit, so such a word is unknown here. $VAR / ${VAR} are expanded by
// the manager at start time, so such a word is unknown too. Pure.
import type { Word } from '../lex/shell.js';
import { effectiveList, type UnitDirective } from './unit-file.js';

export interface ExecCommand {
  /** The prefix characters, e.g. "-" or "+@". */
  prefixes: string;
  /** The executable: the first word (with "@", argv[0] is the second). */
  path: Word;
  /** argv as the started process sees it. */
  argv: Word[];
}

/** The commands of one Exec*= value, and why systemd stops reading it (the rest of the value, or the whole unit, is refused). */
export interface ExecValue {
  commands: ExecCommand[];
  error: string | null;
}

/** systemd's WHITESPACE: the only word separators (a vertical tab, a form feed or a no-break space is part of a word). */
const SEPARATORS = ' \t\n\r';
const isSeparator = (ch: string | undefined): boolean => ch !== undefined && SEPARATORS.includes(ch);

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, s: 32, '\\': 92, '"': 34, "'": 39 };

const utf8 = new TextEncoder();

/** A code point as UTF-8 bytes, surrogates included (systemd's utf8_encode_unichar does not refuse them). */
function encodeCodePoint(c: number, out: number[]): void {
  if (c < 0x80) out.push(c);
  else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
  else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
}

/** systemd's unichar_is_valid(). */
function unicharIsValid(c: number): boolean {
  return c < 0x110000 && (c & 0xfffff800) !== 0xd800 && !(c >= 0xfdd0 && c <= 0xfdef) && (c & 0xfffe) !== 0xfffe;
}

/** A run of `n` hex digits at `at`, or null. */
function hexRun(v: string, at: number, n: number): number | null {
  const s = v.slice(at, at + n);
  return s.length === n && /^[0-9a-fA-F]+$/.test(s) ? parseInt(s, 16) : null;
}

/**
 * cunescape_one() without NUL: the escape after a backslash at `at` (the
 * character following it), as bytes, and how many characters it used; null
 * for an escape systemd does not know.
 */
function cEscape(v: string, at: number): { bytes: number[]; used: number } | null {
  const ch = v[at]!;
  const simple = C_ESCAPES[ch];
  if (simple !== undefined) return { bytes: [simple], used: 1 };
  if (ch === 'x') {
    const b = hexRun(v, at + 1, 2);
    return b === null || b === 0 ? null : { bytes: [b], used: 3 };
  }
  if (ch === 'u' || ch === 'U') {
    const n = ch === 'u' ? 4 : 8;
    const c = hexRun(v, at + 1, n);
    if (c === null || c === 0 || (ch === 'U' && !unicharIsValid(c))) return null;
    const bytes: number[] = [];
    encodeCodePoint(c, bytes);
    return { bytes, used: n + 1 };
  }
  if (/^[0-7]{3}$/.test(v.slice(at, at + 3))) {
    const b = parseInt(v.slice(at, at + 3), 8);
    return b === 0 || b > 255 ? null : { bytes: [b], used: 3 };
  }
  return null;
}

/**
 * extract_first_word(EXTRACT_UNQUOTE | EXTRACT_CUNESCAPE), with the retry
 * extract_first_word_and_warn() makes in relaxed mode: the word's bytes from
 * `from` and where the next word starts, null at the end, or an error for
 * unbalanced quoting.
 */
function nextWord(v: string, from: number): { bytes: number[]; next: number } | { error: string } | null {
  let i = from;
  while (isSeparator(v[i])) i++;
  if (i >= v.length) return null;
  const bytes: number[] = [];
  let quote: string | null = null;
  while (i < v.length) {
    const ch = String.fromCodePoint(v.codePointAt(i)!);
    if (ch === '\\') {
      if (i + 1 >= v.length) {
        if (quote !== null) return { error: 'unbalanced quoting' };
        bytes.push(0x5c); // a trailing backslash outside quotes is kept
        i++;
        break;
      }
      const e = cEscape(v, i + 1);
      const next = String.fromCodePoint(v.codePointAt(i + 1)!);
      if (e === null) bytes.push(0x5c, ...utf8.encode(next));
      else bytes.push(...e.bytes);
      i += 1 + (e === null ? next.length : e.used);
      continue;
    }
    i += ch.length;
    if (quote !== null) {
      if (ch === quote) quote = null;
      else bytes.push(...utf8.encode(ch));
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (isSeparator(ch)) break;
    else bytes.push(...utf8.encode(ch));
  }
  if (quote !== null) return { error: 'unbalanced quoting' };
  while (isSeparator(v[i])) i++;
  return { bytes, next: i };
}

const strict = new TextDecoder('utf-8', { fatal: true });
const lenient = new TextDecoder('utf-8');

/** The word as text; null when its bytes are no UTF-8 (an escape made a byte on its own), which a path or argument read here cannot hold. */
function asText(bytes: number[]): string | null {
  try {
    return strict.decode(Uint8Array.from(bytes));
  } catch {
    return null;
  }
}

/**
 * unit_full_printf(): "%%" is "%"; "%" and a letter is a specifier, which
 * depends on the unit, so the word is unknown (every specifier systemd has is
 * a letter; a letter it does not know errs on the side of unknown); "%" and
 * any other character, or at the end, stays as written.
 */
function withoutSpecifiers(word: string): string | null {
  let out = '';
  for (let i = 0; i < word.length; i++) {
    if (word[i] === '%' && word[i + 1] === '%') out += word[i++];
    else if (word[i] === '%' && /^[A-Za-z]$/.test(word[i + 1] ?? '')) return null;
    else out += word[i];
  }
  return out;
}

/**
 * replace_env_argv() at start time: $NAME as a whole word and ${NAME} anywhere
 * are the manager's environment (unknown here); "$$" is a literal "$"; any
 * other "$" reaches the program as written (a sh -c script's own variables).
 */
function withEnvironment(word: string): string | null {
  if (/^\$[A-Za-z_][A-Za-z0-9_]*$/.test(word) || /(^|[^$])(\$\$)*\$\{/.test(word)) return null;
  return word.replace(/\$\$/g, '$');
}

/** The prefixes config_parse_exec accepts at the start of the first word: "-", "@", ":" once each; "+", "!" or "!!" (one of them). */
function prefixesOf(first: string): string {
  let taken = '';
  for (const ch of first) {
    const ok =
      ch === '-' || ch === '@' || ch === ':'
        ? !taken.includes(ch)
        : ch === '+'
          ? !/[+!]/.test(taken)
          : ch === '!'
            ? !taken.includes('+') && (taken.match(/!/g) ?? []).length < 2
            : false;
    if (!ok) break;
    taken += ch;
  }
  return taken;
}

/** string_is_safe(): no control character, quote or backslash. */
function isSafe(s: string): boolean {
  return !/[\x01-\x1f"'\\\x7f]/.test(s);
}

/** Parses one ExecStart*= value into its commands. An empty value (a reset) has none. */
export function parseExecValue(value: string): ExecValue {
  const v = value;
  const commands: ExecCommand[] = [];
  let i = 0;
  for (;;) {
    const first = nextWord(v, i);
    if (first === null) return { commands, error: null };
    if ('error' in first) return { commands, error: `${first.error}, so systemd ignores the rest of the value` };
    i = first.next;
    // The checks below read the word as systemd does, byte by byte; a byte that is no UTF-8 only makes the path unknown.
    const firstSeen = lenient.decode(Uint8Array.from(first.bytes));
    if (firstSeen === ';') continue;
    const prefixes = prefixesOf(firstSeen);
    // A path with a specifier in it is judged by the unit's values; not here.
    const seenPath = withoutSpecifiers(firstSeen.slice(prefixes.length));
    const refused = (why: string): ExecValue => ({ commands, error: `${why}, so systemd refuses the value${prefixes.includes('-') ? '' : ' and the unit'}` });
    if (seenPath === '') return refused('the command has no executable');
    if (seenPath !== null) {
      if (!isSafe(seenPath)) return refused(`the executable ${JSON.stringify(seenPath)} holds a quote, a backslash or a control character`);
      if (seenPath.endsWith('/')) return refused(`the executable ${seenPath} names a directory`);
      if (!seenPath.startsWith('/') && seenPath.includes('/')) return refused(`the executable ${seenPath} is neither an absolute path nor a plain file name`);
    }
    const firstText = asText(first.bytes);
    const path = firstText === null ? null : withoutSpecifiers(firstText.slice(prefixes.length));
    const noEnv = prefixes.includes(':');
    const expand = (w: string | null): Word => (w === null ? null : noEnv ? w : withEnvironment(w));
    const words: Word[] = prefixes.includes('@') ? [] : [expand(path)];
    let separated = false;
    while (i < v.length) {
      // A lone ";" separates commands; a lone "\;" is the word ";".
      if (v[i] === ';' && (i + 1 >= v.length || isSeparator(v[i + 1]))) {
        i++;
        while (isSeparator(v[i])) i++;
        separated = true;
        break;
      }
      if (v[i] === '\\' && v[i + 1] === ';' && (i + 2 >= v.length || isSeparator(v[i + 2]))) {
        i += 2;
        while (isSeparator(v[i])) i++;
        words.push(';');
        continue;
      }
      const w = nextWord(v, i);
      if (w === null) break;
      if ('error' in w) return refused(w.error);
      i = w.next;
      const text = asText(w.bytes);
      words.push(expand(text === null ? null : withoutSpecifiers(text)));
    }
    if (words.length === 0) return refused('the command has no argv[0]');
    commands.push({ prefixes, path, argv: words });
    if (!separated) return { commands, error: null };
  }
}

/** The first command of one ExecStart*= value; null for an empty value (a reset) or one systemd refuses before its first command. */
export function parseExecLine(value: string): ExecCommand | null {
  return parseExecValue(value).commands[0] ?? null;
}

/** The effective commands of an Exec*= list (an empty assignment resets it), each with its directive; a null command for a value, or the rest of one, that systemd refuses. */
export function execCommandsOf(directives: UnitDirective[], key: string): { directive: UnitDirective; command: ExecCommand | null; error: string | null }[] {
  return effectiveList(directives, 'Service', key).flatMap((directive) => {
    const parsed = parseExecValue(directive.value);
    const out: { directive: UnitDirective; command: ExecCommand | null; error: string | null }[] = parsed.commands.map((command) => ({
      directive,
      command,
      error: null,
    }));
    if (parsed.error !== null) out.push({ directive, command: null, error: parsed.error });
    return out;
  });
}
