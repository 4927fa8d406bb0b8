// SwapOff's one promise: no swap, after apply and at the next boot.
import type { PromiseKind } from '../../promises.js';

export const SWAP_PROMISE = 'swap:off';

/** `seen.swap`: /proc/swaps' lines below the header and SwapTotal in kB; only a tier with a kernel of its own has it. */
export const SWAP_KIND: PromiseKind = {
  describe: () => 'swap off',
  judge: (_p, seen) => {
    const swap = seen['swap'] as { areas: string[]; totalKb: number | null | undefined } | undefined;
    if (!swap) return null;
    // Off as the kernel shows it: nothing in /proc/swaps and SwapTotal 0.
    const { areas, totalKb } = swap;
    return areas.length === 0 && totalKb === 0
      ? null
      : `swap on: ${areas.map((a) => a.trim().split(/\s+/)[0]).join(', ') || 'no area listed'} (SwapTotal ${totalKb ?? 'unread'} kB)`;
  },
};
