import { describe, expect, it } from 'vitest';
import { parseMeminfo } from '../src/observe/meminfo.js';
import { normalizeSysctlKey, sysctlProcPath } from '../src/observe/sysctl-live.js';
import { canonicalModuleName, parseModulesBuiltin, parseProcModules } from '../src/observe/modules.js';
import { busyPorts, parseProcNetTcp } from '../src/observe/listeners.js';

describe('meminfo', () => {
  it('reads kB fields', () => {
    const m = parseMeminfo('MemTotal:        2030036 kB\nSwapTotal:         65532 kB\nHugePages_Total:       0\n');
    expect(m.get('MemTotal')).toBe(2030036);
    expect(m.get('SwapTotal')).toBe(65532);
    expect(m.get('HugePages_Total')).toBe(0);
  });
});

describe('sysctl key forms (sysctl.d(5))', () => {
  it.each([
    ['net.ipv4.ip_forward', '/proc/sys/net/ipv4/ip_forward', 'net.ipv4.ip_forward'],
    ['net/ipv4/ip_forward', '/proc/sys/net/ipv4/ip_forward', 'net.ipv4.ip_forward'],
    ['net.ipv4.conf.eth0/100.rp_filter', '/proc/sys/net/ipv4/conf/eth0.100/rp_filter', 'net.ipv4.conf.eth0/100.rp_filter'],
    ['net/ipv4/conf/eth0.100/rp_filter', '/proc/sys/net/ipv4/conf/eth0.100/rp_filter', 'net.ipv4.conf.eth0/100.rp_filter'],
    ['  net.bridge.bridge-nf-call-iptables ', '/proc/sys/net/bridge/bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-iptables'],
  ])('%s', (key, proc, canonical) => {
    expect(sysctlProcPath(key)).toBe(proc);
    expect(normalizeSysctlKey(key)).toBe(canonical);
  });
});

describe('modules', () => {
  it('parses /proc/modules and treats - and _ alike', () => {
    const s = parseProcModules('br_netfilter 32768 0 - Live 0x0\nbridge 311296 1 br_netfilter, Live 0x0\noverlay 163840 0 - Live 0x0\n');
    expect([...s].sort()).toEqual(['br_netfilter', 'bridge', 'overlay']);
    expect(canonicalModuleName('br-netfilter')).toBe('br_netfilter');
  });
  it('parses modules.builtin paths', () => {
    const s = parseModulesBuiltin('kernel/fs/overlayfs/overlay.ko\nkernel/net/bridge/br_netfilter.ko.xz\n');
    expect(s.has('overlay')).toBe(true);
    expect(s.has('br_netfilter')).toBe(true);
  });
});

describe('/proc/net/tcp listeners', () => {
  const tcp = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 00000000:280A 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 21554 1 0000000000000000 100 0 0 10 0',
    '   1: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 21555 1 0000000000000000 100 0 0 10 0',
    '   2: 0100007F:0CEA 0100007F:A0B2 01 00000000:00000000 00:00000000 00000000     0        0 21999 1 0000000000000000 100 0 0 10 0',
  ].join('\n');
  const tcp6 = [
    '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 00000000000000000000000000000000:1932 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 30001 1 0000000000000000 100 0 0 10 0',
    '   1: 00000000000000000000000001000000:2800 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 30002 1 0000000000000000 100 0 0 10 0',
    '   2: 0000000000000000FFFF00000100007F:0959 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 30003 1 0000000000000000 100 0 0 10 0',
  ].join('\n');

  it('reads IPv4 any and loopback LISTEN sockets, skipping other states', () => {
    expect(parseProcNetTcp(tcp, 'ipv4')).toEqual([
      { family: 'ipv4', address: '0.0.0.0', port: 10250, inode: 21554 },
      { family: 'ipv4', address: '127.0.0.1', port: 3306, inode: 21555 },
    ]);
  });

  it('reads IPv6 any, loopback and v4-mapped listeners', () => {
    expect(parseProcNetTcp(tcp6, 'ipv6')).toEqual([
      { family: 'ipv6', address: '::', port: 6450, inode: 30001 },
      { family: 'ipv6', address: '::1', port: 10240, inode: 30002 },
      { family: 'ipv6', address: '::ffff:7f00:1', port: 2393, inode: 30003 },
    ]);
  });

  it('busy ports are distinct and ascending', () => {
    const l = [...parseProcNetTcp(tcp, 'ipv4'), ...parseProcNetTcp(tcp6, 'ipv6'), { family: 'ipv6' as const, address: '::', port: 10250, inode: 9 }];
    expect(busyPorts(l, [10259, 10250, 6443, 10240])).toEqual([10240, 10250]);
  });
});
