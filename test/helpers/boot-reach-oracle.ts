// Boot reachability judged twice over one temp tree: by bootPaths over our
// loader's graph, and by `systemd --test` (systemd-oracle.ts), unit by unit.
import { Host } from '../../src/host.js';
import { loadUnitGraph, type UnitGraph } from '../../src/systemd/unit-loader.js';
import { bootPaths } from '../../src/systemd/boot-reach.js';
import type { Tree } from './tree.js';
import { DEFAULT_LINK, SKELETON, oracle, oracleStarted, plainTree } from './systemd-oracle.js';

/** Whether each unit of `names` is reached at boot: ours (bootPaths), theirs (systemd), and our graph. */
export interface BootReachComparison {
  ours: Record<string, boolean>;
  theirs: Record<string, boolean>;
  graph: UnitGraph;
}

/** A service with no default dependencies, `extra` lines in its [Unit]. */
export const plainService = (extra = ''): string => `[Unit]\nDefaultDependencies=no\n${extra}[Service]\nExecStart=/bin/true\n`;

/** `files` over systemd's skeleton and default.target link, in a temp tree pushed to `roots` (the caller removes them). */
export async function compareBootReach(roots: string[], files: Tree, names: string[]): Promise<BootReachComparison> {
  const root = plainTree(roots, 'systemd-units-', { ...SKELETON, ...DEFAULT_LINK, ...files });
  const started = oracleStarted(await oracle(root));
  const graph = await loadUnitGraph(new Host({ root, live: false }));
  const reach = bootPaths(graph, names);
  return { ours: Object.fromEntries(names.map((n) => [n, reach.has(n)])), theirs: Object.fromEntries(names.map((n) => [n, started.has(n)])), graph };
}
