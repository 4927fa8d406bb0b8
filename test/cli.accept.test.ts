// Accepting a finding by its check name, end to end through the CLI: --accept
// and the desired state's accept list, refused names, a name that accepts
// nothing, and what plan and apply then print and exit. The tree is offline
// and already converged, with one kubeconfig a former node leaves: the only
// thing between the plan and exit 0 is the FormerNode unknown.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCli } from './helpers/run-cli.js';
import { DESIRED, swapModulesTree } from './helpers/swap-modules-tree.js';
import { errorsOf } from './helpers/desired-state-errors.js';
import { planExitCode } from '../src/reconcile/run.js';
import type { Finding } from '../src/findings.js';

const works: string[] = [];
afterEach(() => {
  for (const w of works.splice(0)) rmSync(w, { recursive: true, force: true });
});

/** A converged offline tree that was a node: /etc/kubernetes/kubelet.conf is there. */
async function formerNode(desired = DESIRED) {
  const t = swapModulesTree('cli-accept-');
  works.push(t.work);
  mkdirSync(path.join(t.root, 'etc/kubernetes'));
  writeFileSync(path.join(t.root, 'etc/kubernetes/kubelet.conf'), 'apiVersion: v1\n');
  const file = path.join(t.work, 'desired.yaml');
  writeFileSync(file, desired);
  const f = ['-f', file, '--root', t.root];
  expect((await runCli(['apply', ...f])).code).toBe(0);
  return { ...t, file, f };
}

