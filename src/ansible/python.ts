// Python's own rules for the few things Jinja2 and Ansible's filters hand to
// Python: string-literal escapes (the unicode-escape codec Jinja2's lexer
// decodes literals with), `re` patterns and re.sub templates, str.split and
// json.dumps. Pure functions; anything Python would reject, or that JavaScript
// cannot express the same way, throws, so the caller reports `unknown`.

/** Not expressible the way Python means it: the evaluation is unknown, never a guess. */
export class NotModelled extends Error {}

/** str.encode('ascii', 'backslashreplace').decode('unicode-escape'), as jinja2.lexer reads a string literal. */
export function pyUnicodeEscape(text: string): string {
  let ascii = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) ascii += ch;
    else if (cp < 0x100) ascii += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp < 0x10000) ascii += `\\u${cp.toString(16).padStart(4, '0')}`;
    else ascii += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  let out = '';
  for (let i = 0; i < ascii.length; i++) {
    const c = ascii[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = ascii[++i];
    if (n === undefined) throw new SyntaxError('\\ at end of string');
    const hex = (len: number, what: string): void => {
      const h = ascii.slice(i + 1, i + 1 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(h)) throw new SyntaxError(`truncated ${what} escape`);
      const cp = parseInt(h, 16);
      if (cp > 0x10ffff) throw new SyntaxError(`illegal Unicode character in ${what} escape`);
      out += String.fromCodePoint(cp);
      i += len;
    };
    switch (n) {
      case '\n':
        break;
      case '\\':
        out += '\\';
        break;
      case "'":
        out += "'";
        break;
      case '"':
        out += '"';
        break;
      case 'a':
        out += '\x07';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x':
        hex(2, '\\xXX');
        break;
      case 'u':
        hex(4, '\\uXXXX');
        break;
      case 'U':
        hex(8, '\\UXXXXXXXX');
        break;
      case 'N':
        throw new NotModelled('\\N{name} escapes in string literals are not modelled');
      default:
        if (n >= '0' && n <= '7') {
          let digits = n;
          while (digits.length < 3 && ascii[i + 1] !== undefined && ascii[i + 1]! >= '0' && ascii[i + 1]! <= '7') digits += ascii[++i];
          out += String.fromCodePoint(parseInt(digits, 8));
        } else out += `\\${n}`;
    }
  }
  return out;
}

// ---- re ---------------------------------------------------------------------

export interface PyRegex {
  re: RegExp;
  /** Group names by number, for \g<name> in templates. */
  names: string[];
}

/**
 * A Python `re` pattern as a JavaScript RegExp with the same meaning, for the
 * forms kubespray writes. Python's `$` also matches before a final newline and
 * `(?P<n>...)` names a group; inline flags and constructs JavaScript reads
 * differently are refused.
 */
export function pyRegex(pattern: string, opts: { ignorecase?: boolean; multiline?: boolean; global?: boolean } = {}): RegExp {
  let src = '';
  const lead = leadingFlags(pattern);
  const ignorecase = !!opts.ignorecase || lead.ignorecase;
  const multiline = !!opts.multiline || lead.multiline;
  let inClass = false;
  for (let i = lead.length; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const e = translateEscape(pattern, i, inClass);
      src += e.src;
      i = e.last;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      src += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      src += c;
      // A ']' right after '[' or '[^' is a literal in Python.
      if (pattern[i + 1] === '^') src += pattern[++i];
      if (pattern[i + 1] === ']') {
        src += '\\]';
        i++;
      }
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const g = translateGroup(pattern.slice(i));
      src += g.src;
      i += g.length - 1;
      continue;
    }
    if (c === '$' && !multiline) src += '(?=\\n?(?![\\s\\S]))';
    else if (c === '{' && !/^\{\d*(,\d*)?\}/.test(pattern.slice(i))) src += '\\{';
    else src += c;
  }
  if (inClass) throw new SyntaxError('unterminated character set');
  const flags = 'd' + (opts.global ? 'g' : '') + (ignorecase ? 'i' : '') + (multiline ? 'm' : '') + (lead.dotall ? 's' : '');
  try {
    return new RegExp(src, flags);
  } catch (e) {
    throw new SyntaxError(`regex ${pattern}: ${(e as Error).message}`);
  }
}

