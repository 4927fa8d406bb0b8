import { describe, expect, it } from 'vitest';
import {
  commentOutLines,
  disabledByUs,
  FSTAB_MARKER,
  parseFstab,
  parseFstabDevice,
  swapEntries,
} from '../src/swap/fstab.js';
import { parseProcSwaps } from '../src/swap/proc-swaps.js';

const FSTAB = [
  '# /etc/fstab: static file system information.',
  '#',
  '# <file system> <mount point>   <type>  <options>       <dump>  <pass>',
  'UUID=0a1b2c3d-1111-2222-3333-444455556666 /               ext4    errors=remount-ro 0       1',
  '# swap was on /dev/sda5 during installation',
  'UUID=9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff none            swap    sw              0       0',
  '/swapfile\tnone\tswap\tsw\t0\t0',
  'LABEL=SWAP2 none swap defaults',
  'PARTUUID=abcd-02  none  swap  sw,pri=5  0 0',
  '/dev/mapper/vg-swap none swap sw 0',
  '   # /old-swap none swap sw 0 0',
  '#/commented none swap sw 0 0',
  '/swap\\040file none swap sw 0 0',
  'tmpfs /tmp tmpfs defaults 0 0',
  '',
  'proc /proc',
].join('\n');

describe('parseFstab', () => {
  const fstab = parseFstab(FSTAB);
  const swaps = swapEntries(fstab);

  it('finds swap entries by type, with 4, 5 or 6 fields, tabs or spaces', () => {
    expect(swaps.map((e) => e.line)).toEqual([6, 7, 8, 9, 10, 13]);
    expect(swaps.map((e) => e.fieldCount)).toEqual([6, 6, 4, 6, 5, 6]);
    expect(fstab.entries.filter((e) => e.type !== 'swap').map((e) => e.mountPoint)).toEqual(['/', '/tmp']);
  });

  it('names devices by path, UUID=, LABEL= and PARTUUID=', () => {
    expect(swaps.map((e) => e.device)).toEqual([
      { kind: 'uuid', value: '9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff' },
      { kind: 'path', value: '/swapfile' },
      { kind: 'label', value: 'SWAP2' },
      { kind: 'partuuid', value: 'abcd-02' },
      { kind: 'path', value: '/dev/mapper/vg-swap' },
      { kind: 'path', value: '/swap file' },
    ]);
    expect(parseFstabDevice('UUID="quoted-id"')).toEqual({ kind: 'uuid', value: 'quoted-id' });
  });

  it('keeps raw text, options and defaults for missing freq/passno', () => {
    const label = swaps.find((e) => e.device.kind === 'label')!;
    expect(label.raw).toBe('LABEL=SWAP2 none swap defaults');
    expect([label.freq, label.passno]).toEqual([0, 0]);
    expect(swaps.find((e) => e.device.kind === 'partuuid')!.options).toEqual(['sw', 'pri=5']);
  });

  it('ignores commented lines, also with leading blanks, and reports malformed lines', () => {
    expect(swaps.some((e) => e.raw.includes('old-swap') || e.raw.includes('/commented'))).toBe(false);
    expect(fstab.malformed).toEqual([{ line: 16, raw: 'proc /proc', reason: '2 fields; libmount wants at least 3 (source, target, type)' }]);
  });
});

describe('commentOutLines', () => {
  it('comments exactly the swap lines, every other byte identical', () => {
    const lines = swapEntries(parseFstab(FSTAB)).map((e) => e.line);
    const out = commentOutLines(FSTAB, lines);
    // Removing the marker lines and the added "#" gives the original back.
    const restored = out
      .split('\n')
      .filter((l) => l !== FSTAB_MARKER)
      .map((l, i) => (lines.includes(i + 1) ? l.slice(1) : l))
      .join('\n');
    expect(restored).toBe(FSTAB);
    expect(swapEntries(parseFstab(out))).toEqual([]);
    expect(out.split('\n').filter((l) => l === FSTAB_MARKER)).toHaveLength(6);
    expect(out).toContain(`${FSTAB_MARKER}\n#/swapfile\tnone\tswap\tsw\t0\t0\n`);
    // root and tmpfs lines survive untouched
    expect(parseFstab(out).entries.map((e) => e.raw)).toEqual(parseFstab(FSTAB).entries.filter((e) => e.type !== 'swap').map((e) => e.raw));
  });

  it('keeps a missing final newline and CRLF endings', () => {
    const text = 'UUID=x / ext4 defaults 0 1\r\n/swapfile none swap sw 0 0\r\ntmpfs /tmp tmpfs defaults 0 0';
    const out = commentOutLines(text, [2]);
    expect(out).toBe(`UUID=x / ext4 defaults 0 1\r\n${FSTAB_MARKER}\r\n#/swapfile none swap sw 0 0\r\ntmpfs /tmp tmpfs defaults 0 0`);
    expect(out.endsWith('\n')).toBe(false);
  });

  it('is deterministic and a no-op the second time', () => {
    const text = '/swapfile none swap sw 0 0\n';
    const once = commentOutLines(text, swapEntries(parseFstab(text)).map((e) => e.line));
    expect(commentOutLines(text, [1])).toBe(once);
    expect(commentOutLines(once, swapEntries(parseFstab(once)).map((e) => e.line))).toBe(once);
    // Asking to comment an already-commented line changes nothing.
    expect(commentOutLines(once, [1, 2])).toBe(once);
  });

  it('finds lines it disabled earlier', () => {
    const text = 'UUID=r / ext4 defaults 0 1\n/swapfile none swap sw 0 0\n';
    const out = commentOutLines(text, [2]);
    const back = disabledByUs(out);
    expect(back.map((e) => [e.line, e.device.value])).toEqual([[3, '/swapfile']]);
    expect(disabledByUs(text)).toEqual([]);
  });
});

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
