// ARCHITECTURE.md and CONTRIBUTING.md are the maps everyone follows (issue
// 45): every path they name exists, ARCHITECTURE.md names every folder and
// top-level module of src/, and the file names CONTRIBUTING.md's module list
// gives beside a folder are in that folder.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const read = (f: string) => readFileSync(path.join(REPO, f), 'utf8');
const MAPS = ['ARCHITECTURE.md', 'CONTRIBUTING.md'];

/** Repository paths a map names: a top folder's name, then path characters; placeholders (`<room>`) and globs are not paths. */
function namedPaths(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?<![\w./-])((?:src|test|scripts|schema|contrib|docs|stryker)\/[\w./-]*)/g)) {
    const p = m[1]!.replace(/[.,]+$/, '');
    const next = text[m.index! + m[0].length];
    if (next === '<' || next === '*' || next === '{') continue;
    out.add(p);
  }
  return [...out];
}

/** The lines of a map's module list: they start with src/ (one or more folders or a module, then its description). */
function mapLines(text: string): string[] {
  return text.split('\n').filter((l) => l.startsWith('src/'));
}

function* filesUnder(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) yield* filesUnder(path.join(dir, e.name));
    else yield e.name;
  }
}

describe('the maps match the tree', () => {
  it('finds the paths a map names, and only paths', () => {
    expect(namedPaths('see src/swap/fstab.ts, test/<room>/x and src/a/ b/ (test/helpers/).')).toEqual(['src/swap/fstab.ts', 'src/a/', 'test/helpers/']);
  });

  for (const map of MAPS) {
    it(`every path ${map} names exists`, () => {
      expect(namedPaths(read(map)).filter((p) => !existsSync(path.join(REPO, p)))).toEqual([]);
    });
  }

  it('ARCHITECTURE.md names every folder and top-level module of src/', () => {
    const lines = mapLines(read('ARCHITECTURE.md'));
    const words = new Set(lines.flatMap((l) => l.split(/\s+/).slice(0, 4)));
    const entries = readdirSync(path.join(REPO, 'src'), { withFileTypes: true }).filter((e) => !e.name.endsWith('.d.ts'));
    const unnamed = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).filter((n) => !words.has(`src/${n}`) && !words.has(n));
    expect(unnamed).toEqual([]);
  });

  it('the file names CONTRIBUTING.md gives beside a folder are in it', () => {
    const missing: string[] = [];
    for (const line of mapLines(read('CONTRIBUTING.md'))) {
      const dir = line.split(/\s+/)[0]!;
      if (!dir.endsWith('/')) continue;
      const there = new Set(filesUnder(path.join(REPO, dir)));
      // Bare names (no slash) in the description: `tasks.ts`, `(run.ts, wait.ts)`.
      for (const m of line.slice(dir.length).matchAll(/(?<![\w/.-])([\w-]+\.(?:ts|mjs))\b/g)) if (!there.has(m[1]!)) missing.push(`${dir}${m[1]}`);
    }
    expect(missing).toEqual([]);
  });
});
