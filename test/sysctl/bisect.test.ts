// minimalRemoval (Zeller's ddmin) over stand-in oracles whose answer is known:
// a set of removed lines passes when it holds every needed line (or one of
// several alternatives). The result must pass and be 1-minimal, which is
// checked by asking the oracle again without each of its lines.
import { describe, expect, it } from 'vitest';
import { minimalRemoval, type BatchOracle } from '../../src/sysctl/bisect.js';

describe('bisection (ddmin) over a stand-in oracle', () => {
  const oracle = (needed: number[], log: number[][][]) => async (sets: number[][]) => {
    log.push(sets);
    return sets.map((s) => needed.every((x) => s.includes(x)));
  };
  it('finds the one line', async () => {
    const log: number[][][] = [];
    expect((await minimalRemoval([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], oracle([7], log)))?.lines).toEqual([7]);
  });
  it('finds two lines that are both needed', async () => {
    const log: number[][][] = [];
    expect((await minimalRemoval([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], oracle([3, 8], log)))?.lines.sort((a, b) => a - b)).toEqual([3, 8]);
  });
  it('none when removing every line still fails', async () => {
    expect(await minimalRemoval([1, 2, 3], async (sets) => sets.map(() => false))).toBeNull();
  });
});

describe('minimalRemoval: what it returns is right and 1-minimal', () => {
  const needsAll =
    (needed: number[]): BatchOracle<number> =>
    async (sets) =>
      sets.map((s) => needed.every((x) => s.includes(x)));
  const needsAny =
    (alternatives: number[][]): BatchOracle<number> =>
    async (sets) =>
      sets.map((s) => alternatives.some((alt) => alt.every((x) => s.includes(x))));

  async function expectMinimal(candidates: number[], passes: BatchOracle<number>): Promise<number[]> {
    const r = await minimalRemoval(candidates, passes);
    expect(r).not.toBeNull();
    const [ok] = await passes([r!.lines]);
    expect(ok).toBe(true);
    const without = await passes(r!.lines.map((x) => r!.lines.filter((y) => y !== x)));
    expect(
      without.every((v) => !v),
      JSON.stringify(r),
    ).toBe(true);
    return r!.lines;
  }

  it('every pair and triple of needed lines among 1..12 is found exactly', async () => {
    const all = Array.from({ length: 12 }, (_, i) => i + 1);
    for (const needed of [[1], [12], [1, 12], [5, 6], [2, 7, 11], [3, 4, 5]]) {
      expect(
        (await expectMinimal(all, needsAll(needed))).sort((a, b) => a - b),
        JSON.stringify(needed),
      ).toEqual(needed);
    }
  });

  it('with two ways to pass, one of them, whole', async () => {
    const lines = await expectMinimal([1, 2, 3, 4, 5, 6, 7, 8], needsAny([[2, 6], [7]]));
    expect([[2, 6], [7]]).toContainEqual(lines.sort((a, b) => a - b));
  });

  it('a single candidate is returned as it is, after one call', async () => {
    expect(await minimalRemoval(['only'], async (sets) => sets.map(() => true))).toEqual({ lines: ['only'], calls: 1 });
  });

  it('stops at the call limit, still returning a set that passes', async () => {
    const all = Array.from({ length: 64 }, (_, i) => i);
    const calls: number[] = [];
    const oracle: BatchOracle<number> = async (sets) => {
      calls.push(sets.length);
      return sets.map((s) => [3, 40].every((x) => s.includes(x)));
    };
    const r = await minimalRemoval(all, oracle, 2);
    expect(r!.calls).toBe(2);
    expect(calls).toHaveLength(2);
    expect([3, 40].every((x) => r!.lines.includes(x))).toBe(true);
  });
});
