// systemctl's and systemd's output as the tool reads it: timespans against
// systemd-analyze timespan (systemd's own parser), `systemctl show` property
// lines, and `systemctl list-sockets` lines as systemctl prints them.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { parseListSockets, parseShowProperties, parseTimespanMs } from '../../src/systemd/systemctl-output.js';

/** systemd's own parser: the span in ms, or null when it refuses the text. */
function theirs(text: string): number | null {
  const r = spawnSync('systemd-analyze', ['timespan', text], { encoding: 'utf8' });
  return r.status === 0 ? Math.round(Number(/μs: (\d+)/.exec(r.stdout)![1]) / 1000) : null;
}

describe('parseTimespanMs against systemd-analyze timespan', () => {
  /** systemd's own parser: the span in ms (rounded as ours), or null when it refuses the text or says infinity. */
  const theirs = (text: string): number | null => {
    const r = spawnSync('systemd-analyze', ['timespan', text], { encoding: 'utf8' });
    if (r.status !== 0) return null;
    const us = /μs: (\d+)/.exec(r.stdout)![1]!;
    return us === '18446744073709551615' ? null : Math.round(Number(us) / 1000);
  };
  const accepted = [
    '100ms',
    '5s',
    '1min 30s',
    '1min30s',
    '1 min 30 s',
    '1.5s',
    '1.5min',
    '2',
    '0',
    '7usec',
    '1500us',
    '10msec',
    '500µs',
    '5sec',
    '1second',
    '1.5',
    '2 hours',
    '3hr',
    '1h',
    '1d 2h',
    '2d',
    '1day',
    '2days',
    '1m',
    '2minutes',
    '1minute',
    '5 s',
    '  5s  ',
    '1s 500ms',
  ];
  const refused = ['soon', '1S', '5s junk', 'x5s', '', 'infinity', 's', '5x', '5 parsecs'];
  it('accepts what systemd accepts, with the same length', () => {
    for (const t of accepted) {
      const want = theirs(t);
      expect(want, `systemd-analyze accepts ${JSON.stringify(t)}`).not.toBeNull();
      expect(parseTimespanMs(t), t).toBe(want);
    }
  });
  it('refuses what systemd refuses (and infinity, which is no delay to wait for)', () => {
    for (const t of refused) {
      expect(theirs(t), `systemd-analyze on ${JSON.stringify(t)}`).toBeNull();
      expect(parseTimespanMs(t), t).toBeNull();
    }
  });
});

describe('parseTimespanMs against systemd-analyze timespan, continued', () => {
  it('several digits and two decimals, bare (seconds) or with a unit', () => {
    for (const t of ['12', '1.25', '1.25s', '10.75min', '250ms']) {
      expect(theirs(t), t).not.toBeNull();
      expect(parseTimespanMs(t), t).toBe(theirs(t));
    }
  });
  it('every unit systemd knows (weeks, months, years, both micro signs), numbers without a unit summed, and what it refuses', () => {
    const known = [
      '19',
      '9s',
      '1\t5',
      '1\n5',
      '1\r5',
      '\t2s',
      '1w',
      '2M',
      '1y',
      '500\u03bcs',
      '500\u00b5s',
      '5 5',
      '1min 30',
      '1month 2w',
      '1y 2month 3w',
      '2 h',
      '1.5h',
      '3 days',
      '10msec',
      '12.34 .56',
      '1s.5',
    ];
    for (const t of known) {
      expect(theirs(t), t).not.toBeNull();
      expect(parseTimespanMs(t), t).toBe(theirs(t));
    }
    for (const t of ['12.34.56', '5x', '-1', '1 s s']) {
      expect(theirs(t), t).toBeNull();
      expect(parseTimespanMs(t), t).toBeNull();
    }
  });
  it('a text of blanks only is no span', () => {
    expect(theirs('   ')).toBeNull();
    expect(parseTimespanMs('   ')).toBeNull();
  });
});

