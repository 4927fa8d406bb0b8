// evaluateIptablesInput and evaluateNftInput against the kernel. The oracle
// (test/helpers/firewall-oracle.sh) loads each ruleset into a network
// namespace made for it and connects from a second one to a listener on each
// port: what the kernel lets through is the expectation.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSaved, policyOf } from '../../src/acceptance/iptables-save.js';
import { parseNftConf } from '../../src/acceptance/nft-conf.js';
import { evaluateIptablesInput, evaluateNftInput } from '../../src/acceptance/firewall-eval.js';
import { tmp } from '../helpers/rulesets.js';

const PORTS = [22, 6443, 2379, 2380, 10250, 10257, 10259];
const ORACLE = path.resolve('test/helpers/firewall-oracle.sh');

/** What the kernel does with a new connection to each port, under the ruleset. */
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

const IPTABLES: [string, string][] = [
  [
    'a policy DROP with ssh and the API server allowed, etcd and kubelet rejected by a multiport rule',
    '*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -i lo -j ACCEPT\n-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n-A INPUT -p tcp --dport 6443 -m comment --comment "api" -j ACCEPT\n-A INPUT -p tcp -m multiport --dports 2379:2380,10250 -j REJECT --reject-with tcp-reset\nCOMMIT\n',
  ],
  [
    "ufw's shape: INPUT jumps to its chains, a user chain accepting kubelet and a range, the rest to the policy",
    '*filter\n:INPUT DROP [0:0]\n:ufw-before-input - [0:0]\n:ufw-user-input - [0:0]\n:ufw-not-local - [0:0]\n-A INPUT -j ufw-before-input\n-A ufw-before-input -i lo -j ACCEPT\n-A ufw-before-input -m conntrack --ctstate INVALID -j DROP\n-A ufw-before-input -p udp --sport 67 --dport 68 -j ACCEPT\n-A ufw-before-input -j ufw-not-local\n-A ufw-not-local -m addrtype --dst-type LOCAL -j RETURN\n-A ufw-not-local -j DROP\n-A ufw-before-input -j ufw-user-input\n-A ufw-user-input -p tcp --dport 10250 -j ACCEPT\n-A ufw-user-input -p tcp -m multiport --dports 10257:10259 -j ACCEPT\n-A ufw-user-input -p tcp ! --dport 22 -j RETURN\n-A ufw-user-input -p tcp -j ACCEPT\nCOMMIT\n',
  ],
  [
    'an ACCEPT policy with a DROP for the etcd ports only',
    '*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 2379:2380 -j DROP\n-A INPUT -p udp -j DROP\nCOMMIT\n',
  ],
];

describe('iptables INPUT, evaluated as the kernel evaluates it', () => {
  for (const [name, text] of IPTABLES)
    it(name, () => {
      const p = parseSaved(text);
      if (!p.ok) throw new Error(p.reason);
      const t = p.tables.find((x) => x.name === 'filter')!;
      const ours = Object.fromEntries(PORTS.map((port) => [port, evaluateIptablesInput(t, policyOf(p.tables, 'filter', 'INPUT'), port).verdict]));
      expect(ours).toEqual(kernel('iptables', text));
    });

  it('a match it cannot judge for another node (an interface by name, a source address, a module) is unknown with its line', () => {
    for (const [rule, line] of [
      ['-A INPUT -i eth0 -p tcp --dport 6443 -j ACCEPT', 3],
      ['-A INPUT -s 192.0.2.0/24 -p tcp --dport 6443 -j ACCEPT', 3],
      ['-A INPUT -p tcp -m recent --rcheck -j DROP', 3],
    ] as const) {
      const p = parseSaved(`*filter\n:INPUT DROP [0:0]\n${rule}\nCOMMIT\n`);
      if (!p.ok) throw new Error(p.reason);
      expect(evaluateIptablesInput(p.tables[0]!, policyOf(p.tables, 'filter', 'INPUT'), 6443)).toMatchObject({ verdict: 'unknown', line });
    }
  });

  it('a rule that fails on a known match first is passed over, however unknown the rest', () => {
    const p = parseSaved('*filter\n:INPUT DROP [0:0]\n-A INPUT -p udp -s 192.0.2.9 -j ACCEPT\n-A INPUT -p tcp --dport 6443 -j ACCEPT\nCOMMIT\n');
    if (!p.ok) throw new Error(p.reason);
    expect(evaluateIptablesInput(p.tables[0]!, policyOf(p.tables, 'filter', 'INPUT'), 6443)).toEqual({ verdict: 'accept', line: 4 });
  });
});

const NFT: [string, string][] = [
  [
    'a server firewall: input policy drop, established, lo, ssh and the API server accepted',
    'flush ruleset\ntable inet filter {\n  chain input {\n    type filter hook input priority 0; policy drop;\n    ct state established,related accept\n    iifname "lo" accept\n    tcp dport { 22, 6443 } counter accept comment "ssh and api"\n  }\n}\n',
  ],
  [
    'a jump to a chain of the node ports, a range, and a second base chain that drops etcd',
    'flush ruleset\ntable inet filter {\n  chain k8s {\n    tcp dport 10250 accept\n    tcp dport 10257-10259 accept\n    return\n  }\n  chain input {\n    type filter hook input priority 0; policy drop;\n    ct state established,related accept\n    jump k8s\n    tcp dport 2379-2380 accept\n  }\n}\ntable ip extra {\n  chain input {\n    type filter hook input priority 10; policy accept;\n    tcp dport 2380 log prefix "etcd peer " drop\n  }\n}\n',
  ],
  ["Debian's stock nftables.conf", 'flush ruleset\ntable inet filter {\n  chain input {\n    type filter hook input priority filter;\n  }\n}\n'],
];

describe('nftables input, evaluated as the kernel evaluates it', () => {
  for (const [name, text] of NFT)
    it(name, () => {
      const p = parseNftConf(text);
      if (!p.ok) throw new Error(p.reason);
      const ours = Object.fromEntries(PORTS.map((port) => [port, evaluateNftInput(p.chains, port).verdict]));
      expect(ours).toEqual(kernel('nft', text));
    });

  it('an expression it does not read is unknown with its line', () => {
    const p = parseNftConf('table inet f {\n  chain input {\n    type filter hook input priority 0; policy drop;\n    ip saddr 192.0.2.0/24 accept\n  }\n}\n');
    if (!p.ok) throw new Error(p.reason);
    expect(evaluateNftInput(p.chains, 6443)).toMatchObject({ verdict: 'unknown', line: 4 });
  });
});
