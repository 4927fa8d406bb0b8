#!/usr/bin/env node
// Regenerates test/fixtures/example-fleet/: the documents the Ansible role
// would fetch from five hosts (DIR/HOST/reconcile.json, and an applied host's
// reports/), made by running the bundled CLI offline (--root) on small host
// trees planted here, each with one thing whose verdict it implies. Run
// `node scripts/bundle.mjs` first; docs/fleets.md walks through the result:
//
//   node scripts/example-fleet.mjs
//   node dist/reconcile.mjs report -o /tmp/example-report test/fixtures/example-fleet
//
// The trees are planted under a fixed directory (ROOTS) so that the paths the
// documents name are the same on every run.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundle = path.join(repo, 'dist/reconcile.mjs');
const OUT = path.join(repo, 'test/fixtures/example-fleet');
const ROOTS = '/tmp/k8s-host-reconcile-example-fleet';

const DESIRED = `reports_dir: /var/lib/k8s-host-reconcile/reports
resources:
  - type: SwapOff
  - type: ModulesLoad
    modules: [overlay, br_netfilter]
  - type: SysctlFile
    file: /etc/sysctl.d/k8s.conf
    settings:
      net.ipv4.ip_forward: 1
first_boot: off
`;
const FSTAB = 'UUID=0a1b2c3d-1111-2222-3333-444455556666 / ext4 errors=remount-ro 0 1\n/swapfile none swap sw 0 0\n';
const RC_SYSCTL = { 'etc/rc.local': ['#!/bin/sh\nsysctl -w net.ipv4.ip_forward=0\nexit 0\n', 0o755] };
const RC_PYTHON = {
  'etc/rc.local': ['#!/bin/sh\n/usr/local/bin/tune.py\nexit 0\n', 0o755],
  'usr/local/bin/tune.py': ['#!/usr/bin/python3\nopen("/proc/sys/net/ipv4/ip_forward", "w").write("0")\n', 0o755],
};

/** Each host: how the CLI runs on it, what is planted, and the verdict that implies. */
const HOSTS = [
  { name: 'node-01-swap', mode: 'plan', files: {}, implies: 'changes (a swap line in fstab: the tool comments it out)' },
  { name: 'node-02-applied', mode: 'apply', files: {}, implies: 'ready (the same, applied and verified)' },
  { name: 'node-03-rc-sysctl', mode: 'plan', files: RC_SYSCTL, implies: 'operator (rc.local runs sysctl -w at boot: a person removes the line)' },
  { name: 'node-04-rc-python', mode: 'plan', files: RC_PYTHON, implies: 'unknown (rc.local runs a Python program the scan does not read)' },
  { name: 'node-05-bad-desired', mode: 'plan', files: {}, invalid: true, implies: 'failed (its desired state has an unknown key)' },
];

if (!existsSync(bundle)) {
  console.error(`${bundle} is missing: run node scripts/bundle.mjs first`);
  process.exit(1);
}
rmSync(ROOTS, { recursive: true, force: true });
rmSync(OUT, { recursive: true, force: true });
mkdirSync(ROOTS, { recursive: true });
writeFileSync(path.join(ROOTS, 'desired-state.yaml'), DESIRED);
writeFileSync(path.join(ROOTS, 'desired-invalid.yaml'), DESIRED.replace('  - type: SwapOff\n', '  - type: SwapOff\n    persist: yes\n'));
for (const h of HOSTS) {
  const root = path.join(ROOTS, h.name);
  mkdirSync(path.join(root, 'etc/systemd/system'), { recursive: true });
  writeFileSync(path.join(root, 'etc/fstab'), FSTAB);
  for (const [p, [content, mode]] of Object.entries(h.files)) {
    mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    writeFileSync(path.join(root, p), content);
    chmodSync(path.join(root, p), mode);
  }
  const args = [bundle, `--${h.mode}`, '--json', '-f', h.invalid ? 'desired-invalid.yaml' : 'desired-state.yaml', '--root', root];
  let stdout;
  try {
    stdout = execFileSync(process.execPath, args, { cwd: ROOTS, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch (e) {
    // A plan with work, or a refused desired state, exits non-zero; its document is still on stdout.
    stdout = e.stdout;
  }
  if (!stdout) throw new Error(`${h.name}: the CLI printed no document`);
  mkdirSync(path.join(OUT, h.name), { recursive: true });
  writeFileSync(path.join(OUT, h.name, 'reconcile.json'), stdout);
  // After an apply the role fetches the reports directory's documents (not the journal or backup/).
  const reports = path.join(root, 'var/lib/k8s-host-reconcile/reports');
  if (h.mode === 'apply' && existsSync(reports)) {
    for (const n of readdirSync(reports)) if (n.endsWith('.json')) cpSync(path.join(reports, n), path.join(OUT, h.name, 'reports', n));
    for (const id of existsSync(path.join(reports, 'runs')) ? readdirSync(path.join(reports, 'runs')) : [])
      for (const n of ['before.json', 'plan.json', 'result.json'])
        if (existsSync(path.join(reports, 'runs', id, n))) cpSync(path.join(reports, 'runs', id, n), path.join(OUT, h.name, 'reports', 'runs', id, n));
  }
  console.log(`${h.name}: ${h.mode}; implies ${h.implies}`);
}
