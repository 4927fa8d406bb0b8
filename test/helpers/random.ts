// A small seeded generator (mulberry32) for tests that generate their
// inputs, so a failure names a value that can be replayed from its seed.
// (test/boot/lib/generate.mjs keeps its own: the farm runs as plain node.)

export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One element of `xs`, drawn with `r`. */
export const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
