// A port held by a transient unit (transient.ts): a boot script's
// `systemd-run --unit=NAME` line that makes it again is an operator line
// naming the line; with no such line the port's boot promise is withdrawn by
// an unknown. What systemd-run's words make (the unit's name and type) is
// systemd-run(1)'s, tested with the boot-script commands in
// test/boot-scripts/systemd-run.test.ts; the observations here are written
// by hand as the live discovery gives them for such a holder.
import { describe, expect, it } from 'vitest';
import { transientMakerChanges, transientUnknowns, type TransientMaker } from '../../../src/resources/port-free/transient.js';
import { planPromises, outlivingOperators, withdrawnByUnknown } from '../../../src/reconcile/promises.js';
import type { LivePortsObserved } from '../../../src/ports/observed.js';
import type { Plan } from '../../../src/reconcile/plan.js';

const busy = (unit: string, fragment: string): LivePortsObserved =>
  ({
    mode: 'live',
    busy: [{ port: 6443, holders: [{ pid: 10, comm: 'api', placement: { unit } }] }],
    selfUnit: null,
    unreadablePids: 0,
    units: { [unit]: { fragment } },
    crontabs: null,
    uids: {},
    supervisor: null,
  }) as unknown as LivePortsObserved;
const maker = (unit: string | null): TransientMaker => ({
  unit,
  file: '/etc/rc.local',
  line: 3,
  text: `systemd-run --unit=${unit} api 6443`,
  runBy: 'rc-local.service runs it at boot',
});

describe('a port held by a transient unit a boot script makes', () => {
  const o = { ...busy('api.service', '/run/systemd/transient/api.service'), transientMakers: [maker('api.service')] };

  it('is an operator line naming the script line, withdrawing the port at boot only; no unknown', () => {
    const changes = transientMakerChanges(o);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({
      action: 'operator',
      id: 'boot-script:/etc/rc.local:3',
      withdraws: [{ promise: 'port:6443', from: 'boot' }],
      outlivesApply: true,
    });
    expect(changes[0]!.operator).toContain('/etc/rc.local:3');
    expect(transientUnknowns(o)).toEqual([]);
  });

  it('a unit file elsewhere than /run/systemd/transient is no transient unit', () => {
    expect(transientMakerChanges({ ...o, units: { 'api.service': { fragment: '/etc/systemd/system/api.service' } } } as unknown as typeof o)).toEqual([]);
  });

  it('without a line that makes it, an unknown; unnamed systemd-run lines are listed as candidates', () => {
    const u = transientUnknowns({ ...o, transientMakers: [maker(null)] });
    expect(u).toHaveLength(1);
    expect(u[0]!.message).toContain('/etc/rc.local:3');
    expect(u[0]!.withdraws).toEqual([{ promise: 'port:6443', from: 'boot' }]);
  });

  it('apply carries the operator line into promises_after once the unit is stopped', () => {
    const provider = { promised: () => [{ id: 'port:6443', kind: 'port', subject: '6443', expect: 'free' }] };
    const before = { resources: [{ name: 'PortFree', spec: {}, provider, observed: o, changes: transientMakerChanges(o) }] } as unknown as Plan;
    const after = { resources: [{ name: 'PortFree', spec: {}, provider, observed: {}, changes: [] }] } as unknown as Plan;
    const carried = outlivingOperators(before);
    expect(carried).toHaveLength(1);
    const p = planPromises(after, [], carried);
    expect(p).toMatchObject([
      { id: 'port:6443', after_apply: true, at_boot: false, withdrawn_by: [{ by: 'operator', line: 'boot-script:/etc/rc.local:3', from: 'boot' }] },
    ]);
    expect(withdrawnByUnknown(p)).toEqual([]);
    // Without the carry the stopped unit leaves no trace and the promise reads as kept at boot.
    expect(planPromises(after)[0]).toMatchObject({ at_boot: true });
  });
});
