// evaluateIptablesInput and evaluateNftInput for a new IPv6 connection,
// against the kernel: test/helpers/firewall-oracle6.sh loads each ruleset
// into a network namespace made for it and connects over IPv6 from a second
// one to a listener on each port. What the kernel lets through is the
// expectation.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSaved, policyOf } from '../../src/acceptance/iptables-save.js';
import { parseNftConf } from '../../src/acceptance/nft-conf.js';
import { evaluateIptablesInput, evaluateNftInput } from '../../src/acceptance/firewall-eval.js';
import { tmp } from '../helpers/rulesets.js';

const PORTS = [22, 6443, 2379, 2380, 10250, 10257, 10259];
const ORACLE = path.resolve('test/helpers/firewall-oracle6.sh');

function kernel(loader: 'iptables' | 'nft', text: string): Record<number, string> {
  const file = path.join(tmp(), 'ruleset');
  writeFileSync(file, text);
  const out = execFileSync('sh', [ORACLE, loader, file, ...PORTS.map(String)], { encoding: 'utf8' });
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((l) => [Number(l.split(' ')[0]), l.split(' ')[1]!]),
  );
}

// ufw 0.36.2's before6.rules (the INPUT lines, abridged) under INPUT's jump, user6.rules allowing ssh, the API server and etcd.
const UFW6 = [
  '*filter',
  ':INPUT DROP [0:0]',
  ':ufw6-before-input - [0:0]',
  ':ufw6-user-input - [0:0]',
  ':ufw6-logging-deny - [0:0]',
  '-A INPUT -j ufw6-before-input',
  '-A ufw6-before-input -i lo -j ACCEPT',
  '-A ufw6-before-input -m rt --rt-type 0 -j DROP',
  '-A ufw6-before-input -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
  '-A ufw6-before-input -m conntrack --ctstate INVALID -j ufw6-logging-deny',
  '-A ufw6-before-input -m conntrack --ctstate INVALID -j DROP',
  '-A ufw6-before-input -p icmpv6 --icmpv6-type echo-request -j ACCEPT',
  '-A ufw6-before-input -p icmpv6 --icmpv6-type neighbor-solicitation -m hl --hl-eq 255 -j ACCEPT',
  '-A ufw6-before-input -p icmpv6 --icmpv6-type 130 -s fe80::/10 -j ACCEPT',
  '-A ufw6-before-input -p udp -s fe80::/10 --sport 547 -d fe80::/10 --dport 546 -j ACCEPT',
  '-A ufw6-before-input -p udp -d ff02::fb --dport 5353 -j ACCEPT',
  '-A ufw6-before-input -j ufw6-user-input',
  '-A ufw6-user-input -p tcp --dport 22 -j ACCEPT',
  '-A ufw6-user-input -p tcp --dport 6443 -j ACCEPT',
  '-A ufw6-user-input -p tcp -m multiport --dports 2379:2380 -j ACCEPT',
  'COMMIT',
  '',
].join('\n');

// An inet table whose IPv4-only rules an IPv6 packet passes, an ip6 table dropping kubelet, an ip table IPv6 never meets.
const NFT6 = [
  'table inet filter {',
  '  chain input {',
  '    type filter hook input priority 0; policy accept;',
  '    ip saddr 192.0.2.0/24 tcp dport 6443 drop',
  '    ip protocol tcp tcp dport 2379 drop',
  '    meta l4proto tcp tcp dport 10259 counter drop',
  '  }',
  '}',
  'table ip6 own {',
  '  chain input {',
  '    type filter hook input priority 0; policy accept;',
  '    ip6 nexthdr tcp tcp dport 10250 drop',
  '  }',
  '}',
  'table ip four {',
  '  chain input {',
  '    type filter hook input priority 0; policy drop;',
  '  }',
  '}',
  '',
].join('\n');

describe('a new IPv6 connection, as the kernel decides it', () => {
  it("ufw's IPv6 shape: the rt, icmpv6 and link-local lines pass a TCP connect by, user6.rules decides, the policy last", () => {
    const k = kernel('iptables', UFW6);
    const p = parseSaved(UFW6);
    if (!p.ok) throw new Error(p.reason);
    const t = { name: 'filter', line: 0, chains: p.tables[0]!.chains, rules: p.tables[0]!.rules };
    const ours = Object.fromEntries(PORTS.map((port) => [port, evaluateIptablesInput(t, policyOf(p.tables, 'filter', 'INPUT'), port).verdict]));
    expect(ours).toEqual(k);
    expect(Object.values(k)).toContain('drop');
    expect(Object.values(k)).toContain('accept');
  });

  it('nftables: inet rules on IPv4 headers pass it, ip6 and inet drops hold, an ip table is not met', () => {
    const k = kernel('nft', NFT6);
    const p = parseNftConf(NFT6);
    if (!p.ok) throw new Error(p.reason);
    const ours = Object.fromEntries(PORTS.map((port) => [port, evaluateNftInput(p.chains, port, 6).verdict]));
    expect(ours).toEqual(k);
    expect(Object.values(k)).toContain('drop');
    expect(Object.values(k)).toContain('accept');
  });
});
