// What a boot script can do to SwapOff: a swapon that turns swap on again
// after the plan has turned it off (judged against /etc/fstab as the plan
// leaves it for `swapon -a`).
import type { BootScriptHit } from '../../boot-scripts/scan.js';
import { SWAPON_FSTAB } from '../../boot-scripts/scan.js';
import { scriptMarker } from '../../boot-scripts/neutralise.js';
import { parseFstab, swapEntries } from '../../swap/fstab.js';
import { SWAP_SERVICES } from '../../swap/units.js';
import { atBoot, type PlannedFiles, type ScriptConcern, type ScriptSpec } from '../boot-script-hook.js';
import { SWAP_PROMISE } from './promises.js';

function words(argv: Array<string | null>): string {
  return argv.map((w) => w ?? '…').join(' ');
}

/**
 * What `swapon -a` turns on, judged against /etc/fstab as the plan leaves it
 * (the plan's own rewrite of it, else the file as read): every swap line
 * libmount reads that has no noauto option (util-linux swapon_all skips
 * those; -e only skips devices that do not exist). None: it turns nothing on.
 */
function fstabSwapOn(h: BootScriptHit, planned?: PlannedFiles): string | null {
  const text = planned?.get(SWAPON_FSTAB) ?? h.fstab ?? null;
  if (text === null) return null;
  const on = swapEntries(parseFstab(text)).filter((e) => !e.options.includes('noauto'));
  if (on.length === 0) return null;
  return `turns swap on (${words(h.action.kind === 'swapon' ? h.action.argv : [])}: ${on.map((e) => `${SWAPON_FSTAB}:${e.line} ${e.spec}`).join(', ')} stays a swap line once this plan is applied)`;
}

export const swapConcern: ScriptConcern<ScriptSpec> = {
  judge: (_spec, h, planned) => {
    if (h.action.kind !== 'swapon') return null;
    // SwapOff disables these services itself (src/swap/units.ts).
    if (h.unit !== undefined && (SWAP_SERVICES as readonly string[]).includes(h.unit)) return null;
    if (h.action.fstabOnly === true) return fstabSwapOn(h, planned);
    return `turns swap on (${words(h.action.argv)})`;
  },
  relevant: (u) => u.what === 'program' || u.what === 'swapon',
  marker: () => scriptMarker('swap disabled for Kubernetes (kubelet needs swap off)'),
  withdraws: () => [atBoot(SWAP_PROMISE)],
};
