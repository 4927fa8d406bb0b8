// One self-contained ESM file for target hosts that have only `node` >= 18
// (Debian 12's own nodejs is 18.19/18.20, Debian 13's is 20).
// `node scripts/bundle.mjs` writes dist/reconcile.mjs; tests import
// bundleOptions to build the same file elsewhere.
import { build } from 'esbuild';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { esbuildValidatorPlugin } from './build/desired-state-validator.mjs';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** @returns {import('esbuild').BuildOptions} */
export function bundleOptions(outfile = path.join(repo, 'dist/reconcile.mjs')) {
  return {
    entryPoints: [path.join(repo, 'src/cli.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node18',
    format: 'esm',
    legalComments: 'none',
    // Start-up is mostly compiling this one file: smaller is faster. Names stay (error classes name themselves).
    minify: true,
    keepNames: true,
    // Some bundled CommonJS dependencies call require(); give ESM output one.
    banner: {
      js: "#!/usr/bin/env node\nimport { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    // The desired-state validator is generated here from the schema (ajv standalone code).
    plugins: [esbuildValidatorPlugin()],
    logLevel: 'warning',
  };
}

/**
 * The promise judge for the suites' plain-node scripts (test/boot/lib/judge.mjs):
 * the providers' promise kinds, without the CLI.
 */
export function judgeBundleOptions(outfile = path.join(repo, 'dist/promise-judge.mjs')) {
  const { banner, ...rest } = bundleOptions(outfile);
  void banner;
  return { ...rest, entryPoints: [path.join(repo, 'src/resources/promise-judge.ts')], minify: false };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await Promise.all([build(bundleOptions()), build(judgeBundleOptions())]);
