// PreviousCluster with policy reset on a booted Debian 12 (systemd as PID 1 in a container with a private
// network, test/helpers/nspawn.ts): a former kubespray control-plane node whose kubelet.service (with
// kubeadm's drop-in) and host etcd.service are enabled and listening, with /etc/kubernetes, /var/lib/kubelet,
// /var/lib/etcd and /etc/cni/net.d left behind. Applied live with the bundle, booted again, then rolled back.
// Every expectation is systemd's own word inside the container (`systemctl is-active/is-enabled`, `ss`) or
// the tree itself: the tree before apply is taken from outside with an lstat walk (modes, owners, bytes, link
// targets: test/helpers/snapshot.ts) and a cp -a copy, and compared after --rollback with the walk and diff(1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { boot, freshRootfs, nspawnAvailable, waitListening, type Booted } from '../../helpers/nspawn.js';
import { snapshot, type Snapshot } from '../../helpers/snapshot.js';

const DIST = path.resolve('dist');
const ETC = 'etc/systemd/system';
const listener = (desc: string, port: number) =>
  `[Unit]\nDescription=${desc}\n\n[Service]\nExecStart=/usr/bin/python3 -m http.server ${port}\nRestart=always\nRestartSec=1\n\n[Install]\nWantedBy=multi-user.target\n`;
const PLANT: Record<string, string | { link: string }> = {
  [`${ETC}/kubelet.service`]: listener('kubelet: The Kubernetes Node Agent', 10250),
  [`${ETC}/kubelet.service.d/10-kubeadm.conf`]: '[Service]\nEnvironment="KUBELET_KUBECONFIG_ARGS=--kubeconfig=/etc/kubernetes/kubelet.conf"\n',
  [`${ETC}/multi-user.target.wants/kubelet.service`]: { link: '/etc/systemd/system/kubelet.service' },
  [`${ETC}/etcd.service`]: listener('etcd', 2379),
  [`${ETC}/multi-user.target.wants/etcd.service`]: { link: '/etc/systemd/system/etcd.service' },
  'etc/kubernetes/manifests/kube-apiserver.yaml': 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver\n',
  'etc/kubernetes/admin.conf': 'apiVersion: v1\nkind: Config\n',
  'etc/kubernetes/kubelet.conf': 'apiVersion: v1\nkind: Config\n',
  'etc/kubernetes/pki/ca.crt': '-----BEGIN CERTIFICATE-----\n',
  'var/lib/kubelet/config.yaml': 'kind: KubeletConfiguration\n',
  'var/lib/kubelet/pki/kubelet.crt': 'cert\n',
  'var/lib/kubelet/pki/kubelet-current.pem': { link: '/var/lib/kubelet/pki/kubelet.crt' },
  'var/lib/etcd/member/snap/db': 'etcd data\n'.repeat(1000),
  'etc/cni/net.d/10-calico.conflist': '{"name":"k8s-pod-network"}\n',
  'root/ds.yaml': 'reports_dir: /root/ks/preflight\nresources:\n  - type: PreviousCluster\n    policy: reset\n',
};
const PORTS = [2379, 10250];
/** What a reset touches and a rollback must give back. */
const KEPT = ['etc/kubernetes', 'etc/cni', 'var/lib/kubelet', 'var/lib/etcd', ETC];
const MOVED = [
  '/etc/kubernetes',
  '/var/lib/kubelet',
  '/var/lib/etcd',
  '/etc/cni/net.d',
  '/etc/systemd/system/kubelet.service',
  '/etc/systemd/system/kubelet.service.d',
  '/etc/systemd/system/etcd.service',
];

function plant(root: string): void {
  for (const [rel, v] of Object.entries(PLANT)) {
    const p = path.join(root, rel);
    mkdirSync(path.dirname(p), { recursive: true });
    if (typeof v === 'string') writeFileSync(p, v);
    else symlinkSync(v.link, p);
  }
}

const skip = nspawnAvailable();
if (skip !== null) throw new Error(`previous-cluster-boot needs a booted container: ${skip}`);

const treeOf = (root: string): Record<string, Snapshot> =>
  Object.fromEntries(KEPT.map((d) => [d, existsSync(path.join(root, d)) ? snapshot(path.join(root, d)) : {}]));
const state = async (h: Booted, verb: string, unit: string) => (await h.run(['systemctl', verb, unit])).stdout.trim();
const units = async (h: Booted) =>
  Object.fromEntries(
    await Promise.all(
      ['kubelet.service', 'etcd.service'].flatMap((u) => [
        state(h, 'is-active', u).then((s) => [`${u} active`, s]),
        state(h, 'is-enabled', u).then((s) => [`${u} enabled`, s]),
      ]),
    ),
  );
