// PreviousCluster's ops module carries one function, humanBytes: the plan's sizes in binary units.
// The expectations come from coreutils' numfmt (--to=iec-i, nearest rounding, one decimal), the
// program an operator would use to read the same byte count, plus hand-worked edges where the
// module's wording differs from numfmt's by design (whole bytes, no unit past TiB).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { humanBytes } from '../../../src/resources/previous-cluster/ops.js';

function numfmt(n: number): string {
  const out = execFileSync('numfmt', ['--to=iec-i', '--round=nearest', '--format=%.1f', String(n)], { encoding: 'utf8' }).trim();
  const m = /^([0-9.]+)([KMGT])i$/.exec(out);
  if (!m) throw new Error(`numfmt printed ${out}`);
  return `${m[1]} ${m[2]}iB`;
}

describe('humanBytes', () => {
  it('prints a count below 1 KiB as whole bytes', () => {
    expect(humanBytes(0)).toBe('0 bytes');
    expect(humanBytes(1)).toBe('1 bytes');
    expect(humanBytes(1023)).toBe('1023 bytes');
  });

  it.each([1024, 1536, 4096, 10_000, 1_048_576, 5_000_000, 734_003_200, 3 * 1024 ** 3, 1024 ** 4, 7.5 * 1024 ** 4])(
    '%d bytes reads as numfmt reads it',
    (n) => {
      expect(humanBytes(n)).toBe(numfmt(n));
    },
  );

  it('stops at TiB: a PiB is 1024.0 TiB', () => {
    expect(humanBytes(1024 ** 5)).toBe('1024.0 TiB');
  });

  it('divides until the value is under 1024, so just under a MiB stays in KiB', () => {
    // 1048575 / 1024 = 1023.999..., one decimal rounds it to 1024.0
    expect(humanBytes(1_048_575)).toBe('1024.0 KiB');
  });
});
