// What would start a stopped port holder again: for a group of units PortFree
// stops and disables together (a service, or a socket and its service), the
// chains from default.target that still reach one of them once `systemctl
// disable` has removed the links it removes. Offline and live alike from the
// unit files (src/systemd/unit-loader.ts); live, the running manager's own
// reverse dependencies (`systemctl show -p WantedBy,...`) are asked too, and
// any it names that no unit file explains count as a way back: unknown is
// never taken as "nothing".
import path from 'node:path';
import type { TargetFs, TargetHost, Host } from '../host.js';
import { loadUnitGraph, type LoaderProblem, type UnitGraph } from '../systemd/unit-loader.js';
import { bootPaths, describeBootPath } from '../systemd/boot-reach.js';
import { parseShowProperties } from '../systemd/systemctl-output.js';
import { SYSTEM_SYSTEMCTL, systemctlArgv, type Systemctl } from '../systemd/systemctl-show.js';

export interface Comeback {
  /** The units stopped and disabled together. */
  group: string[];
  /** One sentence per unit of the group that something still starts at boot. */
  reasons: string[];
  /** Set when the unit files cannot tell (no default.target, unreadable files): a warning naming why. */
  unknown: string | null;
}

export const REVERSE_PROPS = ['WantedBy', 'RequiredBy', 'UpheldBy', 'BoundBy', 'PartOf', 'TriggeredBy', 'ConsistsOf'] as const;
/** The reverse relations that start a unit; PartOf=/ConsistsOf= only stop or restart it together. */
const STARTING = new Set(['WantedBy', 'RequiredBy', 'UpheldBy', 'BoundBy', 'TriggeredBy']);
const FORWARD: Record<string, string> = { WantedBy: 'Wants', RequiredBy: 'Requires', UpheldBy: 'Upholds', BoundBy: 'BindsTo', TriggeredBy: 'Triggers' };

function problemText(p: LoaderProblem): string {
  return p.line === null ? p.message : `${p.file}:${p.line}: ${p.message}`;
}

/** Why the graph cannot answer, or null when it can. */
export function graphUnknown(graph: UnitGraph): string | null {
  if (graph.defaultTarget === null) return 'there is no default.target on the unit search path, so what starts at boot is unknown';
  if (graph.problems.length > 0) return `the unit files could not all be read: ${graph.problems.map(problemText).join('; ')}`;
  return null;
}

/** Pure: the chains that still start a unit of `group` in a graph loaded without the group's disable links. */
export function comebackOf(graph: UnitGraph, group: string[]): Comeback {
  const unknown = graphUnknown(graph);
  const paths = bootPaths(graph, group);
  const reasons = group.flatMap((u) => {
    const p = paths.get(u);
    return p ? [describeBootPath(graph, p)] : [];
  });
  return { group, reasons, unknown };
}

/**
 * The links `systemctl disable GROUP` removes (disableLinks), left out of the
 * loaded tree, then the chains that remain.
 */
export async function wouldStartAgain(host: TargetFs, group: string[], removedLinks: Iterable<string>, loaded?: UnitGraph): Promise<Comeback> {
  const without = new Set(removedLinks);
  // Links in .wants/.requires/.upholds directories only remove edges: filter a graph already loaded.
  // A removed top-level entry (an alias link) changes what names resolve to: load again.
  const topLevel = loaded !== undefined && [...without].some((p) => loaded.dirs.includes(path.posix.dirname(p)));
  const graph =
    loaded !== undefined && !topLevel && group.every((u) => loaded.units.has(loaded.resolve(u)))
      ? { ...loaded, edges: loaded.edges.filter((e) => !(e.how === 'link' && without.has(e.file))) }
      : await loadUnitGraph(host, { without, names: group });
  return comebackOf(graph, group);
}

/**
 * Live only: the manager's reverse dependencies of `unit` that the unit files
 * (`graph`, loaded before any disable) do not explain, with the links
 * `removedLinks` disable takes away not counted. Each is a sentence.
 */
export function unexplainedLive(graph: UnitGraph, unit: string, show: Map<string, string>, removedLinks: ReadonlySet<string>): string[] {
  const me = graph.resolve(unit);
  const out: string[] = [];
  for (const prop of STARTING) {
    for (const by of (show.get(prop) ?? '').split(/\s+/).filter(Boolean)) {
      const from = graph.resolve(by);
      const rel = FORWARD[prop]!;
      const edges = graph.edges.filter((e) => e.from === from && e.relation === rel && graph.resolve(e.to) === me);
      if (edges.length > 0 && edges.every((e) => removedLinks.has(e.file))) continue; // disable takes it away
      if (edges.length > 0) continue; // the unit files say so: bootPaths judges it
      out.push(
        `the running manager reports ${prop}=${by} for ${unit}, which no unit file on the search path explains (a generator, a transient unit, or a file changed since the last daemon-reload); it may start ${unit} again`,
      );
    }
  }
  return out;
}

/** `systemctl show -p WantedBy ... UNIT` through Host.run; null when systemctl cannot answer. */
export async function showReverse(host: TargetHost, unit: string, via: Systemctl = SYSTEM_SYSTEMCTL): Promise<Map<string, string> | null> {
  try {
    const r = await host.run(...systemctlArgv(via, ['show', ...REVERSE_PROPS.flatMap((p) => ['-p', p]), unit]));
    return r.exitCode === 0 ? parseShowProperties(r.stdout) : null;
  } catch {
    return null;
  }
}
