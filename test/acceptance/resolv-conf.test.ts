// ResolvConfLoop's reading of a resolv.conf and its checker. The expected
// values are hand-read from the two consumers' sources: kubelet's
// parseResolvConf (kubernetes/kubernetes pkg/kubelet/network/dns/dns.go:
// lines trimmed, a line starting with "#" skipped, fields split on white
// space, a "nameserver" line's second field kept, a bare "nameserver" kept
// as an error, not a server) and formDNSNameserversFitsLimits (the first
// validation.MaxDNSNameservers = 3), then CoreDNS's miekg/dns
// ClientConfigFromReader (a value that is no IP address is dropped, an IPv6
// one may carry a %zone). Loopback is Go's net.IP.IsLoopback (127.0.0.0/8,
// ::1 and IPv4-mapped 127.x), checked against python3's ipaddress on
// generated addresses (is_loopback, through ipv4_mapped for a mapped one).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isLoopback, kubeletNameservers, nameserverAddress, onlyLoopback, podForwardAddresses, resolvConfLoopCheck } from '../../src/acceptance/resolv-conf.js';
import type { AcceptanceFacts, ResolvConfFacts } from '../../src/acceptance/checker.js';
import { known, notKnown, unreadable } from '../../src/acceptance/checker.js';
import { pick, random } from '../helpers/random.js';

describe("kubelet's nameservers, as dns.go parseResolvConf reads them", () => {
  it("systemd-resolved's stub-resolv.conf as it writes it (comment block, nameserver 127.0.0.53, options, search .)", () => {
    const stub =
      '# This is /run/systemd/resolve/stub-resolv.conf managed by man:systemd-resolved(8).\n# Do not edit.\n#\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n';
    expect(kubeletNameservers(stub)).toEqual(['127.0.0.53']);
  });
  it("a Debian 12 cloud image's DHCP-written file: one real server", () => {
    expect(kubeletNameservers('domain c.internal\nsearch c.internal.\nnameserver 169.254.169.254\n')).toEqual(['169.254.169.254']);
  });
  it('trimmed lines, tabs, trailing words and a "#" after blanks are kubelet\'s; ";" lines are not nameserver lines', () => {
    const text =
      '  nameserver\t10.0.0.1 # trailing\n\t# nameserver 10.0.0.2\n; nameserver 10.0.0.3\nnameserver\nnameservers 10.0.0.4\nNAMESERVER 10.0.0.5\n nameserver 10.0.0.6\n';
    expect(kubeletNameservers(text)).toEqual(['10.0.0.1', '10.0.0.6']);
  });
  it('the first three only (MaxDNSNameservers), a fourth loopback one never counts', () => {
    expect(kubeletNameservers('nameserver 1.1.1.1\nnameserver 8.8.8.8\nnameserver 9.9.9.9\nnameserver 127.0.0.1\n')).toEqual(['1.1.1.1', '8.8.8.8', '9.9.9.9']);
  });
  it('CRLF line ends: TrimSpace removes the \\r', () => {
    expect(kubeletNameservers('nameserver 127.0.0.1\r\nnameserver ::1\r\n')).toEqual(['127.0.0.1', '::1']);
  });
  it('CoreDNS keeps only the values that are IP addresses; an IPv6 %zone is dropped from the address', () => {
    expect(nameserverAddress('fe80::1%eth0')).toBe('fe80::1');
    expect(nameserverAddress('localhost')).toBeNull();
    expect(nameserverAddress('127.0.0.1%eth0')).toBeNull();
    // The third value kubelet keeps is no address: CoreDNS forwards to the two others.
    expect(podForwardAddresses('nameserver 127.0.0.1\nnameserver dns.example\nnameserver ::1\nnameserver 10.0.0.1\n')).toEqual(['127.0.0.1', '::1']);
  });
});

