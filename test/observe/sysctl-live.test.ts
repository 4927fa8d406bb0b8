// sysctl key forms (sysctl.d(5): a key whose first separator is "/" keeps
// its dots; one whose first separator is "." has dots and slashes swapped) and
// the live value as /proc/sys holds it.
import { describe, expect, it } from 'vitest';
import { liveFixtureHosts } from '../helpers/live-fixture-host.js';

/** Live hosts over fixture roots holding `files`. */
const { live } = liveFixtureHosts('observe-');
import { normalizeSysctlKey, readLiveSysctl, sysctlProcPath } from '../../src/observe/sysctl-live.js';

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

describe('readLiveSysctl', () => {
  it('collapses the tabs and newline the kernel prints; a key this kernel lacks is null', async () => {
    const host = live({ 'proc/sys/net/ipv4/tcp_rmem': '4096\t131072\t6291456\n', 'proc/sys/net/ipv4/conf/eth0.100/rp_filter': '2\n' });
    expect(await readLiveSysctl(host, 'net.ipv4.tcp_rmem')).toBe('4096 131072 6291456');
    expect(await readLiveSysctl(host, 'net.ipv4.conf.eth0/100.rp_filter')).toBe('2');
    expect(await readLiveSysctl(host, 'net.bridge.bridge-nf-call-iptables')).toBeNull();
  });
  it('a key already canonical comes back as it is', () => {
    expect(normalizeSysctlKey('kernel.panic')).toBe('kernel.panic');
    expect(sysctlProcPath('/kernel/panic')).toBe('/proc/sys/kernel/panic');
  });
});
