// Native systemd .swap units enabled under swap.target, and the swap.target
// mask. Enablement is a symlink in /etc/systemd/system/swap.target.wants (or
// .requires) — `systemctl enable` for a unit with WantedBy=swap.target creates
// exactly that — so disabling is removing the link, the same live and offline.
import path from 'node:path';
import type { TargetFs } from '../host.js';
import { disableLinks } from '../systemd/unit-links.js';
import { SYSTEMD_SYSTEM_ETC } from '../systemd/unit-dirs.js';
import { effectiveValue, type UnitDirective } from '../systemd/unit-file.js';
import type { LoadedUnit } from '../systemd/unit-loader.js';
import { systemUnitGraph } from '../systemd/system-graph.js';

export const SWAP_TARGET = `${SYSTEMD_SYSTEM_ETC}/swap.target`;
const ENABLE_DIRS = [`${SYSTEMD_SYSTEM_ETC}/swap.target.wants`, `${SYSTEMD_SYSTEM_ETC}/swap.target.requires`];

/**
 * Services that turn swap on by themselves (swapon from a script), usually
 * WantedBy=multi-user.target: masking swap.target does not stop them.
 * zram-tools (Debian), zram-config (Ubuntu), dphys-swapfile (Raspberry Pi OS), swapspace.
 */
export const SWAP_SERVICES = ['zramswap.service', 'zram-config.service', 'dphys-swapfile.service', 'swapspace.service'] as const;

export interface SwapUnit {
  /** e.g. "dev-sdb2.swap", "swapfile.swap", "zramswap.service". */
  unit: string;
  /** A native .swap unit under swap.target, or a service known to run swapon itself. */
  kind: 'swap-unit' | 'swap-service';
  /** The symlinks `systemctl disable UNIT` removes (target paths), the enablement links among them. */
  links: string[];
  /** The unit file that defines it, when found on the unit search path. */
  file: string | null;
  /** What= of the unit file: the swap device or file. */
  what: string | null;
  /** WantedBy=/RequiredBy= of its [Install] section. */
  installedBy: string[];
}

/** What= (fragment and drop-ins: single-valued, the last wins) and WantedBy=/RequiredBy= of the fragment's [Install], as the loader read them. */
function swapUnitInfo(unit: LoadedUnit | undefined): { what: string | null; installedBy: string[] } {
  if (!unit || unit.masked) return { what: null, installedBy: [] };
  const words = (ds: UnitDirective[]) => ds.flatMap((d) => d.value.split(/[\t ]+/).filter(Boolean));
  return { what: effectiveValue(unit.directives, 'Swap', 'What'), installedBy: [...words(unit.install.wantedBy), ...words(unit.install.requiredBy)] };
}

/** Every .swap unit enabled under swap.target, and every known swap service enabled anywhere, in /etc/systemd/system. */
export async function readEnabledSwapUnits(host: TargetFs): Promise<SwapUnit[]> {
  const byUnit = new Map<string, SwapUnit>();
  const services = new Set<string>(SWAP_SERVICES);
  const dirs = ((await host.readDir(SYSTEMD_SYSTEM_ETC)) ?? [])
    .filter((e) => /\.(wants|requires)$/.test(e.name))
    .map((e) => path.posix.join(SYSTEMD_SYSTEM_ETC, e.name));
  for (const dir of dirs) {
    const underSwapTarget = ENABLE_DIRS.includes(dir);
    for (const ent of (await host.readDir(dir)) ?? []) {
      const isSwapUnit = underSwapTarget && ent.name.endsWith('.swap');
      if (!isSwapUnit && !services.has(ent.name)) continue;
      const link = path.posix.join(dir, ent.name);
      let u = byUnit.get(ent.name);
      if (!u) {
        const graph = await systemUnitGraph(host, [ent.name]);
        const loaded = graph.units.get(graph.resolve(ent.name));
        const info = swapUnitInfo(loaded);
        u = { unit: ent.name, kind: isSwapUnit ? 'swap-unit' : 'swap-service', links: [], file: loaded?.entry ?? null, what: info.what, installedBy: info.installedBy };
        byUnit.set(ent.name, u);
      }
      u.links.push(link);
    }
  }
  // Disabling removes what `systemctl disable UNIT` removes (aliases, Also=,
  // links outside .wants dirs too); a masked unit marks nothing there and
  // cannot start anyway, so it is left alone.
  for (const u of byUnit.values()) {
    u.links = await disableLinks(host, [u.unit]);
    if (u.links.length === 0) byUnit.delete(u.unit);
  }
  return [...byUnit.values()].sort((a, b) => (a.unit < b.unit ? -1 : a.unit > b.unit ? 1 : 0));
}

/** systemctl mask writes a symlink to /dev/null in /etc/systemd/system. */
export async function isSwapTargetMasked(host: TargetFs): Promise<boolean> {
  return (await host.readLink(SWAP_TARGET)) === '/dev/null';
}
