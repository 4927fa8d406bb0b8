// One vitest config per mutation group: only that group's test files.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
// @ts-expect-error plain ESM module without types
import { groups } from '../groups.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function groupConfig(group: string) {
  return defineConfig({
    root,
    test: {
      include: (groups as Record<string, { tests: string[] }>)[group]!.tests,
      testTimeout: 30_000,
    },
  });
}
