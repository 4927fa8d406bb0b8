// systemd-run in boot scripts. Expectations come from systemd-run(1) of
// systemd 252 (Debian 12): options end at the first operand (getopt "+..."),
// -u/--unit NAME names the unit, a name without a unit type's suffix gets
// ".service" (".scope" with --scope), --user/--host/--machine make it in
// another manager; the command it runs is the operand list, which runs in
// the unit (so its writes count like any other). The boot farm's
// transient-systemd-run-* entries check the same on a booted host; what PortFree
// makes of such a unit holding a port is test/resources/port-free/transient.test.ts.
import { describe, expect, it } from 'vitest';
import { commandActions } from '../../src/boot-scripts/commands.js';

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
