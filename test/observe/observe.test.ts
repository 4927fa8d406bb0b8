import { describe, expect, it } from 'vitest';
import { parseMeminfo } from '../../src/observe/meminfo.js';
import { normalizeSysctlKey, sysctlProcPath } from '../../src/observe/sysctl-live.js';
import { canonicalModuleName, parseModulesBuiltin, parseProcModules } from '../../src/observe/modules.js';
import { busyPorts } from '../../src/observe/listeners.js';

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

// parseProcNetTcp is tested on lines this kernel printed in test/ports/parsers.test.ts.
describe('busy ports', () => {
  it('are the wanted ports some listener holds, once each whatever the family, ascending', () => {
    const listeners = [
      { family: 'ipv4' as const, address: '0.0.0.0', port: 10250, inode: 1 },
      { family: 'ipv6' as const, address: '::', port: 10250, inode: 2 },
      { family: 'ipv6' as const, address: '::1', port: 10240, inode: 3 },
      { family: 'ipv4' as const, address: '127.0.0.1', port: 3306, inode: 4 },
    ];
    expect(busyPorts(listeners, [10259, 10250, 6443, 10240])).toEqual([10240, 10250]);
  });
});
