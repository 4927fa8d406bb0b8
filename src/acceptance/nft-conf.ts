// An nftables script (/etc/nftables.conf, what nftables.service loads with
// `nft -f`), read as far as nft's grammar (nft(8), src/parser_bison.y) fixes
// its base chains: `table [FAMILY] NAME { chain NAME { type T hook H
// priority P; policy drop; RULES } }`, `add|create table|chain`, `flush
// ruleset`, `define`. Tokens: words, "strings", { } ; , and newlines (both
// end a statement), `#` comments, a backslash before a newline joining
// lines. What could change a base chain and is not read here (an `include`,
// `delete`, `flush table`, a policy from a `$variable`) is an error with its
// line: the caller says unknown, never guesses. Pure.

export interface NftRule {
  words: string[];
  line: number;
}

export interface NftChain {
  family: string;
  table: string;
  name: string;
  line: number;
  /** The hook of a base chain (`type filter hook forward ...`); null for a regular chain. */
  hook: string | null;
  /** accept or drop; null when not set (a base chain's default is accept). */
  policy: string | null;
  policyLine: number | null;
  rules: NftRule[];
  /** The table has `flags dormant`: its chains see no packet. */
  dormant: boolean;
}

export type NftConf = { ok: true; chains: NftChain[] } | { ok: false; line: number; reason: string };

interface Tok {
  t: string;
  line: number;
  /** `{ } ; , \n` as punctuation; a word or a string otherwise. */
  punct: boolean;
}

const FAMILIES = new Set(['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev']);

export function nftTokens(text: string): Tok[] | { line: number; reason: string } {
  const out: Tok[] = [];
  let line = 1;
  for (let i = 0; i < text.length;) {
    const c = text[i]!;
    if (c === '\\' && text[i + 1] === '\n') {
      i += 2;
      line++;
    } else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '\n' || c === '{' || c === '}' || c === ';' || c === ',') {
      out.push({ t: c, line, punct: true });
      if (c === '\n') line++;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r') {
      i++;
    } else if (c === '"') {
      const end = text.indexOf('"', i + 1);
      if (end < 0 || text.slice(i, end).includes('\n')) return { line, reason: 'an unterminated string' };
      out.push({ t: text.slice(i, end + 1), line, punct: false });
      i = end + 1;
    } else {
      let j = i;
      while (j < text.length && !' \t\r\n{};,"#'.includes(text[j]!)) j++;
      out.push({ t: text.slice(i, j), line, punct: false });
      i = j;
    }
  }
  return out;
}

class Reader {
  i = 0;
  constructor(readonly toks: Tok[]) {}
  peek(): Tok | undefined {
    return this.toks[this.i];
  }
  next(): Tok | undefined {
    return this.toks[this.i++];
  }
  /** The words up to the end of the statement (`;`, a newline, or `{`/`}` at depth 0 when `stopAtBrace`), braces inside kept as words. */
  statement(stopAtBrace: boolean): Tok[] {
    const out: Tok[] = [];
    let depth = 0;
    for (let t = this.peek(); t; t = this.peek()) {
      if (depth === 0 && (t.t === ';' || t.t === '\n')) break;
      if (depth === 0 && t.t === '}') break;
      if (depth === 0 && stopAtBrace && t.t === '{') break;
      if (t.t === '{') depth++;
      if (t.t === '}') depth--;
      out.push(t);
      this.i++;
    }
    return out;
  }
  /** Skips a balanced { ... } block; the reader is at its `{`. */
  skipBlock(): boolean {
    let depth = 0;
    for (let t = this.next(); t; t = this.next()) {
      if (t.t === '{') depth++;
      if (t.t === '}' && --depth === 0) return true;
    }
    return false;
  }
}

type Err = { line: number; reason: string };

class Ruleset {
  chains = new Map<string, NftChain>();
  dormant = new Set<string>();
  chain(family: string, table: string, name: string, line: number): NftChain {
    const key = `${family} ${table} ${name}`;
    let c = this.chains.get(key);
    if (!c) {
      c = { family, table, name, line, hook: null, policy: null, policyLine: null, rules: [], dormant: false };
      this.chains.set(key, c);
    }
    return c;
  }
}

