// The plan's BootWatch findings on a watched host (src/boot-watch/findings.ts):
// the promises judged against what the plan observed, each broken one named
// from the record bpftrace wrote in the qemu VM (test/fixtures/boot-watch/).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { brokenPromises, observationOf, watchFindings } from '../../src/boot-watch/findings.js';
import { parseWatchLog } from '../../src/boot-watch/record.js';

const record = parseWatchLog(readFileSync(new URL('../fixtures/boot-watch/measure-debian12.record', import.meta.url), 'latin1'));
const promises = [
  { id: 'sysctl:net.ipv4.ip_forward', kind: 'sysctl', subject: 'net.ipv4.ip_forward', expect: '1' },
  { id: 'sysctl:net.bridge.bridge-nf-call-iptables', kind: 'sysctl', subject: 'net.bridge.bridge-nf-call-iptables', expect: '1' },
  { id: 'swap:off', kind: 'swap', subject: 'swap', expect: 'off' },
  { id: 'module:overlay', kind: 'module', subject: 'overlay', expect: 'loaded' },
  { id: 'port:6443', kind: 'port', subject: '6443', expect: 'free' },
];

describe('brokenPromises', () => {
  it('judges each promise as the boot farm does, from the facts the plan observed', () => {
    const seen = observationOf({
      sysctls: new Map([
        ['net.ipv4.ip_forward', '0'],
        ['net.bridge.bridge-nf-call-iptables', '1'],
      ]),
      swapTotalKb: 0,
      modules: new Map([['overlay', true]]),
      listeners: { ports: [6443], busy: [6443] },
    });
    expect(brokenPromises(promises, seen)).toEqual([
      { id: 'sysctl:net.ipv4.ip_forward', kind: 'sysctl', subject: 'net.ipv4.ip_forward', seen: 'net.ipv4.ip_forward = 0', value: '0' },
      { id: 'port:6443', kind: 'port', subject: '6443', seen: 'port 6443 is listening (no process shown)' },
    ]);
  });
});

describe('watchFindings', () => {
  it('one unknown BootWatch finding per broken promise, naming the writer and the record line; the report says the same', () => {
    const { findings, report } = watchFindings(record, [
      { id: 'sysctl:net.ipv4.ip_forward', kind: 'sysctl', subject: 'net.ipv4.ip_forward', seen: 'net.ipv4.ip_forward = 0', value: '0' },
    ]);
    expect(findings).toEqual([
      {
        level: 'error',
        check: 'BootWatch',
        unknown: true,
        message:
          'sysctl:net.ipv4.ip_forward broken at boot: net.ipv4.ip_forward set to 0 at 59.0 s by bad-writer.service: /bin/sh -c echo 0 > /proc/sys/net/ipv4/ip_forward (pid 346, comm sh, cgroup bad-writer.service)',
        evidence: ['/run/k8s-host-reconcile-boot-watch.log:3'],
      },
    ]);
    expect(report).toMatchObject({
      ready_s: 57.56264509,
      events: 14,
      broken: [
        {
          promise: 'sysctl:net.ipv4.ip_forward',
          writer: { unit: 'bad-writer.service', pid: 346, line: 3, cmdline: ['/bin/sh', '-c', 'echo 0 > /proc/sys/net/ipv4/ip_forward'] },
        },
      ],
    });
  });

  it('nothing broken, nothing found', () => {
    expect(watchFindings(record, []).findings).toEqual([]);
  });
});

describe('the watched boot of the qemu scenario boot-watch (test/fixtures/boot-watch/watched-boot-debian12.record)', () => {
  // systemd-sysctl wrote 1 (the plan's sysctl.d file), then the planted unit's Python wrote 0: the host shows 0.
  const watched = parseWatchLog(readFileSync(new URL('../fixtures/boot-watch/watched-boot-debian12.record', import.meta.url), 'latin1'));

  it('names the planted unit, not systemd-sysctl, as the writer of the 0 the host has', () => {
    const { findings } = watchFindings(watched, [
      { id: 'sysctl:net.ipv4.ip_forward', kind: 'sysctl', subject: 'net.ipv4.ip_forward', seen: 'net.ipv4.ip_forward = 0', value: '0' },
    ]);
    expect(findings.map((f) => [f.message, f.evidence])).toEqual([
      [
        "sysctl:net.ipv4.ip_forward broken at boot: net.ipv4.ip_forward set to 0 at 62.1 s by zz-nic-offload-tune.service: /usr/bin/python3 -c open('/proc/sys/net/ipv4/ip_forward', 'w').write('0') (pid 334, comm python3, cgroup zz-nic-offload-tune.service)",
        ['/run/k8s-host-reconcile-boot-watch.log:5'],
      ],
    ]);
    expect(watched.events[0]!.who).toMatchObject({ cgroup: 'systemd-sysctl.service', argv: ['/lib/systemd/systemd-sysctl'] });
  });
});
