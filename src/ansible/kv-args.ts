// Free-form module arguments as ansible-core reads them: a port of
// ansible/parsing/splitter.py (split_args, parse_kv, join_args) and
// quoting.py (unquote), and of ModuleArgsParser's rule for which modules keep
// the free-form words as _raw_params (command, shell, raw, script). So
// `ansible.posix.sysctl: name=net.ipv4.ip_forward value=1` gives the same
// named arguments as the mapping form, with Ansible's quoting and its
// treatment of {{ }}, {% %} and {# #} blocks that contain spaces.

export class KvParseError extends Error {}

// constants.MODULE_REQUIRE_ARGS (with add_internal_fqcns): parse_kv(check_raw=True) for these.
const FREEFORM = ['command', 'win_command', 'shell', 'win_shell', 'raw', 'script'];
export const FREEFORM_ACTIONS = new Set([
  ...FREEFORM.flatMap((m) => [m, `ansible.builtin.${m}`, `ansible.legacy.${m}`]),
  'ansible.windows.win_command',
  'ansible.windows.win_shell',
]);

// The keys a free-form module still takes as key=value (parse_kv, check_raw).
const RAW_KEYS = new Set(['creates', 'removes', 'chdir', 'executable', 'warn', 'stdin', 'stdin_add_newline', 'strip_empty_ends']);

function quoteState(token: string, quote: string | null): string | null {
  let q = quote;
  for (let i = 0; i < token.length; i++) {
    const c = token[i]!;
    const prev = i > 0 ? token[i - 1] : null;
    if ((c === '"' || c === "'") && prev !== '\\') {
      if (q) {
        if (c === q) q = null;
      } else q = c;
    }
  }
  return q;
}

function countBlocks(token: string, depth: number, open: string, close: string): number {
  const opens = token.split(open).length - 1;
  const closes = token.split(close).length - 1;
  if (opens === closes) return depth;
  return Math.max(0, depth + opens - closes);
}

/** splitter.join_args */
export function joinArgs(parts: string[]): string {
  let out = '';
  for (const p of parts) out += out.length === 0 || out.endsWith('\n') ? p : ` ${p}`;
  return out;
}

/** splitter.split_args: whitespace-split, reassembling quotes and Jinja2 blocks. */
export function splitArgs(args: string): string[] {
  const params: string[] = [];
  const items = args.split('\n');
  let quote: string | null = null;
  let inside = false;
  let printDepth = 0;
  let blockDepth = 0;
  let commentDepth = 0;
  items.forEach((item, itemIdx) => {
    const tokens = item.split(' ');
    let continuation = false;
    tokens.forEach((token, idx) => {
      if (token.length === 0 && idx !== 0) {
        if (params.length === 0) throw new KvParseError('Unable to parse argument string');
        params[params.length - 1] += ' ';
        return;
      }
      if (token === '\\' && !inside) {
        continuation = true;
        return;
      }
      const wasInside = inside;
      quote = quoteState(token, quote);
      inside = quote !== null;
      let appended = false;
      const inBlock = () => printDepth || blockDepth || commentDepth;
      if (inside && !wasInside && !inBlock()) {
        params.push(token);
        appended = true;
      } else if (inBlock() || inside || wasInside) {
        if (params.length === 0) throw new KvParseError('Unable to parse argument string');
        const last = params.length - 1;
        if (idx === 0 && wasInside) params[last] = `${params[last]}${token}`;
        else if (tokens.length > 1) params[last] = `${params[last]}${idx > 0 ? ' ' : ''}${token}`;
        else params[last] = `${params[last]}\n${token}`;
        appended = true;
      }
      const p0 = printDepth;
      printDepth = countBlocks(token, printDepth, '{{', '}}');
      if (printDepth !== p0 && !appended) {
        params.push(token);
        appended = true;
      }
      const b0 = blockDepth;
      blockDepth = countBlocks(token, blockDepth, '{%', '%}');
      if (blockDepth !== b0 && !appended) {
        params.push(token);
        appended = true;
      }
      const c0 = commentDepth;
      commentDepth = countBlocks(token, commentDepth, '{#', '#}');
      if (commentDepth !== c0 && !appended) {
        params.push(token);
        appended = true;
      }
      if (!inBlock() && !inside && !appended && token !== '') params.push(token);
    });
    if (items.length > 1 && itemIdx !== items.length - 1 && !continuation) {
      if (params.length === 0) throw new KvParseError('Unable to parse argument string');
      params[params.length - 1] += '\n';
    }
  });
  if (printDepth || blockDepth || commentDepth || inside) {
    throw new KvParseError(`failed at splitting arguments, either an unbalanced jinja2 block or quotes: ${args}`);
  }
  return params;
}

/** splitter._decode_escapes: only these escape forms are decoded (unicode-escape), the rest is kept. */
function decodeEscapes(s: string): string {
  return s.replace(/\\U[0-9a-fA-F]{8}|\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|\\N\{[^}]+\}|\\[\\'"abfnrtv]/g, (m) => {
    const c = m[1]!;
    if (c === 'U' || c === 'u' || c === 'x') {
      const cp = parseInt(m.slice(2), 16);
      if (cp > 0x10ffff) throw new KvParseError(`illegal Unicode character ${m}`);
      return String.fromCodePoint(cp);
    }
    if (c === 'N') throw new KvParseError(`\\N{...} escapes are not modelled (${m})`);
    return ({ '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' } as Record<string, string>)[c]!;
  });
}

/** quoting.unquote */
export function unquote(s: string): string {
  const quoted = s.length > 1 && s[0] === s[s.length - 1] && (s[0] === '"' || s[0] === "'") && s[s.length - 2] !== '\\';
  return quoted ? s.slice(1, -1) : s;
}

/** splitter.parse_kv */
export function parseKv(args: string, checkRaw = false): Record<string, string> {
  const options: Record<string, string> = {};
  const raw: string[] = [];
  for (const orig of splitArgs(args)) {
    const x = decodeEscapes(orig);
    if (!x.includes('=')) {
      raw.push(orig);
      continue;
    }
    // The first '=' after position 0 that is not escaped with a backslash.
    let pos = 0;
    for (;;) {
      pos = x.indexOf('=', pos + 1);
      if (pos < 0 || (pos > 0 && x[pos - 1] !== '\\')) break;
    }
    if (pos < 0) {
      raw.push(x.replace(/\\=/g, '='));
      continue;
    }
    const k = x.slice(0, pos);
    const v = x.slice(pos + 1);
    if (checkRaw && !RAW_KEYS.has(k)) raw.push(orig);
    else options[k.trim()] = unquote(v.trim());
  }
  if (raw.length > 0) options._raw_params = joinArgs(raw);
  return options;
}

/** ModuleArgsParser._split_module_string: `action: sysctl name=x value=1` → module and argument string. */
export function splitModuleString(s: string): { module: string; args: string } {
  const tokens = splitArgs(s.trim());
  return tokens.length > 1 ? { module: tokens[0]!.trim(), args: joinArgs(tokens.slice(1)) } : { module: (tokens[0] ?? '').trim(), args: '' };
}

/** Module arguments written as a string, the way ModuleArgsParser normalises them. */
export function freeFormArgs(module: string, text: string): Record<string, unknown> {
  return parseKv(text, FREEFORM_ACTIONS.has(module));
}
