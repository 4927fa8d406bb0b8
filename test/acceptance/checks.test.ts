// Each checker against facts that fail it and facts that pass it. The
// thresholds and messages are kubeadm's, written out here by hand from
// kubernetes/kubernetes cmd/kubeadm/app/constants/constants.go
// (ControlPlaneNumCPU = 2, ControlPlaneMem = 1700), preflight/checks.go and
// checks_linux.go (InPathCheck: "<program> not found in system path";
// addExecChecks' mandatory and optional lists), and k8s.io/system-validators
// (DefaultSysSpec: kernel 5.4, 5.10, 5.15 or 6+; cgroup v2 controllers cpu,
// cpuset, devices, freezer, memory, pids; optional hugetlb, io).
import { describe, expect, it } from 'vitest';
import type { AcceptanceFacts, CgroupFacts, Checker } from '../../src/acceptance/checker.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { numCpuCheck } from '../../src/acceptance/num-cpu.js';
import { memCheck } from '../../src/acceptance/mem.js';
import { fileExistingChecks, majorMinor } from '../../src/acceptance/file-existing.js';
import { systemVerificationCheck } from '../../src/acceptance/system-verification.js';
import { CHECKERS } from '../../src/acceptance/index.js';
import { firewalldCheck } from '../../src/acceptance/firewalld.js';
import { hostnameCheck, qualifiedNameProblems } from '../../src/acceptance/hostname.js';
import { hostsFileLine } from '../../src/acceptance/hosts-file.js';
import { timeSyncCheck } from '../../src/acceptance/time-sync.js';
import { serviceKubeletCheck } from '../../src/acceptance/service-kubelet.js';
import { freeSpaceCheck } from '../../src/acceptance/free-space.js';
import { httpProxyCheck, httpProxyCidrCheck } from '../../src/acceptance/http-proxy.js';
import { evictionThresholds, thresholdAmount } from '../../src/acceptance/eviction.js';

const EVERY_PROGRAM = ['conntrack', 'ip', 'iptables', 'mount', 'nsenter', 'ebtables', 'ethtool', 'socat', 'tc', 'touch'];
const GiB = 2 ** 30;
const ROOMY = { sizeBytes: 20 * GiB, availableBytes: 12 * GiB, inodes: 1_310_720, freeInodes: 1_000_000 };
const FULL_V2: CgroupFacts = { version: 2, controllers: ['cpuset', 'cpu', 'io', 'memory', 'hugetlb', 'pids', 'rdma', 'misc'] };

/** A host that passes everything: 2 CPUs, 1982 MB, Debian 12's kernel, a full cgroup v2, every program. */
function facts(over: Partial<AcceptanceFacts> = {}, missing: string[] = []): AcceptanceFacts {
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
    ...over,
  };
}
const byName = (name: string): Checker => CHECKERS.find((c) => c.name === name)!;

describe('the checkers are named as kubeadm names them', () => {
  it('NumCPU, Mem, FileExisting-<program> for every program addExecChecks lists, SystemVerification', () => {
    expect(CHECKERS.map((c) => c.name)).toEqual([
      'NumCPU',
      'Mem',
      'Firewalld',
      'HTTPProxy',
      'HTTPProxyCIDR',
      'FileExisting-conntrack',
      'FileExisting-ip',
      'FileExisting-iptables',
      'FileExisting-mount',
      'FileExisting-nsenter',
      'FileExisting-ebtables',
      'FileExisting-ethtool',
      'FileExisting-socat',
      'FileExisting-tc',
      'FileExisting-touch',
      'SystemVerification',
      'Hostname',
      'Service-Kubelet',
      'TimeSync',
      'ResolvConfLoop',
      'ContainerRuntimeCollision',
      'FreeSpace',
      'NetworkManagerCNI',
      'IptablesForwardDrop',
      'ControlPlanePortsFirewalled',
    ]);
    expect(CHECKERS.filter((c) => c.runsOn === 'control-plane').map((c) => c.name)).toEqual(['NumCPU', 'Mem', 'Firewalld', 'HTTPProxy', 'HTTPProxyCIDR']);
  });

  it('a host that passes them all: every check passes, none skipped', () => {
    expect(CHECKERS.map((c) => c.check(facts()))).toEqual(CHECKERS.map(() => ({ warnings: [], errors: [] })));
  });
});

