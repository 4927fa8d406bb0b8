// `npm run docs:usage`: rewrites the generated regions of README.md and
// docs/reconcile.1.md (the man page's source) from the CLI's own tables in
// src/cli-options.ts; test/cli-options.test.ts fails while they differ.
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const out = path.join(repo, 'dist', 'usage', 'cli-options.mjs');
await build({ entryPoints: [path.join(repo, 'src/cli-options.ts')], outfile: out, bundle: true, platform: 'node', format: 'esm', logLevel: 'warning' });
const { docRegions, withRegion } = await import(out);
let missing = 0;
for (const r of docRegions()) {
  const file = path.join(repo, r.file);
  const before = fs.readFileSync(file, 'utf8');
  let after;
  try {
    after = withRegion(before, r);
  } catch (e) {
    process.stderr.write(`docs:usage: ${e.message}\n`);
    missing++;
    continue;
  }
  if (after !== before) {
    fs.writeFileSync(file, after);
    process.stdout.write(`${r.file}: ${r.begin.trim()} rewritten\n`);
  }
}
process.exitCode = missing ? 1 : 0;