const reconcile = (h: Booted, args: string[]) => h.run(['node', '/opt/khr/reconcile.mjs', ...args, '-f', '/root/ds.yaml'], { timeoutMs: 180_000 });

describe('PreviousCluster reset on a booted former node, across a reboot, and its rollback', () => {
  let root = '';
  let copy = '';
  let h: Booted;
  const seen: Record<string, unknown> = {};

  beforeAll(async () => {
    if (!existsSync(path.join(DIST, 'reconcile.mjs'))) throw new Error('run npm run -s bundle first');
    root = freshRootfs();
    copy = mkdtempSync(path.join(tmpdir(), 'previous-cluster-kept-'));
    plant(root);
    h = await boot(root, { [DIST]: '/opt/khr' });
    seen.before = await waitListening(h, PORTS, PORTS);
    seen.tree = treeOf(root);
    for (const d of KEPT) spawnSync('cp', ['-a', '--parents', d, copy], { cwd: root });
    seen.plan = await reconcile(h, ['--plan']);
    seen.apply = await reconcile(h, ['--apply']);
    await new Promise((r) => setTimeout(r, 2500)); // past RestartSec=
    seen.afterApply = { ports: await waitListening(h, PORTS, [], 0), units: await units(h), there: MOVED.filter((p) => existsSync(path.join(root, p))) };
    await h.poweroff();
    h = await boot(root, { [DIST]: '/opt/khr' });
    await new Promise((r) => setTimeout(r, 2500));
    seen.atBoot = { ports: await waitListening(h, PORTS, [], 0), units: await units(h), there: MOVED.filter((p) => existsSync(path.join(root, p))) };
    seen.rollback = await reconcile(h, ['--rollback']);
    seen.afterRollback = { ports: await waitListening(h, PORTS, PORTS), units: await units(h) };
    seen.treeAfter = treeOf(root);
    seen.diffs = KEPT.map((d) => spawnSync('diff', ['-r', '--no-dereference', path.join(copy, d), path.join(root, d)], { encoding: 'utf8' })).map((r) => [
      r.status,
      r.stdout,
    ]);
  }, 900_000);

  afterAll(async () => {
    await h?.poweroff().catch(() => undefined);
    if (root) rmSync(root, { recursive: true, force: true });
    if (copy) rmSync(copy, { recursive: true, force: true });
  }, 60_000);

  it('the former node listens on its ports at boot', () => {
    expect(seen.before).toEqual(PORTS);
  });

  it('the plan shows each step, and apply exits 0', () => {
    const plan = (seen.plan as { stdout: string }).stdout;
    for (const u of ['kubelet.service', 'etcd.service']) {
      expect(plan).toContain(`stop ${u} (active; /etc/systemd/system/${u})`);
      expect(plan).toContain(`disable ${u}: remove /etc/systemd/system/multi-user.target.wants/${u}`);
    }
    for (const p of MOVED) expect(plan).toMatch(new RegExp(`move (\\S+ )*${p.replace(/\./g, '\\.')} aside`));
    const apply = seen.apply as { exitCode: number; stdout: string; stderr: string };
    expect(apply.exitCode, apply.stdout + apply.stderr).toBe(0);
  });

  it('after apply and after the reboot: the units are down and disabled, the ports free, the directories gone', () => {
    const down = { ports: [], there: [] };
    expect(seen.afterApply).toMatchObject(down);
    expect(seen.atBoot).toMatchObject(down);
    for (const phase of [seen.afterApply, seen.atBoot] as Array<{ units: Record<string, string> }>) {
      expect(phase.units['kubelet.service active']).not.toBe('active');
      expect(phase.units['etcd.service active']).not.toBe('active');
    }
  });

  it('--rollback puts units, data and configuration back byte for byte, and the units run again', () => {
    const rb = seen.rollback as { exitCode: number; stdout: string; stderr: string };
    expect(rb.exitCode, rb.stdout + rb.stderr).toBe(0);
    expect(seen.treeAfter).toEqual(seen.tree);
    expect(seen.diffs).toEqual(KEPT.map(() => [0, '']));
    expect(seen.afterRollback).toEqual({
      ports: PORTS,
      units: { 'kubelet.service active': 'active', 'kubelet.service enabled': 'enabled', 'etcd.service active': 'active', 'etcd.service enabled': 'enabled' },
    });
  });
});
