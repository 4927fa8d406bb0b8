// A TOML reader for what this tool reads in TOML (containerd's
// config.toml), not a whole TOML 1.0: comments, [table] and [[array of
// tables]] headers, dotted bare and quoted keys, basic strings (with their
// escapes) and literal strings on one line, booleans, integers (decimal,
// 0x, 0o, 0b, underscores), decimal floats, arrays over several lines and
// inline tables. What it does not read (a multi-line string, a date or a
// time, inf and nan) is refused with its line, as is every redefinition
// TOML forbids: a caller says "not read" rather than guess. Checked against
// python3's tomllib (test/lex/toml.test.ts). Pure.

export type TomlValue = string | number | boolean | TomlValue[] | TomlTable;
export interface TomlTable {
  [key: string]: TomlValue;
}
export type TomlResult = { ok: true; value: TomlTable } | { ok: false; line: number; reason: string };

class TomlError extends Error {
  constructor(
    readonly at: number,
    message: string,
  ) {
    super(message);
  }
}

const BARE = /^[A-Za-z0-9_-]+/;
const ESCAPES: Record<string, string> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' };

/** A cursor over the text; `line` follows the newlines it passes. */
class Reader {
  pos = 0;
  constructor(readonly text: string) {}
  get line(): number {
    let n = 1;
    for (let i = 0; i < this.pos && i < this.text.length; i++) if (this.text[i] === '\n') n++;
    return n;
  }
  fail(reason: string): never {
    throw new TomlError(this.line, reason);
  }
  peek(): string {
    return this.text[this.pos] ?? '';
  }
  /** Spaces and tabs. */
  blanks(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++;
  }
  /** Blanks, newlines and comments (inside an array). */
  gaps(): void {
    for (;;) {
      this.blanks();
      if (this.peek() === '#') this.comment();
      else if (this.peek() === '\n' || this.text.startsWith('\r\n', this.pos)) this.pos += this.peek() === '\n' ? 1 : 2;
      else return;
    }
  }
  comment(): void {
    while (this.pos < this.text.length && this.peek() !== '\n') this.pos++;
  }
  /** The end of a line: blanks, an optional comment, a newline or the end. */
  endOfLine(): void {
    this.blanks();
    if (this.peek() === '#') this.comment();
    if (this.text.startsWith('\r\n', this.pos)) this.pos += 2;
    else if (this.peek() === '\n') this.pos++;
    else if (this.pos < this.text.length) this.fail(`unexpected ${JSON.stringify(this.peek())} after a value`);
  }
}

function basicString(r: Reader): string {
  if (r.text.startsWith('"""', r.pos)) r.fail('a multi-line string is not read here');
  r.pos++;
  let out = '';
  for (;;) {
    const c = r.peek();
    if (c === '' || c === '\n') r.fail('an unterminated string');
    if ((c < ' ' && c !== '\t') || c === '\x7f') r.fail('a control character in a string');
    r.pos++;
    if (c === '"') return out;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = r.peek();
    r.pos++;
    if (e in ESCAPES) out += ESCAPES[e];
    else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      const hex = r.text.slice(r.pos, r.pos + n);
      if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== n) r.fail('a bad \\u escape');
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) r.fail('an escape that is no Unicode scalar value');
      out += String.fromCodePoint(cp);
      r.pos += n;
    } else r.fail(`a bad escape \\${e}`);
  }
}

function literalString(r: Reader): string {
  if (r.text.startsWith("'''", r.pos)) r.fail('a multi-line string is not read here');
  const end = r.text.indexOf("'", r.pos + 1);
  const nl = r.text.indexOf('\n', r.pos + 1);
  if (end < 0 || (nl >= 0 && nl < end)) r.fail('an unterminated string');
  const s = r.text.slice(r.pos + 1, end);
  if ([...s].some((c) => (c < ' ' && c !== '\t') || c === '\x7f')) r.fail('a control character in a string');
  r.pos = end + 1;
  return s;
}

