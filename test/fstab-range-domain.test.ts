// A freq or passno outside a long, as util-linux's libmount refuses it: the
// refused line's reason must name the field libmount failed on, with its text
// as written, so the operator can find it. Which field that is comes from
// findmnt, not from our parser: findmnt refuses the line, and accepts it once
// that field alone is set to 0.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseFstab } from '../src/swap/fstab.js';

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