/** Global inline flags at the start of a pattern: (?i), (?m), (?s), (?im) ... */
function leadingFlags(pattern: string): { ignorecase: boolean; multiline: boolean; dotall: boolean; length: number } {
  const out = { ignorecase: false, multiline: false, dotall: false, length: 0 };
  const lead = /^\(\?([aiLmsux]+)\)/.exec(pattern);
  if (!lead) return out;
  for (const f of lead[1]!) {
    if (f === 'i') out.ignorecase = true;
    else if (f === 'm') out.multiline = true;
    else if (f === 's') out.dotall = true;
    else throw new NotModelled(`regex inline flag (?${f}) is not modelled`);
  }
  out.length = lead[0].length;
  return out;
}

/** The backslash escape at `i` in JavaScript's terms, and the index of its last character. */
function translateEscape(pattern: string, i: number, inClass: boolean): { src: string; last: number } {
  const n = pattern[i + 1];
  if (n === undefined) throw new SyntaxError('bad escape (end of pattern)');
  i++;
  if (!inClass && n === 'A') return { src: '(?<![\\s\\S])', last: i };
  if (!inClass && n === 'Z') return { src: '(?![\\s\\S])', last: i };
  if (/[0-9]/.test(n) && !inClass) {
    // Python: \1..\99 is a group reference, \0 or three octal digits an octal escape.
    let d = n;
    while (d.length < 2 && /[0-9]/.test(pattern[i + 1] ?? '')) d += pattern[++i];
    if (d[0] === '0' || /^[0-7]{3}$/.test(d + (pattern[i + 1] ?? ''))) throw new NotModelled('octal escapes in regex are not modelled');
    return { src: `\\${d}`, last: i };
  }
  if (n === 'N') throw new NotModelled('\\N{name} in a regex is not modelled');
  if (/[a-zA-Z]/.test(n) && !'dDsSwWbBntrfvxuUa'.includes(n)) throw new SyntaxError(`bad escape \\${n}`);
  if (n === 'a') return { src: '\\x07', last: i };
  if (n === 'b' && inClass) return { src: '\\x08', last: i };
  return { src: `\\${n}`, last: i };
}

