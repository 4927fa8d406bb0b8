// Fleets of generated hosts for `reconcile report` (npm run bench, and alone:
// `node scripts/bench/fleet.mjs [SIZES]` prints each size's median wall and
// CPU time and peak memory). The documents are the real bundle's
// `--plan --json` for three small offline trees, as test/helpers/
// fleet-documents.ts plants them: a swap line in fstab (changes), rc.local's
// `sysctl -w` (operator) and a Python program run at boot (unknown); host i
// gets document i mod 3, laid out as the Ansible role fetches them
// (DIR/<host>/reconcile.json), so every size reads the same mix.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const DESIRED = `reports_dir: /root/ks/preflight
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

const TREES = [
  {},
  { 'etc/rc.local': ['#!/bin/sh\nsysctl -w net.ipv4.ip_forward=0\nexit 0\n', 0o755] },
  {
    'etc/rc.local': ['#!/bin/sh\n/usr/local/bin/tune.py\nexit 0\n', 0o755],
    'usr/local/bin/tune.py': ['#!/usr/bin/python3\nopen("/proc/sys/net/ipv4/ip_forward", "w").write("0")\n', 0o755],
  },
];

/** The three documents, each printed by `node BUNDLE --plan --json` for its tree. */
export function fleetDocuments(work, node, bundle) {
  const desired = path.join(work, 'fleet-desired.yaml');
  writeFileSync(desired, DESIRED);
  return TREES.map((files, i) => {
    const root = path.join(work, `fleet-tree-${i}`);
    mkdirSync(path.join(root, 'etc/systemd/system'), { recursive: true });
    writeFileSync(path.join(root, 'etc/fstab'), '/swapfile none swap sw 0 0\n');
    for (const [p, [content, mode]] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
      writeFileSync(path.join(root, p), content);
      chmodSync(path.join(root, p), mode);
    }
    const r = spawnSync(node, [bundle, '--plan', '--json', '-f', desired, '--root', root], { encoding: 'utf8' });
    if (r.status !== 2) throw new Error(`--plan --json of fleet tree ${i} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  });
}

/** DIR with n hosts (node-00000 ...), host i holding document i mod 3. */
export function fleetDir(work, docs, n) {
  const dir = path.join(work, `fleet-${n}`);
  for (let i = 0; i < n; i++) {
    const host = path.join(dir, `node-${String(i).padStart(5, '0')}`);
    mkdirSync(host, { recursive: true });
    writeFileSync(path.join(host, 'reconcile.json'), docs[i % docs.length]);
  }
  return dir;
}

/** The command a row names: the report over DIR, its three files written under OUT. */
export const reportCommand = (node, bundle, dir, out) => `${node} ${bundle} report -o ${out} ${dir}`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
  const bundle = path.join(repo, 'dist/reconcile.mjs');
  const sizes = (process.argv[2] ?? '500,5000,50000').split(',').map(Number);
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const work = mkdtempSync(path.join(os.tmpdir(), 'bench-fleet-'));
  try {
    const docs = fleetDocuments(work, process.execPath, bundle);
    for (const n of sizes) {
      const dir = fleetDir(work, docs, n);
      const out = path.join(work, `out-${n}`);
      mkdirSync(out);
      const samples = [];
      for (let r = 0; r < runs; r++) {
        const t = spawnSync(
          '/usr/bin/time',
          ['-f', '@@ %e %U %S %M', 'sh', '-c', `exec ${reportCommand(process.execPath, bundle, dir, out)} >/dev/null 2>&1`],
          {
            encoding: 'utf8',
          },
        );
        const m = /@@ (\S+) (\S+) (\S+) (\S+)\s*$/.exec(t.stderr);
        samples.push({ wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]), peak: Number(m[4]) / 1024 });
      }
      const med = (k) => [...samples.map((s) => s[k])].sort((a, b) => a - b)[Math.floor(runs / 2)];
      console.log(
        `${n} hosts: ${med('wall').toFixed(2)} s, CPU ${med('cpu').toFixed(2)} s, ${med('peak').toFixed(0)} MiB (load ${os.loadavg()[0].toFixed(1)})`,
      );
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