describe('NumCPU: at least 2 CPUs on a control-plane node', () => {
  it("1 CPU is an error with kubeadm's words; 2 pass", () => {
    expect(numCpuCheck.check(facts({ cpus: known(1) }))).toEqual({ warnings: [], errors: ['the number of available CPUs 1 is less than the required 2'] });
    expect(numCpuCheck.check(facts({ cpus: known(2) }))).toEqual({ warnings: [], errors: [] });
  });
  it('an unknown count is skipped with its reason, never guessed', () => {
    expect(numCpuCheck.check(facts({ cpus: notKnown('offline') }))).toEqual({ skipped: 'offline' });
  });
});

describe('Mem: at least 1700 MB on a control-plane node', () => {
  it('1699 MB is an error; 1700 MB passes', () => {
    expect(memCheck.check(facts({ memTotalMb: known(1699) }))).toEqual({ warnings: [], errors: ['the system RAM (1699 MB) is less than the minimum 1700 MB'] });
    expect(memCheck.check(facts({ memTotalMb: known(1700) }))).toEqual({ warnings: [], errors: [] });
  });
});

describe('FileExisting: the programs kubeadm looks up in PATH', () => {
  it('a missing mandatory program (ip, iptables, mount, nsenter) is an error', () => {
    for (const p of ['ip', 'iptables', 'mount', 'nsenter']) {
      expect(byName(`FileExisting-${p}`).check(facts({}, [p]))).toEqual({ warnings: [], errors: [`${p} not found in system path`] });
    }
  });
  it('a missing optional one (ebtables, ethtool, socat, tc, touch) is a warning', () => {
    for (const p of ['ebtables', 'ethtool', 'socat', 'tc', 'touch']) {
      expect(byName(`FileExisting-${p}`).check(facts({}, [p]))).toEqual({ warnings: [`${p} not found in system path`], errors: [] });
    }
  });
  it('conntrack: an error for Kubernetes 1.31, not checked for 1.32, skipped when kube_version is not known', () => {
    const c = byName('FileExisting-conntrack');
    expect(c.check(facts({ kubeVersion: known('v1.31.4') }, ['conntrack']))).toEqual({ warnings: [], errors: ['conntrack not found in system path'] });
    expect(c.check(facts({ kubeVersion: known('v1.32.0') }, ['conntrack']))).toEqual({ warnings: [], errors: [] });
    expect(c.check(facts({ kubeVersion: known('1.33.1') }, ['conntrack']))).toEqual({ warnings: [], errors: [] });
    expect(c.check(facts({ kubeVersion: notKnown('no checkout') }, ['conntrack']))).toMatchObject({ skipped: expect.stringContaining('no checkout') });
    // Present: nothing to say whatever the version.
    expect(c.check(facts({ kubeVersion: notKnown('no checkout') }))).toEqual({ warnings: [], errors: [] });
  });
  it('versions are read as major.minor', () => {
    expect([majorMinor('v1.31.4'), majorMinor('1.32'), majorMinor('latest'), majorMinor('1.')]).toEqual([[1, 31], [1, 32], null, null]);
  });
  it('a lookup that could not be done is skipped with its reason', () => {
    const f = facts();
    (f.programs as Map<string, ReturnType<typeof notKnown<string | null>>>).set('iptables', notKnown('PATH has the relative entry "bin"'));
    expect(fileExistingChecks.find((c) => c.name === 'FileExisting-iptables')!.check(f)).toEqual({ skipped: 'PATH has the relative entry "bin"' });
  });
});

