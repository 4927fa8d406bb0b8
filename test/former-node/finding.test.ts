// The FormerNode finding built from evidence written by hand (the evidence
// itself, read from trees, is evidence.test.ts): nothing without a strong
// piece, kubeadm's errors grouped by the command that stops, the reset
// command for the inventory, and kubespray's answers per path.
import { describe, expect, it } from 'vitest';
import { FORMER_NODE_CHECK, formerNodeFindings } from '../../src/former-node/finding.js';
import type { NodeEvidence } from '../../src/former-node/evidence.js';
import type { KubesprayClears } from '../../src/former-node/kubespray-clears.js';

const KUBELET_CONF: NodeEvidence = {
  path: '/etc/kubernetes/kubelet.conf',
  what: "kubelet's kubeconfig",
  strong: true,
  kubeadm: { check: 'FileAvailable--etc-kubernetes-kubelet.conf', in: 'join', says: '/etc/kubernetes/kubelet.conf already exists' },
};
const APISERVER: NodeEvidence = {
  path: '/etc/kubernetes/manifests/kube-apiserver.yaml',
  what: 'a static pod',
  strong: true,
  kubeadm: {
    check: 'FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml',
    in: 'init',
    says: '/etc/kubernetes/manifests/kube-apiserver.yaml already exists',
  },
};
const CNI: NodeEvidence = { path: '/etc/cni/net.d', what: 'CNI configuration', strong: false };
const K3S: NodeEvidence = { path: '/etc/systemd/system/k3s.service', what: 'a k3s unit', strong: true };
const KS = { dir: '/opt/ks', inventory: '/opt/ks/inventory/lab/hosts.yaml', node: 'cp1' };

describe('formerNodeFindings', () => {
  it('no evidence, or weak evidence alone (a CNI config, an etcd directory): no finding', () => {
    expect(formerNodeFindings([], KS)).toEqual([]);
    expect(formerNodeFindings([CNI, { ...CNI, path: '/var/lib/etcd' }], KS)).toEqual([]);
  });
  it('one strong piece: one warning, unknown, "1 piece", no kubeadm clause, the generic reset without a kubespray section', () => {
    const [f, ...rest] = formerNodeFindings([K3S], undefined);
    expect(rest).toEqual([]);
    expect([f!.level, f!.unknown, f!.check]).toEqual(['warning', true, FORMER_NODE_CHECK]);
    expect(f!.message.startsWith('this host was a Kubernetes node (1 piece of evidence: /etc/systemd/system/k3s.service); whether kubespray')).toBe(true);
    expect(f!.message).toContain(
      "clear it before the install: kubespray's reset.yml for this node (ansible-playbook -i INVENTORY reset.yml --limit NODE -e reset_confirmation=yes)",
    );
    expect(f!.evidence).toEqual(['/etc/systemd/system/k3s.service: a k3s unit']);
  });
  it("kubeadm's errors by command, init before join; weak pieces listed beside strong ones; the reset for this inventory and node", () => {
    const [f] = formerNodeFindings([KUBELET_CONF, CNI, APISERVER], KS);
    expect(f!.message).toContain('(3 pieces of evidence: /etc/kubernetes/kubelet.conf, /etc/cni/net.d, /etc/kubernetes/manifests/kube-apiserver.yaml)');
    expect(f!.message).toContain(
      "; kubeadm init's preflight would stop on [ERROR FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml]: /etc/kubernetes/manifests/kube-apiserver.yaml already exists; kubeadm join's on [ERROR FileAvailable--etc-kubernetes-kubelet.conf]: /etc/kubernetes/kubelet.conf already exists;",
    );
    expect(f!.message).toContain('in /opt/ks: ansible-playbook -i /opt/ks/inventory/lab/hosts.yaml reset.yml --limit cp1 -e reset_confirmation=yes');
    expect(f!.evidence).toEqual([
      "/etc/kubernetes/kubelet.conf: kubelet's kubeconfig (kubeadm join: [ERROR FileAvailable--etc-kubernetes-kubelet.conf]: /etc/kubernetes/kubelet.conf already exists)",
      '/etc/cni/net.d: CNI configuration',
      '/etc/kubernetes/manifests/kube-apiserver.yaml: a static pod (kubeadm init: [ERROR FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml]: /etc/kubernetes/manifests/kube-apiserver.yaml already exists)',
    ]);
  });
  it("with kubespray's answers: the sentence for all paths in the message, each path's clause on its evidence line", () => {
    const clears: KubesprayClears = {
      reset: new Map([
        ['/etc/systemd/system/k3s.service', { clears: false }],
        ['/etc/cni/net.d', { clears: true, by: { file: 'roles/reset/tasks/main.yml', line: 300 } }],
      ]),
      cluster: new Map(),
      clusterRoles: ['kubernetes/preinstall'],
    };
    const [f] = formerNodeFindings([K3S, CNI], KS, clears);
    expect(f!.message).toContain(
      "; kubespray's reset.yml removes 1 of 2, not /etc/systemd/system/k3s.service (evaluated from roles/reset for this node); cluster.yml clears none of them",
    );
    expect(f!.evidence).toEqual([
      '/etc/systemd/system/k3s.service: a k3s unit; reset.yml does not remove it',
      '/etc/cni/net.d: CNI configuration; reset.yml removes it (roles/reset/tasks/main.yml:300)',
    ]);
  });
});
