// One self-contained ESM file for target hosts that have only `node` >= 18
// (Debian 12's own nodejs is 18.19/18.20, Debian 13's is 20).
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/reconcile.mjs',
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
  logLevel: 'warning',
});
