// The facts of a host that passes every acceptance checker, for the checkers'
// tests to vary one fact at a time: 2 CPUs, 1982 MB, Debian 12's cloud
// kernel, a full cgroup v2, every program kubeadm looks up, kubespray's
// defaults. Each value is written out by hand from the host it describes.
import type { AcceptanceFacts, CgroupFacts } from '../../src/acceptance/checker.js';
import { known } from '../../src/acceptance/checker.js';

export const EVERY_PROGRAM = ['conntrack', 'ip', 'iptables', 'mount', 'nsenter', 'ebtables', 'ethtool', 'socat', 'tc', 'touch'];
export const GiB = 2 ** 30;
export const ROOMY = { sizeBytes: 20 * GiB, availableBytes: 12 * GiB, inodes: 1_310_720, freeInodes: 1_000_000 };
export const FULL_V2: CgroupFacts = { version: 2, controllers: ['cpuset', 'cpu', 'io', 'memory', 'hugetlb', 'pids', 'rdma', 'misc'] };

/** A host that passes everything, with `over` replacing facts and the programs in `missing` not found in PATH. */
export function passingFacts(over: Partial<AcceptanceFacts> = {}, missing: string[] = []): AcceptanceFacts {
  return {
    cpus: known(2),
    memTotalMb: known(1982),
    kernelRelease: known('6.1.0-31-cloud-amd64'),
    cgroup: known(FULL_V2),
    programs: new Map(EVERY_PROGRAM.map((p) => [p, known(missing.includes(p) ? null : `/usr/bin/${p}`)])),
    kubeVersion: known('v1.31.4'),
    firewalld: known({ state: 'absent', how: 'no firewalld.service unit file' }),
    apiserverPort: known(6443),
    nodeName: known('node1'),
    nodeNameLookup: known({ resolves: true, how: '/etc/hosts:3' }),
    // Debian 12's own: systemd-timesyncd, enabled from sysinit.target.
    timeSync: known({ container: null, clients: [{ unit: 'systemd-timesyncd.service', runs: true, how: 'starts at boot' }] }),
    kubeletService: known({ state: 'enabled', entry: '/etc/systemd/system/kubelet.service', how: 'systemctl is-enabled: enabled' }),
    // A Debian 12 cloud image's: the provider's resolver, handed out by DHCP.
    resolvConf: known({ path: '/etc/resolv.conf', real: '/etc/resolv.conf', addresses: ['169.254.169.254'], beside: null }),
    // No container runtime of Debian's and no containerd config.
    runtimeCollision: known({ packages: [], systemdCgroupFalse: null, exists: { '/run/ostree-booted': false } }),
    // kubespray's cluster.yml play: proxy_disable_env, every proxy variable empty.
    kubeadmProxy: known({ https: null, noProxy: null, how: "the play's environment at playbooks/cluster.yml:34 over /etc/environment" }),
    eviction: known({
      thresholds: { 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%', 'imagefs.inodesFree': '5%' },
      from: 'defaults',
    }),
    // A 20 GiB root with 12 GiB and 1 M of its 1.3 M inodes free, holding both kubelet's and containerd's directories.
    diskSpace: known({ nodefs: { dir: '/var/lib/kubelet', usage: ROOMY }, imagefs: { dir: '/var/lib/containerd', usage: ROOMY } }),
    // Debian 12's stock server: no network-manager package, so no unit file; kubespray's default plugin.
    networkManager: known({ runs: null, active: known(false), main: null, dirs: {}, vethRule: { state: 'absent', file: '' } }),
    networkPlugin: known('calico'),
    // Nothing drops forwarded packets: no firewall, no saved rules, an ACCEPT policy.
    forward: known({ now: known([]), atBoot: [], docker: null }),
    // No firewall that starts at boot, and an empty ruleset.
    firewall: known({ now: known([]), atBoot: [] }),
    // kubespray v2.24.0's default: IPv4 only.
    ipv6Stack: known({ asked: false, why: 'enable_dual_stack_networks is false for this node (roles/kubespray-defaults/defaults/main/main.yml:216)' }),
    ...over,
  };
}
