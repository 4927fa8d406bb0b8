// fstab rules the main tests leave open, each from fstab(5), libmount or
// libblkid: NUL bytes and line refusals against findmnt, tag quoting as
// libblkid's blkid_parse_tag_string reads it, what counts as a device path,
// words after the 6th field, and which commented lines are ours to claim
// (that list feeds swap-file deletion, so a user's own comment must never
// be taken for ours).
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { commentOutLines, disabledByUs, FSTAB_MARKER, parseFstab, parseFstabDevice, swapEntries } from '../src/swap/fstab.js';

/** Line numbers findmnt refuses, and the sources it accepts, in order. */
function findmnt(text: string): { sources: string[]; freqs: number[]; errors: number[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'fstab-domain-'));
  try {
    const file = path.join(dir, 'fstab');
    writeFileSync(file, text, 'latin1');
    const r = spawnSync('findmnt', ['--fstab', '-F', file, '-P', '-o', 'SOURCE,FREQ'], { encoding: 'latin1' });
    const rows = r.stdout.split('\n').filter(Boolean).map((l) => /^SOURCE="(.*)" FREQ="(-?\d+)"$/.exec(l)!);
    return {
      sources: rows.map((m) => m[1]!),
      freqs: rows.map((m) => Number(m[2])),
      errors: [...r.stderr.matchAll(/parse error at line (\d+)/g)].map((m) => Number(m[1])),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('lines libmount refuses', () => {
  it('a NUL byte anywhere in a line makes findmnt refuse it, and us too', () => {
    const text = '/dev/n\u0000x none swap\n/dev/m none swap sw\u0000 0 0\n/dev/ok none swap\n';
    const oracle = findmnt(text);
    expect(oracle.errors).toEqual([1, 2]);
    const ours = parseFstab(text);
    expect(ours.malformed.map((m) => m.line)).toEqual(oracle.errors);
    expect(ours.entries.map((e) => e.spec)).toEqual(oracle.sources);
    expect(ours.malformed.map((m) => m.reason)).toEqual(['contains a NUL byte', 'contains a NUL byte']);
  });

  it('the reason names what libmount missed: the field count, or which of freq and passno is not a number', () => {
    const text = ['/dev/a', '/dev/b /mnt', '/dev/c none swap sw x 0', '/dev/d none swap sw 0 y'].join('\n');
    expect(findmnt(text).errors).toEqual([1, 2, 3, 4]);
    expect(parseFstab(text).malformed.map((m) => m.reason)).toEqual([
      '1 field; libmount wants at least 3 (source, target, type)',
      '2 fields; libmount wants at least 3 (source, target, type)',
      'freq "x" is not a decimal integer',
      'passno "y" is not a decimal integer',
    ]);
  });

  it('a freq just inside a long wraps to an int as libmount stores it', () => {
    // -(2^63 - 1) is a valid long; stored in an int it is 1 (findmnt prints FREQ="1").
    const text = '/dev/c none swap sw -9223372036854775807 0\n/dev/d none swap sw -9223372036854775808 0\n';
    const oracle = findmnt(text).freqs;
    expect(oracle).toEqual([1, 0]);
    expect(parseFstab(text).entries.map((e) => e.freq)).toEqual(oracle);
  });
});

describe('the source field', () => {
  it('libblkid strips one pair of matching quotes around a tag value, and nothing else', () => {
    expect(parseFstabDevice('UUID="abc"')).toEqual({ kind: 'uuid', value: 'abc' });
    expect(parseFstabDevice("LABEL='my-swap'")).toEqual({ kind: 'label', value: 'my-swap' });
    expect(parseFstabDevice('LABEL=""')).toEqual({ kind: 'label', value: '' });
    // A lone quote is one character, not a quoted empty value.
    expect(parseFstabDevice('LABEL="')).toEqual({ kind: 'label', value: '"' });
    expect(parseFstabDevice("LABEL='")).toEqual({ kind: 'label', value: "'" });
    // Quotes that do not pair up stay.
    expect(parseFstabDevice('LABEL="x')).toEqual({ kind: 'label', value: '"x' });
    expect(parseFstabDevice('LABEL=x"')).toEqual({ kind: 'label', value: 'x"' });
    expect(parseFstabDevice("LABEL='x")).toEqual({ kind: 'label', value: "'x" });
    expect(parseFstabDevice("LABEL=x'")).toEqual({ kind: 'label', value: "x'" });
    expect(parseFstabDevice('LABEL="x\'')).toEqual({ kind: 'label', value: '"x\'' });
    expect(parseFstabDevice('LABEL=\'x"')).toEqual({ kind: 'label', value: '\'x"' });
  });

  it('only an absolute path is a path; a pseudo source or an unknown tag is "other"', () => {
    expect(parseFstabDevice('/dev/sdb3')).toEqual({ kind: 'path', value: '/dev/sdb3' });
    expect(parseFstabDevice('tmpfs')).toEqual({ kind: 'other', value: 'tmpfs' });
    expect(parseFstabDevice('swapfile')).toEqual({ kind: 'other', value: 'swapfile' });
    expect(parseFstabDevice('uuid=abc')).toEqual({ kind: 'other', value: 'uuid=abc' });
    expect(parseFstabDevice('=abc')).toEqual({ kind: 'other', value: '=abc' });
    // No "=" at all: a name that merely begins with a tag word is no tag.
    expect(parseFstabDevice('LABEL1')).toEqual({ kind: 'other', value: 'LABEL1' });
    expect(parseFstabDevice('PARTLABEL=swp')).toEqual({ kind: 'partlabel', value: 'swp' });
  });

  it('words after the 6th field are kept aside (libmount ignores them), and only then', () => {
    const fstab = parseFstab('/dev/c /x ext4 defaults 0 2 extra words here\n/dev/d /y ext4 defaults 0 2\n/dev/e none swap sw 0 0 #note\n');
    expect(fstab.entries.map((e) => e.trailing)).toEqual(['extra words here', undefined, '#note']);
    expect(fstab.entries.map((e) => e.fieldCount)).toEqual([6, 6, 6]);
  });
});

describe('lines we disabled earlier', () => {
  it('a swap line the user commented out himself is not ours, even right after another comment', () => {
    const text = ['# swap was on /dev/sda5 during installation', '#/swapfile none swap sw 0 0', '#', '# /other none swap sw 0 0', ''].join('\n');
    expect(disabledByUs(text)).toEqual([]);
    // With our marker above it, it is ours.
    const ours = ['#', FSTAB_MARKER, '#/swapfile none swap sw 0 0', ''].join('\n');
    expect(disabledByUs(ours).map((e) => [e.line, e.device.value, e.raw])).toEqual([[3, '/swapfile', '#/swapfile none swap sw 0 0']]);
  });

  it('a marker whose line was re-enabled (the "#" removed) claims nothing: that swap is active again', () => {
    const text = [FSTAB_MARKER, '/swapfile none swap sw 0 0', ''].join('\n');
    expect(swapEntries(parseFstab(text)).map((e) => e.spec)).toEqual(['/swapfile']);
    expect(disabledByUs(text)).toEqual([]);
  });

  it('a marker above a commented line that is not swap claims nothing', () => {
    expect(disabledByUs([FSTAB_MARKER, '#tmpfs /tmp tmpfs defaults 0 0', ''].join('\n'))).toEqual([]);
    expect(disabledByUs([FSTAB_MARKER, '#', ''].join('\n'))).toEqual([]);
  });

  it('a marker on the last line, with or without a newline, claims nothing', () => {
    expect(disabledByUs(`/dev/a / ext4 defaults 0 1\n${FSTAB_MARKER}`)).toEqual([]);
    expect(disabledByUs(`/dev/a / ext4 defaults 0 1\n${FSTAB_MARKER}\n`)).toEqual([]);
  });

  it('finds its lines again in a CRLF file', () => {
    const text = 'UUID=r / ext4 defaults 0 1\r\n/swapfile none swap sw 0 0\r\n';
    const out = commentOutLines(text, [2]);
    expect(out).toBe(`UUID=r / ext4 defaults 0 1\r\n${FSTAB_MARKER}\r\n#/swapfile none swap sw 0 0\r\n`);
    expect(disabledByUs(out).map((e) => [e.line, e.device.value])).toEqual([[3, '/swapfile']]);
  });
});
