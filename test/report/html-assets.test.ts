// The fleet page's row tints, seen as a deuteranope sees them: Machado,
// Oliveira and Fernandes' (2009) simulation matrix for deuteranopia (severity
// 1.0) on linear sRGB, then CIELAB (D65) and the CIE76 colour difference.
// Every two verdicts' tints must stay at least 12 apart (about five times a
// just-noticeable difference) in normal vision and under the simulation.
// The symbol and word per verdict are checked in the browser test; this is
// the colour alone.
import { describe, expect, it } from 'vitest';
import { pageStyle, VERDICT_LOOK } from '../../src/report/html-assets.js';
import { VERDICTS } from '../../src/report/document.js';

const DEUTERANOPIA = [
  [0.367322, 0.860646, -0.227968],
  [0.280085, 0.672501, 0.047413],
  [-0.01182, 0.04294, 0.968881],
];
const IDENTITY = [
  [1, 0, 0],
  [0, 1, 0],
  [0, 0, 1],
];

const linear = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
function lab([r, g, b]: number[]): number[] {
  const x = (0.4124 * r! + 0.3576 * g! + 0.1805 * b!) / 0.95047;
  const y = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  const z = (0.0193 * r! + 0.1192 * g! + 0.9505 * b!) / 1.08883;
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}
function seen(hex: string, m: number[][]): number[] {
  const rgb = [1, 3, 5].map((i) => linear(parseInt(hex.slice(i, i + 2), 16) / 255));
  return lab(m.map((row) => Math.min(1, Math.max(0, row[0]! * rgb[0]! + row[1]! * rgb[1]! + row[2]! * rgb[2]!))));
}
const distance = (a: number[], b: number[]) => Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);

describe('the verdict tints', () => {
  for (const [vision, m] of [
    ['normal vision', IDENTITY],
    ['deuteranopia', DEUTERANOPIA],
  ] as const)
    it(`differ by at least 12 (CIE76) between every two verdicts in ${vision}`, () => {
      const tints = Object.entries(VERDICT_LOOK).map(([v, l]) => [v, seen(l.tint, m as number[][])] as const);
      expect(tints).toHaveLength(6);
      const close: string[] = [];
      for (let i = 0; i < tints.length; i++)
        for (let j = i + 1; j < tints.length; j++) {
          const d = distance(tints[i]![1], tints[j]![1]);
          if (d < 12) close.push(`${tints[i]![0]}/${tints[j]![0]}: ${d.toFixed(1)}`);
        }
      expect(close).toEqual([]);
    });

  it('are told apart by a symbol too, one per verdict', () => {
    const symbols = Object.values(VERDICT_LOOK).map((l) => l.symbol);
    expect(new Set(symbols).size).toBe(symbols.length);
  });
});

describe('the page style', () => {
  it('tints the rows, tiles and legend of every verdict the report knows, and no other', () => {
    const css = pageStyle();
    const tinted = [...css.matchAll(/^tr\.v-([a-z]+) > td \{ background: (#[0-9a-f]{6}); \}/gm)].map((m) => [m[1], m[2]]);
    expect(tinted.map(([v]) => v).sort()).toEqual([...VERDICTS].sort());
    for (const [v, tint] of tinted) expect(css).toContain(`.t-${v} { background: ${tint};`);
    // The failed row's tint, as the palette test measured it.
    expect(tinted).toContainEqual(['failed', '#f2b48a']);
  });
});