describe('SystemVerification: the kernel release and the cgroup controllers', () => {
  it("kernels outside DefaultSysSpec's versions are an error; 5.4, 5.10, 5.15 and 6.x pass", () => {
    for (const bad of ['4.19.0-27-amd64', '5.11.0-1-amd64', '3.10.0-1160.el7.x86_64']) {
      expect(systemVerificationCheck.check(facts({ kernelRelease: known(bad) }))).toEqual({ warnings: [], errors: [`unsupported kernel release: ${bad}`] });
    }
    for (const good of ['5.4.0-150-generic', '5.10.0-28-amd64', '5.15.0-91-generic', '6.1.0-31-amd64', '6.12.22-amd64']) {
      expect(systemVerificationCheck.check(facts({ kernelRelease: known(good) }))).toEqual({ warnings: [], errors: [] });
    }
  });
  it('cgroup v2 without cpuset and pids: an error naming both; without hugetlb only: a warning', () => {
    const noCpusetPids: CgroupFacts = { version: 2, controllers: ['cpu', 'io', 'memory', 'hugetlb'] };
    expect(systemVerificationCheck.check(facts({ cgroup: known(noCpusetPids) }))).toEqual({ warnings: [], errors: ['missing required cgroups: cpuset pids'] });
    const noHugetlb: CgroupFacts = { version: 2, controllers: ['cpuset', 'cpu', 'io', 'memory', 'pids'] };
    expect(systemVerificationCheck.check(facts({ cgroup: known(noHugetlb) }))).toEqual({ warnings: ['missing optional cgroups: hugetlb'], errors: [] });
  });
  it('cgroup v2: devices and freezer are never in cgroup.controllers and count as present', () => {
    expect(systemVerificationCheck.check(facts({ cgroup: known({ version: 2, controllers: ['cpuset', 'cpu', 'io', 'memory', 'hugetlb', 'pids'] }) }))).toEqual({
      warnings: [],
      errors: [],
    });
  });
  it("cgroup v1: kubeadm's maintenance-mode warning, and v1's own list (cpuacct, devices, freezer needed)", () => {
    const v1: CgroupFacts = { version: 1, controllers: ['cpuset', 'cpu', 'cpuacct', 'blkio', 'memory', 'devices', 'freezer', 'pids', 'hugetlb'] };
    expect(systemVerificationCheck.check(facts({ cgroup: known(v1) }))).toEqual({
      warnings: ['cgroups v1 support is in maintenance mode, please migrate to cgroups v2'],
      errors: [],
    });
    const v1NoFreezer: CgroupFacts = { version: 1, controllers: ['cpuset', 'cpu', 'cpuacct', 'blkio', 'memory', 'devices', 'pids', 'hugetlb'] };
    expect(systemVerificationCheck.check(facts({ cgroup: known(v1NoFreezer) }))).toMatchObject({ errors: ['missing required cgroups: freezer'] });
  });
  it("a container (its controllers the manager's) is skipped with the reason", () => {
    expect(systemVerificationCheck.check(facts({ cgroup: notKnown('this is a container') }))).toEqual({ skipped: 'this is a container' });
  });
});

describe('Firewalld: a warning when firewalld is active, naming the API server and kubelet ports', () => {
  it("active: kubeadm's warning with kube_apiserver_port and 10250; absent or inactive: nothing", () => {
    expect(
      firewalldCheck.check(facts({ firewalld: known({ state: 'active', how: 'systemctl: firewalld.service is active' }), apiserverPort: known(8443) })),
    ).toEqual({
      warnings: [
        'firewalld is active, please ensure ports [8443 10250] are open or your cluster may not function correctly (systemctl: firewalld.service is active)',
      ],
      errors: [],
    });
    for (const state of ['absent', 'inactive'] as const)
      expect(firewalldCheck.check(facts({ firewalld: known({ state, how: '' }) }))).toEqual({ warnings: [], errors: [] });
  });
  it('not known: skipped with the reason', () => {
    expect(firewalldCheck.check(facts({ firewalld: notKnown('unit files unreadable') }))).toEqual({ skipped: 'unit files unreadable' });
  });
});

