// SystemVerification: kubeadm runs k8s.io/system-validators' KernelValidator
// and CgroupsValidator (cmd/kubeadm/app/preflight/checks.go
// SystemVerificationCheck; checks_linux.go addOSValidator). Modelled: the
// kernel release against DefaultSysSpec's versions, and the cgroup
// controllers (validators/types_unix.go DefaultSysSpec, cgroup_validator_linux.go).
// Not modelled: the kernel config options (read from /proc/config.gz or
// /boot/config-*), which a stock distribution kernel has.
import type { Checker, CgroupFacts } from './checker.js';

/** DefaultSysSpec.KernelSpec.Versions, kubeadm's own patterns (simple enough that RE2 and JavaScript read them alike). */
export const KERNEL_VERSIONS = [/^5\.4.*$/, /^5\.10.*$/, /^5\.15.*$/, /^([6-9]|[1-9][0-9]+)\.([0-9]+)\.([0-9]+).*$/];
/** DefaultSysSpec: required and optional controllers, v1 and v2. */
export const CGROUPS = {
  1: { required: ['cpu', 'cpuacct', 'cpuset', 'devices', 'freezer', 'memory', 'pids'], optional: ['hugetlb', 'blkio'] },
  2: { required: ['cpu', 'cpuset', 'devices', 'freezer', 'memory', 'pids'], optional: ['hugetlb', 'io'] },
} as const;
/** cgroup v2: the validator counts these as present whatever cgroup.controllers says (the kernel enables them implicitly). */
export const V2_PSEUDO_CONTROLLERS = ['devices', 'freezer'];

function cgroupProblems(c: CgroupFacts): { warnings: string[]; errors: string[] } {
  const have = new Set(c.version === 2 ? [...V2_PSEUDO_CONTROLLERS, ...c.controllers] : c.controllers);
  const spec = CGROUPS[c.version];
  const missing = (names: readonly string[]) => names.filter((n) => !have.has(n));
  const warnings = c.version === 1 ? ['cgroups v1 support is in maintenance mode, please migrate to cgroups v2'] : [];
  const req = missing(spec.required);
  const opt = missing(spec.optional);
  if (opt.length > 0) warnings.push(`missing optional cgroups: ${opt.join(' ')}`);
  return { warnings, errors: req.length > 0 ? [`missing required cgroups: ${req.join(' ')}`] : [] };
}

export const systemVerificationCheck: Checker = {
  name: 'SystemVerification',
  runsOn: 'every node',
  source: 'cmd/kubeadm/app/preflight/checks.go SystemVerificationCheck; k8s.io/system-validators validators/types_unix.go DefaultSysSpec',
  check(f) {
    if (!f.kernelRelease.known) return { skipped: f.kernelRelease.reason };
    if (!f.cgroup.known) return { skipped: f.cgroup.reason };
    const r = cgroupProblems(f.cgroup.value);
    const release = f.kernelRelease.value;
    if (!KERNEL_VERSIONS.some((v) => v.test(release))) r.errors.unshift(`unsupported kernel release: ${release}`);
    return r;
  },
};
