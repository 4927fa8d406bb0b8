// ControlPlanePortsFirewalled: the evaluator against the kernel, the readers
// on fixture trees, and the check on facts that fail and pass it. The
// oracle (test/helpers/firewall-oracle.sh) loads each ruleset into a network
// namespace made for it and connects from a second one to a listener on each
// port: what the kernel lets through is the expectation.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { parseSaved, policyOf } from '../../src/acceptance/iptables-save.js';
import { parseNftConf } from '../../src/acceptance/nft-conf.js';
import { evaluateIptablesInput, evaluateNftInput } from '../../src/acceptance/firewall-eval.js';
import { readFirewall, type FirewallFacts } from '../../src/acceptance/firewall-facts.js';
import { controlPlanePortsFirewalledCheck } from '../../src/acceptance/control-plane-firewall.js';
import { known, notKnown, type AcceptanceFacts } from '../../src/acceptance/checker.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const PORTS = [22, 6443, 2379, 2380, 10250, 10257, 10259];
const ORACLE = path.resolve('test/helpers/firewall-oracle.sh');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tmp(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'firewall-'));
  dirs.push(d);
  return d;
}

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

const UNITS: Tree = {
  'lib/systemd/system/sysinit.target': '[Unit]\nDescription=System Initialization\n',
  'lib/systemd/system/basic.target': '[Unit]\nRequires=sysinit.target\nAfter=sysinit.target\n',
  'lib/systemd/system/multi-user.target': '[Unit]\nRequires=basic.target\nAfter=basic.target\n',
  'etc/systemd/system/default.target': { link: '/lib/systemd/system/multi-user.target' },
  'lib/systemd/system/ufw.service':
    '[Unit]\nDescription=Uncomplicated firewall\n\n[Service]\nType=oneshot\nExecStart=/lib/ufw/ufw-init start quiet\n\n[Install]\nWantedBy=multi-user.target\n',
  'etc/systemd/system/multi-user.target.wants/ufw.service': { link: '/lib/systemd/system/ufw.service' },
};
// ufw 0.36.2's shipped rules, cut to the chains INPUT reaches for a TCP connection (before.rules' lines that matter keep their order).
const BEFORE =
  '*filter\n:ufw-before-input - [0:0]\n:ufw-not-local - [0:0]\n-A ufw-before-input -i lo -j ACCEPT\n-A ufw-before-input -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n-A ufw-before-input -m conntrack --ctstate INVALID -j DROP\n-A ufw-before-input -p icmp --icmp-type echo-request -j ACCEPT\n-A ufw-before-input -p udp --sport 67 --dport 68 -j ACCEPT\n-A ufw-before-input -j ufw-not-local\n-A ufw-not-local -m addrtype --dst-type LOCAL -j RETURN\n-A ufw-not-local -j DROP\n-A ufw-before-input -p udp -d 224.0.0.251 --dport 5353 -j ACCEPT\nCOMMIT\n';
const AFTER = '*filter\n:ufw-after-input - [0:0]\n-A ufw-after-input -p udp --dport 137 -j ufw-skip-to-policy-input\nCOMMIT\n';
const USER = (allow: string[]) =>
  `*filter\n:ufw-user-input - [0:0]\n### RULES ###\n${allow.map((p) => `-A ufw-user-input -p tcp --dport ${p} -j ACCEPT`).join('\n')}\n### END RULES ###\nCOMMIT\n`;
const ufw = (allow: string[], policy = 'DROP'): Tree => ({
  ...UNITS,
  'etc/default/ufw': `IPV6=yes\nDEFAULT_INPUT_POLICY="${policy}"\nDEFAULT_OUTPUT_POLICY="ACCEPT"\nDEFAULT_FORWARD_POLICY="DROP"\n`,
  'etc/ufw/ufw.conf': 'ENABLED=yes\nLOGLEVEL=low\n',
  'etc/ufw/before.rules': BEFORE,
  'etc/ufw/after.rules': AFTER,
  'etc/ufw/user.rules': USER(allow),
});
function host(tree: Tree): Host {
  const root = tmp();
  buildTree(root, tree);
  return new Host({ root, live: false });
}

