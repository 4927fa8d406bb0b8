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

/** read_token's locals, for one token. */
interface TokenRead {
  /** A quote was seen: in POSIX mode an empty token is still one. */
  quoted: boolean;
  /** The state an escape returns to: 'a', or the quote it is in. */
  escapedstate: string;
}

/** `c in set` as Python reads it, except that '' (the end of input) is in no set. */
function isIn(c: string, set: string): boolean {
  return c !== '' && set.includes(c);
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

  private nextChar(): string {
    return this.o.punctuation !== '' && this.pushbackChars.length > 0 ? this.pushbackChars.pop()! : this.read();
  }

  private readToken(): string | null {
    const r: TokenRead = { quoted: false, escapedstate: ' ' };
    let done = false;
    while (!done) done = this.step(r, this.nextChar());
    const result = this.token;
    this.token = '';
    if (this.o.posix && !r.quoted && result === '') return null;
    return result;
  }

  /** A token ends here when it has text, or (posix) was quoted: an empty "" is a token. */
  private ready(r: TokenRead): boolean {
    return this.token !== '' || (this.o.posix && r.quoted);
  }

  /** One character read in the current state; true when the token is complete. */
  private step(r: TokenRead, nextchar: string): boolean {
    const state = this.state;
    if (state === null) {
      this.token = '';
      return true;
    }
    if (state === ' ') return this.inWhitespace(r, nextchar);
    if (isIn(state, this.o.quotes)) return this.inQuotes(r, state, nextchar);
    if (isIn(state, this.o.escape)) {
      this.inEscape(r, state, nextchar);
      return false;
    }
    if (state === 'a' || state === 'c') return this.inWord(r, state, nextchar);
    return false;
  }

  /** State ' ': between tokens. */
  private inWhitespace(r: TokenRead, nextchar: string): boolean {
    const o = this.o;
    if (nextchar === '') {
      this.state = null;
      return true;
    } else if (isIn(nextchar, o.whitespace)) {
      return this.ready(r);
    } else if (isIn(nextchar, o.commenters)) {
      this.skipLine();
    } else if (o.posix && isIn(nextchar, o.escape)) {
      r.escapedstate = 'a';
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
      return this.ready(r);
    }
    return false;
  }

  /** State a quote character: inside that quote. */
  private inQuotes(r: TokenRead, state: string, nextchar: string): boolean {
    const o = this.o;
    r.quoted = true;
    if (nextchar === '') throw new ShlexFailure('No closing quotation');
    if (nextchar === state) {
      if (!o.posix) {
        this.token += nextchar;
        this.state = ' ';
        return true;
      }
      this.state = 'a';
    } else if (o.posix && isIn(nextchar, o.escape) && isIn(state, o.escapedquotes)) {
      r.escapedstate = state;
      this.state = nextchar;
    } else this.token += nextchar;
    return false;
  }

  /** State an escape character: the character after it. */
  private inEscape(r: TokenRead, state: string, nextchar: string): void {
    const o = this.o;
    if (nextchar === '') throw new ShlexFailure('No escaped character');
    // In quotes, only the quote and the escape itself are escaped: "\a" keeps its backslash.
    if (isIn(r.escapedstate, o.quotes) && nextchar !== state && nextchar !== r.escapedstate) this.token += state;
    this.token += nextchar;
    this.state = r.escapedstate;
  }

  /** State 'a' (a word) or 'c' (a run of punctuation_chars). */
  private inWord(r: TokenRead, state: 'a' | 'c', nextchar: string): boolean {
    const o = this.o;
    if (nextchar === '') {
      this.state = null;
      return true;
    } else if (isIn(nextchar, o.whitespace)) {
      this.state = ' ';
      return this.ready(r);
    } else if (isIn(nextchar, o.commenters)) {
      this.skipLine();
      if (o.posix) {
        this.state = ' ';
        return this.ready(r);
      }
    } else if (state === 'c') {
      if (isIn(nextchar, o.punctuation)) this.token += nextchar;
      else {
        if (!isIn(nextchar, o.whitespace)) this.pushbackChars.push(nextchar);
        this.state = ' ';
        return true;
      }
    } else if (o.posix && isIn(nextchar, o.quotes)) {
      this.state = nextchar;
    } else if (o.posix && isIn(nextchar, o.escape)) {
      r.escapedstate = 'a';
      this.state = nextchar;
    } else if (isIn(nextchar, o.wordchars) || isIn(nextchar, o.quotes) || (o.whitespaceSplit && !isIn(nextchar, o.punctuation))) {
      this.token += nextchar;
    } else {
      if (o.punctuation !== '') this.pushbackChars.push(nextchar);
      else this.pushback.unshift(nextchar);
      this.state = ' ';
      return this.ready(r);
    }
    return false;
  }
}
