// SwapOff's promise kind (promises.ts): the plan's words, and the judge of a
// booted host whose /proc/swaps lines (below the header, as the kernel prints
// them: Filename, Type, Size, Used, Priority) and SwapTotal a tier recorded.
import { describe, expect, it } from 'vitest';
import { SWAP_KIND, SWAP_PROMISE } from '../../../src/resources/swap-off/promises.js';
import type { Promised } from '../../../src/promises.js';

const p: Promised = { id: SWAP_PROMISE, kind: 'swap', subject: 'swap', expect: 'off' };

describe('the swap promise', () => {
  it('is one promise, worded "swap off"', () => {
    expect(SWAP_PROMISE).toBe('swap:off');
    expect(SWAP_KIND.describe(p)).toBe('swap off');
  });

  it('holds when /proc/swaps lists nothing and SwapTotal is 0', () => {
    expect(SWAP_KIND.judge(p, { swap: { areas: [], totalKb: 0 } })).toBeNull();
  });

  it('is broken by an area, named by its file name, with SwapTotal', () => {
    const areas = [
      '/swapfile                               file\t\t1048572\t\t0\t\t-2',
      '/dev/zram0                              partition\t2009088\t\t0\t\t100',
    ];
    expect(SWAP_KIND.judge(p, { swap: { areas, totalKb: 3057660 } })).toBe('swap on: /swapfile, /dev/zram0 (SwapTotal 3057660 kB)');
  });

  it('SwapTotal above 0 or unread with no area listed is not off either', () => {
    expect(SWAP_KIND.judge(p, { swap: { areas: [], totalKb: 4 } })).toBe('swap on: no area listed (SwapTotal 4 kB)');
    expect(SWAP_KIND.judge(p, { swap: { areas: [], totalKb: null } })).toBe('swap on: no area listed (SwapTotal unread kB)');
  });

  it('a tier without a kernel of its own records no swap: nothing to judge', () => {
    expect(SWAP_KIND.judge(p, { ports: new Map() })).toBeNull();
  });
});
