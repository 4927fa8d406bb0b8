// The boot watch's record read back (src/boot-watch/record.ts). The lines are
// in the tracer's own format; the values expected are read by hand from each
// line (the recorded VM log is test/fixtures/boot-watch/, its own test below).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseWatchLog, unescapeField } from '../../src/boot-watch/record.js';

const T = '\t';
const line = (...f: (string | number)[]) => f.join(T);

describe('unescapeField', () => {
  it('turns bpftrace %r escapes back into bytes and keeps printable text', () => {
    expect(unescapeField('sh\\x00-c\\x00echo 0\\x0a')).toBe('sh\0-c\0echo 0\n');
    expect(unescapeField('plain text')).toBe('plain text');
  });
});

describe('parseWatchLog', () => {
  it("reads the ready line, a sysctl write with its writer, and skips bpftrace's own banner", () => {
    const r = parseWatchLog(
      [
        'Attaching 9 probes...',
        line('ready', 41000000000, 4026531840),
        line(
          'sysctl',
          52300000000,
          612,
          1,
          4026531840,
          'python3\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00',
          29,
          '/usr/bin/python3\\x00-c\\x00print(1)\\x00',
          1,
          '0',
        ),
        line('cgroup', 612, 'zz.service'),
      ].join('\n') + '\n',
    );
    expect(r.readyNs).toBe(41000000000);
    expect(r.hostNetns).toBe(4026531840);
    expect(r.problems).toEqual([]);
    expect(r.events).toEqual([
      {
        kind: 'sysctl',
        line: 3,
        ns: 52300000000,
        key: 'net.ipv4.ip_forward',
        value: '0',
        who: {
          pid: 612,
          ppid: 1,
          netns: 4026531840,
          cgroup: 'zz.service',
          comm: 'python3',
          argv: ['/usr/bin/python3', '-c', 'print(1)'],
          cut: false,
        },
      },
    ]);
  });

  it('pairs a syscall exit with its enter, and says a cmdline longer than was read is cut', () => {
    const r = parseWatchLog(
      [
        line('swapon', 5, 70, 1, 9, 'swapon', 200, '/sbin/swapon\\x00/swapf', '/swapf\\x00\\x00'),
        line('cgroup', 70, 'a.service'),
        line('swapon-ret', 6, 70, -22),
        line('delete_module', 7, 71, 1, 9, 'rmmod', 12, 'rmmod\\x00dummy\\x00', 'dummy\\x00'),
        line('delete_module-ret', 8, 71, 0),
      ].join('\n'),
    );
    expect(r.events.map((e) => [e.kind, 'ret' in e ? e.ret : undefined, e.who.cut])).toEqual([
      ['swapon', -22, true],
      ['delete_module', 0, false],
    ]);
    expect(r.events[0]).toMatchObject({ path: '/swapf' });
    expect(r.events[1]).toMatchObject({ module: 'dummy' });
  });

  it('keeps a tab inside the cgroup name (the rest of its line), and names every line it cannot read', () => {
    const r = parseWatchLog(
      [
        line('listen', 1, 5, 1, 9, 'x', 2, 'x\\x00', 6443),
        line('cgroup', 5, 'odd', 'name'),
        line('cgroup', 5, 'again'),
        line('bind', 2, 5, 1, 9, 'x', 2, 'x\\x00', 'port?', 1),
        line('sysctl', 3, 5, 1, 9, 'x', 2, 'x\\x00', 7, '1'),
        line('listen', 4, 5, 1, 9, 'x', 2, 'x\\x00', 6443, 'extra'),
        'garbage\tline',
      ].join('\n'),
    );
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ kind: 'listen', port: 6443, who: { cgroup: 'odd\tname' } });
    expect(r.problems.map((p) => p.line)).toEqual([3, 4, 5, 6, 7]);
  });
});

describe('the record bpftrace wrote in the qemu VM (Debian 12, 6.1 cloud kernel; test/fixtures/boot-watch/)', () => {
  // The triggers the measuring boot ran (docs/boot-watch.md, "Measured"), each read by hand from the log's lines.
  const r = parseWatchLog(readFileSync(new URL('../fixtures/boot-watch/measure-debian12.record', import.meta.url), 'latin1'));

  it('has every line read, the ready line, and the host namespace', () => {
    expect(r.problems).toEqual([]);
    expect([r.readyNs, r.hostNetns]).toEqual([57562645090, 4026531840]);
    expect(r.events).toHaveLength(14);
  });

  it('a unit writing ip_forward with sh -c: its unit, its argv and the value 0', () => {
    expect(r.events[0]).toEqual({
      kind: 'sysctl',
      line: 3,
      ns: 59047959230,
      key: 'net.ipv4.ip_forward',
      value: '0',
      who: {
        pid: 346,
        ppid: 1,
        netns: 4026531840,
        cgroup: 'bad-writer.service',
        comm: 'sh',
        argv: ['/bin/sh', '-c', 'echo 0 > /proc/sys/net/ipv4/ip_forward'],
        cut: false,
      },
    });
  });

  it('sysctl -w, echo into a bridge key, swapon and rmmod with their results, TCP and UDP binds, listens, and another namespace', () => {
    const brief = r.events.map((e) => {
      if (e.kind === 'sysctl') return `${e.kind} ${e.key}=${e.value} ${e.who.netns === r.hostNetns ? 'host' : 'other'}`;
      if (e.kind === 'swapon') return `swapon ${e.path} ${e.ret}`;
      if (e.kind === 'delete_module') return `delete_module ${e.module} ${e.ret}`;
      if (e.kind === 'bind') return `bind ${e.port} type ${e.sockType} ${e.who.netns === r.hostNetns ? 'host' : 'other'}`;
      return `listen ${e.port} ${e.who.netns === r.hostNetns ? 'host' : 'other'}`;
    });
    expect(brief).toEqual([
      'sysctl net.ipv4.ip_forward=0 host',
      'sysctl net.ipv4.ip_forward=1 host',
      'sysctl net.bridge.bridge-nf-call-iptables=0 host',
      'sysctl net.bridge.bridge-nf-call-ip6tables=0 host',
      'swapon /swapf 0',
      'delete_module dummy 0',
      'bind 6443 type 1 host',
      'listen 6443 host',
      'bind 10250 type 2 host',
      'bind 2379 type 1 host',
      'listen 2379 host',
      'bind 10259 type 1 other',
      'listen 10259 other',
      'sysctl net.ipv4.ip_forward=1 other',
    ]);
    // python3 -c '…' was 316 bytes of cmdline; the tracer read 96.
    expect(r.events[6]!.who).toMatchObject({
      comm: 'python3',
      cut: true,
      argv: ['python3', '-c', 'import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUS'],
    });
  });
});
