// What a person must do, from the plan document: operator lines, then
// unknowns, each cause once however many resources report it.
import { describe, expect, it } from 'vitest';
import { describeWithdrawals, entryOf, mustDo } from '../../src/reconcile/must-do.js';
import { USED_SERVER } from '../helpers/plan-documents.js';

describe('mustDo', () => {
  it('lists the operator line, then the unknown two resources report, once, with both promises', () => {
    const items = mustDo(USED_SERVER);
    expect(items.map((m) => [m.kind, m.resources, m.withdraws.map((w) => w.promise)])).toEqual([
      ['operator', ['SwapOff'], ['swap:off']],
      ['unknown', ['SwapOff', 'ModulesLoad'], ['swap:off', 'module:overlay']],
    ]);
    expect(items[0]!.fix).toBe('/etc/rc.local:3: remove or comment out that line (or set neutralise_scripts: true to have it commented out)');
    expect(items[1]!.what).toBe('unknown: /etc/rc.local:2: rc-local.service runs it at boot: runs /usr/local/bin/tune.sh, a python3 script');
  });

  it("a promise's withdrawal names its entry; a failure of apply names none", () => {
    const items = mustDo(USED_SERVER);
    const [op, unknown] = USED_SERVER.promises[0]!.withdrawn_by;
    expect([entryOf(items, op!), entryOf(items, unknown!), entryOf(items, { by: 'failure', resource: 'SwapOff', line: 'x' })]).toEqual([1, 2, null]);
  });

  it('the same operator line in two resources is one entry naming both', () => {
    const r = USED_SERVER.resources[0]!;
    const doc = { ...USED_SERVER, resources: [r, { ...r, name: 'Again' }], findings: [] };
    expect(mustDo(doc).map((m) => m.resources)).toEqual([['SwapOff', 'Again']]);
  });

  it('withdrawals grouped by when they are taken back', () => {
    expect(
      describeWithdrawals([
        { promise: 'a', from: 'boot' },
        { promise: 'b', from: 'apply' },
        { promise: 'c', from: 'boot' },
      ]),
    ).toBe('a, c (at the next boot); b (after apply and at boot)');
  });
});
