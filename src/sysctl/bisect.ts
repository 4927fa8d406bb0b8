// Finding the culprit by experiment: the smallest set of configuration lines
// whose removal makes a key come out right, found with delta debugging
// (Zeller's ddmin) over the lines the rehearsal may leave out. Pure over an
// oracle that judges many candidate sets at once (one namespace run).

/** For each set of removed lines: does the key come out right without them? */
export type BatchOracle<T> = (removals: T[][]) => Promise<boolean[]>;

/**
 * A 1-minimal subset of `candidates` whose removal passes (removing any one
 * line less fails), or null when removing all of them still fails. The
 * caller knows that removing nothing fails. `limit` caps the oracle calls.
 */
export async function minimalRemoval<T>(candidates: T[], passes: BatchOracle<T>, limit = 64): Promise<{ lines: T[]; calls: number } | null> {
  let calls = 1;
  const [all] = await passes([candidates]);
  if (!all) return null;
  let set = candidates;
  let n = 2;
  while (set.length > 0 && calls < limit) {
    if (set.length === 1) break;
    const size = Math.ceil(set.length / n);
    const chunks: T[][] = [];
    for (let i = 0; i < set.length; i += size) chunks.push(set.slice(i, i + size));
    const complements = chunks.map((c) => set.filter((x) => !c.includes(x)));
    calls++;
    const verdicts = await passes([...chunks, ...complements]);
    const chunk = chunks.findIndex((_, i) => verdicts[i]);
    if (chunk >= 0) {
      set = chunks[chunk]!;
      n = 2;
      continue;
    }
    const comp = complements.findIndex((_, i) => verdicts[chunks.length + i]);
    if (comp >= 0 && chunks.length > 2) {
      set = complements[comp]!;
      n = Math.max(n - 1, 2);
      continue;
    }
    if (comp >= 0) {
      set = complements[comp]!;
      n = 2;
      continue;
    }
    if (n >= set.length) break;
    n = Math.min(n * 2, set.length);
  }
  return { lines: set, calls };
}
