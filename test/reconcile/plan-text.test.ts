import { describe, expect, it } from 'vitest';
import { planDocument } from '../../src/reconcile/plan-document.js';
import { paletteFor, renderPlan, unifiedDiff } from '../../src/reconcile/plan-text.js';
import type { Plan } from '../../src/reconcile/plan.js';
import type { BaseSpec, Provider } from '../../src/resources/types.js';
import { USED_SERVER } from '../helpers/plan-documents.js';
import { portFreeSpec } from '../helpers/port-free-spec.js';

const plan: Plan = {
  live: true,
  root: '/',
  resources: [
    {
      name: 'SwapOff',
      type: 'SwapOff',
      spec: { type: 'SwapOff', mask_swap_target: true, remove_swap_files: false } as BaseSpec,
      provider: {} as Provider,
      observed: null,
      changes: [
        {
          id: 'fstab',
          action: 'update',
          summary: 'comment out the swap line',
          file: { path: '/etc/fstab', before: 'a\n/swapfile none swap sw 0 0\n', after: 'a\n# /swapfile none swap sw 0 0\n' },
          op: null,
        },
      ],
    },
    {
      name: 'PortFree',
      type: 'PortFree',
      spec: portFreeSpec([10250]) as BaseSpec,
      provider: {} as Provider,
      observed: null,
      changes: [{ id: 'p', action: 'operator', summary: 'port 10250 held by pid 7 (nc)', operator: 'not in any systemd unit', op: null }],
    },
  ],
};

