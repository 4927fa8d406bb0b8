import { describe, expect, it } from 'vitest';
import { planDocument } from '../../src/reconcile/plan-document.js';
import { paletteFor, renderPlan, unifiedDiff } from '../../src/reconcile/plan-text.js';
import type { Plan } from '../../src/reconcile/plan.js';
import type { Provider } from '../../src/resources/types.js';

const plan: Plan = {
  live: true,
  root: '/',
  resources: [
    {
      name: 'SwapOff',
      type: 'SwapOff',
      spec: { type: 'SwapOff', mask_swap_target: true, remove_swap_files: false },
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
      spec: { type: 'PortFree', ports: [10250], protected_units: [], stop_spawner_units: [], mask: false, timeout_seconds: 30, disable_units: [] },
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

  it('the human plan shows diffs, operator reasons and the totals', () => {
    const text = renderPlan(planDocument(plan), paletteFor({ isTTY: false }, {}));
    expect(text).toContain('SwapOff: 1 change\n  ~ comment out the swap line\n      --- /etc/fstab');
    expect(text).toContain('      -/swapfile none swap sw 0 0\n      +# /swapfile none swap sw 0 0');
    expect(text).toContain('PortFree: 1 for an operator\n  ! port 10250 held by pid 7 (nc) [operator action required]\n      reason: not in any systemd unit');
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
