// Python's shlex (Lib/shlex.py), the class and shlex.split, ported state for
// state so that every reader of a Python program's input splits it as that
// program does: distro's os-release (posix, whitespace_split), Ansible's INI
// inventory host lines (shlex.split with comments) and supervisord's
// command= (shlex.split). Pure.
//
// The parameters are the class's attributes, with its defaults: posix=False,
// whitespace_split=False, commenters '#', the ASCII word characters (plus
// Latin-1 letters in POSIX mode), punctuation_chars off. Characters are code
// points, as Python's str is read. Source files (`source`, sourcehook) are not
// read: no caller sets them.

/** The two ValueErrors read_token raises. */
export type ShlexErrorKind = 'No closing quotation' | 'No escaped character';

export interface ShlexOptions {
  /** shlex(posix=...): quotes are removed, escapes honoured, an empty quoted word is a token. Default false. */
  posix?: boolean;
  /** Split only at whitespace (and punctuation_chars): what shlex.split sets. Default false. */
  whitespaceSplit?: boolean;
  /** shlex(punctuation_chars=...): true is "();<>|&". Default off. */
  punctuationChars?: boolean | string;
  /** Characters that start a comment to the end of the line. Default "#"; "" for none. */
  commenters?: string;
  whitespace?: string;
  quotes?: string;
  escape?: string;
  escapedquotes?: string;
  /** Replaces the default word characters (before punctuation_chars adjusts them, as in the constructor). */
  wordchars?: string;
}

/** The tokens read, and the error that stopped the reading (null: the input was read to its end). */
export interface ShlexResult {
  tokens: string[];
  error: ShlexErrorKind | null;
}

const ASCII_WORDCHARS = 'abcdfeghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';
const LATIN1_WORDCHARS = 'ßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞ';

class ShlexFailure extends Error {
  constructor(readonly kind: ShlexErrorKind) {
    super(kind);
  }
}

/** list(shlex(text, posix=..., punctuation_chars=...)) with the other attributes set as `opts` says. */
export function shlex(text: string, opts: ShlexOptions = {}): ShlexResult {
  const posix = opts.posix ?? false;
  const punctuation = opts.punctuationChars === true ? '();<>|&' : opts.punctuationChars || '';
  let wordchars = opts.wordchars ?? ASCII_WORDCHARS + (posix ? LATIN1_WORDCHARS : '');
  if (punctuation !== '') wordchars = [...(wordchars + '~-./*?=')].filter((c) => !punctuation.includes(c)).join('');
  const lexer = new Lexer(text, {
    posix,
    whitespaceSplit: opts.whitespaceSplit ?? false,
    punctuation,
    commenters: opts.commenters ?? '#',
    whitespace: opts.whitespace ?? ' \t\r\n',
    quotes: opts.quotes ?? `'"`,
    escape: opts.escape ?? '\\',
    escapedquotes: opts.escapedquotes ?? '"',
    wordchars,
  });
  const tokens: string[] = [];
  const eof = posix ? null : '';
  try {
    for (;;) {
      const t = lexer.getToken();
      if (t === eof) return { tokens, error: null };
      tokens.push(t!);
    }
  } catch (e) {
    if (e instanceof ShlexFailure) return { tokens, error: e.kind };
    throw e;
  }
}

/** shlex.split(s, comments=False, posix=True): whitespace_split on, no commenters unless `comments`. */
export function shlexSplit(s: string, opts: { comments?: boolean; posix?: boolean } = {}): ShlexResult {
  return shlex(s, { posix: opts.posix ?? true, whitespaceSplit: true, ...(opts.comments ? {} : { commenters: '' }) });
}

interface LexerOptions {
  posix: boolean;
  whitespaceSplit: boolean;
  punctuation: string;
  commenters: string;
  whitespace: string;
  quotes: string;
  escape: string;
  escapedquotes: string;
  wordchars: string;
}

/** shlex.read_token and get_token: the same states (' ', 'a', 'c', a quote, an escape, null past the end). */
class Lexer {
  private readonly chars: string[];
  private at = 0;
  private state: string | null = ' ';
  private token = '';
  /** self.pushback: whole tokens, read before the input. */
  private readonly pushback: string[] = [];
  /** self._pushback_chars: a stack of characters, read before the input. */
  private readonly pushbackChars: string[] = [];

