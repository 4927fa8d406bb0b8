// Units that turn swap on at boot, found in the system's unit graph: every
// native .swap unit and every service known to run swapon itself that
// default.target reaches through any dependency (a target's .wants link in
// /etc or a vendor directory, Wants=/Requires=/Upholds=/BindsTo= of any
// unit, a trigger), or that is enabled by links `systemctl disable` removes.
// Masking swap.target stops only what is reached through swap.target: a
// .swap unit a vendor links under local-fs.target.wants starts anyway. So
// for each unit: the links disable removes, and what still reaches it once
// they are gone (and swap.target is masked, when it is or will be); what
// still reaches it is why it must be masked. Units a generator wrote (the
// fstab generator's) are left to their source (fstab, zram-generator config).
import type { TargetFs } from '../host.js';
import { disableLinks } from '../systemd/unit-links.js';
import { isGeneratedEntry, SYSTEMD_SYSTEM_ETC } from '../systemd/unit-dirs.js';
import { effectiveValue, type UnitDirective } from '../systemd/unit-file.js';
import type { LoadedUnit, UnitGraph } from '../systemd/unit-loader.js';
import { systemUnitGraph } from '../systemd/system-graph.js';
import { bootPaths, describeBootPath } from '../systemd/boot-reach.js';
import { graphUnknown } from '../ports/stays-free.js';

export const SWAP_TARGET = `${SYSTEMD_SYSTEM_ETC}/swap.target`;

/**
 * Services that turn swap on by themselves (swapon from a script), usually
 * WantedBy=multi-user.target: masking swap.target does not stop them.
 * zram-tools (Debian), zram-config (Ubuntu), dphys-swapfile (Raspberry Pi OS), swapspace.
 */
export const SWAP_SERVICES = ['zramswap.service', 'zram-config.service', 'dphys-swapfile.service', 'swapspace.service'] as const;
/** Of those, the ones that make zram devices (the others make swap files). */
export const ZRAM_SERVICES: ReadonlySet<string> = new Set(['zramswap.service', 'zram-config.service']);

export interface SwapUnit {
  /** e.g. "dev-sdb2.swap", "swapfile.swap", "zramswap.service". */
  unit: string;
  /** A native .swap unit, or a service known to run swapon itself. */
  kind: 'swap-unit' | 'swap-service';
  /** The symlinks `systemctl disable UNIT` removes (target paths). */
  links: string[];
  /** The unit file that defines it (its search-path entry). */
  file: string | null;
  /** What= of the unit file: the swap device or file. */
  what: string | null;
  /** WantedBy=/RequiredBy= of its [Install]. */
  installedBy: string[];
  /** How default.target reaches it now, as a sentence; null when nothing does (it is only enabled under a masked target). */
  reach: string | null;
  /**
   * What still starts it at boot once its disable links are gone and
   * swap.target is masked (when it is or will be): non-empty means it must be
   * masked. Sentences naming file and line.
   */
  comeback: string[];
}

export interface SwapUnitScan {
  units: SwapUnit[];
  /** How many swap units and swap services the graph holds: what was searched, for an operator line. */
  searched: number;
  /** Why the graph cannot answer (no default.target, unreadable unit files), or null. */
  unknown: string | null;
}

/** What= (fragment and drop-ins: single-valued, the last wins) and WantedBy=/RequiredBy= of [Install]. */
function swapUnitInfo(unit: LoadedUnit | undefined): { what: string | null; installedBy: string[] } {
  if (!unit || unit.masked) return { what: null, installedBy: [] };
  const words = (ds: UnitDirective[]) => ds.flatMap((d) => d.value.split(/[\t ]+/).filter(Boolean));
  return { what: effectiveValue(unit.directives, 'Swap', 'What'), installedBy: [...words(unit.install.wantedBy), ...words(unit.install.requiredBy)] };
}

/** `graph` as the boot would see it without `links` and, with `maskSwapTarget`, with swap.target masked. Pure. */
function without(graph: UnitGraph, links: ReadonlySet<string>, maskSwapTarget: boolean): UnitGraph {
  const units = new Map(graph.units);
  const st = units.get('swap.target');
  if (maskSwapTarget && st) units.set('swap.target', { ...st, masked: true, fragment: null });
  return { ...graph, units, edges: graph.edges.filter((e) => !(e.how === 'link' && links.has(e.file))) };
}

/**
 * Every swap unit and swap service that starts at boot or is enabled, with
 * what disabling leaves. `swapTargetMasked`: swap.target is masked now or by
 * this run.
 */
export async function scanSwapUnits(host: TargetFs, opts: { swapTargetMasked: boolean }): Promise<SwapUnitScan> {
  const graph = await systemUnitGraph(host, SWAP_SERVICES);
  const candidates = [...graph.units.values()]
    .filter(
      (u) =>
        (u.name.endsWith('.swap') || (SWAP_SERVICES as readonly string[]).includes(u.name)) && !u.masked && u.fragment !== null && !isGeneratedEntry(u.entry),
    )
    .map((u) => u.name);
  const reached = bootPaths(graph, candidates);
  const out: SwapUnit[] = [];
  for (const name of candidates.sort()) {
    // A masked unit marks nothing for disable and cannot start: the filter above left it out.
    const links = await disableLinks(host, [name]);
    const now = reached.get(name);
    if (links.length === 0 && now === undefined) continue;
    const loaded = graph.units.get(name);
    const after = without(graph, new Set(links), opts.swapTargetMasked);
    const still = bootPaths(after, [name]).get(name);
    const info = swapUnitInfo(loaded);
    out.push({
      unit: name,
      kind: name.endsWith('.swap') ? 'swap-unit' : 'swap-service',
      links,
      file: loaded?.entry ?? null,
      what: info.what,
      installedBy: info.installedBy,
      reach: now ? describeBootPath(graph, now, { still: false }) : null,
      comeback: still ? [describeBootPath(after, still)] : [],
    });
  }
  return { units: out, searched: candidates.length, unknown: graphUnknown(graph) };
}

/** Every swap unit enabled or started at boot (swap.target as it is now). */
export async function readEnabledSwapUnits(host: TargetFs): Promise<SwapUnit[]> {
  return (await scanSwapUnits(host, { swapTargetMasked: await isSwapTargetMasked(host) })).units;
}

/** systemctl mask writes a symlink to /dev/null in /etc/systemd/system. */
export async function isSwapTargetMasked(host: TargetFs): Promise<boolean> {
  return (await host.readLink(SWAP_TARGET)) === '/dev/null';
}