/** A group opener `(?...` in JavaScript's terms, and how many characters of the pattern it took. */
function translateGroup(rest: string): { src: string; length: number } {
  let m: RegExpExecArray | null;
  if ((m = /^\(\?P<([A-Za-z_]\w*)>/.exec(rest))) return { src: `(?<${m[1]}>`, length: m[0].length };
  if ((m = /^\(\?P=([A-Za-z_]\w*)\)/.exec(rest))) return { src: `\\k<${m[1]}>`, length: m[0].length };
  if (/^\(\?(:|=|!|<=|<!)/.test(rest)) return { src: '(', length: 1 };
  throw new NotModelled(`regex group ${rest.slice(0, 4)} is not modelled`);
}

/** One group of a match as Python gives it: a number or a name; undefined for a group that did not take part. */
function group(m: RegExpExecArray, g: string): string | undefined {
  if (/^\d+$/.test(g)) {
    const n = Number(g);
    if (n >= m.length) throw new Error(`invalid group reference ${g}`);
    return m[n];
  }
  if (!m.groups || !(g in m.groups)) throw new Error(`unknown group name '${g}'`);
  return m.groups[g];
}

/** re.Match.expand(template): \1, \g<1>, \g<name> and the string escapes Python's template parser knows. */
export function pyExpand(template: string, m: RegExpExecArray): string {
  let out = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = template[++i];
    if (n === undefined) throw new SyntaxError('bad escape (end of pattern)');
    if (n === 'g') {
      const g = /^<([^>]*)>/.exec(template.slice(i + 1));
      if (!g) throw new SyntaxError('missing < in \\g');
      out += group(m, g[1]!) ?? '';
      i += g[0].length;
    } else if (n === '0') {
      let d = '';
      while (d.length < 2 && /[0-7]/.test(template[i + 1] ?? '')) d += template[++i];
      out += String.fromCharCode(parseInt(d || '0', 8));
    } else if (/[1-9]/.test(n)) {
      let d = n;
      if (/[0-9]/.test(template[i + 1] ?? '')) d += template[++i];
      if (d.length === 2 && /^[0-7]{2}$/.test(d) && /[0-7]/.test(template[i + 1] ?? '')) {
        out += String.fromCharCode(parseInt(d + template[++i]!, 8));
      } else out += group(m, d) ?? '';
    } else {
      const esc: Record<string, string> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', a: '\x07', b: '\b', '\\': '\\' };
      if (n in esc) out += esc[n];
      else if (/[a-zA-Z]/.test(n)) throw new SyntaxError(`bad escape \\${n}`);
      else out += `\\${n}`;
    }
  }
  return out;
}

/** re.sub(pattern, repl, string, count) with Python's template expansion. */
export function pySub(re: RegExp, repl: string, s: string, count = 0): string {
  const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
  let out = '';
  let last = 0;
  let n = 0;
  for (const m of s.matchAll(g)) {
    if (count > 0 && n >= count) break;
    out += s.slice(last, m.index) + pyExpand(repl, m as RegExpExecArray);
    last = m.index! + m[0].length;
    n++;
  }
  return out + s.slice(last);
}

/** re.findall: whole matches, the one group, or a list per match of all groups. */
export function pyFindall(re: RegExp, s: string): unknown[] {
  const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
  return [...s.matchAll(g)].map((m) => (m.length === 1 ? m[0] : m.length === 2 ? (m[1] ?? '') : m.slice(1).map((x) => x ?? '')));
}

// ---- str ----------------------------------------------------------------------

const PY_WHITESPACE =
  ' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/** str.split(sep=None, maxsplit=-1). */
export function pySplit(s: string, sep: string | undefined, max: number): string[] {
  if (sep === undefined) {
    const out: string[] = [];
    let i = 0;
    const ws = (c: string | undefined) => c !== undefined && PY_WHITESPACE.includes(c);
    while (i < s.length) {
      while (ws(s[i])) i++;
      if (i >= s.length) break;
      if (max >= 0 && out.length === max) {
        // CPython's split_whitespace: the rest, from its first non-blank to the end, trailing blanks kept.
        out.push(s.slice(i));
        break;
      }
      let j = i;
      while (j < s.length && !ws(s[j])) j++;
      out.push(s.slice(i, j));
      i = j;
    }
    return out;
  }
  if (sep === '') throw new Error('empty separator');
  const parts = s.split(sep);
  return max < 0 || parts.length <= max + 1 ? parts : [...parts.slice(0, max), parts.slice(max).join(sep)];
}

/** str.strip/lstrip/rstrip with Python's whitespace or the given characters. */
export function pyStrip(s: string, chars: string | undefined | null, left: boolean, right: boolean): string {
  const set = chars === undefined || chars === null ? PY_WHITESPACE : chars;
  let a = 0;
  let b = s.length;
  while (left && a < b && set.includes(s[a]!)) a++;
  while (right && b > a && set.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

// ---- json.dumps ---------------------------------------------------------------

/** json.dumps with Python's defaults (", " and ": ", ensure_ascii) or to_nice_json's (indent, sort_keys). */
export function pyJsonDumps(v: unknown, o: { indent?: number; sortKeys?: boolean; ensureAscii?: boolean } = {}): string {
  const ascii = o.ensureAscii ?? true;
  const itemSep = o.indent !== undefined ? ',' : ', ';
  const str = (s: string): string => JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => (ascii ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c));
  const go = (x: unknown, depth: number): string => {
    const nl = o.indent !== undefined ? `\n${' '.repeat(o.indent * (depth + 1))}` : '';
    const end = o.indent !== undefined ? `\n${' '.repeat(o.indent * depth)}` : '';
    if (x === null || x === undefined) return 'null';
    if (x === true) return 'true';
    if (x === false) return 'false';
    if (typeof x === 'number') {
      if (Number.isNaN(x)) return 'NaN';
      if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
      return String(x);
    }
    if (typeof x === 'string') return str(x);
    if (Array.isArray(x)) return x.length === 0 ? '[]' : `[${nl}${x.map((e) => go(e, depth + 1)).join(itemSep + nl)}${end}]`;
    if (typeof x === 'object') {
      let keys = Object.keys(x);
      if (keys.length === 0) return '{}';
      if (o.sortKeys) keys = keys.sort();
      return `{${nl}${keys.map((k) => `${str(k)}: ${go((x as Record<string, unknown>)[k], depth + 1)}`).join(itemSep + nl)}${end}}`;
    }
    throw new NotModelled(`json.dumps of ${typeof x}`);
  };
  return go(v, 0);
}

/** str.replace(old, new, count). */
export function pyReplace(s: string, a: string, b: string, count = -1): string {
  const parts = a === '' ? ['', ...[...s], ''] : s.split(a);
  if (count < 0 || count >= parts.length - 1) return a === '' ? parts.join(b) : parts.join(b);
  const head = parts.slice(0, count + 1).join(b);
  const tail = parts.slice(count + 1);
  return a === '' ? head + tail.join('') : [head, ...tail].join(a);
}

/** str.splitlines() (keepends False): Python's line boundaries, no empty last line. */
export function pySplitlines(s: string): string[] {
  const out = s.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/);
  if (out[out.length - 1] === '') out.pop();
  return out;
}

// ---- ansible.utils.ipwrap (netaddr) -----------------------------------------------

const V4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** An IPv6 address as netaddr prints it: lower case, the longest run of two or more zero groups (the first on a tie) as ::. */
function ipv6Text(addr: string): string {
  const [head, tail] = addr.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const nums = groups.map((g) => parseInt(g, 16).toString(16));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (nums[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && nums[j] === '0') j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return nums.join(':');
  return `${nums.slice(0, best).join(':')}::${nums.slice(best + bestLen).join(':')}`;
}

/**
 * ansible.utils.ipwrap for the values it can be sure of: an IPv6 address (or
 * address/prefix) in brackets, a dotted-quad IPv4 address or network and a host
 * name unchanged. netaddr also reads "123", "10.1" or "0x1" as addresses
 * (0.0.0.123, 10.1.0.0): such forms, zone ids and blanks are not modelled.
 */
export function ipwrap(v: unknown, isIPv6: (s: string) => boolean): unknown {
  if (Array.isArray(v)) return v.map((x) => ipwrap(x, isIPv6));
  if (v === null || v === '' || v === false) return v;
  if (typeof v !== 'string') throw new NotModelled(`ipwrap of a ${typeof v} is not modelled`);
  const parts = v.split('/');
  const [addr, prefix] = parts as [string, string | undefined];
  if (parts.length <= 2) {
    if (V4.test(addr) && (prefix === undefined || /^(\d|[12]\d|3[0-2])$/.test(prefix))) return v;
    if (
      addr.includes(':') &&
      !addr.includes('.') &&
      !addr.includes('%') &&
      isIPv6(addr) &&
      (prefix === undefined || /^(\d|[1-9]\d|1[01]\d|12[0-8])$/.test(prefix))
    ) {
      return `[${ipv6Text(addr)}]${prefix === undefined ? '' : `/${prefix}`}`;
    }
  }
  // A name with a letter no IPv4/IPv6 spelling has (x is 0x..., a-f are hex digits): netaddr reads no address.
  if (/^[A-Za-z0-9._-]+$/.test(v) && /[g-wyzG-WYZ_-]/.test(v)) return v;
  throw new NotModelled(`ipwrap of ${JSON.stringify(v)} (netaddr's reading) is not modelled`);
}

// ---- ansible.utils.ipaddr (netaddr.IPNetwork), IPv4 and IPv6 ---------------------------

interface IpNet {
  version: 4 | 6;
  /** The address as written (not the network), as an integer. */
  ip: bigint;
  plen: number;
}
const WIDTH = { 4: 32, 6: 128 } as const;

const v4Big = (s: string): bigint => s.split('.').reduce((a, o) => a * 256n + BigInt(o), 0n);
const v4BigText = (n: bigint): string => [24n, 16n, 8n, 0n].map((b) => String((n >> b) & 255n)).join('.');

/** An IPv6 address in RFC 4291 text (hex groups, at most one ::), no dotted tail or zone; null otherwise. */
function v6Big(s: string): bigint | null {
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string): string[] | null => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return null;
  const all = [...head, ...tail];
  if (!all.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return null;
  if (halves.length === 2 ? all.length > 7 : all.length !== 8) return null;
  const words = halves.length === 2 ? [...head, ...Array<string>(8 - all.length).fill('0'), ...tail] : head;
  return words.reduce((a, g) => (a << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** An IPv6 integer as netaddr prints it: compact (the longest run of two or more zero words as ::), ::ffff:0:0/96 in dotted form. */
function v6BigText(n: bigint): string {
  if (n >> 32n === 0xffffn) return `::ffff:${v4BigText(n & 0xffffffffn)}`;
  const words = Array.from({ length: 8 }, (_, i) => ((n >> BigInt(16 * (7 - i))) & 0xffffn).toString(16));
  return ipv6Text(words.join(':'));
}

const ipText = (version: 4 | 6, n: bigint): string => (version === 4 ? v4BigText(n) : v6BigText(n));

/** What netaddr.IPNetwork reads of the forms modelled here; null for a form it may read otherwise. */
function parseIpNet(value: string): IpNet | null {
  const [addr, prefix, extra] = value.split('/') as [string, string | undefined, string | undefined];
  if (extra !== undefined) return null;
  if (V4.test(addr) && (prefix === undefined || /^(\d|[12]\d|3[0-2])$/.test(prefix)))
    return { version: 4, ip: v4Big(addr), plen: prefix === undefined ? 32 : Number(prefix) };
  const v6 = v6Big(addr);
  if (v6 !== null && (prefix === undefined || /^(\d|[1-9]\d|1[01]\d|12[0-8])$/.test(prefix)))
    return { version: 6, ip: v6, plen: prefix === undefined ? 128 : Number(prefix) };
  return null;
}

/** Python's truth of one answer, as ipaddr keeps the items of a list. */
const truthy = (x: unknown): boolean => x !== null && x !== false && x !== '' && x !== 0 && !(Array.isArray(x) && x.length === 0);

/**
 * ansible.utils.ipaddr (ipaddr_utils.py with netaddr) for IPv4 dotted quads
 * and IPv6 hex addresses, optionally /prefix, and the queries kubespray uses:
 * none, address/ip, net, prefix, network, an index (ipaddr(3): the third
 * address of the network, with its prefix) and a network to look the value up
 * in. Lists keep the truthy answers. netaddr's loose spellings (a bare
 * integer, "10.1", a netmask prefix, a dotted IPv6 tail) and other queries
 * are not modelled.
 */
export function ipaddr(value: unknown, query: unknown = ''): unknown {
  if (Array.isArray(value)) return value.map((x) => ipaddr(x, query === '' || query === null || query === undefined ? query : String(query))).filter(truthy);
  if (value === null || value === false || value === '' || value === true) return false;
  if (typeof value !== 'string') throw new NotModelled(`ipaddr of a ${typeof value} is not modelled`);
  const v = parseIpNet(value);
  if (!v) {
    // A host name netaddr cannot read is simply not an address.
    if (/^[A-Za-z0-9._-]+$/.test(value) && /[g-wyzG-WYZ_-]/.test(value)) return false;
    throw new NotModelled(`ipaddr of ${JSON.stringify(value)} (netaddr's looser reading) is not modelled`);
  }
  const vtype = value.includes('/') ? 'network' : 'address';
  const width = WIDTH[v.version];
  const size = 1n << BigInt(width - v.plen);
  const network = (v.ip / size) * size;
  // netaddr: a /31 (/127) or /32 (/128) has no broadcast address.
  const broadcast = width - v.plen <= 1 ? null : network + size - 1n;
  const addr = ipText(v.version, v.ip);
  const cidr = `${addr}/${v.plen}`;
  if (typeof query === 'number' || (typeof query === 'string' && /^-?\d+$/.test(query))) {
    if (size === 1n) return vtype === 'address' ? addr : cidr;
    const n = BigInt(query);
    const i = n < 0n ? size + n : n;
    return i < 0n || i >= size ? false : `${ipText(v.version, network + i)}/${v.plen}`;
  }
  switch (query) {
    case '':
    case null:
    case undefined:
      return vtype === 'address' ? addr : cidr;
    case 'address':
    case 'ip':
      // _ip_query: the network address of an IPv4 network with a broadcast is no host; IPv6's first address is.
      if (size === 1n || v.ip !== network || broadcast === null || v.version === 6) return addr;
      return null;
    case 'net':
      return size > 1n && v.ip === network ? `${ipText(v.version, network)}/${v.plen}` : null;
    case 'prefix':
      return v.plen;
    case 'network':
      return ipText(v.version, network);
  }
  const q = typeof query === 'string' ? parseIpNet(query) : null;
  if (q) {
    // cidr_lookup: the value (the whole network it names) lies inside the query's network (IPSet membership).
    if (q.version !== v.version) return null;
    const qsize = 1n << BigInt(WIDTH[q.version] - q.plen);
    const qnet = (q.ip / qsize) * qsize;
    return network >= qnet && network + size <= qnet + qsize ? value : null;
  }
  throw new NotModelled(`ipaddr('${String(query)}') is not modelled`);
}
