// A broken promise named from the record (src/boot-watch/attribute.ts): the
// last event that did what the host shows, in the host's namespace only. The
// events are built by hand; the expected sentences are written out.
import { describe, expect, it } from 'vitest';
import { attribute } from '../../src/boot-watch/attribute.js';
import type { WatchEvent, WatchRecord, Writer } from '../../src/boot-watch/record.js';

const HOST = 4026531840;
const who = (over: Partial<Writer> = {}): Writer => ({
  pid: 100,
  ppid: 1,
  netns: HOST,
  cgroup: '/system.slice/systemd-sysctl.service',
  comm: 'systemd-sysctl',
  argv: ['/lib/systemd/systemd-sysctl'],
  cut: false,
  ...over,
});
const record = (events: WatchEvent[]): WatchRecord => ({ readyNs: 1_500_000_000, hostNetns: HOST, events, problems: [] });

describe('attribute', () => {
  const sysctlOne: WatchEvent = { kind: 'sysctl', line: 2, ns: 2_000_000_000, key: 'net.ipv4.ip_forward', value: '1', who: who() };
  const pythonZero: WatchEvent = {
    kind: 'sysctl',
    line: 5,
    ns: 9_460_000_000,
    key: 'net.ipv4.ip_forward',
    value: '0',
    who: who({ pid: 612, cgroup: '/system.slice/zz-nic-offload-tune.service', comm: 'python3', argv: ['/usr/bin/python3', '-c', 'x'] }),
  };
  const containerZero: WatchEvent = { ...pythonZero, line: 7, ns: 12_000_000_000, who: who({ netns: 4026532300, cgroup: '/machine.slice/c.scope' }) };

  it('names the last host writer of the value the key has now, not a container writing its own namespace', () => {
    const [a] = attribute(record([sysctlOne, pythonZero, containerZero]), [
      { id: 'sysctl:net.ipv4.ip_forward', kind: 'sysctl', subject: 'net.ipv4.ip_forward', seen: 'net.ipv4.ip_forward = 0', value: '0' },
    ]);
    expect(a!.event).toBe(pythonZero);
    expect(a!.text).toBe(
      'net.ipv4.ip_forward set to 0 at 9.5 s by zz-nic-offload-tune.service: /usr/bin/python3 -c x (pid 612, comm python3, cgroup /system.slice/zz-nic-offload-tune.service)',
    );
  });

  it('says so when the record has no such write, naming when the watch attached', () => {
    const [a] = attribute(record([sysctlOne]), [
      { id: 'sysctl:net.ipv4.ip_forward', kind: 'sysctl', subject: 'net.ipv4.ip_forward', seen: 'net.ipv4.ip_forward = 0', value: '0' },
    ]);
    expect(a!.event).toBeNull();
    expect(a!.text).toBe(
      'net.ipv4.ip_forward = 0: no write of this value was recorded (the watch was attached from 1.5 s after boot); it was done before the watch attached, after it stopped, or by what the watch does not see',
    );
  });

  it('takes a successful swapon and module removal only, and a TCP bind or a listen in the host namespace only', () => {
    const failed: WatchEvent = { kind: 'swapon', line: 3, ns: 3e9, path: '/a', ret: -22, who: who() };
    const ok: WatchEvent = { kind: 'swapon', line: 4, ns: 4e9, path: '/swap-late', ret: 0, who: who({ cgroup: '/system.slice/cron.service' }) };
    const rm: WatchEvent = { kind: 'delete_module', line: 5, ns: 5e9, module: 'br_netfilter', ret: 0, who: who() };
    const udp: WatchEvent = { kind: 'bind', line: 6, ns: 6e9, port: 6443, sockType: 2, who: who() };
    const other: WatchEvent = { kind: 'listen', line: 7, ns: 7e9, port: 6443, who: who({ netns: 1 }) };
    const tcp: WatchEvent = { kind: 'bind', line: 8, ns: 8e9, port: 10250, sockType: 1, who: who() };
    const r = record([failed, ok, rm, udp, other, tcp]);
    const got = attribute(r, [
      { id: 'swap:off', kind: 'swap', subject: 'swap', seen: 'swap on' },
      { id: 'module:br_netfilter', kind: 'module', subject: 'br_netfilter', seen: 'br_netfilter not loaded' },
      { id: 'port:6443', kind: 'port', subject: '6443', seen: 'port 6443 is listening' },
      { id: 'port:10250', kind: 'port', subject: '10250', seen: 'port 10250 is listening' },
    ]);
    expect(got.map((a) => a.event)).toEqual([ok, rm, null, tcp]);
    expect(got[0]!.text.startsWith('swap turned on (/swap-late) at 4.0 s by cron.service: ')).toBe(true);
  });

  it('shows a control character a process put in its name escaped, so it cannot forge a line', () => {
    const e: WatchEvent = { ...pythonZero, who: who({ comm: 'a\nb', argv: ['x\ty'], cgroup: '/u' }) };
    const [a] = attribute(record([e]), [{ id: 'sysctl:net.ipv4.ip_forward', kind: 'sysctl', subject: 'net.ipv4.ip_forward', seen: '', value: '0' }]);
    expect(a!.text).toBe('net.ipv4.ip_forward set to 0 at 9.5 s by cgroup /u: x\\x09y (pid 100, comm a\\x0ab, cgroup /u)');
  });
});
