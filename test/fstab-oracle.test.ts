// fstab as libmount reads it: our parser against util-linux's findmnt over a
// corpus of fstab forms (written here, line by line, for the odd cases).
// findmnt --fstab -F FILE lists each entry libmount accepted, in file order,
// and warns "parse error at line N -- ignored" for each line it refused.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { parseFstab, swapEntries, commentOutLines, FSTAB_MARKER } from '../src/swap/fstab.js';

const CORPUS = [
  '# /etc/fstab: static file system information.',
  'UUID=0a1b2c3d-1111-2222-3333-444455556666 / ext4 errors=remount-ro 0 1',
  '/dev/sdb3 none swap',
  'UUID=9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff none swap sw 0 0 # comment',
  '/swapfile\tnone\tswap\tsw\t0\t0',
  'LABEL=SWAP2 none swap defaults',
  'PARTUUID=abcd-02  none  swap  sw,pri=5  0 0',
  'PARTLABEL=swp none swap sw 0',
  '/dev/mapper/vg-swap none swap sw 0',
  '   # indented comment /dev/x none swap',
  '\t#tab comment',
  '#/commented none swap sw 0 0',
  '/swap\\040file none swap sw 0 0',
  '/dev/a',
  '/dev/b /mnt',
  '/dev/c /x ext4 defaults 0 2 extra words here',
  '/dev/d /y ext4 defaults x 1',
  '/dev/e /z ext4 defaults 1 x',
  '/dev/f none swap sw#c 0 0',
  '/dev/g none swap sw 0 0#x',
  'LABEL=a\\tb none swap',
  '/dev/h none swap,x sw',
  '/dev/i none swap sw 99999999999 0',
  '/dev/j none swap sw -1 +2',
  '/dev/k none swap sw 1,2 0',
  '/dev/l none swap sw 0 0\t# c',
  '/dev/m /a\\ b ext4',
  '/dev/n none s\\167ap sw',
  '/dev/o none swap\\0',
  '/dev/p none sw\\x61p',
  ' /dev/q none swap',
  '/dev/r none swap defaults\\',
  '/dev/s none swap sw 0x1 0',
  '/dev/t none swap sw 0 2147483648',
  '/dev/u none swap\r',
  '/dev/v none swap\r\r',
  '/dev/w none swap\v',
  '\v/dev/x none swap',
  '/dev/y\vnone swap',
  '/dev/z none swap sw 0 0 0',
  '/dev/aa none swap sw 00 -0',
  '/dev/ab none swap sw 0 0,',
  '/dev/ac none swap sw 0 ',
  '/dev/ad none SWAP sw',
  '/dev/ae none\\011swap x',
  'UUID=\\061234 none swap',
  '/dev/af none swap noauto 0 0',
  '/dev/ag none swap sw 0 99999999999999999999999',
  // Outside a long: an error only where more fields follow (libmount's "s && *s && rc").
  '/dev/ai none swap sw 9223372036854775808 0',
  '/dev/aj none swap sw 9223372036854775808',
  '/dev/ak none swap sw -9223372036854775809 0',
  '/dev/al none swap sw 0 9223372036854775808 extra',
  '/dev/am none swap sw 0 -9223372036854775809',
  '/dev/an none swap sw 9223372036854775807 0',
  'tmpfs /tmp tmpfs defaults 0 0',
  '    ',
  '',
  '/dev/ah none swap',
].join('\n');

function decode(s: string): string {
  return s.replace(/\\x([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** findmnt's view: entries in order, and the lines it refused. */
function findmnt(text: string): { entries: string[][]; errors: number[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'fstab-oracle-'));
  try {
    const file = path.join(dir, 'fstab');
    writeFileSync(file, text, 'latin1');
    const r = spawnSync('findmnt', ['--fstab', '-F', file, '-P', '-o', 'SOURCE,TARGET,FSTYPE,OPTIONS,FREQ,PASSNO'], { encoding: 'latin1' });
    const entries = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => [...l.matchAll(/([A-Z]+)="([^"]*)"/g)].map((m) => decode(m[2]!)));
    const errors = [...r.stderr.matchAll(/parse error at line (\d+)/g)].map((m) => Number(m[1]));
    return { entries, errors };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const TAG = { uuid: 'UUID', label: 'LABEL', partuuid: 'PARTUUID', partlabel: 'PARTLABEL' } as const;

describe('fstab against findmnt (util-linux libmount)', () => {
  const haveFindmnt = (() => {
    try {
      execFileSync('findmnt', ['--version']);
      return true;
    } catch {
      return false;
    }
  })();

  it('findmnt is installed (the oracle must run, not be skipped)', () => {
    expect(haveFindmnt).toBe(true);
  });

  it('accepts and refuses the same lines, and reads the same six fields from each', () => {
    const oracle = findmnt(CORPUS);
    const ours = parseFstab(CORPUS);
    expect(ours.malformed.map((m) => m.line)).toEqual(oracle.errors);
    const mine = ours.entries.map((e) => [
      e.device.kind in TAG ? `${TAG[e.device.kind as keyof typeof TAG]}=${e.device.value}` : e.device.value,
      e.mountPoint,
      e.type,
      e.options.join(','),
      String(e.freq),
      String(e.passno),
    ]);
    expect(mine).toEqual(oracle.entries);
    // The corpus really exercises both sides.
    expect(oracle.entries.length).toBeGreaterThan(30);
    expect(oracle.errors.length).toBeGreaterThan(8);
  });

  it('the swap lines are the entries findmnt lists with type swap', () => {
    const oracleSwap = findmnt(CORPUS).entries.filter((e) => e[2] === 'swap').map((e) => e[0]);
    const ours = swapEntries(parseFstab(CORPUS));
    expect(ours.map((e) => (e.device.kind in TAG ? `${TAG[e.device.kind as keyof typeof TAG]}=${e.device.value}` : e.device.value))).toEqual(oracleSwap);
    // The two cases: three fields, and a trailing "# comment".
    expect(ours.map((e) => e.spec)).toContain('/dev/sdb3');
    expect(ours.map((e) => e.spec)).toContain('UUID=9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff');
  });

  it('after commenting out our swap lines findmnt lists no swap, and only "#" and marker lines were added', () => {
    const lines = swapEntries(parseFstab(CORPUS)).map((e) => e.line);
    const out = commentOutLines(CORPUS, lines);
    expect(findmnt(out).entries.filter((e) => e[2] === 'swap')).toEqual([]);
    const restored = out
      .split('\n')
      .filter((l) => l !== FSTAB_MARKER && l !== FSTAB_MARKER + '\r')
      .map((l, i) => (lines.includes(i + 1) ? l.slice(1) : l))
      .join('\n');
    expect(restored).toBe(CORPUS);
    // Every non-swap entry findmnt read before, it still reads.
    expect(findmnt(out).entries).toEqual(findmnt(CORPUS).entries.filter((e) => e[2] !== 'swap'));
  });
});