/** One key part: bare, "basic" or 'literal'. */
function keyPart(r: Reader): string {
  r.blanks();
  const c = r.peek();
  if (c === '"') return basicString(r);
  if (c === "'") return literalString(r);
  const m = BARE.exec(r.text.slice(r.pos));
  if (!m) r.fail(`a key was expected, not ${JSON.stringify(c)}`);
  r.pos += m[0].length;
  return m[0];
}

function dottedKey(r: Reader): string[] {
  const parts = [keyPart(r)];
  for (;;) {
    r.blanks();
    if (r.peek() !== '.') return parts;
    r.pos++;
    parts.push(keyPart(r));
  }
}

/** A number, a boolean, or a refusal (dates, times, inf, nan). */
function scalar(r: Reader): number | boolean {
  const m = /^[^\s,\]}#]+/.exec(r.text.slice(r.pos));
  const word = m ? m[0] : '';
  r.pos += word.length;
  if (word === 'true' || word === 'false') return word === 'true';
  const radix = /^0([xob])([0-9A-Fa-f]+(?:_[0-9A-Fa-f]+)*)$/.exec(word);
  if (radix) {
    const base = { x: 16, o: 8, b: 2 }[radix[1] as 'x' | 'o' | 'b'];
    const digits = radix[2]!.replace(/_/g, '');
    if (![...digits].every((d) => parseInt(d, base) < base)) r.fail(`a bad number ${word}`);
    return parseInt(digits, base);
  }
  const dec = /^[+-]?(?:0|[1-9](?:_?[0-9])*)$/;
  if (dec.test(word)) return Number(word.replace(/_/g, ''));
  const float = /^[+-]?(?:0|[1-9](?:_?[0-9])*)(?:\.[0-9](?:_?[0-9])*)?(?:[eE][+-]?[0-9](?:_?[0-9])*)?$/;
  if (float.test(word) && /[.eE]/.test(word)) return Number(word.replace(/_/g, ''));
  return r.fail(/^\d{4}-|^\d\d:|inf|nan/.test(word) ? `${word}: a date, a time, inf or nan is not read here` : `a bad value ${JSON.stringify(word)}`);
}

function value(r: Reader): TomlValue {
  r.blanks();
  const c = r.peek();
  if (c === '"') return basicString(r);
  if (c === "'") return literalString(r);
  if (c === '[') return array(r);
  if (c === '{') return inlineTable(r);
  return scalar(r);
}

function array(r: Reader): TomlValue[] {
  r.pos++;
  const out: TomlValue[] = [];
  for (;;) {
    r.gaps();
    if (r.peek() === ']') break;
    out.push(value(r));
    r.gaps();
    if (r.peek() === ',') r.pos++;
    else if (r.peek() !== ']') r.fail('a , or ] was expected in an array');
  }
  r.pos++;
  return out;
}

function inlineTable(r: Reader): TomlTable {
  r.pos++;
  const table: TomlTable = {};
  const frozen = new Set<TomlTable>();
  r.blanks();
  if (r.peek() === '}') {
    r.pos++;
    return table;
  }
  for (;;) {
    const key = dottedKey(r);
    r.blanks();
    if (r.peek() !== '=') r.fail('an = was expected');
    r.pos++;
    assign(r, table, key, value(r), frozen);
    r.blanks();
    if (r.peek() === '}') break;
    if (r.peek() !== ',') r.fail('a , or } was expected in an inline table');
    r.pos++;
  }
  r.pos++;
  return table;
}

const isTable = (v: TomlValue | undefined): v is TomlTable => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * key = value under `table`: a dotted key's tables are made (and must not be
 * closed: defined by a header, an inline table, or a value); the last part
 * must be new.
 */
