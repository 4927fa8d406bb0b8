// PortFree's lines for a holder that serves others: what stopping it ends, the
// line to change instead, and the desired state's choice (stop_shared_holders,
// protected_units). The observation is built by hand as discovery gives it for
// inetd.service holding 10250 among other services; each expected line is
// worked out from that observation.
import { describe, expect, it } from 'vitest';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';
import type { PortFreeSpec } from '../../../src/resources/port-free/spec.js';
import type { LivePortsObserved } from '../../../src/ports/observed.js';
import type { UnitServes } from '../../../src/ports/served.js';
import { parseCgroup } from '../../../src/systemd/cgroup.js';

const spec = (extra: Partial<PortFreeSpec> = {}): PortFreeSpec => ({
  type: 'PortFree',
  ports: [10250],
  protected_units: [],
  stop_spawner_units: [],
  mask: false,
  timeout_seconds: 5,
  disable_units: [],
  ...extra,
});

const inetd = (served: Partial<UnitServes>, unit = 'inetd.service', server: UnitServes['server'] = 'inetd'): LivePortsObserved => ({
  mode: 'live',
  busy: [
    {
      port: 10250,
      listeners: [{ family: 'ipv4', address: '0.0.0.0', port: 10250, inode: 101 }],
      holders: [
        {
          pid: 400,
          comm: 'inetd',
          placement: parseCgroup(`0::/system.slice/${unit}\n`),
          ancestry: { chain: [{ pid: 400, ppid: 1, comm: 'inetd', argv: ['/usr/sbin/inetd'], exe: '/usr/sbin/inetd', uid: 0 }], complete: true },
          mainHoldsSocket: null,
          otherSockets: [
            { proto: 'tcp', address: '0.0.0.0', port: 7 },
            { proto: 'tcp', address: '0.0.0.0', port: 9 },
            { proto: 'udp', address: '0.0.0.0', port: 111 },
          ],
        },
      ],
      activation: null,
    },
  ],
  selfUnit: null,
  unreadablePids: 0,
  units: {
    [unit]: {
      unit,
      error: null,
      mainPid: 400,
      type: 'notify',
      pidFile: null,
      pidFilePid: null,
      pidFileError: null,
      execStart: [],
      execError: null,
      main: null,
    },
  },
  crontabs: null,
  uids: {},
  supervisor: null,
  serves: { [unit]: { unit, server, services: [], sockets: [], processes: [], unknown: null, ...served } },
  comeback: { [unit]: { group: [unit], reasons: [], unknown: null } },
  triggers: {},
  etcFiles: {},
});

const entry = (name: string, port: number, line: number, wanted = false) => ({
  by: 'inetd' as const,
  name,
  port,
  proto: 'tcp' as const,
  file: '/etc/inetd.conf',
  line,
  text: `${name} stream tcp nowait root internal`,
  wanted,
});
const SERVICES = [entry('echo', 7, 2), entry('discard', 9, 3), { ...entry('10250', 10250, 5, true), text: '10250 stream tcp nowait nobody /bin/cat cat' }];

