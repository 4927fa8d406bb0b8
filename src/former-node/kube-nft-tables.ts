// The nftables tables kube-proxy's nftables mode leaves (Kubernetes 1.29+): it keeps every chain, set and map
// in one table of its own per family, `ip kube-proxy` and `ip6 kube-proxy` (pkg/proxy/nftables/proxier.go,
// kubeProxyTable; its CleanupLeftovers deletes the table in both families). Read from `nft -j list tables`
// (libnftables-json(5): {"nftables": [{"metainfo": ...}, {"table": {"family", "name", "handle"}}]}), the
// host's output and so untrusted, checked field by field; the command removes exactly those tables, and a
// firewall's own tables stay. kubespray's reset.yml has no nftables task (master): they outlive it. Pure.

/** kube-proxy's table name (the same in every family). */
export const KUBE_PROXY_TABLE = 'kube-proxy';
/** The families kube-proxy makes its table in. */
const FAMILIES = new Set(['ip', 'ip6']);

export interface NftTable {
  family: string;
  name: string;
}

export type KubeNftTables = { ok: true; tables: NftTable[] } | { ok: false; reason: string };

/** kube-proxy's tables among `nft -j list tables`' output, or why the text is not that output. */
export function readKubeNftTables(json: string): KubeNftTables {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (e) {
    return { ok: false, reason: `not JSON: ${(e as Error).message}` };
  }
  const items = (doc as { nftables?: unknown } | null)?.nftables;
  if (!Array.isArray(items)) return { ok: false, reason: 'no "nftables" array' };
  const tables: NftTable[] = [];
  for (const item of items) {
    if (item === null || typeof item !== 'object' || !('table' in item)) continue;
    const t = (item as { table: unknown }).table as { family?: unknown; name?: unknown } | null;
    if (t === null || typeof t !== 'object' || typeof t.family !== 'string' || typeof t.name !== 'string')
      return { ok: false, reason: `a table without family or name: ${JSON.stringify(t).slice(0, 200)}` };
    if (t.name === KUBE_PROXY_TABLE && FAMILIES.has(t.family)) tables.push({ family: t.family, name: t.name });
  }
  return { ok: true, tables };
}

/** One `nft delete table` per table: each removes the table with everything in it, and nothing else. */
export function kubeNftCommands(tables: readonly NftTable[]): string[] {
  return tables.map((t) => `nft delete table ${t.family} ${t.name}`);
}
