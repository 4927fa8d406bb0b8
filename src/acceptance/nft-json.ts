// `nft -j list ruleset` (libnftables-json(5)): the live ruleset's tables and
// chains as the kernel holds them, read with JSON.parse and checked field by
// field (the output is the host's: untrusted). A base chain has `hook` and
// `policy`; a table's `flags` may hold "dormant" (its chains see no packet).
// nft 1.0.6 (Debian 12) prints a flagged table's `flags` from freed memory:
// seen in a namespace as `"flags": "t"` for a dormant table named t, and as
// another table's name under `nft -j list tables`. So the JSON's flags are
// never trusted alone: every table that has the key is returned in `flagged`,
// for the caller to read its flags from nft's text listing
// (nft-table-flags.ts). A table without the key has no flag (nft prints it
// only when the kernel's flags are not 0). Pure.

export interface LiveChain {
  family: string;
  table: string;
  name: string;
  hook: string | null;
  policy: string | null;
  dormant: boolean;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The chains of the ruleset, or why the text is not nft's JSON. */
export interface FlaggedTable {
  family: string;
  name: string;
}

export type NftJson = { ok: true; chains: LiveChain[]; flagged: FlaggedTable[] } | { ok: false; reason: string };

/** The chains of the ruleset and the tables whose flags must be read from the text listing, or why the text is not nft's JSON. */
export function parseNftJson(text: string): NftJson {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `not JSON: ${(e as Error).message}` };
  }
  const items = (doc as { nftables?: unknown })?.nftables;
  if (!Array.isArray(items)) return { ok: false, reason: 'no "nftables" array' };
  const dormant = new Set<string>();
  const flagged: FlaggedTable[] = [];
  const chains: LiveChain[] = [];
  for (const item of items as Record<string, unknown>[]) {
    const table = item?.table as Record<string, unknown> | undefined;
    if (table && 'flags' in table) {
      const family = str(table.family);
      const name = str(table.name);
      if (family === null || name === null) return { ok: false, reason: `a table without family or name: ${JSON.stringify(table).slice(0, 200)}` };
      flagged.push({ family, name });
      const flags = Array.isArray(table.flags) ? table.flags : [table.flags];
      if (flags.includes('dormant')) dormant.add(`${String(table.family)} ${String(table.name)}`);
    }
    const c = item?.chain as Record<string, unknown> | undefined;
    if (!c) continue;
    const family = str(c.family);
    const tname = str(c.table);
    const name = str(c.name);
    if (family === null || tname === null || name === null)
      return { ok: false, reason: `a chain without family, table or name: ${JSON.stringify(c).slice(0, 200)}` };
    chains.push({ family, table: tname, name, hook: str(c.hook), policy: str(c.policy), dormant: false });
  }
  return { ok: true, chains: chains.map((c) => ({ ...c, dormant: dormant.has(`${c.family} ${c.table}`) })), flagged };
}
