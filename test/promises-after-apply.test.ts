// The promises apply ends with (promises_after) come from the plan it observes
// afterwards. Stopping a transient unit (systemd-run) hides it from that
// observation, but what makes it again at the next boot is still there
// (systemd.unit(5): transient units' files live in /run/systemd/transient and
// are made anew by whatever runs systemd-run), so an unknown that outlives
// apply keeps taking back the port's promise at boot; the boot farm's
// transient-systemd-run-from-rc-local entry found the port back after the
// reboot while apply had promised it free.
import { describe, expect, it } from 'vitest';
import { planPromises, withdrawnByUnknown, type PlanUnknown } from '../src/reconcile/promises.js';
import type { Plan } from '../src/reconcile/plan.js';

const portFree = {
  promised: () => [{ id: 'port:2379', kind: 'port', subject: '2379', expect: 'free' }],
  unknowns: (_s: unknown, o: { held: boolean }) => (o.held ? [transient] : []),
};
const transient = {
  message: 'port 2379 is held by transient-api.service, a transient unit (FragmentPath=/run/systemd/transient/transient-api.service)',
  withdraws: [{ promise: 'port:2379', from: 'boot' as const }],
  outlivesApply: true,
};
const planOf = (held: boolean) => ({ resources: [{ name: 'PortFree', spec: {}, provider: portFree, observed: { held }, changes: [] }] }) as unknown as Plan;

describe('promises after apply', () => {
  it('an unknown that outlives apply still takes back the promise at boot once its unit is stopped; seen again, it counts once', () => {
    const carried: PlanUnknown[] = [{ resource: 'PortFree', ...transient }];
    const stopped = planPromises(planOf(false), carried);
    expect(stopped).toMatchObject([{ id: 'port:2379', after_apply: true, at_boot: false, withdrawn_by: [{ by: 'unknown', resource: 'PortFree', line: transient.message, from: 'boot' }] }]);
    expect(withdrawnByUnknown(stopped)).toHaveLength(1);
    expect(planPromises(planOf(true), carried)[0]!.withdrawn_by).toHaveLength(1);
    // Nothing carried: the stopped unit leaves no trace, and the promise reads as kept at boot.
    expect(planPromises(planOf(false))[0]).toMatchObject({ at_boot: true, withdrawn_by: [] });
  });
});
