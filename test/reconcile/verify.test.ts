// After apply (verify.ts): the plan observed again must hold no change apply
// could have made, and no provider may call its resource unconverged.
// Operator lines and steps deferred to the boot are no failure: apply never
// makes them. The plans are written by hand, one resource per case.
import { describe, expect, it } from 'vitest';
import { verifyConverged } from '../../src/reconcile/verify.js';
import type { Plan } from '../../src/reconcile/plan.js';
import type { Change } from '../../src/resources/types.js';
import type { AnyProvider } from '../../src/resources/index.js';
import { VerifyError } from '../../src/errors.js';

const change = (action: Change['action'], summary: string): Change => ({ id: summary, action, summary, op: null }) as Change;
const provider = (unconverged?: (spec: unknown, observed: unknown) => string[]) => ({ type: 'T', unconverged }) as unknown as AnyProvider;
const planOf = (...resources: Array<{ name: string; changes: Change[]; unconverged?: (s: unknown, o: unknown) => string[]; observed?: unknown }>): Plan =>
  ({
    live: true,
    root: '/',
    resources: resources.map((r) => ({
      name: r.name,
      spec: { type: 'T' },
      provider: provider(r.unconverged),
      observed: r.observed ?? null,
      changes: r.changes,
    })),
  }) as unknown as Plan;

describe('verifyConverged', () => {
  it('a plan with nothing left converged', () => {
    expect(verifyConverged(planOf({ name: 'a', changes: [] }))).toEqual([]);
  });

  it('operator lines and deferred steps are not failures', () => {
    expect(verifyConverged(planOf({ name: 'a', changes: [change('operator', 'stop it yourself'), change('deferred', 'at first boot')] }))).toEqual([]);
  });

  it('each change apply could have made is left: one VerifyError per resource, naming it and every summary', () => {
    const errors = verifyConverged(
      planOf(
        { name: 'swap', changes: [change('update', 'comment out /swapfile'), change('operator', 'x'), change('delete', 'remove /swapfile')] },
        { name: 'ok', changes: [] },
        { name: 'sysctl', changes: [change('create', 'write /etc/sysctl.d/k8s.conf')] },
      ),
    );
    expect(errors.map((e) => e.message)).toEqual([
      'swap: not converged after apply: comment out /swapfile; remove /swapfile',
      'sysctl: not converged after apply: write /etc/sysctl.d/k8s.conf',
    ]);
    expect(errors[0]).toBeInstanceOf(VerifyError);
    expect(errors[0]).toMatchObject({ resource: 'swap', remaining: ['comment out /swapfile', 'remove /swapfile'] });
  });

  it("a provider's unconverged lines fail it too, after the changes left, and it is asked with the observation", () => {
    const seen: unknown[] = [];
    const errors = verifyConverged(
      planOf({
        name: 'sysctl',
        changes: [change('update', 'set a')],
        observed: { rehearsal: 'ran' },
        unconverged: (_s, o) => {
          seen.push(o);
          return ['rehearsal: net.ipv4.ip_forward comes out 0 at boot'];
        },
      }),
    );
    expect(errors.map((e) => e.remaining)).toEqual([['set a', 'rehearsal: net.ipv4.ip_forward comes out 0 at boot']]);
    expect(seen).toEqual([{ rehearsal: 'ran' }]);
    expect(verifyConverged(planOf({ name: 'x', changes: [], unconverged: () => [] }))).toEqual([]);
  });
});
