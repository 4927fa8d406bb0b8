// FileExisting-<program>: kubeadm's InPathCheck looks each program up in PATH
// (exec.LookPath); a mandatory one missing is an error, the others warnings.
// The list and the split are addExecChecks' (cmd/kubeadm/app/preflight/
// checks_linux.go): conntrack only for Kubernetes before 1.32 (kube-proxy no
// longer needs it in PATH from 1.32, kubernetes/kubernetes#126952). crictl is
// not in that list any more, so it is not checked here.
import type { Checker, CheckOutcome } from './checker.js';
import { pass } from './checker.js';

const SOURCE = 'cmd/kubeadm/app/preflight/checks.go InPathCheck.Check; checks_linux.go addExecChecks';

/** addExecChecks: mandatory (an error) and optional (a warning) programs. */
export const MANDATORY_PROGRAMS = ['ip', 'iptables', 'mount', 'nsenter'] as const;
export const OPTIONAL_PROGRAMS = ['ebtables', 'ethtool', 'socat', 'tc', 'touch'] as const;
/** conntrack is mandatory below this Kubernetes version, and not checked from it on. */
export const CONNTRACK_UNTIL = [1, 32] as const;

function lookup(program: string, mandatory: boolean, f: Parameters<Checker['check']>[0]): CheckOutcome {
  const found = f.programs.get(program);
  if (!found) return { skipped: `${program} was not looked up` };
  if (!found.known) return { skipped: found.reason };
  if (found.value !== null) return pass();
  const msg = `${program} not found in system path`;
  return mandatory ? { warnings: [], errors: [msg] } : { warnings: [msg], errors: [] };
}

export function inPathCheck(program: string, mandatory: boolean): Checker {
  return { name: `FileExisting-${program}`, runsOn: 'every node', source: SOURCE, check: (f) => lookup(program, mandatory, f) };
}

/** "v1.31.4" or "1.31.4" as [major, minor]; null when it is not such a version. */
export function majorMinor(v: string): [number, number] | null {
  const parts = (v.startsWith('v') ? v.slice(1) : v).split('.');
  const [maj, min] = [Number(parts[0]), Number(parts[1])];
  return parts.length >= 2 && Number.isInteger(maj) && Number.isInteger(min) && parts[0] !== '' && parts[1] !== '' ? [maj, min] : null;
}

export const conntrackCheck: Checker = {
  name: 'FileExisting-conntrack',
  runsOn: 'every node',
  source: `${SOURCE} (Kubernetes < 1.32 only)`,
  check(f) {
    const found = f.programs.get('conntrack');
    if (found?.known && found.value !== null) return pass();
    if (!f.kubeVersion.known)
      return { skipped: `kubeadm checks conntrack only for Kubernetes before 1.32, and kube_version is not known: ${f.kubeVersion.reason}` };
    const mm = majorMinor(f.kubeVersion.value);
    if (mm === null) return { skipped: `kube_version ${JSON.stringify(f.kubeVersion.value)} is not a version` };
    const before = mm[0] < CONNTRACK_UNTIL[0] || (mm[0] === CONNTRACK_UNTIL[0] && mm[1] < CONNTRACK_UNTIL[1]);
    return before ? lookup('conntrack', true, f) : pass();
  },
};

export const ALL_PROGRAMS: readonly string[] = ['conntrack', ...MANDATORY_PROGRAMS, ...OPTIONAL_PROGRAMS];

export const fileExistingChecks: Checker[] = [
  conntrackCheck,
  ...MANDATORY_PROGRAMS.map((p) => inPathCheck(p, true)),
  ...OPTIONAL_PROGRAMS.map((p) => inPathCheck(p, false)),
];
