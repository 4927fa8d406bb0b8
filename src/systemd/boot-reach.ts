// What would start a unit again: the chain of relations from default.target
// to the unit in a loaded unit graph. A unit is started at boot when
// default.target reaches it through Wants=/Requires=/Upholds=/BindsTo= (in
// [Unit], drop-ins or link directories) or a trigger (.socket/.timer/.path)
// whose own chain starts at boot. A masked or missing unit starts nothing and
// passes nothing on. PartOf= never starts a unit, so it is not a path. Pure.
import { PULL_RELATIONS, type UnitEdge, type UnitGraph } from './unit-loader.js';

export interface BootPath {
  unit: string;
  /** default.target first; the last edge points at `unit`. */
  edges: UnitEdge[];
}

function index(graph: UnitGraph): Map<string, UnitEdge[]> {
  const out = new Map<string, UnitEdge[]>();
  for (const e of graph.edges) {
    if (!PULL_RELATIONS.has(e.relation)) continue;
    (out.get(e.from) ?? out.set(e.from, []).get(e.from)!).push(e);
  }
  return out;
}

function startable(graph: UnitGraph, name: string): boolean {
  const u = graph.units.get(name);
  return u !== undefined && !u.masked && u.fragment !== null;
}

/**
 * The shortest chain from default.target to each of `targets` (canonical or
 * alias names), breadth first in the order the edges were loaded; a target
 * nothing reaches is absent from the result.
 */
export function bootPaths(graph: UnitGraph, targets: Iterable<string>): Map<string, BootPath> {
  const want = new Map<string, string[]>(); // canonical -> names asked
  for (const t of targets) {
    const c = graph.resolve(t);
    (want.get(c) ?? want.set(c, []).get(c)!).push(t);
  }
  const out = new Map<string, BootPath>();
  const root = graph.defaultTarget;
  if (root === null || !startable(graph, root)) return out;
  const byFrom = index(graph);
  const via = new Map<string, UnitEdge | null>([[root, null]]);
  const queue = [root];
  while (queue.length > 0) {
    const u = queue.shift()!;
    for (const e of byFrom.get(u) ?? []) {
      const to = graph.resolve(e.to);
      if (via.has(to) || !startable(graph, to)) continue;
      via.set(to, e);
      queue.push(to);
    }
  }
  for (const [c, asked] of want) {
    if (!via.has(c) || c === root) continue;
    const edges: UnitEdge[] = [];
    for (let n = c, e = via.get(n); e; n = e.from, e = via.get(n)) edges.unshift(e);
    for (const a of asked) out.set(a, { unit: a, edges });
  }
  return out;
}

const VERB: Record<string, string> = { Wants: 'wanted by', Requires: 'required by', Upholds: 'upheld by', BindsTo: 'bound to', Triggers: 'triggered by' };

/** "Wants= at /etc/systemd/system/monitoring.target:3", "link /etc/systemd/system/multi-user.target.wants/x.service". */
export function edgeSource(e: UnitEdge): string {
  if (e.how === 'link') return `link ${e.file}`;
  if (e.how === 'default') return `${e.from} triggers the unit of its own name by default, ${e.file}`;
  return `${e.key}= at ${e.file}:${e.line}`;
}

/**
 * One sentence naming what still starts `path.unit` at boot, e.g.
 * "metrics-agent.service is still wanted by monitoring.target (Wants= at
 * /etc/systemd/system/monitoring.target:3), which is enabled
 * (default.target -> multi-user.target -> monitoring.target)".
 */
export function describeBootPath(graph: UnitGraph, path: BootPath, opts: { still?: boolean } = {}): string {
  const last = path.edges[path.edges.length - 1]!;
  const by = last.from;
  const chain = [`${graph.defaultTarget!} (the default target)`, ...path.edges.slice(0, -1).map((e) => graph.resolve(e.to))];
  const named = last.to !== path.unit && graph.resolve(last.to) === graph.resolve(path.unit) ? ` (as ${last.to})` : '';
  const enabled = by === graph.defaultTarget ? `which is the default target` : `which is enabled (${chain.join(' -> ')})`;
  // "still" after a stop or disable; a unit merely found on the boot path (the script scan) just "is".
  return `${path.unit} is ${opts.still === false ? '' : 'still '}${VERB[last.relation]} ${by}${named} (${edgeSource(last)}), ${enabled}`;
}
