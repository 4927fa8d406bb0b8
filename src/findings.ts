import type { Withdrawal } from './promises.js';

/** Something the plan tells a person that is not a change: a risk, a verdict, a reason something was skipped. */
export interface Finding {
  level: 'info' | 'warning' | 'error';
  message: string;
  /** file:line references a person can check. */
  evidence?: string[];
  /**
   * Something that decides a verdict could not be judged (a condition, a
   * variable, an include). `--plan` exits 2 while such a finding stands.
   */
  unknown?: boolean;
  /**
   * kubespray's own preflight will stop on this host (an assert fails):
   * `--plan` exits 1 while such a finding stands.
   */
  stops?: boolean;
  /**
   * A check of the tool's own, by a stable name a user can grep for
   * (FormerNode): the plan's summary names it rather than counting it among
   * kubespray's findings. The name `--accept` and the desired state's
   * `accept` list take; a finding without one cannot be accepted.
   */
  check?: string;
  /** The plan's promises this unknown takes back (src/promises.ts). */
  withdraws?: Withdrawal[];
  /**
   * A person accepted it by its check name (acceptFindings): it stays in every
   * output, marked, and no longer makes the plan exit 2; a `stops` finding
   * still stops kubespray, so it keeps exit 1.
   */
  accepted?: boolean;
  /** Where it was accepted: "--accept", or the desired state's FILE:LINE. */
  accepted_by?: string[];
  /** What accepting it here does not do (kubespray and kubeadm are not told). */
  accepted_note?: string;
}

/** One name to accept and where it was given: "--accept", or the desired state's FILE:LINE. */
export interface Acceptance {
  name: string;
  by: string;
}

/** The longest check name taken; kubeadm's own (FileAvailable--etc-kubernetes-manifests-kube-controller-manager.yaml) are shorter. */
export const CHECK_NAME_MAX = 128;
/** A check name's grammar, one source for --accept (checkNameProblem) and the desired state's accept list (its schema). */
export const CHECK_NAME_PATTERN = `^[A-Za-z][A-Za-z0-9._-]{0,${CHECK_NAME_MAX - 1}}$`;
const CHECK_NAME = new RegExp(CHECK_NAME_PATTERN);

/**
 * Why a name cannot be accepted, or null. "all" is refused, although
 * kubeadm's --ignore-preflight-errors takes it: it would also accept every
 * check that starts failing later (a new kubeadm check, a host that changed),
 * unseen; here each accepted check is named.
 */
export function checkNameProblem(name: string): string | null {
  if (name === '') return 'is empty: name a check as the plan shows it in brackets (NumCPU, FileExisting-iptables)';
  if (name.toLowerCase() === 'all')
    return 'is "all", which is not taken: name each check to accept (kubeadm\'s all would also accept, unseen, every check that fails later)';
  if (!CHECK_NAME.test(name))
    return `is not a check name: a letter, then letters, digits, '.', '_' or '-' (NumCPU, FileExisting-iptables), at most ${CHECK_NAME_MAX}`;
  return null;
}

/** What accepting this finding here leaves as it was: kubespray's run, told in the finding's own terms. */
function acceptedNote(f: Finding, kubeadm: boolean): string {
  const ignore = `kubespray's kubeadm_ignore_preflight_errors names ${f.check}`;
  if (!kubeadm)
    return `accepted here only: kubeadm still runs its own checks of what this names (the names in brackets above); for the install, kubespray's kubeadm_ignore_preflight_errors must name those`;
  if (f.stops) return `accepted here only: kubespray's install still stops at kubeadm's preflight (exit 1 stays) unless ${ignore}`;
  if (f.level === 'error' || f.unknown) return `accepted here only: kubeadm still runs ${f.check}; where it fails, kubespray's install stops unless ${ignore}`;
  return `accepted here only: kubeadm still prints this warning, which stops nothing`;
}

/**
 * The findings with every one a name accepts marked (kubeadm compares the
 * names lowercased, and so do we), and one warning for each name that
 * accepts nothing: a name no check has (a typo), or a check that passes here.
 * `kubeadmChecks`: the names of kubeadm's own checks (src/acceptance); the
 * tool's own (FormerNode) are told apart from them.
 */
export function acceptFindings(findings: Finding[], accepts: Acceptance[], known: readonly string[], kubeadmChecks: readonly string[]): Finding[] {
  const lower = (s: string) => s.toLowerCase();
  const out = findings.map((f): Finding => {
    const by = f.check === undefined ? [] : [...new Set(accepts.filter((a) => lower(a.name) === lower(f.check!)).map((a) => a.by))];
    if (by.length === 0) return f;
    const kubeadm = kubeadmChecks.some((k) => lower(k) === lower(f.check!));
    return { ...f, accepted: true, accepted_by: by, accepted_note: acceptedNote(f, kubeadm) };
  });
  const named = new Set<string>();
  for (const a of accepts) {
    if (named.has(lower(a.name)) || findings.some((f) => f.check !== undefined && lower(f.check) === lower(a.name))) continue;
    named.add(lower(a.name));
    const isKnown = known.some((k) => lower(k) === lower(a.name)) || /^fileexisting-./.test(lower(a.name));
    out.push({
      level: 'warning',
      message: isKnown
        ? `accept ${a.name} (${a.by}): no finding of this plan has that name (the check passes here, or is not judged); nothing is accepted by it`
        : `accept ${a.name} (${a.by}): no check has that name (a typo?); nothing is accepted by it; the names: ${known.join(', ')}, FileExisting-PROGRAM`,
    });
  }
  return out;
}
