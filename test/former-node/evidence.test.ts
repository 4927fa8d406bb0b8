// A former node's leftovers on fixture roots laid out as kubeadm and kubespray
// leave them (kubeadm's paths: cmd/kubeadm/app/constants; kubespray's reset
// list: roles/reset/tasks/main.yml). The check names are kubeadm's rule
// (checks.go: the path with every "/" as "-"), written out by hand.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { kubeadmCheckName, observeFormerNode } from '../../src/former-node/evidence.js';
import { formerNodeFindings } from '../../src/former-node/finding.js';
import { buildTree, type Tree } from '../helpers/tree.js';
import { runCli } from '../helpers/run-cli.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
function host(tree: Tree): Host {
  const root = mkdtempSync(path.join(tmpdir(), 'former-node-'));
  roots.push(root);
  buildTree(root, tree);
  return new Host({ root });
}

// A former kubeadm control-plane node: static pods, kubeconfigs, certificates, kubelet's state, etcd's data, flannel's config, kubeadm's kubelet unit.
const KUBEADM_CONTROL_PLANE: Tree = {
  'etc/kubernetes/manifests/kube-apiserver.yaml': 'apiVersion: v1\nkind: Pod\n',
  'etc/kubernetes/manifests/kube-controller-manager.yaml': 'apiVersion: v1\nkind: Pod\n',
  'etc/kubernetes/manifests/kube-scheduler.yaml': 'apiVersion: v1\nkind: Pod\n',
  'etc/kubernetes/manifests/etcd.yaml': 'apiVersion: v1\nkind: Pod\n',
  'etc/kubernetes/admin.conf': 'apiVersion: v1\nkind: Config\n',
  'etc/kubernetes/kubelet.conf': 'apiVersion: v1\nkind: Config\n',
  'etc/kubernetes/pki/ca.crt': '-----BEGIN CERTIFICATE-----\n',
  'var/lib/kubelet/config.yaml': 'kind: KubeletConfiguration\n',
  'var/lib/etcd/member/snap/db': 'x',
  'etc/cni/net.d/10-flannel.conflist': '{}\n',
  'lib/systemd/system/kubelet.service': '[Service]\nExecStart=/usr/bin/kubelet\n',
};

describe('kubeadm check names', () => {
  it('are kubeadm\'s: the kind, then the path with every "/" as "-"', () => {
    expect(kubeadmCheckName('FileAvailable', '/etc/kubernetes/manifests/kube-apiserver.yaml')).toBe(
      'FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml',
    );
    expect(kubeadmCheckName('DirAvailable', '/var/lib/etcd')).toBe('DirAvailable--var-lib-etcd');
  });
});