describe('systemctl show and list-sockets output', () => {
  it('show: one property per line, split at the first "=", the value trimmed; a line without a name is no property', () => {
    const text = 'Environment=A=1 B=2\nRestartUSec=100ms  \nMainPID=0\n=orphan\nnot a property\nExecMainStatus=\n';
    const p = parseShowProperties(text);
    expect([...p]).toEqual([
      ['Environment', 'A=1 B=2'],
      ['RestartUSec', '100ms'],
      ['MainPID', '0'],
      ['ExecMainStatus', ''],
    ]);
  });

  it('list-sockets: a header and a footer are no sockets; ACTIVATES is a comma list', () => {
    const text = [
      'LISTEN                      UNIT                  ACTIVATES',
      '[::]:10250                  agent.socket          agent.service, agent-helper.service',
      '/run/x.sock                 x.socket              x.service',
      '',
      '2 sockets listed.',
      'Pass --all to see loaded but inactive sockets, too.',
    ].join('\n');
    expect(parseListSockets(text)).toEqual([
      { listen: '[::]:10250', type: null, port: 10250, unit: 'agent.socket', activates: ['agent.service', 'agent-helper.service'] },
      { listen: '/run/x.sock', type: null, port: null, unit: 'x.socket', activates: ['x.service'] },
    ]);
  });
});

describe('list-sockets and RestartUSec as PortFree reads them', () => {
  it('list-sockets lines', () => {
    const out = [
      '/run/dbus/system_bus_socket dbus.socket            dbus.service',
      '[::]:22                     ssh.socket             ssh.service',
      '0.0.0.0:10250               agent.socket           agent.service',
      '[::]:10259                  idle.socket',
    ].join('\n');
    const p = parseListSockets(out);
    expect(p.find((s) => s.port === 10250)).toEqual({ listen: '0.0.0.0:10250', type: null, port: 10250, unit: 'agent.socket', activates: ['agent.service'] });
    expect(p.find((s) => s.unit === 'dbus.socket')!.port).toBeNull();
    expect(p.find((s) => s.port === 10259)!.activates).toEqual([]);
  });

  it('list-sockets: ACTIVATES is the third column on; a socket path that ends in ".service" is no activated unit', () => {
    const p = parseListSockets(
      '/run/odd/api.service        odd.socket             odd.service,odd-helper.service\n[fe80::1]:2380%eth0 peer.socket peer.service',
    );
    expect(p[0]).toEqual({ listen: '/run/odd/api.service', type: null, port: null, unit: 'odd.socket', activates: ['odd.service', 'odd-helper.service'] });
    // systemctl prints a scope after the port (sockaddr_pretty).
    expect(p[1]!.port).toBe(2380);
  });

  it('list-sockets --show-types: TYPE is the second column, and the unit and ACTIVATES follow it', () => {
    const p = parseListSockets(
      [
        'LISTEN                      TYPE     UNIT                  ACTIVATES',
        '/run/dbus/system_bus_socket Stream   dbus.socket           dbus.service',
        '[::]:6443                   Datagram udp-relay.socket      udp-relay.service',
        '[::]:6443                   Stream   sockd.socket          sockd.service',
        '/run/initctl                FIFO     systemd-initctl.socket systemd-initctl.service',
        '',
        '4 sockets listed.',
      ].join('\n'),
    );
    expect(p.map((s) => [s.type, s.unit, s.port, s.activates])).toEqual([
      ['Stream', 'dbus.socket', null, ['dbus.service']],
      ['Datagram', 'udp-relay.socket', 6443, ['udp-relay.service']],
      ['Stream', 'sockd.socket', 6443, ['sockd.service']],
      ['FIFO', 'systemd-initctl.socket', null, ['systemd-initctl.service']],
    ]);
  });

  it('RestartUSec timespans', () => {
    expect(parseTimespanMs('100ms')).toBe(100);
    expect(parseTimespanMs('5s')).toBe(5000);
    expect(parseTimespanMs('1min 30s')).toBe(90_000);
    expect(parseTimespanMs('2')).toBe(2000);
    expect(parseTimespanMs('500us')).toBe(1);
    expect(parseTimespanMs('')).toBeNull();
    expect(parseTimespanMs('soon')).toBeNull();
  });
});
