// The shared system unit graph (src/systemd/system-graph.ts): one load per
// observation, the same graph the loader gives, and a fresh one after the
// write door clears Host's memo.
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { Host } from '../../src/host.js';
import { loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { systemUnitGraph } from '../../src/systemd/system-graph.js';
import { LIB, NODEFAULT, unitTree } from '../helpers/systemd-oracle.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

describe('systemUnitGraph', () => {
  it("is the loader's graph of the tree, with no unit of its own added, and read once per Host", async () => {
    const root = unitTree(roots, 'system-graph-', { [`${LIB}/a.service`]: `${NODEFAULT}Wants=b.service\n[Service]\nExecStart=/bin/true\n` });
    const host = new Host({ root, live: false });
    const shared = await systemUnitGraph(host);
    const direct = await loadUnitGraph(new Host({ root, live: false }));
    expect([...shared.units.keys()].sort()).toEqual([...direct.units.keys()].sort());
    expect(shared.edges).toEqual(direct.edges);
    expect(await systemUnitGraph(host)).toBe(shared);
  });

  it('loads the names asked for on top of the shared graph', async () => {
    const root = unitTree(roots, 'system-graph-', {});
    const g = await systemUnitGraph(new Host({ root, live: false }), ['nowhere.service']);
    expect(g.units.get('nowhere.service')?.entry).toBeNull();
  });
});
