#!/usr/bin/env node
// `npm run collection`: the Ansible collection k8s_host_reconcile.k8s_host_reconcile as a
// tarball ansible-galaxy installs offline (it has no dependencies):
// contrib/ansible/collection/ plus the bundled CLI (dist/reconcile.mjs, built
// first by the npm script) and the versions, built with ansible-galaxy itself
// into dist/k8s_host_reconcile-k8s_host_reconcile-VERSION.tar.gz. The source's galaxy.yml says
// version 0.0.0, a placeholder this build replaces with the tool's version (package.json's, in
// src/version.ts) and refuses to find anything else in, so the two cannot disagree.
//   node scripts/collection.mjs [--output DIR]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { transformSync } from 'esbuild';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const source = path.join(repo, 'contrib/ansible/collection');

function stop(message) {
  process.stderr.write(`collection: ${message}\n`);
  process.exit(1);
}

/** src/version.ts itself, compiled and imported: one source for the tool's and the document format's versions. */
async function versions() {
  const { code } = transformSync(fs.readFileSync(path.join(repo, 'src/version.ts'), 'utf8'), { loader: 'ts', format: 'esm' });
  const m = await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
  return { tool: m.TOOL_VERSION, format: m.FORMAT_VERSION };
}

export async function buildCollection(outDir = path.join(repo, 'dist')) {
  const bundle = path.join(repo, 'dist/reconcile.mjs');
  if (!fs.existsSync(bundle)) stop('dist/reconcile.mjs is missing: run npm run collection (it bundles first)');
  if (spawnSync('sh', ['-c', 'command -v ansible-galaxy']).status !== 0) stop('ansible-galaxy is missing: apt-get install ansible-core');
  const { tool, format } = await versions();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-host-reconcile-collection-'));
  try {
    const tree = path.join(work, 'k8s_host_reconcile');
    fs.cpSync(source, tree, { recursive: true });
    const galaxy = path.join(tree, 'galaxy.yml');
    const text = fs.readFileSync(galaxy, 'utf8');
    if (!/^version: 0\.0\.0$/m.test(text)) stop('contrib/ansible/collection/galaxy.yml must say version: 0.0.0 (the build sets the version from package.json)');
    fs.writeFileSync(galaxy, text.replace(/^version: 0\.0\.0$/m, `version: ${tool}`));
    fs.copyFileSync(bundle, path.join(tree, 'roles/reconcile/files/reconcile.mjs'));
    fs.mkdirSync(path.join(tree, 'roles/reconcile/vars'), { recursive: true });
    fs.writeFileSync(
      path.join(tree, 'roles/reconcile/vars/main.yml'),
      `---\n# Written by scripts/collection.mjs from src/version.ts.\n_reconcile_tool_version: "${tool}"\n_reconcile_format_version: "${format}"\n`,
    );
    fs.mkdirSync(outDir, { recursive: true });
    const r = spawnSync('ansible-galaxy', ['collection', 'build', '--force', '--output-path', outDir, tree], { encoding: 'utf8' });
    if (r.status !== 0) stop(`ansible-galaxy collection build failed (exit ${r.status}): ${(r.stderr || r.stdout).trim()}`);
    return path.join(outDir, `k8s_host_reconcile-k8s_host_reconcile-${tool}.tar.gz`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const i = process.argv.indexOf('--output');
  const out = await buildCollection(i > 0 ? path.resolve(process.argv[i + 1] ?? stop('--output needs a directory')) : undefined);
  process.stdout.write(`${out}\n`);
}