describe("Hostname: kubespray's node name, a qualified name that resolves", () => {
  it('a name that does not resolve is a warning; one that does passes', () => {
    expect(hostnameCheck.check(facts({ nodeNameLookup: known({ resolves: false, how: 'not in /etc/hosts, and DNS has no address for it' }) }))).toEqual({
      warnings: ['hostname "node1" could not be reached (not in /etc/hosts, and DNS has no address for it)'],
      errors: [],
    });
  });
  it('an invalid name is a warning even when the lookup is not known', () => {
    const r = hostnameCheck.check(facts({ nodeName: known('-node1'), nodeNameLookup: notKnown('offline') }));
    expect(r).toMatchObject({ errors: [], warnings: [expect.stringContaining('invalid node name format "-node1": name part must consist of alphanumeric')] });
    expect(hostnameCheck.check(facts({ nodeNameLookup: notKnown('offline') }))).toEqual({ skipped: 'offline' });
  });
  it("IsQualifiedName: apimachinery's own examples", () => {
    // Valid and invalid cases from k8s.io/apimachinery/pkg/util/validation's TestIsQualifiedName, written out by hand.
    for (const ok of [
      'simple',
      'now-with-dashes',
      '1-starts-with-num',
      '1234',
      'simple/simple',
      'now-with-dashes/simple',
      'example.com/Uppercase',
      'a'.repeat(63),
      'node_1.lab',
    ])
      expect(qualifiedNameProblems(ok), ok).toEqual([]);
    for (const bad of [
      'nospecialchars%^=@',
      'cantendwithadash-',
      '-cantstartwithadash',
      'only/one/slash',
      'Example.com/abc',
      'example_com/abc',
      '/simple',
      'simple/',
      'a'.repeat(64),
      '',
    ])
      expect(qualifiedNameProblems(bad).length, bad).toBeGreaterThan(0);
  });
});

describe("/etc/hosts read as Go's resolver reads it", () => {
  const HOSTS = [
    '127.0.0.1\tlocalhost',
    '127.0.1.1\tdebian.lab debian',
    '# 10.0.0.5 node1',
    'notanip node2',
    '10.0.0.6 Node3. # comment',
    'fe80::1%eth0 node4',
    '',
  ].join('\n');
  it('names and aliases, case-insensitively and without a trailing dot; comments and lines without an address do not count', () => {
    expect(['localhost', 'debian', 'DEBIAN.lab', 'node1', 'node2', 'node3', 'node3.', 'node4', 'node5'].map((n) => hostsFileLine(HOSTS, n))).toEqual([
      1,
      2,
      2,
      null,
      null,
      5,
      5,
      6,
      null,
    ]);
  });
});

describe('TimeSync: not a kubeadm check; a warning when no time client runs', () => {
  const clients = (c: { unit: string; runs: boolean; how: string }[], container: string | null = null) => facts({ timeSync: known({ container, clients: c }) });
  const WORDS =
    'no time synchronisation: none of chrony.service, systemd-timesyncd.service, ntpsec.service, ntp.service, openntpd.service runs or starts at boot';

  it('marked as ours, with what breaks, and named by the check-name grammar', () => {
    expect(timeSyncCheck.breaksLater).toMatch(/etcd/);
    expect(timeSyncCheck.name).toMatch(/^[A-Za-z][A-Za-z0-9._-]*$/);
  });
  it('none installed: a warning saying so; an installed one that does not run is named with why', () => {
    expect(timeSyncCheck.check(clients([]))).toEqual({ warnings: [`${WORDS} (none is installed)`], errors: [] });
    expect(timeSyncCheck.check(clients([{ unit: 'chrony.service', runs: false, how: 'masked' }]))).toEqual({
      warnings: [`${WORDS} (chrony.service: masked)`],
      errors: [],
    });
  });
  it('any one client that runs passes, whichever it is', () => {
    const off = { unit: 'systemd-timesyncd.service', runs: false, how: 'does not start at boot; systemctl: inactive' };
    expect(timeSyncCheck.check(clients([off, { unit: 'chrony.service', runs: true, how: 'starts at boot' }]))).toEqual({ warnings: [], errors: [] });
  });
  it("a container is not warned: its clock is the host kernel's", () => {
    expect(timeSyncCheck.check(clients([], '/run/systemd/container: "systemd-nspawn"'))).toEqual({ warnings: [], errors: [] });
  });
  it('unit files that cannot be read: skipped with the reason', () => {
    expect(timeSyncCheck.check(facts({ timeSync: notKnown('the unit files cannot be read: EACCES') }))).toEqual({
      skipped: 'the unit files cannot be read: EACCES',
    });
  });
});

