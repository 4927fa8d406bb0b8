// One vitest config per mutation group: only that group's test files.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
// @ts-expect-error plain ESM module without types
import { groups } from '../groups.mjs';
// @ts-expect-error: a plain .mjs build script without type declarations
import { viteValidatorPlugin } from '../../scripts/build/desired-state-validator.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// MUTATION_BASELINE=1 once ran only the tests from before the mutation work (the "before" column) by leaving
// out the *-domain files. Test files are now named by subject, so those tests share files with the later ones:
// the column is measured in a worktree of the commit before that work (9cb81b3^), never guessed from names here.
if (process.env.MUTATION_BASELINE === '1') {
  throw new Error('MUTATION_BASELINE=1: the tests from before the mutation work are the ones at commit 9cb81b3^; run the group in a worktree of that commit');
}

export function groupConfig(group: string) {
  const { tests, env } = (groups as Record<string, { tests: string[]; env?: Record<string, string> }>)[group]!;
  return defineConfig({
    root,
    // validate.ts imports the validator generated from the schema (issue 14), as vitest.config.ts does;
    // without it every test file that reaches validate.ts fails to load, which Stryker's vitest runner counts as "survived".
    plugins: [viteValidatorPlugin()],
    test: {
      include: tests,
      env: env ?? {},
      testTimeout: 30_000,
    },
  });
}