describe('--accept on the command line', () => {
  it.each([
    [['--accept', ''], '--accept "": is empty: name a check as the plan shows it in brackets (NumCPU, FileExisting-iptables)'],
    [['--accept', 'NumCPU,'], '--accept "NumCPU,": "" is empty: name a check'],
    [['--accept=all'], '--accept "all": is "all", which is not taken: name each check to accept'],
    [['--accept', 'Mem', '--accept', 'ALL'], '--accept "ALL": is "all", which is not taken'],
    [['--accept', 'Num CPU'], '--accept "Num CPU": is not a check name: a letter, then letters, digits'],
    [['--accept', '-x'], '--accept needs a value (NAME); a value that starts with "-" goes as --accept=VALUE'],
    [['--accept', '1NumCPU'], '--accept "1NumCPU": is not a check name'],
  ])('refuses %j before reading anything, in its own words', async (args, message) => {
    const r = await runCli(['plan', '-f', '/nonexistent/desired.yaml', ...args]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`reconcile: ${message}`);
    expect(r.stderr).toContain('usage: reconcile plan');
    expect(r.stdout).toBe('');
  });

  it('goes with plan and apply only', async () => {
    expect((await runCli(['rollback', '--accept', 'NumCPU'])).stderr).toContain('--accept is not an option of rollback');
    expect((await runCli(['facts', '--accept', 'NumCPU'])).stderr).toContain('--accept is not an option of facts');
    expect((await runCli(['--rollback', '--accept', 'NumCPU'])).stderr).toContain('reconcile: --accept goes with plan and apply');
  });

  it('turns the FormerNode unknown into an accepted finding: shown, marked, and plan exits 0 instead of 2', async () => {
    const t = await formerNode();
    const before = await runCli(['plan', ...t.f]);
    expect(before.code).toBe(2);
    expect(before.stdout).toContain('  warning [FormerNode]: this host was a Kubernetes node');
    expect(before.stdout).toContain('FormerNode is not known to pass');

    // Lowercase, in a comma list, repeated: kubeadm's names are compared lowercased.
    const r = await runCli(['plan', ...t.f, '--accept', 'formernode,FormerNode', '--accept', 'FORMERNODE']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('  accepted [FormerNode]: this host was a Kubernetes node (1 piece of evidence: /etc/kubernetes/kubelet.conf)');
    expect(r.stdout).toContain(
      "      by --accept; accepted here only: kubeadm still runs its own checks of what this names (the names in brackets above); for the install, kubespray's kubeadm_ignore_preflight_errors must name those\n",
    );
    expect(r.stdout).toContain(
      'No changes. The host matches the desired state.\n' +
        'Accepted: FormerNode (--accept); marked "accepted" above, not fixed. kubespray is not told: its kubeadm_ignore_preflight_errors is what kubeadm ignores.\n',
    );
    expect(r.stdout).not.toContain('not known to pass');
    expect(r.stdout).not.toContain('warning [FormerNode]');
  });

  it('-q still shows the accepted finding', async () => {
    const t = await formerNode();
    const r = await runCli(['plan', ...t.f, '--accept', 'FormerNode', '-q']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Findings\n {2}accepted \[FormerNode\]: this host was a Kubernetes node/);
    expect(r.stdout).toContain('\nAccepted: FormerNode (--accept);');
  });

  it('--json: the finding has accepted, accepted_by and accepted_note, and the document counts it', async () => {
    const t = await formerNode();
    const r = await runCli(['plan', ...t.f, '--accept', 'FormerNode', '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.accepted_findings).toBe(1);
    expect(doc.kubespray_preflight_failures).toBe(0);
    const f = doc.findings.filter((x: Finding) => x.check === 'FormerNode');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ level: 'warning', unknown: true, accepted: true, accepted_by: ['--accept'] });
    expect(f[0].accepted_note).toMatch(/^accepted here only: /);
    // Without --accept nothing is marked.
    const plain = JSON.parse((await runCli(['plan', ...t.f, '--json'])).stdout);
    expect(plain.accepted_findings).toBe(0);
    expect(plain.findings.some((x: Finding) => 'accepted' in x)).toBe(false);
  });

  it('a name that accepts nothing is a warning finding and a line on stderr: a typo, and a check that does not fail here', async () => {
    const t = await formerNode();
    const r = await runCli(['plan', ...t.f, '--accept', 'FormerNod', '--accept', 'NumCPU']);
    // Nothing was accepted: the unknown stands.
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(
      '  warning: accept FormerNod (--accept): no check has that name (a typo?); nothing is accepted by it; the names: NumCPU, Mem, Firewalld, HTTPProxy, HTTPProxyCIDR, SystemVerification, Hostname, Service-Kubelet, TimeSync, ResolvConfLoop, ContainerRuntimeCollision, FreeSpace, NetworkManagerCNI, IptablesForwardDrop, ControlPlanePortsFirewalled, FormerNode, FileExisting-PROGRAM\n',
    );
    expect(r.stdout).toContain(
      '  warning: accept NumCPU (--accept): no finding of this plan has that name (the check passes here, or is not judged); nothing is accepted by it\n',
    );
    expect(r.stderr).toContain('reconcile: warning: accept FormerNod (--accept): no check has that name (a typo?)');
    expect(r.stdout).toContain('  warning [FormerNode]: ');
  });

  it("apply's own output ends with the accepted line, and its result.json marks the finding", async () => {
    const t = await formerNode();
    const r = await runCli(['apply', ...t.f, '--accept', 'FormerNode']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      '\nAccepted: FormerNode (--accept); marked "accepted" above, not fixed. kubespray is not told: its kubeadm_ignore_preflight_errors is what kubeadm ignores.\nApply complete: no changes; the host already matched.\n',
    );
    const j = JSON.parse((await runCli(['apply', ...t.f, '--accept', 'FormerNode', '--json'])).stdout);
    expect(j.accepted_findings).toBe(1);
    expect(j.findings.find((x: Finding) => x.check === 'FormerNode')).toMatchObject({ accepted: true, accepted_by: ['--accept'] });
    const result = JSON.parse(readFileSync(path.join(t.root, j.journal.replace(/^\//, ''), 'result.json'), 'utf8'));
    expect(result.findings.find((x: Finding) => x.check === 'FormerNode').accepted).toBe(true);
  });
});

describe("the desired state's accept list", () => {
  it('accepts by name, each entry named by its file:line, beside --accept', async () => {
    const t = await formerNode(`${DESIRED}accept:\n  - NumCPU\n  - formerNode\n`);
    const r = await runCli(['plan', ...t.f, '--accept', 'FormerNode']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`      by --accept, ${t.file}:9; accepted here only:`);
    expect(r.stdout).toContain(`  warning: accept NumCPU (${t.file}:8): no finding of this plan has that name`);
    const doc = JSON.parse((await runCli(['plan', ...t.f, '--json'])).stdout);
    expect(doc.findings.find((x: Finding) => x.check === 'FormerNode').accepted_by).toEqual([`${t.file}:9`]);
  });

  const D = 'desired-state.yaml';
  const base = 'reports_dir: /r\nresources:\n  - type: SwapOff\n';
  it.each([
    ['an empty name', `${base}accept:\n  - NumCPU\n  - ""\n`, `${D}:6:5 accept[1]: is empty: name a check`],
    ['"all"', `${base}accept: [Mem, All]\n`, `${D}:4:15 accept[1]: is "all", which is not taken`],
    ['a name with a space', `${base}accept:\n  - Num CPU\n`, `${D}:5:5 accept[0]: is not a check name`],
    ['a number', `${base}accept:\n  - 12\n`, `${D}:5:5 accept[0]: must be a check name`],
    ['a string, not a list', `${base}accept: NumCPU\n`, `${D}:4:9 accept: must be an array`],
  ])('refuses %s, by file:line', (_, text, message) => {
    expect(errorsOf(text, D).join('\n')).toContain(message);
  });

  it('still refuses a key it does not know, naming accept among the allowed', () => {
    expect(errorsOf(`${base}accepts: [NumCPU]\n`, D)).toEqual([
      `${D}:4:1 accepts: unknown key (allowed: reports_dir, reports_mode, kubespray, facts, first_boot, accept, resources)`,
    ]);
  });
});

describe("plan's exit code with accepted findings", () => {
  const unknown: Finding = { level: 'warning', unknown: true, check: 'FormerNode', message: 'm' };
  const stops: Finding = { level: 'error', stops: true, check: 'NumCPU', message: 'm' };
  it('an accepted unknown no longer makes it 2; an accepted finding kubespray stops on still makes it 1', () => {
    expect(planExitCode(0, 0, [unknown])).toBe(2);
    expect(planExitCode(0, 0, [{ ...unknown, accepted: true }])).toBe(0);
    expect(planExitCode(0, 0, [{ ...stops, accepted: true }])).toBe(1);
    // Accepted or not, pending changes and operator lines are still 2.
    expect(planExitCode(1, 0, [{ ...unknown, accepted: true }])).toBe(2);
    expect(planExitCode(0, 1, [{ ...unknown, accepted: true }])).toBe(2);
  });
});
