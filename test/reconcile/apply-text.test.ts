// What apply prints: the changes it is making, not the plan again (-v: the
// plan's body first; -q: nothing before the result), then the result with
// What you must do from the plan. Against a hand-written plan document.
import { describe, expect, it } from 'vitest';
import { renderApplyResult, renderApplyStart } from '../../src/reconcile/apply-text.js';
import { mustDo } from '../../src/reconcile/must-do.js';
import { paletteFor } from '../../src/reconcile/plan-text.js';
import type { ApplyResult } from '../../src/reconcile/apply.js';
import { USED_SERVER } from '../helpers/plan-documents.js';

const p = paletteFor({ isTTY: false }, {});

describe('before apply starts', () => {
  it('Applying N changes, one line each, no diff, no promises, no closing line', () => {
    expect(renderApplyStart(USED_SERVER, p)).toBe(
      [
        'k8s-host-reconcile apply: offline image /img',
        'Key: ~ update  * mask (a link to /dev/null)  … at boot',
        '',
        'Applying 2 changes, 1 deferred to boot:',
        '  ~ SwapOff: comment out /swapfile in /etc/fstab',
        '  * SwapOff: mask swap.target',
        '  … ModulesLoad: overlay loads at first boot [deferred to boot]',
        '',
      ].join('\n'),
    );
  });

  it("verbose shows the plan body with its diffs, without the plan's closing line; quiet shows nothing", () => {
    const v = renderApplyStart(USED_SERVER, p, 'verbose');
    expect(v.startsWith('k8s-host-reconcile apply: offline image /img\n')).toBe(true);
    expect(v).toContain('      -/swapfile none swap sw 0 0\n');
    expect(v.endsWith('\nApplying 2 changes, 1 deferred to boot\n')).toBe(true);
    expect(v).not.toContain('Plan:');
    expect(v).not.toContain('\nWhat you must do\n');
    expect(renderApplyStart(USED_SERVER, p, 'quiet')).toBe('');
  });
});

describe("apply's result", () => {
  const result = { applied: [{ resource: 'SwapOff', changes: ['fstab', 'mask'] }], failures: [], reports: {} } as unknown as ApplyResult;
  const withdrawn = USED_SERVER.promises;

  it('What you must do, then the operator and promise lines pointing at it, then the closing line', () => {
    expect(renderApplyResult(result, [], 1, p, ['/root/ks/preflight/facts.json'], withdrawn, { mustDo: mustDo(USED_SERVER) })).toBe(
      [
        '',
        'What you must do',
        '  1. SwapOff: /etc/rc.local:3 turns swap on [operator action required]',
        '     /etc/rc.local:3: remove or comment out that line (or set neutralise_scripts: true to have it commented out)',
        '     withdraws: swap:off (at the next boot)',
        '  2. SwapOff, ModulesLoad: unknown: /etc/rc.local:2: rc-local.service runs it at boot: runs /usr/local/bin/tune.sh, a python3 script; withdraws swap:off, module:overlay (at the next boot)',
        '     read it: if it can undo these at boot, remove it or make it leave them alone; then plan again',
        '',
        '1 change needs an operator (What you must do, above); everything else was converged.',
        '2 promises are not known to hold at the next boot (What you must do, above): swap:off, module:overlay.',
        'wrote /root/ks/preflight/facts.json',
        'Apply incomplete: 2 changes applied, 1 for an operator, 2 not known to hold at the next boot; see What you must do above.',
        '',
      ].join('\n'),
    );
  });

  it('quiet leaves out the reports written; a clean apply is one line', () => {
    expect(renderApplyResult(result, [], 0, p, ['/root/ks/preflight/facts.json'], [], { detail: 'quiet' })).toBe(
      '\nApply complete: 2 changes applied and verified.\n',
    );
  });
});