describe('ufw at the next boot, its INPUT built as ufw-init builds it', () => {
  it('DEFAULT_INPUT_POLICY="DROP" with only ssh allowed: every control-plane port dropped by the policy', async () => {
    const f = await readFirewall(host(ufw(['22'])), known(6443));
    expect(f.known && f.value.atBoot.map((v) => [v.port, v.verdict.verdict, v.file])).toEqual(
      [6443, 2379, 2380, 10250, 10257, 10259].map((p) => [p, 'drop', '/etc/default/ufw:2 DEFAULT_INPUT_POLICY']),
    );
  });

  it('`ufw allow` lines for 6443, 2379:2380 and 10250 in user.rules: those accepted at their line, the rest dropped', async () => {
    const f = await readFirewall(host(ufw(['6443', '2379:2380', '10250'])), known(6443));
    expect(f.known && f.value.atBoot.map((v) => [v.port, v.verdict.verdict, v.verdict.line, v.file])).toEqual([
      [6443, 'accept', 4, '/etc/ufw/user.rules'],
      [2379, 'accept', 5, '/etc/ufw/user.rules'],
      [2380, 'accept', 5, '/etc/ufw/user.rules'],
      [10250, 'accept', 6, '/etc/ufw/user.rules'],
      [10257, 'drop', null, '/etc/default/ufw:2 DEFAULT_INPUT_POLICY'],
      [10259, 'drop', null, '/etc/default/ufw:2 DEFAULT_INPUT_POLICY'],
    ]);
  });

  it('ufw not enabled, or DEFAULT_INPUT_POLICY="ACCEPT": nothing dropped', async () => {
    const off = await readFirewall(host({ ...ufw([]), 'etc/ufw/ufw.conf': 'ENABLED=no\n' }), known(6443));
    expect(off).toMatchObject({ known: true, value: { now: 'offline', atBoot: [] } });
    const open = await readFirewall(host(ufw([], 'ACCEPT')), known(6443));
    expect(open.known && open.value.atBoot.every((v) => v.verdict.verdict === 'accept')).toBe(true);
  });
});

describe('the check', () => {
  const facts = (f: FirewallFacts): AcceptanceFacts => ({ firewall: known(f) }) as AcceptanceFacts;
  const v = (port: number, verdict: 'accept' | 'drop', file = '/etc/default/ufw:2 DEFAULT_INPUT_POLICY') => ({
    source: 'at boot (ufw)',
    port,
    verdict: { verdict, line: null },
    file,
  });

  it('passes when every port is accepted, or nothing filters', () => {
    expect(controlPlanePortsFirewalledCheck.check(facts({ now: known([]), atBoot: [v(6443, 'accept')] }))).toEqual({ warnings: [], errors: [] });
    expect(controlPlanePortsFirewalledCheck.check(facts({ now: 'offline', atBoot: [] }))).toEqual({ warnings: [], errors: [] });
  });

  it('warns naming the dropped ports grouped by where they are dropped', () => {
    const r = controlPlanePortsFirewalledCheck.check(facts({ now: 'offline', atBoot: [v(6443, 'accept'), v(2379, 'drop'), v(10250, 'drop')] }));
    expect(r).toEqual({
      warnings: [
        "a firewall drops new connections from the other nodes to the control-plane ports: dropped: 2379, 10250 at boot (ufw): dropped at /etc/default/ufw:2 DEFAULT_INPUT_POLICY; allow them (TCP) from the nodes' addresses",
      ],
      errors: [],
    });
  });

  it('a port it cannot judge is unknown, with the rule and why', () => {
    const r = controlPlanePortsFirewalledCheck.check(
      facts({
        now: 'offline',
        atBoot: [
          { source: 'at boot (nftables)', port: 6443, verdict: { verdict: 'unknown', line: 4, reason: 'ip saddr 192.0.2.0/24' }, file: '/etc/nftables.conf' },
        ],
      }),
    );
    expect(r).toEqual({
      unknown:
        'new connections from another node to the control-plane ports cannot be judged: 6443 at boot (nftables): /etc/nftables.conf:4: ip saddr 192.0.2.0/24',
    });
  });

  it('facts not known are skipped with the reason', () => {
    expect(controlPlanePortsFirewalledCheck.check({ firewall: notKnown('the unit files cannot be read') } as AcceptanceFacts)).toEqual({
      skipped: 'the unit files cannot be read',
    });
  });
});