describe("Service-Kubelet: kubeadm's ServiceCheck for kubelet, without CheckIfActive", () => {
  const unit = (state: 'absent' | 'disabled' | 'enabled' | 'masked', how: string) =>
    facts({ kubeletService: known({ state, entry: state === 'absent' ? null : '/etc/systemd/system/kubelet.service', how }) });
  it("absent: kubeadm's 'does not exist' warning; not enabled or masked: its 'please run' warning; never an error", () => {
    expect(serviceKubeletCheck.check(unit('absent', 'no kubelet.service unit file'))).toEqual({ warnings: ['kubelet service does not exist'], errors: [] });
    expect(serviceKubeletCheck.check(unit('disabled', 'systemctl is-enabled: disabled'))).toEqual({
      warnings: ["kubelet service is not enabled, please run 'systemctl enable kubelet.service' (systemctl is-enabled: disabled)"],
      errors: [],
    });
    expect(serviceKubeletCheck.check(unit('masked', 'masked by /run/systemd/system/kubelet.service'))).toEqual({
      warnings: ["kubelet service is not enabled, please run 'systemctl enable kubelet.service' (masked by /run/systemd/system/kubelet.service)"],
      errors: [],
    });
  });
  it('enabled passes whether or not it runs (CheckIfActive is false); not known is skipped with the reason', () => {
    expect(serviceKubeletCheck.check(unit('enabled', 'systemctl is-enabled: enabled'))).toEqual({ warnings: [], errors: [] });
    expect(serviceKubeletCheck.check(facts({ kubeletService: notKnown('no bus') }))).toEqual({ skipped: 'no bus' });
    expect(serviceKubeletCheck.runsOn).toBe('every node');
  });
});