describe('rendering', () => {
  it('colours only on a terminal, and never with NO_COLOR', () => {
    expect(paletteFor({ isTTY: true }, {}).add('x')).toBe('\x1b[32mx\x1b[0m');
    expect(paletteFor({ isTTY: false }, {}).add('x')).toBe('x');
    expect(paletteFor({ isTTY: true }, { NO_COLOR: '1' }).add('x')).toBe('x');
  });

  it('a unified diff names the file, and /dev/null for a new one', () => {
    expect(unifiedDiff('/etc/fstab', 'a\nb\n', 'a\nc\n')).toBe('--- /etc/fstab\n+++ /etc/fstab\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n');
    expect(unifiedDiff('/etc/x.conf', null, 'y\n')).toMatch(/^--- \/dev\/null\n\+\+\+ \/etc\/x\.conf\n/);
  });

  it('the human plan shows diffs, the operator line with its fix under What you must do, and the totals', () => {
    const text = renderPlan(planDocument(plan), paletteFor({ isTTY: false }, {}));
    expect(text).toContain('SwapOff: 1 change\n  ~ comment out the swap line\n      --- /etc/fstab');
    expect(text).toContain('      -/swapfile none swap sw 0 0\n      +# /swapfile none swap sw 0 0');
    expect(text).toContain('PortFree: 1 for an operator (What you must do: 1)\n\n');
    expect(text).toContain('What you must do\n  1. PortFree: port 10250 held by pid 7 (nc) [operator action required]\n     not in any systemd unit\n');
    expect(text).toContain('Plan: 1 change pending, 1 needs an operator.');
    expect(text).not.toMatch(/\x1b\[/);
  });

  it('renders from the plan document --json prints: a provider note is in both', () => {
    const withNotes: Plan = {
      ...plan,
      resources: [{ ...plan.resources[0]!, provider: { notes: () => ['rehearsal skipped: not root'] } as unknown as Provider }],
    };
    const doc = planDocument(withNotes);
    expect(JSON.parse(JSON.stringify(doc)).resources[0].notes).toEqual(['rehearsal skipped: not root']);
    expect(renderPlan(doc, paletteFor({ isTTY: false }, {}))).toContain('SwapOff: 1 change\n  rehearsal skipped: not root\n  ~ comment out the swap line');
  });
});

describe('the text plan of a used server (a hand-written plan document)', () => {
  const p = paletteFor({ isTTY: false }, {});

  it('ends with What you must do, each line once with its fix, and the next step; the unknown is told once', () => {
    expect(renderPlan(USED_SERVER, p)).toBe(
      [
        'k8s-host-reconcile plan: offline image /img',
        'Key: ~ update  * mask (a link to /dev/null)  … at boot  ! not promised',
        '',
        'SwapOff: 2 changes, 1 for an operator (What you must do: 1)',
        '  ~ comment out /swapfile in /etc/fstab',
        '      --- /etc/fstab',
        '      +++ /etc/fstab',
        '      @@ -1,1 +1,1 @@',
        '      -/swapfile none swap sw 0 0',
        '      +#/swapfile none swap sw 0 0',
        '  * mask swap.target',
        'ModulesLoad: 1 deferred to boot',
        '  … overlay loads at first boot [deferred to boot]',
        '',
        'Promises',
        '  ! swap off: after apply; not promised at the next boot; withdrawn by What you must do: 1, 2',
        '  ! overlay loaded: after apply; not promised at the next boot; withdrawn by What you must do: 2',
        '',
        'Findings',
        '  info: no kubespray section in desired-state',
        '',
        'What you must do',
        '  1. SwapOff: /etc/rc.local:3 turns swap on [operator action required]',
        '     /etc/rc.local:3: remove or comment out that line (or set neutralise_scripts: true to have it commented out)',
        '     withdraws: swap:off (at the next boot)',
        '  2. SwapOff, ModulesLoad: unknown: /etc/rc.local:2: rc-local.service runs it at boot: runs /usr/local/bin/tune.sh, a python3 script; withdraws swap:off, module:overlay (at the next boot)',
        '     read it: if it can undo these at boot, remove it or make it leave them alone; then plan again',
        '',
        'Plan: 2 changes pending, 1 needs an operator, 1 unknown withdraws promises for the next boot.',
        'Next: run `reconcile apply` with the same options to make these 2 changes; What you must do (2) is left to you.',
        'Offline: runtime steps (swapoff, modprobe, /proc/sys writes, unit stops) are skipped; see the deferred lines.',
        '',
      ].join('\n'),
    );
  });

  it('quiet: only what a person must do, the closing line and the next step', () => {
    const text = renderPlan(USED_SERVER, p, 'quiet');
    expect(text.startsWith('What you must do\n  1. SwapOff: /etc/rc.local:3 turns swap on [operator action required]\n')).toBe(true);
    expect(text).not.toContain('Key:');
    expect(text).not.toContain('Promises');
    expect(text).not.toContain('info:');
    expect(text.endsWith('Next: run `reconcile apply` with the same options to make these 2 changes; What you must do (2) is left to you.\n')).toBe(true);
  });

  it('verbose: the before-state and the facts lines, which the default leaves out', () => {
    const doc = {
      ...USED_SERVER,
      live: true,
      before_state: { swap_total_kb: 1024, ip_forward: 0, br_netfilter: false, busy_ports: [6443] },
      reports: { 'facts.json': { memtotal_mb: 3900, distribution: 'Debian' } },
    };
    const head = 'k8s-host-reconcile plan: live host\n';
    const facts =
      '  before: swap_total_kb=1024 ip_forward=0 br_netfilter=false busy_ports=[6443]\n  facts (as kubespray sees them): memtotal_mb=3900 distribution=Debian\n';
    expect(renderPlan(doc, p, 'verbose').startsWith(head + facts + 'Key: ')).toBe(true);
    expect(renderPlan(doc, p)).not.toContain('before:');
    expect(renderPlan(doc, p)).not.toContain('facts (as kubespray');
  });

  it('in sync: no legend, no What you must do, "Nothing to do."; offline without deferred lines points at none', () => {
    const doc = { ...USED_SERVER, resources: USED_SERVER.resources.map((r) => ({ ...r, changes: [] })), promises: [], findings: [] };
    expect(renderPlan(doc, p)).toBe(
      'k8s-host-reconcile plan: offline image /img\n\nSwapOff: in sync\nModulesLoad: in sync\n\nNo changes. The host matches the desired state.\nNothing to do.\nOffline: runtime steps (swapoff, modprobe, /proc/sys writes, unit stops) are skipped.\n',
    );
  });
});

describe('accepted findings in the text plan', () => {
  const p = paletteFor({ isTTY: false }, {});
  const numCpu = {
    level: 'error' as const,
    stops: true,
    check: 'NumCPU',
    message: 'kubeadm init (and join --control-plane) preflight: [ERROR NumCPU]: the number of available CPUs 1 is less than the required 2',
    accepted: true,
    accepted_by: ['--accept', 'desired-state.yaml:12'],
    accepted_note:
      "accepted here only: kubespray's install still stops at kubeadm's preflight (exit 1 stays) unless kubespray's kubeadm_ignore_preflight_errors names NumCPU",
  };
  const doc = { ...USED_SERVER, kubespray_preflight_failures: 1, accepted_findings: 1, findings: [...USED_SERVER.findings, numCpu] };

  it('keeps its line, labelled accepted, with by whom and what it leaves; the stop is still the summary, said accepted', () => {
    const text = renderPlan(doc, p);
    expect(text).toContain(
      '  accepted [NumCPU]: kubeadm init (and join --control-plane) preflight: [ERROR NumCPU]: the number of available CPUs 1 is less than the required 2\n' +
        "      by --accept, desired-state.yaml:12; accepted here only: kubespray's install still stops at kubeadm's preflight (exit 1 stays) unless kubespray's kubeadm_ignore_preflight_errors names NumCPU\n",
    );
    expect(text).toContain(
      "Error: kubespray's preflight will stop on this host (kubeadm's preflight fails NumCPU (accepted here, still stops), the errors above).",
    );
    expect(text).toContain(
      'Accepted: NumCPU (--accept, desired-state.yaml:12); marked "accepted" above, not fixed. kubespray is not told: its kubeadm_ignore_preflight_errors is what kubeadm ignores, and without NumCPU there the install still stops.\n',
    );
    expect(text).not.toContain('error [NumCPU]');
    // Not a thing to do: What you must do lists the operator line and the unknown, as without it.
    const must = text.indexOf('\nWhat you must do\n');
    expect(must).toBeGreaterThan(0);
    expect(text.slice(must)).not.toContain('NumCPU]');
  });

  it('-q shows it too, though it shows no other warning', () => {
    const text = renderPlan({ ...doc, findings: [...doc.findings, { ...numCpu, level: 'warning', stops: false, check: 'Mem' }] }, p, 'quiet');
    expect(text).toContain('  accepted [NumCPU]: ');
    expect(text).toContain('  accepted [Mem]: ');
    expect(text).not.toContain('no kubespray section');
  });

  it('an accepted unknown of a check is not "not known to pass"; a plan without accepted findings has no Accepted line', () => {
    const former = { level: 'warning' as const, unknown: true, check: 'FormerNode', message: 'this host was a Kubernetes node' };
    const clean = { ...USED_SERVER, pending_changes: 0, operator_required: 0, resources: [], promises: [], findings: [former] };
    expect(renderPlan(clean, p)).toContain('No changes, but FormerNode is not known to pass (the "unknown" warnings above).');
    expect(renderPlan(clean, p)).not.toContain('Accepted:');
    const accepted = renderPlan({ ...clean, findings: [{ ...former, accepted: true, accepted_by: ['--accept'], accepted_note: 'n' }] }, p);
    expect(accepted).toContain('No changes. The host matches the desired state.\nAccepted: FormerNode (--accept); marked "accepted" above, not fixed.');
    expect(accepted).toContain('Nothing to do.');
  });
});