describe("loopback as Go's IsLoopback, against python3's ipaddress", () => {
  it('hand-read cases: 127/8, ::1 in every spelling, mapped 127.x; not 0.0.0.0, ::, 169.254.x, fe80::1', () => {
    for (const a of ['127.0.0.53', '127.255.255.254', '::1', '0:0:0:0:0:0:0:1', '0000::0001', '::ffff:127.0.0.1', '::FFFF:7f00:1'])
      expect(isLoopback(a)).toBe(true);
    for (const a of ['0.0.0.0', '::', '169.254.169.254', 'fe80::1', '::ffff:10.0.0.1', '::127.0.0.1', '128.0.0.1', '::2']) expect(isLoopback(a)).toBe(false);
  });
  it('2,000 generated IPv4, IPv6 and mapped addresses agree with python3', () => {
    const r = random(47);
    const octet = () => String(pick(r, [0, 1, 2, 53, 126, 127, 128, 169, 254, 255, Math.floor(r() * 256)]));
    const hex = () => pick(r, ['0', '1', '00', '0001', 'ffff', 'FFFF', '7f00', Math.floor(r() * 65536).toString(16)]);
    const gen = (): string => {
      const v4 = () => [octet(), octet(), octet(), octet()].join('.');
      switch (Math.floor(r() * 4)) {
        case 0:
          return v4();
        case 1:
          return `::${pick(r, ['ffff:', 'FFFF:', '0:ffff:', ''])}${v4()}`;
        case 2:
          return Array.from({ length: 8 }, () => pick(r, ['0', '0', '0', hex()])).join(':');
        default:
          return `${pick(r, ['', '0', 'fe80', hex()])}::${pick(r, ['1', '0', hex(), `${hex()}:1`])}`;
      }
    };
    const inputs = Array.from({ length: 2000 }, gen);
    const py = [
      'import ipaddress, json, sys',
      'out = []',
      'for a in json.load(sys.stdin):',
      '    ip = ipaddress.ip_address(a)',
      '    m = getattr(ip, "ipv4_mapped", None)',
      '    out.append((m or ip).is_loopback)',
      'print(json.dumps(out))',
    ].join('\n');
    const oracle = JSON.parse(execFileSync('python3', ['-c', py], { input: JSON.stringify(inputs) }).toString()) as boolean[];
    const disagree = inputs.filter((a, i) => isLoopback(a) !== oracle[i]);
    expect(disagree).toEqual([]);
    // The generator reaches both answers.
    expect(oracle.filter(Boolean).length).toBeGreaterThan(100);
    expect(oracle.filter((x) => !x).length).toBeGreaterThan(100);
  });
  it('only loopback: at least one address, all loopback', () => {
    expect(onlyLoopback([])).toBe(false);
    expect(onlyLoopback(['127.0.0.53'])).toBe(true);
    expect(onlyLoopback(['127.0.0.1', '::1'])).toBe(true);
    expect(onlyLoopback(['127.0.0.1', '10.0.0.2'])).toBe(false);
  });
});

describe('the ResolvConfLoop checker', () => {
  const facts = (r: AcceptanceFacts['resolvConf']) => ({ resolvConf: r }) as AcceptanceFacts;
  const file = (addresses: string[], real = '/etc/resolv.conf'): ResolvConfFacts => ({ path: '/etc/resolv.conf', real, addresses, beside: null });
  it("a name of ours, marked as breaking later (not quoted as kubeadm's)", () => {
    expect(resolvConfLoopCheck.name).toBe('ResolvConfLoop');
    expect(resolvConfLoopCheck.breaksLater).toMatch(/CoreDNS/);
  });
  it("systemd-resolved's stub behind the link: the warning names the link and the address", () => {
    expect(resolvConfLoopCheck.check(facts(known(file(['127.0.0.53'], '/run/systemd/resolve/stub-resolv.conf'))))).toEqual({
      warnings: [
        "/etc/resolv.conf (a link to /run/systemd/resolve/stub-resolv.conf) has only loopback nameservers (127.0.0.53): pods with dnsPolicy Default, CoreDNS's among them, would forward to themselves",
      ],
      errors: [],
    });
  });
  it('a real server, a mix, or no nameserver at all: no warning; not known: skipped, unreadable: unknown, with the reason', () => {
    for (const a of [['169.254.169.254'], ['127.0.0.1', '10.0.0.2'], []])
      expect(resolvConfLoopCheck.check(facts(known(file(a))))).toEqual({ warnings: [], errors: [] });
    expect(resolvConfLoopCheck.check(facts(notKnown('/etc/resolv.conf cannot be read: EACCES')))).toEqual({
      skipped: '/etc/resolv.conf cannot be read: EACCES',
    });
  });
});
