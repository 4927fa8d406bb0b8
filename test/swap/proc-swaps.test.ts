// /proc/swaps as the kernel prints it (mm/swapfile.c swap_show): a header,
// then the file name through seq_file's mangle_path (space, tab, newline and
// backslash as \\ooo octal), type, size and used in KiB, and priority.
import { describe, expect, it } from 'vitest';
import { parseProcSwaps } from '../../src/swap/proc-swaps.js';

describe('parseProcSwaps', () => {
  it('reads file, type and sizes, decoding escaped names', () => {
    const text = [
      'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority',
      '/swapfile                               file\t\t1048572\t\t0\t\t-2',
      '/dev/zram0                              partition\t4038652\t\t1024\t\t100',
      '/swap\\040file                           file\t\t524284\t\t0\t\t-3',
      '',
    ].join('\n');
    expect(parseProcSwaps(text)).toEqual([
      { filename: '/swapfile', type: 'file', sizeKb: 1048572, usedKb: 0, priority: -2 },
      { filename: '/dev/zram0', type: 'partition', sizeKb: 4038652, usedKb: 1024, priority: 100 },
      { filename: '/swap file', type: 'file', sizeKb: 524284, usedKb: 0, priority: -3 },
    ]);
    expect(parseProcSwaps('Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n')).toEqual([]);
  });
});

describe('parseProcSwaps, names and short lines', () => {
  const HEAD = 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n';
  it('decodes a tab, a newline and a backslash in the name, and keeps a name of several words', () => {
    const text = HEAD + '/a\\011b\\012c\\134d file 8 0 -2\n/x y file 16 4 5\n';
    expect(parseProcSwaps(text).map((s) => [s.filename, s.sizeKb, s.usedKb, s.priority])).toEqual([
      ['/a\tb\nc\\d', 8, 0, -2],
      ['/x y', 16, 4, 5],
    ]);
  });
  it('a line with fewer than five fields is no swap area; the header is never one', () => {
    expect(parseProcSwaps(HEAD + '/swapfile file 8 0\n')).toEqual([]);
    expect(parseProcSwaps('/swapfile file 8 0 -2\n')).toEqual([]);
  });
});
