// What a host keeps from having been a Kubernetes node: kubeadm's and
// kubelet's files, the data directories, kubelet's and k3s/rke2's units, and
// (live) the interfaces CNI plugins and kube-proxy create. Read only; every
// piece names its path. kubeadm's check names are kubeadm's own
// (cmd/kubeadm/app/preflight/checks.go: "FileAvailable-" / "DirAvailable-"
// and the path with every "/" as "-"), so a user can match them with
// kubeadm's output and --ignore-preflight-errors.
import path from 'node:path';
import type { TargetFs } from '../host.js';
import { SYSTEM_UNIT_PATH } from '../systemd/unit-dirs.js';
import { parseUnitFile } from '../systemd/unit-file.js';
import { execCommandsOf } from '../systemd/exec-command.js';

export interface NodeEvidence {
  /** The file, directory, unit file or interface (/sys/class/net/NAME). */
  path: string;
  what: string;
  /** Evidence of a Kubernetes past on its own; weak evidence (an etcd data directory, a CNI config) only adds to it. */
  strong: boolean;
  /** The kubeadm preflight check this piece fails, and in which command. */
  kubeadm?: { check: string; in: 'init' | 'join'; says: string };
}

const KUBERNETES_DIR = '/etc/kubernetes';
const MANIFESTS = `${KUBERNETES_DIR}/manifests`;
/** kubeadm init's FileAvailable checks: the static pods it writes. */
const STATIC_PODS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'etcd'];
/** kubeconfig files kubeadm writes; kubelet.conf and bootstrap-kubelet.conf are kubeadm join's FileAvailable checks. */
const KUBECONFIGS = ['admin.conf', 'super-admin.conf', 'kubelet.conf', 'bootstrap-kubelet.conf', 'controller-manager.conf', 'scheduler.conf'];
const JOIN_CHECKED = new Set(['kubelet.conf', 'bootstrap-kubelet.conf']);
const NODE_UNITS = ['kubelet.service', 'k3s.service', 'k3s-agent.service', 'rke2-server.service', 'rke2-agent.service'];
/** containerd 1.x's CRI plugin state: a directory per pod sandbox. */
const CRI_SANDBOXES = '/var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes';
/** Interfaces that CNI plugins, kube-proxy (IPVS) and nodelocaldns create: exact names, and prefixes. */
const INTERFACES = ['cni0', 'flannel.1', 'vxlan.calico', 'kube-ipvs0', 'nodelocaldns', 'weave', 'kube-bridge'];
const INTERFACE_PREFIXES = ['cali', 'cilium_', 'flannel', 'kube-'];

/** kubeadm's name for a check on `p`: its kind and the path with every "/" as "-". */
export function kubeadmCheckName(kind: 'FileAvailable' | 'DirAvailable', p: string): string {
  return `${kind}-${p.split('/').join('-')}`;
}

// kubeadm's checks stat with os.Stat, which follows links: a data directory an admin moved
// (/var/lib/etcd -> /data/etcd) counts, a link to nothing does not. The host clamps every
// link to the root.
async function nonEmptyDir(host: TargetFs, p: string): Promise<string[] | null> {
  const entries = await host.readDir(p);
  return entries && entries.length > 0 ? entries.map((e) => e.name) : null;
}

async function fileThere(host: TargetFs, p: string): Promise<boolean> {
  const st = await host.lstat(p);
  if (!st?.isSymbolicLink()) return st !== null;
  return (await host.lstat(await host.realTarget(p))) !== null;
}

async function kubernetesDirEvidence(host: TargetFs): Promise<NodeEvidence[]> {
  const out: NodeEvidence[] = [];
  for (const name of (await nonEmptyDir(host, MANIFESTS)) ?? []) {
    const p = `${MANIFESTS}/${name}`;
    const pod = STATIC_PODS.find((s) => name === `${s}.yaml`);
    out.push({
      path: p,
      what: pod ? `the static pod manifest of ${pod}` : 'a static pod manifest',
      strong: true,
      ...(pod ? { kubeadm: { check: kubeadmCheckName('FileAvailable', p), in: 'init' as const, says: `${p} already exists` } } : {}),
    });
  }
  for (const name of KUBECONFIGS) {
    const p = `${KUBERNETES_DIR}/${name}`;
    if (!(await fileThere(host, p))) continue;
    out.push({
      path: p,
      what: 'a kubeconfig kubeadm writes',
      strong: true,
      ...(JOIN_CHECKED.has(name) ? { kubeadm: { check: kubeadmCheckName('FileAvailable', p), in: 'join' as const, says: `${p} already exists` } } : {}),
    });
  }
  const pki = `${KUBERNETES_DIR}/pki`;
  if (await nonEmptyDir(host, pki)) {
    const ca = `${pki}/ca.crt`;
    const hasCa = await fileThere(host, ca);
    out.push({
      path: pki,
      what: `the cluster's certificates${hasCa ? ' (ca.crt among them)' : ''}`,
      strong: true,
      // kubeadm join on a worker checks its CA path (cfg.CACertPath), /etc/kubernetes/pki/ca.crt by default.
      ...(hasCa ? { kubeadm: { check: kubeadmCheckName('FileAvailable', ca), in: 'join' as const, says: `${ca} already exists` } } : {}),
    });
  }
  return out;
}

