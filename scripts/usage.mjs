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

// The README's sample plan: what the bundle prints for the fixture host
// (test/readme.test.ts runs the same plan and compares).
import { spawnSync } from 'node:child_process';
import { SAMPLE, sampleBlock } from '../test/helpers/readme-sample.mjs';
spawnSync(process.execPath, [path.join(repo, 'scripts/bundle.mjs')], { cwd: repo, stdio: 'inherit' });
const run = spawnSync(process.execPath, [path.join(repo, 'dist/reconcile.mjs'), ...SAMPLE.args(repo)], {
  cwd: repo,
  encoding: 'utf8',
  env: { ...process.env, NO_COLOR: '1' },
});
if (run.status !== 2) {
  process.stderr.write(`docs:usage: the sample plan exited ${run.status}, not 2:\n${run.stderr}`);
  process.exitCode = 1;
} else {
  const readme = path.join(repo, 'README.md');
  const text = fs.readFileSync(readme, 'utf8');
  const at = text.indexOf(SAMPLE.begin);
  const to = text.indexOf(SAMPLE.end);
  if (at < 0 || to < at) {
    process.stderr.write(`docs:usage: README.md has no ${SAMPLE.begin} ... ${SAMPLE.end} region\n`);
    process.exitCode = 1;
  } else {
    const next = text.slice(0, at) + sampleBlock(run.stdout, repo) + text.slice(to);
    if (next !== text) {
      fs.writeFileSync(readme, next);
      process.stdout.write('README.md: the sample plan rewritten\n');
    }
  }
}
