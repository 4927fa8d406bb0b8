// A reset killed at every journal step (the bundle, offline on a former node's image, with the door's
// SIGKILL failpoint): each entry the reset touches is either as it was or as the full run leaves it (a
// rename happens whole or not at all), the next run says the run was interrupted, a forced --rollback
// gives back the original tree exactly (an lstat walk of bytes, modes, owners and link targets:
// test/helpers/snapshot.ts), and an apply after it converges to the full run's tree.
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { buildTree } from '../../helpers/tree.js';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.js';
import { snapshot, type Snapshot } from '../../helpers/snapshot.js';
import { parseJournal } from '../../../src/door/journal.js';

const BUNDLE = path.resolve('dist/reconcile.mjs');
const temp = tempDirsRemovedAfterEach();

function reconcile(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 60_000 });
  return { code: r.status, signal: r.signal, out: r.stdout + r.stderr };
}

const unit = (exec: string) => `[Service]\nExecStart=${exec}\n\n[Install]\nWantedBy=multi-user.target\n`;
function image(): string {
  const root = temp('previous-cluster-kill-master-');
  buildTree(root, {
    'etc/systemd/system/kubelet.service': unit('/usr/local/bin/kubelet'),
    'etc/systemd/system/kubelet.service.d/10-kubeadm.conf': '[Service]\nEnvironment=A=1\n',
    'etc/systemd/system/k3s.service': unit('/usr/local/bin/k3s server'),
    'etc/kubernetes/manifests/etcd.yaml': 'kind: Pod\n',
    'etc/kubernetes/pki/ca.crt': 'ca\n',
    'var/lib/etcd/member/snap/db': 'db\n'.repeat(100),
    'etc/rancher/k3s/k3s.yaml': 'apiVersion: v1\n',
    'var/lib/rancher/k3s/server/token': 'token\n',
    'root/d.yaml': 'reports_dir: /root/ks\nresources:\n  - type: PreviousCluster\n    policy: reset\n',
  });
  spawnSync('mkdir', ['-p', path.join(root, 'etc/systemd/system/multi-user.target.wants')]);
  for (const u of ['kubelet.service', 'k3s.service'])
    spawnSync('ln', ['-s', `/etc/systemd/system/${u}`, path.join(root, 'etc/systemd/system/multi-user.target.wants', u)]);
  return root;
}

const toolOwned = (rel: string) => rel === 'root/ks' || rel.startsWith('root/ks/') || rel === 'run' || rel.startsWith('run/');
/** A set-aside name with its run id cut off, so that two runs' trees compare. */
const unRun = (s: Snapshot): Snapshot =>
  Object.fromEntries(Object.entries(s).map(([k, v]) => [k.replace(/(\.k8s-host-reconcile-aside-)[A-Za-z0-9-]+/, '$1RUN'), v]));
const copyOf = (from: string, p: string) => {
  const d = temp(p);
  spawnSync('cp', ['-a', `${from}/.`, d]);
  return d;
};

describe('a PreviousCluster reset killed at every journal step', () => {
  it('leaves no entry half-moved; a forced rollback restores the tree exactly; a rerun converges', () => {
    const master = image();
    const original = snapshot(master, toolOwned);
    const full = copyOf(master, 'previous-cluster-kill-full-');
    const done = reconcile(['--apply', '-f', path.join(full, 'root/d.yaml'), '--root', full]);
    expect(done.code, done.out).toBe(0);
    const converged = unRun(snapshot(full, toolOwned));
    const [run] = readdirSync(path.join(full, 'root/ks/runs'));
    const steps = parseJournal(readFileSync(path.join(full, 'root/ks/runs', run!, 'journal'), 'utf8')).records.length;
    expect(steps).toBeGreaterThan(10);

    const problems: string[] = [];
    for (let n = 1; n < steps; n++) {
      const root = copyOf(master, `previous-cluster-kill-${n}-`);
      const f = path.join(root, 'root/d.yaml');
      const killed = reconcile(['--apply', '-f', f, '--root', root], { RECONCILE_TEST_SIGNAL_AFTER_RECORD: `SIGKILL:${n}` });
      if (killed.signal !== 'SIGKILL') problems.push(`step ${n}: not killed (${killed.code})`);
      const now = unRun(snapshot(root, toolOwned));
      for (const p of new Set([...Object.keys(now), ...Object.keys(original), ...Object.keys(converged)]))
        if (now[p] !== original[p] && now[p] !== converged[p]) problems.push(`step ${n}: ${p} is torn: ${now[p]}`);
      const [id] = readdirSync(path.join(root, 'root/ks/runs'));
      const rb = reconcile(['--rollback', id!, '--force', '-f', f, '--root', root]);
      if (rb.code !== 0) problems.push(`step ${n}: rollback exit ${rb.code}: ${rb.out.slice(-600)}`);
      if (!rb.out.includes(`run ${id} was interrupted after record ${n}`)) problems.push(`step ${n}: the next run did not say the run was interrupted`);
      const restored = snapshot(root, toolOwned);
      if (JSON.stringify(restored) !== JSON.stringify(original))
        problems.push(
          `step ${n}: rollback left ${JSON.stringify(Object.entries(restored).filter(([k, v]) => original[k] !== v))} / missing ${JSON.stringify(Object.keys(original).filter((k) => !(k in restored)))}`,
        );
      const again = reconcile(['--apply', '-f', f, '--root', root]);
      if (again.code !== 0) problems.push(`step ${n}: rerun exit ${again.code}: ${again.out.slice(-400)}`);
      if (JSON.stringify(unRun(snapshot(root, toolOwned))) !== JSON.stringify(converged))
        problems.push(`step ${n}: rerun did not converge to the full run's tree`);
      rmSync(root, { recursive: true, force: true });
    }
    expect(problems).toEqual([]);
  }, 600_000);
});