function assign(r: Reader, table: TomlTable, key: string[], v: TomlValue, closed: Set<TomlTable>, doc?: DocState): void {
  let t = table;
  for (const part of key.slice(0, -1)) {
    const next = t[part];
    if (next === undefined) {
      t = t[part] = {};
      doc?.dotted.add(t);
    } else if (isTable(next) && !closed.has(next) && !doc?.explicit.has(next)) t = next;
    else r.fail(`${key.join('.')}: ${part} is already defined`);
  }
  const last = key.at(-1)!;
  if (Object.hasOwn(t, last)) r.fail(`${key.join('.')} is defined twice`);
  t[last] = v;
  // An inline table, and an array's tables, are whole: nothing may add to them.
  if (isTable(v)) close(v, closed);
  if (Array.isArray(v)) for (const x of v) if (isTable(x)) close(x, closed);
}

function close(t: TomlTable, closed: Set<TomlTable>): void {
  closed.add(t);
  for (const v of Object.values(t)) {
    if (isTable(v)) close(v, closed);
    if (Array.isArray(v)) for (const x of v) if (isTable(x)) close(x, closed);
  }
}

/** What a document's headers and dotted keys have made so far, for TOML's rules against defining a table twice. */
interface DocState {
  /** Tables a [header] defined. */
  explicit: Set<TomlTable>;
  /** Tables dotted keys made: no [header] may define them afterwards. */
  dotted: Set<TomlTable>;
  /** Arrays made by [[headers]]: the only arrays a header may append to or walk through (their last table). */
  arrays: Set<TomlValue[]>;
  closed: Set<TomlTable>;
}

/** The table a header's key leads to, tables made on the way; `array`: a [[header]]. */
function header(r: Reader, root: TomlTable, st: DocState, array: boolean): TomlTable {
  const key = dottedKey(r);
  r.blanks();
  if (!r.text.startsWith(array ? ']]' : ']', r.pos)) r.fail(`a header must end with ${array ? ']]' : ']'}`);
  r.pos += array ? 2 : 1;
  r.endOfLine();
  let t = root;
  for (const part of key.slice(0, -1)) {
    const next = t[part];
    if (next === undefined) t = t[part] = {};
    else if (Array.isArray(next) && st.arrays.has(next)) t = next.at(-1) as TomlTable;
    else if (isTable(next) && !st.closed.has(next)) t = next;
    else r.fail(`[${key.join('.')}]: ${part} is not a table`);
  }
  const last = key.at(-1)!;
  const found = t[last];
  if (array) {
    if (found !== undefined && !(Array.isArray(found) && st.arrays.has(found))) r.fail(`[[${key.join('.')}]]: ${last} is already defined`);
    const list = (found as TomlValue[] | undefined) ?? (t[last] = []);
    st.arrays.add(list);
    const fresh: TomlTable = {};
    list.push(fresh);
    return fresh;
  }
  if (found === undefined) t = t[last] = {};
  else if (isTable(found) && !st.explicit.has(found) && !st.dotted.has(found) && !st.closed.has(found)) t = found;
  else r.fail(`[${key.join('.')}] is defined twice`);
  st.explicit.add(t);
  return t;
}

/** A whole document; the first thing it cannot read or that TOML forbids is refused with its line. */
export function readToml(text: string): TomlResult {
  const r = new Reader(text);
  const root: TomlTable = {};
  const st: DocState = { explicit: new Set(), dotted: new Set(), arrays: new Set(), closed: new Set() };
  let current = root;
  try {
    for (;;) {
      r.gaps();
      if (r.pos >= text.length) return { ok: true, value: root };
      if (r.peek() === '[') {
        const array = text[r.pos + 1] === '[';
        r.pos += array ? 2 : 1;
        current = header(r, root, st, array);
        continue;
      }
      const key = dottedKey(r);
      r.blanks();
      if (r.peek() !== '=') r.fail('an = was expected after a key');
      r.pos++;
      assign(r, current, key, value(r), st.closed, st);
      r.endOfLine();
    }
  } catch (e) {
    if (e instanceof TomlError) return { ok: false, line: e.at, reason: e.message };
    throw e;
  }
}
