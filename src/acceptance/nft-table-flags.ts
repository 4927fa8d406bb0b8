// The flags of one table as `nft list table FAMILY NAME` prints them (the
// text listing, nft(8)): `table FAMILY NAME { flags dormant[,owner...] ...
// }`, read with nft-conf.ts's tokens, only the statements directly in the
// table's block (chains, sets and their bodies are skipped brace by brace).
// The JSON listing cannot be trusted for flags in nft 1.0.6 (nft-json.ts).
// Pure.
import { nftTokens } from './nft-conf.js';

export type TableFlags = { ok: true; flags: string[] } | { ok: false; line: number; reason: string };

/** The words of the `flags` statements of table FAMILY NAME in the listing, or the line that cannot be read. */
export function nftTableFlags(text: string, family: string, name: string): TableFlags {
  const toks = nftTokens(text);
  if (!Array.isArray(toks)) return { ok: false, ...toks };
  const at = toks.findIndex((t, i) => t.t === 'table' && toks[i + 1]?.t === family && toks[i + 2]?.t === name && toks[i + 3]?.t === '{');
  if (at < 0) return { ok: false, line: 1, reason: `no "table ${family} ${name} {" in the listing` };
  const flags: string[] = [];
  let depth = 1;
  let statement: string[] = [];
  for (let i = at + 4; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.t === '{') depth++;
    else if (t.t === '}') depth--;
    if (depth === 0) return { ok: true, flags };
    if (depth !== 1 || t.t === '{' || t.t === '}') continue;
    if (t.t === '\n' || t.t === ';') {
      if (statement[0] === 'flags') flags.push(...statement.slice(1));
      statement = [];
    } else if (t.t !== ',') statement.push(t.t);
  }
  return { ok: false, line: toks[toks.length - 1]?.line ?? 1, reason: `table ${family} ${name}: its block does not end` };
}