/** A chain's body: `type ... hook H ...`, `policy P`, comments, rules. */
function chainBody(r: Reader, c: NftChain): Err | null {
  for (let t = r.next(); t; t = r.next()) {
    if (t.t === '}') return null;
    if (t.t === ';' || t.t === '\n' || t.t === ',') continue;
    r.i--;
    const words = r.statement(false).map((x) => x.t);
    const line = t.line;
    if (words[0] === 'type') {
      const h = words.indexOf('hook');
      if (h < 0 || words[h + 1] === undefined) return { line, reason: `a chain type without a hook: ${words.join(' ')}` };
      c.hook = words[h + 1]!;
    } else if (words[0] === 'policy') {
      const p = words[1];
      if (p !== 'accept' && p !== 'drop') return { line, reason: `policy ${p ?? ''}: not accept or drop as written (a variable is not read here)` };
      c.policy = p;
      c.policyLine = line;
    } else if (words[0] !== 'comment' && words[0] !== 'devices') c.rules.push({ words, line });
  }
  return { line: c.line, reason: `chain ${c.name} is not closed` };
}

/** A table's body: chains, flags, and objects (sets, maps...) that decide no policy. */
function tableBody(r: Reader, rs: Ruleset, family: string, table: string): Err | null {
  for (let t = r.next(); t; t = r.next()) {
    if (t.t === '}') return null;
    if (t.t === ';' || t.t === '\n') continue;
    if (t.t === 'chain') {
      const name = r.next();
      if (!name || name.punct || r.peek()?.t !== '{') return { line: t.line, reason: 'a chain without a name and a body' };
      r.next();
      const err = chainBody(r, rs.chain(family, table, name.t, t.line));
      if (err) return err;
      continue;
    }
    r.i--;
    const words = r.statement(true).map((x) => x.t);
    if (words[0] === 'flags' && words.includes('dormant')) rs.dormant.add(`${family} ${table}`);
    if (r.peek()?.t === '{' && !r.skipBlock()) return { line: t.line, reason: `${words.join(' ')} is not closed` };
  }
  return { line: 0, reason: `table ${table} is not closed` };
}

/** `[FAMILY] NAME...`: the family (ip when not written) and the rest. */
function withFamily(words: string[]): [string, string[]] {
  return FAMILIES.has(words[0] ?? '') ? [words[0]!, words.slice(1)] : ['ip', words];
}

function topStatement(r: Reader, rs: Ruleset, t: Tok): Err | null {
  const head = r.statement(true);
  const words = head.map((x) => x.t);
  const verb = words[0] === 'add' || words[0] === 'create' ? words.slice(1) : words;
  if (words[0] === 'flush' && words[1] === 'ruleset' && words.length === 2) {
    rs.chains.clear();
    rs.dormant.clear();
    return null;
  }
  if (words[0] === 'define' || words[0] === 'redefine') return r.peek()?.t === '{' && !r.skipBlock() ? { line: t.line, reason: 'define is not closed' } : null;
  const brace = r.peek()?.t === '{';
  if (verb[0] === 'table') {
    const [family, rest] = withFamily(verb.slice(1));
    if (rest.length !== 1) return { line: t.line, reason: `a table statement not read here: ${words.join(' ')}` };
    if (!brace) return null;
    r.next();
    return tableBody(r, rs, family, rest[0]!);
  }
  if (verb[0] === 'chain' && brace) {
    const [family, rest] = withFamily(verb.slice(1));
    if (rest.length !== 2) return { line: t.line, reason: `a chain statement not read here: ${words.join(' ')}` };
    r.next();
    return chainBody(r, rs.chain(family, rest[0]!, rest[1]!, t.line));
  }
  if ((words[0] === 'add' || words[0] === 'insert') && words[1] === 'rule' && !brace) {
    const [family, rest] = withFamily(words.slice(2));
    if (rest.length < 2) return { line: t.line, reason: `a rule without its table and chain: ${words.join(' ')}` };
    const c = rs.chain(family, rest[0]!, rest[1]!, t.line);
    const rule = { words: rest.slice(2), line: t.line };
    if (words[0] === 'insert') c.rules.unshift(rule);
    else c.rules.push(rule);
    return null;
  }
  return { line: t.line, reason: `${words.join(' ') || t.t}: a statement not read here (it could change the base chains)` };
}

/** The chains an `nft -f` of this text leaves (after its last `flush ruleset`), or the line that cannot be read. */
export function parseNftConf(text: string): NftConf {
  const toks = nftTokens(text);
  if (!Array.isArray(toks)) return { ok: false, ...toks };
  const r = new Reader(toks);
  const rs = new Ruleset();
  for (let t = r.peek(); t; t = r.peek()) {
    if (t.t === '\n' || t.t === ';') {
      r.next();
      continue;
    }
    if (t.t === '}' || t.t === '{' || t.t === ',') return { ok: false, line: t.line, reason: `an unexpected ${JSON.stringify(t.t)}` };
    const err = topStatement(r, rs, t);
    if (err) return { ok: false, ...err };
  }
  const chains = [...rs.chains.values()].map((c) => ({ ...c, dormant: rs.dormant.has(`${c.family} ${c.table}`) }));
  return { ok: true, chains };
}
