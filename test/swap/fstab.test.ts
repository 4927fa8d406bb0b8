import { beforeAll, describe, expect, it } from 'vitest';
import { commentOutLines, disabledByUs, FSTAB_MARKER, parseFstab, parseFstabDevice, swapEntries } from '../../src/swap/fstab.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { execFileSync } from 'node:child_process';

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
  // Parsed in beforeAll, not while the file is collected: a parser that throws then fails these tests (Stryker's vitest
  // runner counts a file that fails to load as a surviving mutant).
  let fstab: ReturnType<typeof parseFstab>;
  let swaps: ReturnType<typeof swapEntries>;
  beforeAll(() => {
    fstab = parseFstab(FSTAB);
    swaps = swapEntries(fstab);
  });

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
    expect(parseFstab(out).entries.map((e) => e.raw)).toEqual(
      parseFstab(FSTAB)
        .entries.filter((e) => e.type !== 'swap')
        .map((e) => e.raw),
    );
  });

  it('keeps a missing final newline and CRLF endings', () => {
    const text = 'UUID=x / ext4 defaults 0 1\r\n/swapfile none swap sw 0 0\r\ntmpfs /tmp tmpfs defaults 0 0';
    const out = commentOutLines(text, [2]);
    expect(out).toBe(`UUID=x / ext4 defaults 0 1\r\n${FSTAB_MARKER}\r\n#/swapfile none swap sw 0 0\r\ntmpfs /tmp tmpfs defaults 0 0`);
    expect(out.endsWith('\n')).toBe(false);
  });

  it('is deterministic and a no-op the second time', () => {
    const text = '/swapfile none swap sw 0 0\n';
    const once = commentOutLines(
      text,
      swapEntries(parseFstab(text)).map((e) => e.line),
    );
    expect(commentOutLines(text, [1])).toBe(once);
    expect(
      commentOutLines(
        once,
        swapEntries(parseFstab(once)).map((e) => e.line),
      ),
    ).toBe(once);
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

// ---------------------------------------------------------------------------
// More fstab rules, each from fstab(5), libmount or
// libblkid: NUL bytes and line refusals against findmnt, tag quoting as
// libblkid's blkid_parse_tag_string reads it, what counts as a device path,
// words after the 6th field, and which commented lines are ours to claim
// (that list feeds swap-file deletion, so a user's own comment must never
// be taken for ours).
/** Line numbers findmnt refuses, and the sources it accepts, in order. */
function findmnt(text: string): { sources: string[]; freqs: number[]; errors: number[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'fstab-domain-'));
  try {
    const file = path.join(dir, 'fstab');
    writeFileSync(file, text, 'latin1');
    const r = spawnSync('findmnt', ['--fstab', '-F', file, '-P', '-o', 'SOURCE,FREQ'], { encoding: 'latin1' });
    const rows = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => /^SOURCE="(.*)" FREQ="(-?\d+)"$/.exec(l)!);
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

// ---------------------------------------------------------------------------
// fstab as libmount reads it: our parser against util-linux's findmnt over a
// corpus of fstab forms (written here, line by line, for the odd cases).
// findmnt --fstab -F FILE lists each entry libmount accepted, in file order,
// and warns "parse error at line N -- ignored" for each line it refused.
describe('fstab against findmnt over a corpus', () => {
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
      const oracleSwap = findmnt(CORPUS)
        .entries.filter((e) => e[2] === 'swap')
        .map((e) => e[0]);
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
});

// ---------------------------------------------------------------------------
// A freq or passno outside a long, as util-linux's libmount refuses it: the
// refused line's reason must name the field libmount failed on, with its text
// as written, so the operator can find it. Which field that is comes from
// findmnt, not from our parser: findmnt refuses the line, and accepts it once
// that field alone is set to 0.
/** The line numbers findmnt --fstab -F refuses ("parse error at line N -- ignored"). */
function refusedByFindmnt(lines: string[]): number[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'fstab-range-'));
  try {
    const file = path.join(dir, 'fstab');
    writeFileSync(file, lines.join('\n') + '\n', 'latin1');
    const r = spawnSync('findmnt', ['--fstab', '-F', file, '-P', '-o', 'SOURCE'], { encoding: 'latin1' });
    if (r.error) throw r.error;
    return [...r.stderr.matchAll(/parse error at line (\d+)/g)].map((m) => Number(m[1]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// 2^63 and -(2^63 + 1): the first integers on either side outside a long.
const ABOVE = '9223372036854775808';
const BELOW = '-9223372036854775809';

/** fstab fields: spec, target, type, options, freq, passno, then words libmount ignores. */
type Fields = [string, string, string, string, string, string, ...string[]];
const line = (f: Fields) => f.join(' ');

describe('a freq or passno outside a long', () => {
  const cases: Array<{ fields: Fields; field: 'freq' | 'passno' }> = [
    { fields: ['/dev/f1', 'none', 'swap', 'sw', ABOVE, '0'], field: 'freq' },
    { fields: ['/dev/f2', 'none', 'swap', 'sw', BELOW, '0', '#', 'old', 'swap'], field: 'freq' },
    { fields: ['/dev/p1', 'none', 'swap', 'sw', '0', ABOVE, 'x'], field: 'passno' },
    { fields: ['/dev/p2', 'none', 'swap', 'sw', '0', BELOW, '#', 'comment'], field: 'passno' },
  ];

  for (const { fields, field } of cases) {
    it(`${line(fields)}: libmount fails on the ${field}, and the reason names it`, () => {
      const at = field === 'freq' ? 4 : 5;
      const repaired = [...fields] as Fields;
      repaired[at] = '0';
      // The oracle: refused as written, accepted with only that field repaired.
      expect(refusedByFindmnt([line(fields), line(repaired)])).toEqual([1]);

      const ours = parseFstab(`${line(fields)}\n${line(repaired)}\n`);
      expect(ours.entries.map((e) => e.spec)).toEqual([repaired[0]]);
      expect(ours.malformed).toEqual([
        { line: 1, raw: line(fields), reason: `${field} "${fields[at]}" is outside a long (strtol's ERANGE) and more fields follow it` },
      ]);
    });
  }
});
