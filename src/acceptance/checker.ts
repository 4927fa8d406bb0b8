// kubeadm's preflight, one checker per check, in kubeadm's own shape
// (kubernetes/kubernetes cmd/kubeadm/app/preflight/checks.go, the Checker
// interface: a Name and a Check returning warnings and errors), so a user can
// match each line with what `kubeadm init`/`join` would print and pass the
// name to --ignore-preflight-errors. A checker is pure: it judges facts read
// once elsewhere (facts.ts), never the machine.

import type { FsUsage } from '../host.js';
import type { EvictionThresholds } from './eviction.js';
import type { EnvValue } from './proxy-env.js';
import type { NetworkManagerFacts } from './nm-facts.js';
import type { ForwardFacts } from './forward-facts.js';
import type { FirewallFacts } from './firewall-facts.js';
import type { Ipv6Stack } from './ip-stack.js';

/**
 * A fact, or why it is not known (offline, unreadable): a check that needs it
 * is skipped with that reason, never guessed. `unreadable`: a file on the
 * host that decides the check could not be read or parsed (not a fact that
 * is simply not there offline): the check says unknown, loudly.
 */
export type Known<T> = { known: true; value: T } | { known: false; reason: string; unreadable?: true };

export const known = <T>(value: T): Known<T> => ({ known: true, value });
export const notKnown = <T>(reason: string): Known<T> => ({ known: false, reason });
export const unreadable = <T>(reason: string): Known<T> => ({ known: false, reason, unreadable: true });

/** A check's outcome for a fact that is not known: unknown when a file deciding it is unreadable, else skipped. */
export const notJudged = (fact: { known: false; reason: string; unreadable?: true }): CheckOutcome =>
  fact.unreadable ? { unknown: fact.reason } : { skipped: fact.reason };

/** The cgroup controllers the kernel offers, as kubeadm's cgroups validator reads them. */
export interface CgroupFacts {
  /** cgroup v2 (/sys/fs/cgroup/cgroup.controllers exists) or v1 (/proc/cgroups). */
  version: 1 | 2;
  controllers: string[];
}

export interface AcceptanceFacts {
  /** ansible_processor_vcpus, as kubespray's facts count it. */
  cpus: Known<number>;
  /** ansible_memtotal_mb: MemTotal kB // 1024, the number kubeadm's sysinfo Totalram gives in MB. */
  memTotalMb: Known<number>;
  /** uname -r. */
  kernelRelease: Known<string>;
  cgroup: Known<CgroupFacts>;
  /** Program name -> the file a PATH lookup finds (null: none). */
  programs: ReadonlyMap<string, Known<string | null>>;
  /** The Kubernetes version kubespray installs (kube_version), for checks kubeadm runs only on some versions. */
  kubeVersion: Known<string>;
  /** firewalld as kubeadm's init system check sees it: no unit, or whether it is active (offline: whether it starts at boot), and how that was read. */
  firewalld: Known<{ state: 'absent' | 'inactive' | 'active'; how: string }>;
  /** kube_apiserver_port: the LocalAPIEndpoint.BindPort kubespray gives kubeadm. */
  apiserverPort: Known<number>;
  /** kubeadm's nodeRegistration.name as kubespray sets it (kube_override_hostname, inventory_hostname by default). */
  nodeName: Known<string>;
  /** Whether that name resolves as kubeadm's Go resolver looks it up (/etc/hosts, then DNS), and where. */
  nodeNameLookup: Known<{ resolves: boolean; how: string }>;
  timeSync: Known<TimeSyncFacts>;
  kubeletService: Known<KubeletServiceFacts>;
  resolvConf: Known<ResolvConfFacts>;
  runtimeCollision: Known<RuntimeCollisionFacts>;
  /** The https proxy and NO_PROXY kubeadm's process will have (its play's environment over the login one's). */
  kubeadmProxy: Known<KubeadmProxyFacts>;
  /** kubelet's hard eviction thresholds for the disk signals on this node (kubespray's eviction_hard, or kubelet's defaults). */
  eviction: Known<EvictionThresholds>;
  /** statfs of nodefs (kubelet's root directory) and imagefs (the runtime's storage; null when not judged); live only. */
  diskSpace: Known<DiskSpaceFacts>;
  /** NetworkManager: whether it runs, whether it is active, its configuration files (nm-facts.ts). */
  networkManager: Known<NetworkManagerFacts>;
  /** kube_network_plugin for this node. */
  networkPlugin: Known<string>;
  /** What makes the filter FORWARD hook drop by default, now and at the next boot (forward-facts.ts). */
  forward: Known<ForwardFacts>;
  /** What a new connection from another node to each control-plane port meets, now and at the next boot (firewall-facts.ts). */
  firewall: Known<FirewallFacts>;
  /** Whether the inventory asks for IPv6 (ipv6_stack), which decides whether the firewall checks judge the ip6 tables. */
  ipv6Stack: Known<Ipv6Stack>;
}

export interface KubeadmProxyFacts {
  https: EnvValue | null;
  noProxy: EnvValue | null;
  /** How kubeadm's environment was put together (the play's environment, the login's file). */
  how: string;
}

