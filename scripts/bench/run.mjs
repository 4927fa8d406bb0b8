// node scripts/bench/run.mjs [ROUNDS]: bundles scripts/bench/rehearsal.ts and runs it.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'bench-')), 'rehearsal.mjs');
await build({
  entryPoints: ['scripts/bench/rehearsal.ts'],
  outfile: out,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  logLevel: 'warning',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
execFileSync(process.execPath, [out, ...process.argv.slice(2)], { stdio: 'inherit' });
