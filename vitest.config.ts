import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
// @ts-expect-error: a plain .mjs build script without type declarations
import { viteValidatorPlugin } from './scripts/build/desired-state-validator.mjs';

export default defineConfig({
  // src/reconcile/validate.ts imports the validator generated from the schema, as the bundle does.
  plugins: [viteValidatorPlugin()],
  test: {
    include: ['test/**/*.test.ts'],
    // A harness limit, not a performance target (those live in the benchmark): two workers share CI's two cores
    // with the background root file system builds, and a test spawning the bundle or a boot must not fail for that.
    testTimeout: 90_000,
    hookTimeout: 120_000,
    // Vitest's default is cores - 1: one file at a time on CI's two cores, while most files spend their
    // time in one single-threaded child (the bundle, ansible, an nspawn boot). Two at a time there.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
