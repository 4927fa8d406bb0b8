// The VM suite's partitioned disk (test/vm/lib/mbr.mjs), read back by
// util-linux's partx (libblkid, the reader udev and the kernel's names agree
// with): the partitions where the helper says, type 0x82, and the PARTUUIDs
// an fstab line names ("SIGNATURE-NN").
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
// @ts-expect-error plain ESM without types
import { writeMbrImage } from './vm/lib/mbr.mjs';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('an MBR disk image for swap partitions', () => {
  it('partx reads each partition at the offset the helper returns, with its PARTUUID and the swap type', () => {
    const d = mkdtempSync(path.join(tmpdir(), 'vm-disk-'));
    dirs.push(d);
    const img = path.join(d, 'vdb.img');
    const parts = writeMbrImage(img, 'c0ffee01', [16, 8, 4]);
    expect(statSync(img).size).toBe((1 + 16 + 8 + 4) * 1024 * 1024);
    const out = execFileSync('partx', ['--raw', '--noheadings', '-o', 'NR,START,SECTORS,UUID,TYPE', img], { encoding: 'utf8' });
    const rows = out
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    expect(rows).toEqual(
      parts.map((p: { offset: number; size: number }, i: number) => [`${i + 1}`, `${p.offset / 512}`, `${p.size / 512}`, `c0ffee01-0${i + 1}`, '0x82']),
    );
    expect(execFileSync('blkid', ['-p', '-s', 'PTTYPE', '-s', 'PTUUID', '-o', 'value', img], { encoding: 'utf8' }).trim().split('\n')).toEqual([
      'c0ffee01',
      'dos',
    ]);
  });

  it('refuses what an MBR cannot hold', () => {
    const d = mkdtempSync(path.join(tmpdir(), 'vm-disk-'));
    dirs.push(d);
    expect(() => writeMbrImage(path.join(d, 'x.img'), 'c0ffee01', [1, 1, 1, 1, 1])).toThrow(/1 to 4/);
    expect(() => writeMbrImage(path.join(d, 'x.img'), 'C0FFEE', [1])).toThrow(/8 hex digits/);
  });
});
