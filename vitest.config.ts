import { defineConfig } from 'vitest/config';
// @ts-expect-error: a plain .mjs build script without type declarations
import { viteValidatorPlugin } from './scripts/build/desired-state-validator.mjs';

export default defineConfig({
  // src/reconcile/validate.ts imports the validator generated from the schema, as the bundle does.
  plugins: [viteValidatorPlugin()],
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
