// systemd-run in boot scripts. Expectations come from systemd-run(1) of
// systemd 252 (Debian 12): options end at the first operand (getopt "+..."),
// -u/--unit NAME names the unit, a name without a unit type's suffix gets
// ".service" (".scope" with --scope), --user/--host/--machine make it in
// another manager; the command it runs is the operand list, which runs in
// the unit (so its writes count like any other). The boot farm's
// transient-systemd-run-* entries check the same on a booted host.
import { describe, expect, it } from 'vitest';
import { commandActions } from '../../src/boot-scripts/commands.js';
import { transientMakerChanges, transientUnknowns, type TransientMaker } from '../../src/resources/port-free/transient.js';
import { planPromises, outlivingOperators, withdrawnByUnknown } from '../../src/reconcile/promises.js';
import type { LivePortsObserved } from '../../src/ports/observed.js';
import type { Plan } from '../../src/reconcile/plan.js';

const words = (s: string) => s.split(' ');
const made = (s: string) => commandActions(words(s)).filter((a) => a.kind === 'transient-unit');

describe('systemd-run in a boot script', () => {
  it('names the unit as systemd-run does', () => {
    expect(made('systemd-run --unit=api /usr/local/sbin/api 6443')).toEqual([{ kind: 'transient-unit', unit: 'api.service', scope: false }]);
    expect(made('systemd-run --unit api /usr/local/sbin/api')).toEqual([{ kind: 'transient-unit', unit: 'api.service', scope: false }]);
    expect(made('systemd-run -u api /usr/local/sbin/api')).toEqual([{ kind: 'transient-unit', unit: 'api.service', scope: false }]);
    expect(made('systemd-run -uapi /usr/local/sbin/api')).toEqual([{ kind: 'transient-unit', unit: 'api.service', scope: false }]);
    expect(made('systemd-run -qu api /usr/local/sbin/api')).toEqual([{ kind: 'transient-unit', unit: 'api.service', scope: false }]);
    expect(made('systemd-run --unit=api.service /usr/local/sbin/api')).toEqual([{ kind: 'transient-unit', unit: 'api.service', scope: false }]);
    // ".v2" is no unit type: the suffix is appended.
    expect(made('systemd-run --unit=api.v2 /usr/local/sbin/api')).toEqual([{ kind: 'transient-unit', unit: 'api.v2.service', scope: false }]);
    expect(made('systemd-run --scope --unit=api /usr/local/sbin/api')).toEqual([{ kind: 'transient-unit', unit: 'api.scope', scope: true }]);
    expect(made('systemd-run /usr/local/sbin/api')).toEqual([{ kind: 'transient-unit', unit: null, scope: false }]);
    expect(made('nohup systemd-run -p Restart=always --unit=api /usr/local/sbin/api')).toEqual([{ kind: 'transient-unit', unit: 'api.service', scope: false }]);
  });

  it('makes nothing in this manager with --user, --host or --machine', () => {
    expect(made('systemd-run --user --unit=api /usr/local/sbin/api')).toEqual([]);
    expect(made('systemd-run -M box --unit=api /usr/local/sbin/api')).toEqual([]);
    expect(made('systemd-run --host=web1 --unit=api /usr/local/sbin/api')).toEqual([]);
  });

  it('an operand after the options is the command, not an option of systemd-run', () => {
    // "--unit=late" belongs to the program: systemd-run stops at /bin/prog.
    expect(made('systemd-run /bin/prog --unit=late')).toEqual([{ kind: 'transient-unit', unit: null, scope: false }]);
  });

  it('reads the command it runs: sysctl writes inside the unit count', () => {
    const acts = commandActions(words('systemd-run --unit=fw -p Type=oneshot sysctl -w net.ipv4.ip_forward=0'));
    expect(acts).toEqual([
      { kind: 'transient-unit', unit: 'fw.service', scope: false },
      { kind: 'sysctl-write', key: 'net.ipv4.ip_forward', value: '0' },
    ]);
    // -E takes a value: "X=1" is not the program.
    expect(commandActions(words('systemd-run -E X=1 swapon /swapfile'))).toEqual([
      { kind: 'transient-unit', unit: null, scope: false },
      { kind: 'swapon', argv: ['swapon', '/swapfile'] },
    ]);
  });
});

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
