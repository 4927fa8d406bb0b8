// test/ mirrors src/ (ARCHITECTURE.md "Tests"): each module of src/ with logic (a function-like node with a
// body, found with the TypeScript AST) has a test file named after it, test/<room>/<module>.test.ts or
// test/<room>/<module>.<aspect>.test.ts. Modules of types and constants only need none. The modules that have
// none yet are listed below; the list only shrinks: a listed module that gets its test file must leave it, and
// no new module may join it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

// Modules with logic and no test file of their own name yet; never add to it.
const NOT_YET: string[] = [];

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return files(p, suffix);
    return p.endsWith(suffix) ? [p] : [];
  });
}

/** Whether a module's source declares anything that runs: a function, method, accessor or arrow with a body. */
export function hasLogic(text: string): boolean {
  const sf = ts.createSourceFile('m.ts', text, ts.ScriptTarget.Latest, true);
  let found = false;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isFunctionLike(n) && 'body' in n && n.body) found = true;
    else ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

/** src/<room>/<module>.ts -> whether test/<room>/<module>.test.ts or <module>.<aspect>.test.ts exists. */
function hasOwnTest(module: string, tests: ReadonlySet<string>): boolean {
  const base = module.replace(/^src\//, 'test/').replace(/\.ts$/, '');
  if (tests.has(`${base}.test.ts`)) return true;
  for (const t of tests) if (t.startsWith(`${base}.`) && t.endsWith('.test.ts')) return true;
  return false;
}

/** The modules of src/ with logic and no test file of their own name. */
export function untestedModules(): string[] {
  const tests = new Set(files(path.join(REPO, 'test'), '.test.ts').map((f) => path.relative(REPO, f)));
  return files(path.join(REPO, 'src'), '.ts')
    .filter((f) => !f.endsWith('.d.ts'))
    .map((f) => path.relative(REPO, f))
    .filter((m) => hasLogic(readFileSync(path.join(REPO, m), 'utf8')) && !hasOwnTest(m, tests))
    .sort();
}

describe('each module of src/ with logic has a test file named after it', () => {
  it('logic is told from types and constants', () => {
    expect(hasLogic('export interface A { b: string }\nexport type C = A | null;\nexport const D = [1, 2];\n')).toBe(false);
    expect(hasLogic('export const f = (x: number) => x + 1;\n')).toBe(true);
    expect(hasLogic('export class K { get v() { return 1; } }\n')).toBe(true);
    expect(hasLogic('export function g(): void {}\n')).toBe(true);
    expect(hasLogic('export declare function h(): void;\n')).toBe(false);
  });

  it('only the listed modules lack one, and every listed module still exists and still lacks one', () => {
    const now = untestedModules();
    expect(now.filter((m) => !NOT_YET.includes(m))).toEqual([]);
    expect(NOT_YET.filter((m) => !now.includes(m))).toEqual([]);
    for (const m of NOT_YET) expect(existsSync(path.join(REPO, m))).toBe(true);
  });
});
