// The `forward` of CoreDNS's root zone in a Corefile, read with the
// Caddyfile's lexical rules CoreDNS uses (caddyfile/lexer.go): tokens split
// on white space, `#` starting a comment at a token's start, "quoted" tokens
// with \" escapes, `{` and `}` opening and closing blocks. A server block is
// its keys (zones, `.:53`) then a block; a directive is the first token of a
// line in it, its arguments the rest of the line up to a `{`. What this
// reader does not follow (`import`, snippets, environment placeholders) is
// refused: the caller says not known. Pure.
import type { Known } from './checker.js';
import { known, notKnown } from './checker.js';

interface Token {
  text: string;
  line: number;
  quoted: boolean;
}

function tokens(text: string): Token[] {
  const out: Token[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') line++;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    let word = '';
    const quoted = c === '"';
    if (quoted) {
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && text[i + 1] === '"') i++;
        if (text[i] === '\n') line++;
        word += text[i++];
      }
      i++;
    } else while (i < text.length && !/\s/.test(text[i]!)) word += text[i++];
    out.push({ text: word, line, quoted });
  }
  return out;
}

/** Each server block: its keys, and its directives at the block's top level (each with its arguments and line). */
function serverBlocks(ts: Token[]): Known<{ keys: string[]; directives: { name: string; args: string[]; line: number }[] }[]> {
  const blocks: { keys: string[]; directives: { name: string; args: string[]; line: number }[] }[] = [];
  let i = 0;
  while (i < ts.length) {
    const keys: string[] = [];
    while (i < ts.length && !(ts[i]!.text === '{' && !ts[i]!.quoted)) keys.push(ts[i++]!.text);
    if (i >= ts.length) return notKnown(`a server block (${keys.join(' ')}) without its {`);
    i++;
    const block = { keys, directives: [] as { name: string; args: string[]; line: number }[] };
    let depth = 1;
    while (i < ts.length && depth > 0) {
      const t = ts[i]!;
      if (!t.quoted && t.text === '}') {
        depth--;
        i++;
        continue;
      }
      if (!t.quoted && t.text === '{') {
        depth++;
        i++;
        continue;
      }
      const args: string[] = [];
      let j = i + 1;
      while (j < ts.length && ts[j]!.line === t.line && !(!ts[j]!.quoted && (ts[j]!.text === '{' || ts[j]!.text === '}'))) args.push(ts[j++]!.text);
      if (depth === 1) block.directives.push({ name: t.text, args, line: t.line });
      i = j;
    }
    if (depth > 0) return notKnown(`the server block ${keys.join(' ')} is not closed`);
    blocks.push(block);
  }
  return known(blocks);
}

/** The root zone's forward: where CoreDNS sends what it does not serve itself, with its line; null when that block has none. */
export function rootForward(corefile: string): Known<{ to: string[]; line: number } | null> {
  const ts = tokens(corefile);
  const odd = ts.find((t) => t.text === 'import' || /\{\$|\{env\./.test(t.text) || /^\(.*\)$/.test(t.text));
  if (odd) return notKnown(`line ${odd.line}: ${odd.text} (imports, snippets and placeholders are not read here)`);
  const blocks = serverBlocks(ts);
  if (!blocks.known) return blocks;
  // The zone "." on the default port: `.`, `.:53`, `dns://.:53`.
  const isRoot = (k: string) => ['.', '.:53', 'dns://.', 'dns://.:53'].includes(k);
  const root = blocks.value.find((b) => b.keys.some(isRoot));
  if (!root) return known(null);
  const fwd = root.directives.find((d) => d.name === 'forward');
  if (!fwd) return known(null);
  if (fwd.args[0] !== '.') return notKnown(`line ${fwd.line}: forward ${fwd.args.join(' ')} (not for the whole zone ".")`);
  return known({ to: fwd.args.slice(1).filter((a) => a !== ''), line: fwd.line });
}

/** A forward target's address (dns:// and a :port dropped; tls:// and the like are not plain DNS to an address): null when it is none. */
export function targetAddress(to: string): string | null {
  const rest = to.startsWith('dns://') ? to.slice('dns://'.length) : to;
  if (rest.includes('://')) return null;
  if (rest.startsWith('[')) return rest.slice(1, rest.indexOf(']') > 0 ? rest.indexOf(']') : undefined) || null;
  const colons = rest.split(':').length - 1;
  return colons === 1 ? rest.split(':')[0]! : rest;
}