  constructor(
    text: string,
    private readonly o: LexerOptions,
  ) {
    this.chars = [...text];
  }

  getToken(): string | null {
    if (this.pushback.length > 0) return this.pushback.shift()!;
    return this.readToken();
  }

  private read(): string {
    return this.at < this.chars.length ? this.chars[this.at++]! : '';
  }

  /** instream.readline(): the rest of the line, its newline included. */
  private skipLine(): void {
    while (this.at < this.chars.length && this.chars[this.at++] !== '\n');
  }

  private readToken(): string | null {
    const o = this.o;
    const isIn = (c: string, set: string) => c !== '' && set.includes(c);
    let quoted = false;
    let escapedstate = ' ';
    for (;;) {
      const nextchar = o.punctuation !== '' && this.pushbackChars.length > 0 ? this.pushbackChars.pop()! : this.read();
      const state = this.state;
      if (state === null) {
        this.token = '';
        break;
      } else if (state === ' ') {
        if (nextchar === '') {
          this.state = null;
          break;
        } else if (isIn(nextchar, o.whitespace)) {
          if (this.token !== '' || (o.posix && quoted)) break;
          continue;
        } else if (isIn(nextchar, o.commenters)) {
          this.skipLine();
        } else if (o.posix && isIn(nextchar, o.escape)) {
          escapedstate = 'a';
          this.state = nextchar;
        } else if (isIn(nextchar, o.wordchars)) {
          this.token = nextchar;
          this.state = 'a';
        } else if (isIn(nextchar, o.punctuation)) {
          this.token = nextchar;
          this.state = 'c';
        } else if (isIn(nextchar, o.quotes)) {
          if (!o.posix) this.token = nextchar;
          this.state = nextchar;
        } else if (o.whitespaceSplit) {
          this.token = nextchar;
          this.state = 'a';
        } else {
          this.token = nextchar;
          if (this.token !== '' || (o.posix && quoted)) break;
          continue;
        }
      } else if (isIn(state, o.quotes)) {
        quoted = true;
        if (nextchar === '') throw new ShlexFailure('No closing quotation');
        if (nextchar === state) {
          if (!o.posix) {
            this.token += nextchar;
            this.state = ' ';
            break;
          }
          this.state = 'a';
        } else if (o.posix && isIn(nextchar, o.escape) && isIn(state, o.escapedquotes)) {
          escapedstate = state;
          this.state = nextchar;
        } else this.token += nextchar;
      } else if (isIn(state, o.escape)) {
        if (nextchar === '') throw new ShlexFailure('No escaped character');
        // In quotes, only the quote and the escape itself are escaped: "\a" keeps its backslash.
        if (isIn(escapedstate, o.quotes) && nextchar !== state && nextchar !== escapedstate) this.token += state;
        this.token += nextchar;
        this.state = escapedstate;
      } else if (state === 'a' || state === 'c') {
        if (nextchar === '') {
          this.state = null;
          break;
        } else if (isIn(nextchar, o.whitespace)) {
          this.state = ' ';
          if (this.token !== '' || (o.posix && quoted)) break;
          continue;
        } else if (isIn(nextchar, o.commenters)) {
          this.skipLine();
          if (o.posix) {
            this.state = ' ';
            if (this.token !== '' || (o.posix && quoted)) break;
            continue;
          }
        } else if (state === 'c') {
          if (isIn(nextchar, o.punctuation)) this.token += nextchar;
          else {
            if (!isIn(nextchar, o.whitespace)) this.pushbackChars.push(nextchar);
            this.state = ' ';
            break;
          }
        } else if (o.posix && isIn(nextchar, o.quotes)) {
          this.state = nextchar;
        } else if (o.posix && isIn(nextchar, o.escape)) {
          escapedstate = 'a';
          this.state = nextchar;
        } else if (isIn(nextchar, o.wordchars) || isIn(nextchar, o.quotes) || (o.whitespaceSplit && !isIn(nextchar, o.punctuation))) {
          this.token += nextchar;
        } else {
          if (o.punctuation !== '') this.pushbackChars.push(nextchar);
          else this.pushback.unshift(nextchar);
          this.state = ' ';
          if (this.token !== '' || (o.posix && quoted)) break;
          continue;
        }
      }
    }
    const result = this.token;
    this.token = '';
    if (o.posix && !quoted && result === '') return null;
    return result;
  }
}