// kubelet's hard eviction defaults on Linux, written out from kubernetes/kubernetes
// pkg/kubelet/eviction/defaults_linux.go: nodefs.available<10%, nodefs.inodesFree<5%,
// imagefs.available<15%, imagefs.inodesFree<5%; a threshold is "signal < value" (evicted below it).
describe("FreeSpace: kubelet's hard eviction thresholds for nodefs and imagefs, before kubelet first starts", () => {
  const disk = (usage: typeof ROOMY, imagefs: typeof ROOMY | null = usage) =>
    facts({ diskSpace: known({ nodefs: { dir: '/var/lib/kubelet', usage }, imagefs: imagefs && { dir: '/var/lib/containerd', usage: imagefs } }) });
  it('a roomy disk passes; 1.5 GiB of 20 GiB (7.5 %) is under both the 10 % nodefs and the 15 % imagefs threshold of one shared file system', () => {
    expect(freeSpaceCheck.check(facts())).toEqual({ warnings: [], errors: [] });
    const r = freeSpaceCheck.check(disk({ ...ROOMY, availableBytes: 1.5 * GiB }));
    expect(r).toEqual({
      warnings: [
        "nodefs.available on the file system of /var/lib/kubelet: 1.5 GiB available (7.5% of 20.0 GiB), under kubelet's hard eviction threshold nodefs.available<10% (defaults)",
        "imagefs.available on the file system of /var/lib/containerd: 1.5 GiB available (7.5% of 20.0 GiB), under kubelet's hard eviction threshold imagefs.available<15% (defaults)",
      ],
      errors: [],
    });
  });
  it('2.5 GiB of 20 GiB (12.5 %) is above nodefs 10 % but under imagefs 15 %; inodes are judged the same way; btrfs (no inode count) has no inode signal', () => {
    expect(freeSpaceCheck.check(disk({ ...ROOMY, availableBytes: 2.5 * GiB }))).toMatchObject({
      warnings: [expect.stringMatching(/^imagefs\.available .*\(12\.5% of 20\.0 GiB\)/)],
    });
    // 5 % of 1,310,720 inodes is 65,536: 65,535 free is under it, 65,536 is not.
    expect(freeSpaceCheck.check(disk({ ...ROOMY, freeInodes: 65_535 }, null))).toMatchObject({
      warnings: [expect.stringMatching(/^nodefs\.inodesFree .*: 65535 inodes free/)],
    });
    expect(freeSpaceCheck.check(disk({ ...ROOMY, freeInodes: 65_536 }, null))).toEqual({ warnings: [], errors: [] });
    expect(freeSpaceCheck.check(disk({ ...ROOMY, inodes: 0, freeInodes: 0 }))).toEqual({ warnings: [], errors: [] });
  });
  it("kubespray's eviction_hard replaces kubelet's defaults whole: a signal it does not name has no threshold", () => {
    const only = evictionThresholds({ 'nodefs.available': '3Gi', 'memory.available': '500Mi' }, 'inventory eviction_hard');
    expect(only).toEqual(known({ thresholds: { 'nodefs.available': '3Gi' }, from: "kubespray's inventory eviction_hard" }));
    const r = freeSpaceCheck.check({ ...disk({ ...ROOMY, availableBytes: 2.5 * GiB }), eviction: only });
    expect(r).toMatchObject({
      warnings: [expect.stringMatching(/^nodefs\.available .*threshold nodefs\.available<3Gi \(kubespray's inventory eviction_hard\)$/)],
    });
    expect(evictionThresholds({}, 'x:1 eviction_hard')).toMatchObject(known({ thresholds: { 'imagefs.available': '15%' } }));
    expect(evictionThresholds(['nodefs.available<1Gi'], 'x:1 eviction_hard')).toEqual(notKnown('x:1 eviction_hard is ["nodefs.available<1Gi"], not a mapping'));
  });
  it('thresholds as kubelet reads them: a percentage of the total, or a resource.Quantity; anything else is not judged', () => {
    expect([
      thresholdAmount('10%', 1000),
      thresholdAmount('500Mi', 0),
      thresholdAmount('2G', 0),
      thresholdAmount('1000', 0),
      thresholdAmount('1.5Ki', 0),
    ]).toEqual([100, 500 * 2 ** 20, 2e9, 1000, 1536]);
    expect([thresholdAmount('ten', 1), thresholdAmount('101%', 1), thresholdAmount('%', 1), thresholdAmount('1Zi', 1), thresholdAmount('', 1)]).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
  });
  it('offline or without a checkout: skipped with the reason', () => {
    expect(freeSpaceCheck.check(facts({ diskSpace: notKnown('offline') }))).toEqual({ skipped: 'offline' });
    expect(freeSpaceCheck.check(facts({ eviction: notKnown('no checkout') }))).toEqual({ skipped: 'no checkout' });
  });
});

describe("HTTPProxy and HTTPProxyCIDR: kubeadm's proxy checks on the environment kubespray gives kubeadm", () => {
  it('no https proxy in that environment: both pass', () => {
    expect(httpProxyCheck.check(facts())).toEqual({ warnings: [], errors: [] });
    expect(httpProxyCidrCheck.check(facts())).toEqual({ warnings: [], errors: [] });
  });
  it('a proxy kubeadm will have: unknown, naming where it comes from and the NO_PROXY beside it (Go decides by NO_PROXY)', () => {
    const proxied = facts({
      kubeadmProxy: known({
        https: { value: 'http://proxy:3128', where: '/etc/environment:2' },
        noProxy: { value: 'localhost,10.0.0.0/8', where: '/etc/environment:3' },
        how: "the play at cluster.yml:75 sets no environment, so the login's (/etc/environment)",
      }),
    });
    expect(httpProxyCheck.check(proxied)).toEqual({
      unknown:
        'kubeadm runs with the https proxy "http://proxy:3128" (/etc/environment:2; the play at cluster.yml:75 sets no environment, so the login\'s (/etc/environment)); whether NO_PROXY is "localhost,10.0.0.0/8" (/etc/environment:3) excludes the node\'s API address is not judged here',
    });
    expect(httpProxyCidrCheck.check(proxied)).toMatchObject({ unknown: expect.stringContaining('excludes the service and pod ranges') });
    expect(httpProxyCheck.check(facts({ kubeadmProxy: notKnown('no play runs kubernetes/control-plane') }))).toEqual({
      skipped: 'no play runs kubernetes/control-plane',
    });
  });
});