describe('a holder that serves others', () => {
  it('by default is an operator line naming what its stop ends and the inetd.conf line to comment out instead', () => {
    const [c] = portFreeProvider.diff(spec(), inetd({ services: SERVICES }), { live: true });
    expect(c!.action).toBe('operator');
    expect(c!.summary).toBe('port 10250 (0.0.0.0:10250) held by pid 400 (inetd) in inetd.service');
    expect(c!.operator).toBe(
      'stopping inetd.service to free 10250 also ends its other services: echo (7/tcp, /etc/inetd.conf:2), discard (9/tcp, /etc/inetd.conf:3); ' +
        'its other sockets: 0.0.0.0:111/udp. It is not stopped for one port: to free 10250 and keep inetd.service: ' +
        'comment out /etc/inetd.conf:5 ("10250 stream tcp nowait nobody /bin/cat cat": put "#" before it; update-inetd --disable 10250 does that) ' +
        'and run systemctl reload inetd.service (inetd rereads its file on SIGHUP). Or set stop_shared_holders: true to stop and disable inetd.service anyway',
    );
    // The port stays held, so its promise goes from apply on.
    expect(c!.withdraws?.map((w) => w.from)).toEqual(['apply']);
    const ends = (c!.op as { ends?: unknown[] }).ends;
    expect(ends).toEqual([
      {
        unit: 'inetd.service',
        services: [
          { name: 'echo', port: 7, proto: 'tcp', file: '/etc/inetd.conf', line: 2 },
          { name: 'discard', port: 9, proto: 'tcp', file: '/etc/inetd.conf', line: 3 },
        ],
        sockets: [{ proto: 'udp', address: '0.0.0.0', port: 111 }],
        processes: [],
        hidden: 0,
        serving: {
          by: 'inetd',
          name: '10250',
          file: '/etc/inetd.conf',
          line: 5,
          text: '10250 stream tcp nowait nobody /bin/cat cat',
          disableLine: null,
          endLine: null,
        },
        unknown: null,
        configured: true,
      },
    ]);
  });

  it('with stop_shared_holders: true is stopped as any holder, the line still naming what that ends', () => {
    const [c] = portFreeProvider.diff(spec({ stop_shared_holders: true }), inetd({ services: SERVICES, processes: [{ pid: 412, comm: 'in.telnetd' }] }), {
      live: true,
    });
    expect(c!.action).toBe('stop');
    expect(c!.summary).toContain(
      ': stop and disable inetd.service; stopping inetd.service to free 10250 also ends its other services: echo (7/tcp, /etc/inetd.conf:2), discard (9/tcp, /etc/inetd.conf:3); its other sockets: 0.0.0.0:111/udp; its other processes: pid 412 (in.telnetd) (stop_shared_holders: true)',
    );
    expect((c!.op as { units: string[] }).units).toEqual(['inetd.service']);
  });

  it('names processes of another PID namespace in the cgroup as such, not as "pid 0", and leaves the stop to a person', () => {
    // Two containers whose systemd share one cgroup tree: each sees the other's legacy-api.service processes as 0.
    const [c] = portFreeProvider.diff(spec(), inetd({ services: [], sockets: [], hidden: 1 }), { live: true });
    expect(c!.action).toBe('operator');
    expect(c!.operator).toContain(
      '; 1 process in its cgroup that this PID namespace cannot see (cgroup.procs lists it as pid 0: another PID namespace, such as a container sharing the cgroup)',
    );
    expect(c!.operator).not.toContain('pid 0 (');
    expect((c!.op as { ends: { hidden: number }[] }).ends[0]!.hidden).toBe(1);
  });

  it('protected_units still wins over stop_shared_holders: true', () => {
    const [c] = portFreeProvider.diff(spec({ stop_shared_holders: true, protected_units: ['inetd'] }), inetd({ services: SERVICES }), { live: true });
    expect(c!.action).toBe('operator');
    expect(c!.operator).toBe('inetd.service is listed in protected_units (inetd); it is never stopped automatically');
  });

  it('xinetd: names the disable line to change in the service block', () => {
    const x = (name: string, port: number, file: string, disableLine: number | null, wanted = false) => ({
      by: 'xinetd' as const,
      name,
      port,
      proto: 'tcp' as const,
      file,
      line: 1,
      text: `service ${name}`,
      wanted,
      disableLine,
      endLine: 6,
    });
    const o = inetd(
      { services: [x('echo', 7, '/etc/xinetd.d/echo', 4), x('kubeish', 10250, '/etc/xinetd.d/kubeish', null, true)] },
      'xinetd.service',
      'xinetd',
    );
    const [c] = portFreeProvider.diff(spec(), o, { live: true });
    expect(c!.operator).toContain(
      'to free 10250 and keep xinetd.service: add "disable = yes" to /etc/xinetd.d/kubeish:1 (service kubeish) before its "}" at line 6 and run systemctl reload xinetd.service',
    );
    expect(c!.operator).toContain('also ends its other services: echo (7/tcp, /etc/xinetd.d/echo:1); its other sockets: 0.0.0.0:9/tcp, 0.0.0.0:111/udp.');
  });

  it('an unreadable configuration is named, and decides like something served: the stop waits for a person', () => {
    const [c] = portFreeProvider.diff(spec(), inetd({ unknown: '/etc/inetd.conf could not be read (EACCES)' }), { live: true });
    expect(c!.action).toBe('operator');
    expect(c!.operator).toContain('; unknown: /etc/inetd.conf could not be read (EACCES), so it may end more');
    expect(c!.operator).toContain("no entry of inetd.service's configuration was found serving 10250");
  });

  it('a unit that serves nothing else is stopped with no such note', () => {
    const o = inetd({}, 'api.service', null);
    o.busy[0]!.holders[0]!.otherSockets = [];
    const [c] = portFreeProvider.diff(spec(), o, { live: true });
    expect(c!.action).toBe('stop');
    expect(c!.summary).not.toContain('also ends');
    expect((c!.op as { ends?: unknown }).ends).toBeUndefined();
  });

  it("another unit's unreadable cgroup is named in its stop line, and does not hold the stop back", () => {
    const o = inetd(
      { unknown: 'the processes of api.service could not be listed (/sys/fs/cgroup/system.slice/api.service/cgroup.procs)' },
      'api.service',
      null,
    );
    o.busy[0]!.holders[0]!.otherSockets = [];
    const [c] = portFreeProvider.diff(spec(), o, { live: true });
    expect(c!.action).toBe('stop');
    expect(c!.summary).toContain(
      '; what else stopping api.service ends is not fully known: the processes of api.service could not be listed (/sys/fs/cgroup/system.slice/api.service/cgroup.procs)',
    );
    expect((c!.op as { ends?: unknown }).ends).toBeUndefined();
  });
});
