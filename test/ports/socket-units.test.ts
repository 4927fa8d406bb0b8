// Which units would take a TCP port, read from their files: a port mentioned
// as a whole token in ExecStart= or Environment= (a service candidate), and
// .socket units by their ListenStream= (systemd.socket(5)). Whether such a
// listener is in the host's network namespace is socket-units.host-tcp.test.ts.
import { describe, expect, it } from 'vitest';
import { mentionsPort, serviceCandidates, socketUnitsForPorts } from '../../src/ports/socket-units.js';
import { etcUnitFile } from '../helpers/unit-file.js';

const unit = etcUnitFile;

describe('mentionsPort and serviceCandidates', () => {
  it('a port is mentioned only as a whole token', () => {
    expect(mentionsPort('/usr/bin/agent --port 10250', 10250)).toBe(true);
    expect(mentionsPort('/usr/bin/agent --listen=0.0.0.0:10250 -v', 10250)).toBe(true);
    expect(mentionsPort('AGENT_PORT=10250', 10250)).toBe(true);
    expect(mentionsPort('/usr/bin/agent --port 110250', 10250)).toBe(false);
    expect(mentionsPort('/usr/bin/agent --port 102500', 10250)).toBe(false);
    expect(mentionsPort('/opt/v10250.2/agent', 10250)).toBe(false);
  });

  it('service candidates come from ExecStart= and Environment=, with a continuation line', () => {
    const units = [
      unit('mon.service', '[Service]\nExecStart=/usr/bin/mon \\\n  --port 10250\n'),
      unit('env.service', '[Service]\nEnvironment="LISTEN=:6443"\nExecStart=/usr/bin/env-agent\n'),
      unit('other.service', '[Service]\nExecStart=/usr/bin/x --port 8080\nDescription=10250\n'),
    ];
    const c = serviceCandidates(units, [6443, 10250]);
    expect(c.map((x) => [x.unit, x.port, x.evidence.key, x.evidence.line])).toEqual([
      ['env.service', 6443, 'Environment', 2],
      ['mon.service', 10250, 'ExecStart', 2],
    ]);
  });

  it('sorts by the bytes of the names, as systemd does (strcmp), whatever the locale', () => {
    // The C locale and strcmp put every upper-case letter before any lower-case one; ICU collation does not.
    const units = [
      unit('alpha.service', '[Service]\nExecStart=/usr/bin/a --port 6443\n'),
      unit('Zeta.service', '[Service]\nExecStart=/usr/bin/z --port 6443\n'),
    ];
    expect(serviceCandidates(units, [6443]).map((x) => x.unit)).toEqual(['Zeta.service', 'alpha.service']);
  });
  it('the same port in several directives of one unit is one candidate, the first directive its evidence', () => {
    const c = serviceCandidates([unit('dup.service', '[Service]\nEnvironment=PORT=6443\nExecStart=/usr/bin/dup --port 6443\n')], [6443]);
    expect(c.map((x) => [x.unit, x.port])).toEqual([['dup.service', 6443]]);
  });
});

describe('socketUnitsForPorts: .socket units by their ListenStream=', () => {
  it('a socket on a wanted port, by name in byte order; other ports, masked sockets and services are not listed', () => {
    const units = [
      unit('kubelet-relay.socket', '[Socket]\nListenStream=0.0.0.0:10250\n'),
      unit('Api.socket', '[Socket]\nListenStream=[::]:6443\n'),
      unit('web.socket', '[Socket]\nListenStream=8080\n'),
      { ...unit('masked.socket', '[Socket]\nListenStream=6443\n'), masked: true },
      unit('api.service', '[Service]\nExecStart=/usr/bin/api --port 6443\n'),
    ];
    expect(socketUnitsForPorts(units, [6443, 10250]).map((s) => s.name)).toEqual(['Api.socket', 'kubelet-relay.socket']);
    expect(socketUnitsForPorts(units, [])).toEqual([]);
  });
  it('a drop-in that empties ListenStream= and listens elsewhere moves the socket off the port', () => {
    const moved = unit('agent.socket', '[Socket]\nListenStream=10250\n', '[Socket]\nListenStream=\nListenStream=10255\n');
    expect(socketUnitsForPorts([moved], [10250])).toEqual([]);
    expect(socketUnitsForPorts([moved], [10255]).map((s) => s.name)).toEqual(['agent.socket']);
  });
});