describe('a former node is recognised from its leftovers', () => {
  it('a former kubeadm control-plane node: every piece, each with its path, and the kubeadm checks it fails', async () => {
    const ev = await observeFormerNode(host(KUBEADM_CONTROL_PLANE));
    expect(ev.map((e) => [e.path, e.strong, e.kubeadm?.check ?? null])).toEqual([
      ['/etc/kubernetes/manifests/etcd.yaml', true, 'FileAvailable--etc-kubernetes-manifests-etcd.yaml'],
      ['/etc/kubernetes/manifests/kube-apiserver.yaml', true, 'FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml'],
      ['/etc/kubernetes/manifests/kube-controller-manager.yaml', true, 'FileAvailable--etc-kubernetes-manifests-kube-controller-manager.yaml'],
      ['/etc/kubernetes/manifests/kube-scheduler.yaml', true, 'FileAvailable--etc-kubernetes-manifests-kube-scheduler.yaml'],
      ['/etc/kubernetes/admin.conf', true, null],
      ['/etc/kubernetes/kubelet.conf', true, 'FileAvailable--etc-kubernetes-kubelet.conf'],
      ['/etc/kubernetes/pki', true, 'FileAvailable--etc-kubernetes-pki-ca.crt'],
      ['/var/lib/kubelet', true, null],
      ['/var/lib/etcd', false, 'DirAvailable--var-lib-etcd'],
      ['/etc/cni/net.d', false, null],
      ['/lib/systemd/system/kubelet.service', true, null],
    ]);
    expect(ev.find((e) => e.path === '/var/lib/kubelet')!.what).toContain('kubeadm_already_run');
  });

  it('k3s leftovers: its directories and its unit', async () => {
    const ev = await observeFormerNode(
      host({ 'etc/rancher/k3s/k3s.yaml': 'x', 'var/lib/rancher/k3s/server/token': 'x', 'etc/systemd/system/k3s.service': '[Service]\n' }),
    );
    expect(ev.map((e) => [e.path, e.strong])).toEqual([
      ['/etc/rancher', true],
      ['/var/lib/rancher', true],
      ['/etc/systemd/system/k3s.service', true],
    ]);
  });

  it("containerd's CRI pod sandboxes: pods ran here; containerd's other state (images, snapshots) alone is no evidence", async () => {
    const sandboxes = '/var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes';
    const ev = await observeFormerNode(
      host({
        [`${sandboxes.slice(1)}/3f2a9c/hostname`]: 'node1\n',
        [`${sandboxes.slice(1)}/8b71d0/hosts`]: '127.0.0.1 localhost\n',
        'var/lib/containerd/io.containerd.content.v1.content/blobs/sha256/ab': 'x',
      }),
    );
    expect(ev.map((e) => [e.path, e.strong])).toEqual([[sandboxes, true]]);
    expect(ev[0]!.what).toContain('(2 of them)');
    // A plain containerd host (docker.io's, or ctr images) has no sandboxes: nothing.
    expect(await observeFormerNode(host({ 'var/lib/containerd/io.containerd.content.v1.content/blobs/sha256/ab': 'x' }))).toEqual([]);
  });

  it("etcd.service is weak evidence: beside kubelet's leftovers it counts, alone (Debian's etcd-server) it makes no finding", async () => {
    const alone = await observeFormerNode(host({ 'lib/systemd/system/etcd.service': '[Service]\nExecStart=/usr/bin/etcd\n' }));
    expect(alone.map((e) => [e.path, e.strong])).toEqual([['/lib/systemd/system/etcd.service', false]]);
    expect(formerNodeFindings(alone, undefined)).toEqual([]);
    const beside = await observeFormerNode(
      host({ 'etc/systemd/system/etcd.service': '[Service]\nExecStart=/usr/local/bin/etcd\n', 'etc/kubernetes/admin.conf': 'apiVersion: v1\n' }),
    );
    expect(beside.map((e) => e.path)).toEqual(['/etc/kubernetes/admin.conf', '/etc/systemd/system/etcd.service']);
  });

  it('a kubelet under another unit name, found by the program its ExecStart= runs; a unit that only mentions kubelet is not', async () => {
    const ev = await observeFormerNode(
      host({
        'etc/systemd/system/k8s-node-agent.service':
          '[Unit]\nDescription=node agent\n[Service]\nExecStart=-/opt/k8s/bin/kubelet \\\n  --config=/var/lib/kubelet/config.yaml\n',
        'etc/systemd/system/kubelet-watch.service': '[Service]\nExecStart=/usr/bin/journalctl -u kubelet -f\n',
        'usr/local/lib/systemd/system/other.service': '[Service]\nExecStart=/usr/local/bin/kubelet-exporter\n',
      }),
    );
    expect(ev.map((e) => [e.path, e.strong, e.what])).toEqual([
      [
        '/etc/systemd/system/k8s-node-agent.service',
        true,
        'the unit file of k8s-node-agent.service, which runs kubelet (/etc/systemd/system/k8s-node-agent.service:4)',
      ],
    ]);
  });

  it("links are followed as kubeadm's os.Stat follows them: a moved etcd directory counts, a link to nothing does not", async () => {
    const ev = await observeFormerNode(
      host({
        'data/etcd/member/snap/db': 'x',
        'var/lib/etcd': { link: '/data/etcd' },
        'etc/kubernetes/admin.conf': { link: '/nowhere/admin.conf' },
        'etc/kubernetes/kubelet.conf': { link: '../../srv/kubelet.conf' },
        'srv/kubelet.conf': 'apiVersion: v1\n',
      }),
    );
    expect(ev.map((e) => e.path)).toEqual(['/etc/kubernetes/kubelet.conf', '/var/lib/etcd']);
  });

  it('offline (an image), interfaces are not read: an image has no running kernel', async () => {
    const ev = await observeFormerNode(host({ 'sys/class/net/cni0/type': '1\n' }));
    expect(ev).toEqual([]);
  });
});

describe('no false alarm', () => {
  it('a bare root, an etcd-server host and a podman host with a CNI config are no former node', async () => {
    expect(formerNodeFindings(await observeFormerNode(host({ 'etc/hostname': 'x\n' })), undefined)).toEqual([]);
    // Debian's etcd-server keeps its data in /var/lib/etcd/default and ships etcd.service: an etcd, not a node.
    const etcd = host({ 'var/lib/etcd/default/member/snap/db': 'x', 'lib/systemd/system/etcd.service': '[Service]\n' });
    expect(formerNodeFindings(await observeFormerNode(etcd), undefined)).toEqual([]);
    const podman = host({ 'etc/cni/net.d/87-podman-bridge.conflist': '{}\n' });
    expect(formerNodeFindings(await observeFormerNode(podman), undefined)).toEqual([]);
  });
});

