// `nft -j list ruleset` (libnftables-json(5)): the live ruleset's tables and
// chains as the kernel holds them, read with JSON.parse and checked field by
// field (the output is the host's: untrusted). A base chain has `hook` and
// `policy`; a table's `flags` may hold "dormant" (its chains see no packet).
// Pure.

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
export function parseNftJson(text: string): { ok: true; chains: LiveChain[] } | { ok: false; reason: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `not JSON: ${(e as Error).message}` };
  }
  const items = (doc as { nftables?: unknown })?.nftables;
  if (!Array.isArray(items)) return { ok: false, reason: 'no "nftables" array' };
  const dormant = new Set<string>();
  const chains: LiveChain[] = [];
  for (const item of items as Record<string, unknown>[]) {
    const table = item?.table as Record<string, unknown> | undefined;
    if (table) {
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
  return { ok: true, chains: chains.map((c) => ({ ...c, dormant: dormant.has(`${c.family} ${c.table}`) })) };
}
