// One vitest config per mutation group: only that group's test files.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
// @ts-expect-error plain ESM module without types
import { groups } from '../groups.mjs';
// @ts-expect-error: a plain .mjs build script without type declarations
import { viteValidatorPlugin } from '../../scripts/build/desired-state-validator.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** MUTATION_BASELINE=1: only the tests that existed before the mutation work (the "before" column). */
const baseline = process.env.MUTATION_BASELINE === '1';

export function groupConfig(group: string) {
  const tests = (groups as Record<string, { tests: string[] }>)[group]!.tests;
  return defineConfig({
    root,
    // validate.ts imports the validator generated from the schema (issue 14), as vitest.config.ts does;
    // without it every test file that reaches validate.ts fails to load, which Stryker's vitest runner counts as "survived".
    plugins: [viteValidatorPlugin()],
    test: {
      include: baseline ? tests.filter((t) => !t.endsWith('-domain.test.ts')) : tests,
      testTimeout: 30_000,
    },
  });
}
