// PreviousCluster on an image of a former kubespray control-plane node (host etcd, kubelet.service with
// kubeadm's drop-in, static pod manifests, kubeconfigs, pki, kubelet's state with a link inside, a CNI
// config), through the CLI offline (--root). Expectations come from elsewhere than the code: which links
// a disable removes is what systemd's own `systemctl --root COPY disable` does to a copy of the image;
// sizes are find(1)'s; the tree after --rollback is compared with the tree before by diff(1) against a
// cp -a copy and by an lstat walk of modes, owners and link targets (test/helpers/snapshot.ts).
import { describe, expect, it } from 'vitest';
import { existsSync, writeFileSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { buildTree } from '../../helpers/tree.js';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.js';
import { runCli } from '../../helpers/run-cli.js';
import { snapshot } from '../../helpers/snapshot.js';

const temp = tempDirsRemovedAfterEach();

const REPORTS = 'root/ks/preflight';
const unit = (desc: string, exec: string) =>
  `[Unit]\nDescription=${desc}\n\n[Service]\nExecStart=${exec}\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n`;

function formerNode(): string {
  const root = temp('previous-cluster-');
  buildTree(root, {
    'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n',
    'etc/systemd/system/kubelet.service': unit('kubelet: The Kubernetes Node Agent', '/usr/local/bin/kubelet'),
    'etc/systemd/system/kubelet.service.d/10-kubeadm.conf': '[Service]\nEnvironment="KUBELET_KUBECONFIG_ARGS=--kubeconfig=/etc/kubernetes/kubelet.conf"\n',
    'etc/systemd/system/etcd.service': unit('etcd', '/usr/local/bin/etcd'),
    'etc/kubernetes/manifests/kube-apiserver.yaml': 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver\n',
    'etc/kubernetes/admin.conf': 'apiVersion: v1\nkind: Config\n',
    'etc/kubernetes/kubelet.conf': 'apiVersion: v1\nkind: Config\n',
    'etc/kubernetes/pki/ca.crt': '-----BEGIN CERTIFICATE-----\n',
    'var/lib/kubelet/config.yaml': 'kind: KubeletConfiguration\n',
    'var/lib/kubelet/pki/kubelet.crt': 'cert\n',
    'var/lib/etcd/member/snap/db': 'x'.repeat(5000),
    'var/lib/etcd/member/wal/0.wal': 'wal\n',
    'etc/cni/net.d/10-calico.conflist': '{"name":"k8s-pod-network"}\n',
  });
  spawnSync('mkdir', ['-p', path.join(root, 'etc/systemd/system/multi-user.target.wants')]);
  for (const u of ['kubelet.service', 'etcd.service'])
    spawnSync('ln', ['-s', `/etc/systemd/system/${u}`, path.join(root, 'etc/systemd/system/multi-user.target.wants', u)]);
  spawnSync('ln', ['-s', '/var/lib/kubelet/pki/kubelet.crt', path.join(root, 'var/lib/kubelet/pki/kubelet-current.pem')]);
  spawnSync('chmod', ['0700', path.join(root, 'var/lib/etcd')]);
  return root;
}

function desired(root: string, spec: string): string {
  const f = path.join(root, 'root/desired.yaml');
  buildTree(root, { 'root/desired.yaml': `reports_dir: /${REPORTS}\nresources:\n  - type: PreviousCluster\n${spec}` });
  return f;
}

const skipReports = (rel: string) => rel === 'root' || rel.startsWith('root/');
const findFigures = (dir: string) => {
  const sizes = spawnSync('find', [dir, '-type', 'f', '-printf', '%s\n'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  const files = spawnSync('find', [dir, '-mindepth', '1', '!', '-type', 'd'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  return { bytes: sizes.reduce((a, s) => a + Number(s), 0), files: files.length };
};
const MOVED = [
  '/etc/kubernetes',
  '/var/lib/kubelet',
  '/var/lib/etcd',
  '/etc/cni/net.d',
  '/etc/systemd/system/kubelet.service',
  '/etc/systemd/system/kubelet.service.d',
  '/etc/systemd/system/etcd.service',
];

interface PlanDoc {
  resources: Array<{ type: string; changes: Array<{ id: string; action: string; summary: string }> }>;
  promises: Array<{ id: string; kind: string; subject: string; what: string; after_apply: boolean; at_boot: boolean }>;
  warnings?: string[];
}

async function plan(root: string, f: string): Promise<{ code: number; doc: PlanDoc; out: string }> {
  const r = await runCli(['--plan', '--json', '-f', f, '--root', root]);
  return { code: r.code, doc: JSON.parse(r.stdout) as PlanDoc, out: r.stdout };
}

describe('PreviousCluster', () => {
  it('under policy report adds nothing to the plan and reads nothing', async () => {
    const root = formerNode();
    const { doc } = await plan(root, desired(root, '    policy: report\n'));
    const pc = doc.resources.find((r) => r.type === 'PreviousCluster')!;
    expect(pc.changes).toEqual([]);
    expect(doc.promises.filter((p) => p.id.startsWith('absent:') || p.id.startsWith('unit-down:'))).toEqual([]);
  });

  it('under policy reset plans each step: the disables systemctl --root would make, the unit files and directories moved aside', async () => {
    const root = formerNode();
    const oracle = temp('previous-cluster-systemctl-');
    spawnSync('cp', ['-a', `${root}/.`, oracle]);
    const before = new Set(readdirSync(path.join(oracle, 'etc/systemd/system/multi-user.target.wants')));
    expect(spawnSync('systemctl', ['--root', oracle, 'disable', 'kubelet.service', 'etcd.service']).status).toBe(0);
    const left = new Set(
      existsSync(path.join(oracle, 'etc/systemd/system/multi-user.target.wants'))
        ? readdirSync(path.join(oracle, 'etc/systemd/system/multi-user.target.wants'))
        : [],
    );
    const removed = [...before].filter((n) => !left.has(n)).map((n) => `/etc/systemd/system/multi-user.target.wants/${n}`);
    expect(removed.length).toBe(2);

    const { doc } = await plan(root, desired(root, '    policy: reset\n'));
    const changes = doc.resources.find((r) => r.type === 'PreviousCluster')!.changes;
    const disabled = changes.filter((c) => c.action === 'disable').flatMap((c) => c.summary.replace(/^.*: remove /, '').split(', '));
    expect(disabled.sort()).toEqual(removed.sort());
    expect(
      changes
        .filter((c) => c.action === 'move')
        .map((c) => c.id.replace(/^aside-/, ''))
        .sort(),
    ).toEqual([...MOVED].sort());
    const etcd = findFigures(path.join(root, 'var/lib/etcd'));
    expect(changes.find((c) => c.id === 'aside-/var/lib/etcd')!.summary).toBe(
      `move /var/lib/etcd aside to /var/lib/etcd.k8s-host-reconcile-aside-<run id> (${etcd.files} files, ${(etcd.bytes / 1024).toFixed(1)} KiB)`,
    );
    const promised = doc.promises.filter((p) => p.kind === 'path-absent' || p.kind === 'unit-down');
    expect(promised.filter((p) => p.after_apply && p.at_boot).map((p) => p.what)).toContain('/var/lib/etcd absent (moved aside)');
    expect(promised.map((p) => p.what)).toContain('kubelet.service not running');
  });

  it('warns with the directory and its size above warn_above_bytes, before anything moves', async () => {
    const root = formerNode();
    const r = await runCli(['--plan', '-f', desired(root, '    policy: reset\n    warn_above_bytes: 4096\n'), '--root', root]);
    const etcd = findFigures(path.join(root, 'var/lib/etcd'));
    expect(r.stdout + r.stderr).toContain(`/var/lib/etcd holds 4.9 KiB (${etcd.bytes} bytes in ${etcd.files} files), above warn_above_bytes (4.0 KiB)`);
    expect(r.stdout + r.stderr).not.toMatch(/\/var\/lib\/kubelet holds/);
  });

  it('apply moves everything aside and leaves the evidence gone; --rollback puts units, data and configuration back byte for byte', async () => {
    const root = formerNode();
    const f = desired(root, '    policy: reset\n');
    const copy = temp('previous-cluster-copy-');
    spawnSync('cp', ['-a', `${root}/.`, copy]);
    const before = snapshot(root, skipReports);

    const applied = await runCli(['--apply', '-f', f, '--root', root]);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    for (const p of MOVED) expect(existsSync(path.join(root, p)), p).toBe(false);
    const runs = readdirSync(path.join(root, REPORTS, 'runs'));
    expect(runs.length).toBe(1);
    for (const p of MOVED) expect(existsSync(path.join(root, `${p}.k8s-host-reconcile-aside-${runs[0]}`)), p).toBe(true);
    // The same tree, aside: what was under /var/lib/etcd is now under its set-aside name.
    expect(snapshot(path.join(root, `var/lib/etcd.k8s-host-reconcile-aside-${runs[0]}`))).toEqual(snapshot(path.join(copy, 'var/lib/etcd')));
    // Nothing left that makes a former node: the plan after apply has no FormerNode finding and no change.
    const after = await runCli(['--plan', '-f', f, '--root', root]);
    expect(after.stdout).not.toMatch(/FormerNode|this host was a Kubernetes node/);
    expect(after.code, after.stdout).toBe(0);

    const rb = await runCli(['--rollback', runs[0]!, '-f', f, '--root', root]);
    expect(rb.code, rb.stdout + rb.stderr).toBe(0);
    expect(snapshot(root, skipReports)).toEqual(before);
    const d = spawnSync('diff', ['-r', '--no-dereference', '-x', 'root', copy, root], { encoding: 'utf8' });
    expect([d.status, d.stdout]).toEqual([0, '']);
  });

  it('refuses to move a directory that is a symbolic link: an operator line naming it', async () => {
    const root = formerNode();
    spawnSync('mv', [path.join(root, 'var/lib/etcd'), path.join(root, 'srv-etcd')]);
    spawnSync('ln', ['-s', '/srv-etcd', path.join(root, 'var/lib/etcd')]);
    writeFileSync(path.join(root, 'srv-etcd/extra'), 'x');
    const { doc } = await plan(root, desired(root, '    policy: reset\n'));
    const c = doc.resources.find((r) => r.type === 'PreviousCluster')!.changes.find((x) => x.id === 'aside-/var/lib/etcd')!;
    expect(c).toMatchObject({ action: 'operator', summary: '/var/lib/etcd is a symbolic link to /srv-etcd' });
    expect(doc.promises.find((p) => p.id === 'absent:/var/lib/etcd')).toMatchObject({ after_apply: false });
  });
});