describe('the finding', () => {
  it("one finding: the evidence, kubeadm's own errors by command, and kubespray's reset for this inventory", async () => {
    const ev = await observeFormerNode(host(KUBEADM_CONTROL_PLANE));
    const f = formerNodeFindings(ev, { dir: '/opt/ks/kubespray', inventory: '/root/ks/inventory/lab/inventory.ini', node: 'node1' });
    expect(f).toHaveLength(1);
    expect([f[0]!.level, f[0]!.unknown]).toEqual(['warning', true]);
    const m = f[0]!.message;
    expect(m.startsWith('this host was a Kubernetes node (11 pieces of evidence: /etc/kubernetes/manifests/etcd.yaml, ')).toBe(true);
    expect(m).toContain(
      "kubeadm init's preflight would stop on [ERROR FileAvailable--etc-kubernetes-manifests-etcd.yaml]: /etc/kubernetes/manifests/etcd.yaml already exists, " +
        '[ERROR FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml]: /etc/kubernetes/manifests/kube-apiserver.yaml already exists, ' +
        '[ERROR FileAvailable--etc-kubernetes-manifests-kube-controller-manager.yaml]: /etc/kubernetes/manifests/kube-controller-manager.yaml already exists, ' +
        '[ERROR FileAvailable--etc-kubernetes-manifests-kube-scheduler.yaml]: /etc/kubernetes/manifests/kube-scheduler.yaml already exists, ' +
        '[ERROR DirAvailable--var-lib-etcd]: /var/lib/etcd is not empty',
    );
    expect(m).toContain(
      "kubeadm join's on [ERROR FileAvailable--etc-kubernetes-kubelet.conf]: /etc/kubernetes/kubelet.conf already exists, [ERROR FileAvailable--etc-kubernetes-pki-ca.crt]: /etc/kubernetes/pki/ca.crt already exists",
    );
    expect(m).toContain('in /opt/ks/kubespray: ansible-playbook -i /root/ks/inventory/lab/inventory.ini reset.yml --limit node1 -e reset_confirmation=yes');
    expect(m).toContain('it cannot be undone');
    expect(f[0]!.evidence).toHaveLength(11);
    expect(f[0]!.evidence![8]).toBe(
      "/var/lib/etcd: an etcd data directory (a new etcd finds the old cluster's members there) (kubeadm init: [ERROR DirAvailable--var-lib-etcd]: /var/lib/etcd is not empty)",
    );
  });

  it('without a kubespray section it names the playbook generically', async () => {
    const f = formerNodeFindings(await observeFormerNode(host({ 'etc/systemd/system/k3s.service': '[Service]\n' })), undefined);
    expect(f[0]!.message).toContain(
      "clear it before the install: kubespray's reset.yml for this node (ansible-playbook -i INVENTORY reset.yml --limit NODE -e reset_confirmation=yes)",
    );
    expect(f[0]!.message).not.toContain('preflight would stop');
  });
});

describe('in the plan', () => {
  it('--plan --root on a former node: the finding, and exit 2 (not ready); the same root without the leftovers: exit 0', async () => {
    const run = async (tree: Tree) => {
      const h = host({ ...tree, 'desired.yaml': 'reports_dir: /root/ks/preflight\nresources: []\n' });
      const r = await runCli(['--plan', '-f', path.join(h.root, 'desired.yaml'), '--root', h.root]);
      return { code: r.code, out: r.stdout };
    };
    const former = await run({ 'etc/kubernetes/manifests/kube-apiserver.yaml': 'kind: Pod\n' });
    expect(former.code).toBe(2);
    expect(former.out).toContain('warning [FormerNode]: this host was a Kubernetes node (1 piece of evidence: /etc/kubernetes/manifests/kube-apiserver.yaml)');
    // The summary names the check; it is no kubespray finding.
    expect(former.out).toContain('No changes, but FormerNode is not known to pass (the "unknown" warnings above).');
    expect(former.out).not.toContain('kubespray finding');
    const clean = await run({ 'etc/hostname': 'x\n' });
    expect(clean.code).toBe(0);
    expect(clean.out).not.toContain('Kubernetes node');
  });
});