async function dataDirEvidence(host: TargetFs): Promise<NodeEvidence[]> {
  const out: NodeEvidence[] = [];
  if (await nonEmptyDir(host, '/var/lib/kubelet')) {
    const config = await fileThere(host, '/var/lib/kubelet/config.yaml');
    out.push({
      path: '/var/lib/kubelet',
      what: config
        ? "kubelet's state, with config.yaml (kubespray's kubeadm_already_run stat in roles/kubernetes/control-plane/tasks/kubeadm-setup.yml then skips kubeadm init)"
        : "kubelet's state",
      strong: true,
    });
  }
  if (await nonEmptyDir(host, '/var/lib/etcd')) {
    out.push({
      path: '/var/lib/etcd',
      what: "an etcd data directory (a new etcd finds the old cluster's members there)",
      strong: false,
      kubeadm: { check: kubeadmCheckName('DirAvailable', '/var/lib/etcd'), in: 'init', says: '/var/lib/etcd is not empty' },
    });
  }
  for (const dir of ['/etc/rancher', '/var/lib/rancher']) {
    if (await nonEmptyDir(host, dir)) out.push({ path: dir, what: 'k3s or rke2 configuration and state', strong: true });
  }
  // containerd's CRI plugin keeps a directory per pod sandbox under its root (pkg/cri: RootDir/sandboxes/ID, the
  // RootDir being /var/lib/containerd/io.containerd.grpc.v1.cri); only a CRI client (kubelet, crictl runp) makes
  // sandboxes, so pods ran here.
  const sandboxes = await nonEmptyDir(host, CRI_SANDBOXES);
  if (sandboxes)
    out.push({
      path: CRI_SANDBOXES,
      what: `containerd's CRI pod sandboxes (${sandboxes.length} of them): pods ran here through the CRI, as kubelet runs them`,
      strong: true,
    });
  const cni = await nonEmptyDir(host, '/etc/cni/net.d');
  if (cni) out.push({ path: '/etc/cni/net.d', what: `CNI network configuration (${cni.join(', ')})`, strong: false });
  return out;
}

async function unitEvidence(host: TargetFs): Promise<NodeEvidence[]> {
  const out: NodeEvidence[] = [];
  for (const unit of NODE_UNITS) {
    for (const dir of SYSTEM_UNIT_PATH) {
      const p = path.posix.join(dir, unit);
      if (!(await fileThere(host, p))) continue;
      out.push({ path: p, what: `the unit file of ${unit}`, strong: true });
      break;
    }
  }
  // A host etcd (kubespray's default etcd_deployment_type: host) beside the rest; alone it is any etcd (Debian's etcd-server).
  for (const dir of SYSTEM_UNIT_PATH) {
    const p = path.posix.join(dir, 'etcd.service');
    if (!(await fileThere(host, p))) continue;
    out.push({ path: p, what: 'the unit file of etcd.service (a host etcd, as kubespray runs it by default)', strong: false });
    break;
  }
  return [...out, ...(await kubeletByProgram(host))];
}

/** The directories an admin writes units in by hand (a distribution's package names its kubelet unit kubelet.service). */
const ADMIN_UNIT_DIRS = ['/etc/systemd/system', '/usr/local/lib/systemd/system'];

/** A service under another name whose ExecStart= runs a program named kubelet (read as systemd reads the line). */
async function kubeletByProgram(host: TargetFs): Promise<NodeEvidence[]> {
  const out: NodeEvidence[] = [];
  for (const dir of ADMIN_UNIT_DIRS) {
    for (const e of (await host.readDir(dir)) ?? []) {
      if (!e.name.endsWith('.service') || NODE_UNITS.includes(e.name)) continue;
      const file = path.posix.join(dir, e.name);
      const text = await host.readFile(file).catch(() => null);
      if (text === null) continue;
      const starts = execCommandsOf(parseUnitFile(text, file).directives, 'ExecStart');
      const hit = starts.find((x) => x.command?.path != null && path.posix.basename(x.command.path) === 'kubelet');
      if (hit) out.push({ path: file, what: `the unit file of ${e.name}, which runs kubelet (${file}:${hit.directive.line})`, strong: true });
    }
  }
  return out;
}

/** Live only: the running kernel's network interfaces (an image has none). */
async function interfaceEvidence(host: TargetFs): Promise<NodeEvidence[]> {
  if (!host.live) return [];
  const names = ((await host.readDir('/sys/class/net')) ?? []).map((e) => e.name).sort();
  return names
    .filter((n) => INTERFACES.includes(n) || INTERFACE_PREFIXES.some((p) => n.startsWith(p)))
    .map((n) => ({ path: `/sys/class/net/${n}`, what: `the network interface ${n}, which a CNI plugin or kube-proxy creates`, strong: true }));
}

/** Every piece of evidence on the host, in a fixed order: /etc/kubernetes, data directories, units, interfaces. */
export async function observeFormerNode(host: TargetFs): Promise<NodeEvidence[]> {
  return [...(await kubernetesDirEvidence(host)), ...(await dataDirEvidence(host)), ...(await unitEvidence(host)), ...(await interfaceEvidence(host))];
}
