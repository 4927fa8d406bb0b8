// The trigger units (.path, .timer, .socket) of a unit PortFree stops. A
// trigger starts its unit again the moment it is stopped (a .path whose
// condition holds, a .timer with OnUnitInactiveSec=, a connection to a
// .socket), so the triggers are stopped, disabled and (when the unit is)
// masked first, in the same group. Both the running manager (TriggeredBy=)
// and the unit files (.path/.timer Unit=, .socket Service=, each defaulting
// to the unit of its own name) are asked: either may know one the other
// does not (a trigger not loaded yet; a generated or transient one).
import type { UnitGraph } from '../systemd/unit-loader.js';
import { unitKind } from '../systemd/cgroup.js';

/** Pure: the units whose unit files trigger `unit` (masked ones trigger nothing). */
export function triggersInGraph(graph: UnitGraph, unit: string): string[] {
  const me = graph.resolve(unit);
  const out = new Set<string>();
  for (const e of graph.edges) {
    if (e.relation !== 'Triggers' || graph.resolve(e.to) !== me) continue;
    if (graph.units.get(e.from)?.masked === true) continue;
    out.add(e.from);
  }
  return [...out].sort();
}

/**
 * Per unit of `units` (and of each trigger found): its triggers, from the
 * manager's TriggeredBy= (`show`: its `systemctl show` properties, null when
 * it could not answer) and the unit files; a unit without triggers is left out.
 */
export async function liveTriggers(
  show: (unit: string) => Promise<Map<string, string> | null>,
  graph: UnitGraph,
  units: Iterable<string>,
): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  const queue = [...new Set(units)];
  const asked = new Set(queue);
  while (queue.length > 0) {
    const u = queue.shift()!;
    const fromManager = ((await show(u))?.get('TriggeredBy') ?? '').split(/\s+/).filter((n) => unitKind(n) !== null);
    const all = [...new Set([...fromManager, ...triggersInGraph(graph, u)])].sort();
    if (all.length === 0) continue;
    out[u] = all;
    for (const t of all) if (!asked.has(t)) (asked.add(t), queue.push(t));
  }
  return out;
}

/**
 * Pure: the group a stop acts on, triggers first (each once, none already in
 * the group, followed transitively: a timer may trigger a path unit), then the
 * units in their own order.
 */
export function withTriggers(units: string[], triggers: Record<string, string[]> | undefined): string[] {
  if (!triggers) return units;
  const seen = new Set(units);
  const found: string[] = [];
  const queue = [...units];
  while (queue.length > 0) {
    for (const t of triggers[queue.shift()!] ?? []) {
      if (seen.has(t)) continue;
      seen.add(t);
      found.push(t);
      queue.push(t);
    }
  }
  return [...found.sort(), ...units];
}
