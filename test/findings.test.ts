// Accepting findings by check name (src/findings.ts): which names are taken,
// which findings a name marks, what the mark says accepting leaves to
// kubespray, and the warning for a name that marks nothing.
import { describe, expect, it } from 'vitest';
import { acceptFindings, checkNameProblem, type Finding } from '../src/findings.js';

const KNOWN = ['NumCPU', 'Mem', 'FormerNode'];
const KUBEADM = ['NumCPU', 'Mem', 'FileExisting-iptables'];
const accept = (findings: Finding[], ...names: Array<[string, string]>) =>
  acceptFindings(
    findings,
    names.map(([name, by]) => ({ name, by })),
    KNOWN,
    KUBEADM,
  );

describe('checkNameProblem', () => {
  it("takes kubeadm's and the tool's names, in any case", () => {
    for (const n of ['NumCPU', 'numcpu', 'FileExisting-iptables', 'FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml', 'Port-6443', 'FormerNode'])
      expect(checkNameProblem(n), n).toBeNull();
  });
  it('refuses the empty name, "all" in any case, and what is no check name', () => {
    expect(checkNameProblem('')).toMatch(/^is empty/);
    for (const n of ['all', 'ALL', 'All']) expect(checkNameProblem(n), n).toMatch(/^is "all", which is not taken/);
    for (const n of ['Num CPU', '-NumCPU', '6443', 'a/b', 'x'.repeat(129), 'Num\nCPU']) expect(checkNameProblem(n), n).toMatch(/^is not a check name/);
    expect(checkNameProblem('x'.repeat(128))).toBeNull();
  });
});

describe('acceptFindings', () => {
  const stops: Finding = { level: 'error', stops: true, check: 'NumCPU', message: 'kubeadm init preflight: [ERROR NumCPU]: ...' };
  const unknown: Finding = { level: 'warning', unknown: true, check: 'FileExisting-iptables', message: 'who installs it cannot be evaluated' };
  const warning: Finding = { level: 'warning', check: 'Mem', message: 'kubespray passes it in --ignore-preflight-errors' };
  const former: Finding = { level: 'warning', unknown: true, check: 'FormerNode', message: 'this host was a Kubernetes node' };
  const noName: Finding = { level: 'error', stops: true, message: "kubespray's memory assert fails" };

  it('marks the findings a name names, case-insensitively, with every place that named it, once each', () => {
    const out = accept([stops, noName], ['numcpu', '--accept'], ['NUMCPU', 'd.yaml:7'], ['NumCPU', '--accept']);
    expect(out).toHaveLength(2);
    expect(out[0]).toEqual({
      ...stops,
      accepted: true,
      accepted_by: ['--accept', 'd.yaml:7'],
      accepted_note:
        "accepted here only: kubespray's install still stops at kubeadm's preflight (exit 1 stays) unless kubespray's kubeadm_ignore_preflight_errors names NumCPU",
    });
    // A finding without a check name is never accepted (kubespray's own asserts have none).
    expect(out[1]).toBe(noName);
  });

  it("says, by the finding's kind, what accepting it here leaves as it was", () => {
    const [u, w, f] = accept([unknown, warning, former], ['FileExisting-iptables', '--accept'], ['Mem', '--accept'], ['FormerNode', '--accept']);
    expect(u!.accepted_note).toBe(
      "accepted here only: kubeadm still runs FileExisting-iptables; where it fails, kubespray's install stops unless kubespray's kubeadm_ignore_preflight_errors names FileExisting-iptables",
    );
    expect(w!.accepted_note).toBe('accepted here only: kubeadm still prints this warning, which stops nothing');
    expect(f!.accepted_note).toBe(
      "accepted here only: kubeadm still runs its own checks of what this names (the names in brackets above); for the install, kubespray's kubeadm_ignore_preflight_errors must name those",
    );
    // The finding itself is unchanged: still unknown, still its level; only marked.
    expect(u).toMatchObject({ level: 'warning', unknown: true, accepted: true });
  });

  it('adds one warning per name that marks nothing: a typo apart from a check that passes here', () => {
    const out = accept([former], ['Memm', '--accept'], ['memm', 'd.yaml:3'], ['Mem', 'd.yaml:4'], ['FileExisting-socat', '--accept']);
    expect(out.slice(1)).toEqual([
      {
        level: 'warning',
        message:
          'accept Memm (--accept): no check has that name (a typo?); nothing is accepted by it; the names: NumCPU, Mem, FormerNode, FileExisting-PROGRAM',
      },
      {
        level: 'warning',
        message: 'accept Mem (d.yaml:4): no finding of this plan has that name (the check passes here, or is not judged); nothing is accepted by it',
      },
      {
        level: 'warning',
        message:
          'accept FileExisting-socat (--accept): no finding of this plan has that name (the check passes here, or is not judged); nothing is accepted by it',
      },
    ]);
    expect(out[0]).toBe(former);
  });

  it('with no names, returns the findings as they are', () => {
    expect(accept([stops, former])).toEqual([stops, former]);
  });
});
