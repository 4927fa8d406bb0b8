// /proc/meminfo as proc(5) describes it: "Name:  value kB" per line, a few
// counts without a unit (HugePages_*), names with parentheses (Active(anon)).
import { describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { liveFixtureHosts } from '../helpers/live-fixture-host.js';

/** Live hosts over fixture roots holding `files`, and an empty folder for an image host. */
const { live, work } = liveFixtureHosts('observe-');
import { parseMeminfo, readMeminfo } from '../../src/observe/meminfo.js';

describe('meminfo', () => {
  it('reads kB fields', () => {
    const m = parseMeminfo('MemTotal:        2030036 kB\nSwapTotal:         65532 kB\nHugePages_Total:       0\n');
    expect(m.get('MemTotal')).toBe(2030036);
    expect(m.get('SwapTotal')).toBe(65532);
    expect(m.get('HugePages_Total')).toBe(0);
  });
});

describe('meminfo, more forms', () => {
  it('names with parentheses and digits; a line without a number is no field', () => {
    const m = parseMeminfo('Active(anon):     123456 kB\nDirectMap4k:  2048 kB\nbroken line\nEmpty:\n');
    expect([...m]).toEqual([
      ['Active(anon)', 123456],
      ['DirectMap4k', 2048],
    ]);
  });
  it('readMeminfo reads a live host; an image refuses, the build machine being no answer', async () => {
    expect((await readMeminfo(live({ 'proc/meminfo': 'MemTotal:  4 kB\n' }))).get('MemTotal')).toBe(4);
    expect((await readMeminfo(live({}))).size).toBe(0);
    await expect(readMeminfo(new Host({ root: work }))).rejects.toThrow(/needs a running host/);
  });
});
