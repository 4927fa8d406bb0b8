// kubeadm's preflight, one checker per check, in kubeadm's own shape
// (kubernetes/kubernetes cmd/kubeadm/app/preflight/checks.go, the Checker
// interface: a Name and a Check returning warnings and errors), so a user can
// match each line with what `kubeadm init`/`join` would print and pass the
// name to --ignore-preflight-errors. A checker is pure: it judges facts read
// once elsewhere (facts.ts), never the machine.

import type { FsUsage } from '../host.js';
import type { EvictionThresholds } from './eviction.js';
import type { EnvValue } from './proxy-env.js';

/** A fact, or why it is not known (offline, unreadable): a check that needs it is skipped with that reason, never guessed. */
export type Known<T> = { known: true; value: T } | { known: false; reason: string };

export const known = <T>(value: T): Known<T> => ({ known: true, value });
export const notKnown = <T>(reason: string): Known<T> => ({ known: false, reason });

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
  /** The https proxy and NO_PROXY kubeadm's process will have (its play's environment over the login one's). */
  kubeadmProxy: Known<KubeadmProxyFacts>;
  /** kubelet's hard eviction thresholds for the disk signals on this node (kubespray's eviction_hard, or kubelet's defaults). */
  eviction: Known<EvictionThresholds>;
  /** statfs of nodefs (kubelet's root directory) and imagefs (the runtime's storage; null when not judged); live only. */
  diskSpace: Known<DiskSpaceFacts>;
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
}

export interface CheckResult {
  warnings: string[];
  errors: string[];
}

/** `skipped`: a fact is not known (the "not judged" info line); `unknown`: the fact is there and cannot be judged (a loud warning). */
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