/** A directory kubelet watches, and the file system it is on (the nearest existing directory's, before the install). */
export interface WatchedFs {
  dir: string;
  usage: FsUsage;
}

export interface DiskSpaceFacts {
  nodefs: WatchedFs;
  imagefs: WatchedFs | null;
}

/** A container runtime already on the host, beside the one kubespray installs. */
export interface RuntimeCollisionFacts {
  /** Debian's runtime packages with files on the disk: Status, the stanza's line in the status file, the names its Depends gives. */
  packages: { name: string; status: string; line: number; depends: string[] }[];
  /** The runc options table of /etc/containerd/config.toml that sets SystemdCgroup = false (a TOML key); null when none. */
  systemdCgroupFalse: string | null;
  /** Paths kubespray's roles stat before they decide (/run/ostree-booted), and whether each exists here. */
  exists: Record<string, boolean>;
}

/** A resolv.conf as kubelet and CoreDNS read it: the path asked for, the file it resolves to under the root, the addresses CoreDNS would forward to. */
export interface ResolvFile {
  path: string;
  real: string;
  addresses: string[];
}

/** /etc/resolv.conf, and what kubespray's choice between it and systemd-resolved's upstream list depends on. */
export interface ResolvConfFacts extends ResolvFile {
  /**
   * Read only when /etc/resolv.conf's addresses are all loopback (null
   * otherwise): systemd-resolved's list of the upstream servers
   * (/run/systemd/resolve/resolv.conf; a null value: it does not exist), and,
   * live, whether systemd-resolved and NetworkManager are active, which
   * kubespray asks with `systemctl is-active` to choose its DNS tasks.
   */
  beside: {
    upstream: Known<ResolvFile | null>;
    active: Record<(typeof DNS_SERVICES)[number], Known<boolean>>;
  } | null;
}

/** The services kubespray's roles/kubernetes/preinstall asks `systemctl is-active` about before choosing its DNS tasks. */
export const DNS_SERVICES = ['systemd-resolved.service', 'NetworkManager.service'] as const;

/** The NTP clients systemd knows on this node, and whether it is a container. */
export interface TimeSyncFacts {
  /** How this was found to be a container (its clock is then the host kernel's); null when it is not one, or offline. */
  container: string | null;
  /** Each NTP client whose unit file is there: whether it runs (live: active or starts at boot; offline: starts at boot), and how that was read. */
  clients: { unit: string; runs: boolean; how: string }[];
}

/** kubelet.service as kubeadm's init system check sees it. */
export interface KubeletServiceFacts {
  state: 'absent' | 'disabled' | 'enabled' | 'masked';
  /** The unit file systemd loads (for a masked unit, the link to /dev/null, whose directory says whether it is a runtime mask); null when absent. */
  entry: string | null;
  how: string;
}

/** The values kubespray gives kubeadm on this node, evaluated from its roles and the inventory. */
export interface KubesprayValues {
  kubeVersion: Known<string>;
  apiserverPort: Known<number>;
  nodeName: Known<string>;
  eviction: Known<EvictionThresholds>;
  /** The `environment:` of the play that runs kubeadm init (templated for this node; null when it sets none), and where. */
  kubeadmPlayEnv: Known<{ vars: Record<string, unknown> | null; where: string }>;
  /** The container runtime's storage directory, kubelet's imagefs (containerd_storage_dir); null for a runtime not judged. */
  imageFsDir: Known<string | null>;
  /** kube_network_plugin for this node (roles/kubernetes/preinstall's view). */
  networkPlugin: Known<string>;
  /** ipv6_stack (enable_dual_stack_networks on older trees) for this node. */
  ipv6Stack: Known<Ipv6Stack>;
}

export interface CheckResult {
  warnings: string[];
  errors: string[];
}

/**
 * `skipped`: a fact not known here (the one info line); `unknown`: a file that decides it cannot be read, or a
 * fact that is there and cannot be judged (a loud unknown finding).
 */
export type CheckOutcome = CheckResult | { skipped: string } | { unknown: string };

export interface Checker {
  /** kubeadm's exact check name; for a check kubeadm does not make (`breaksLater`), a CamelCase name of ours (findings.ts CHECK_NAME_PATTERN). */
  name: string;
  /** `control-plane`: InitNodeChecks (kubeadm init and join --control-plane); `every node`: addCommonChecks. */
  runsOn: 'control-plane' | 'every node';
  /** Where kubeadm defines it (repository path and function), for the plan's evidence. */
  source: string;
  /**
   * Set for a check kubeadm does not make: what breaks after an install that
   * succeeds. Its line then says so instead of quoting kubeadm's preflight,
   * and `source` is where the breakage is documented, not kubeadm's code.
   */
  breaksLater?: string;
  check(facts: AcceptanceFacts): CheckOutcome;
}

export const pass = (): CheckResult => ({ warnings: [], errors: [] });

/**
 * kubeadm's floor checks (NumCPU, Mem): an error worded by kubeadm when the
 * fact is under the floor; skipped when the fact is not known.
 */
export function atLeast(fact: Known<number>, floor: number, error: (value: number) => string): CheckOutcome {
  if (!fact.known) return { skipped: fact.reason };
  return fact.value >= floor ? pass() : { warnings: [], errors: [error(fact.value)] };
}
