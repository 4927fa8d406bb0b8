// ufw at the next boot, IPv6: readForward's and readFirewall's ip6tables
// half against ufw's own ufw-init (Debian's ufw 0.36.2, its shipped
// before6/after6/user6 rules, test/fixtures/debian-packages) run with
// --rootdir/--datadir in a network namespace made here. The oracles: the
// policy `ip6tables -S FORWARD` prints after it, and what the kernel does
// with a new IPv6 connection to each port under the ruleset it left
// (ip6tables-save, loaded by test/helpers/firewall-oracle6.sh). And the other
// two writers' IPv6 files, rules.v6 and nftables.conf, under the same oracle.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { readForward } from '../../src/acceptance/forward-facts.js';
import { readFirewall } from '../../src/acceptance/firewall-facts.js';
import { known } from '../../src/acceptance/checker.js';
import { buildTree, type Tree } from '../helpers/tree.js';
import { tmp } from '../helpers/rulesets.js';

const UFW = path.resolve('test/fixtures/debian-packages/ufw_0.36.2-1');
const PORTS = [6443, 2379, 2380, 10250, 10257, 10259];
const pkg = (p: string) => readFileSync(path.join(UFW, p), 'utf8');

/** A root with ufw installed and enabled (`ufw enable`): ENABLED=yes, the unit linked; /etc/default/ufw edited as `edit` says. */
function ufwRoot(edit: (defaults: string) => string, allow6: string[]): string {
  const root = tmp();
  const rules = Object.fromEntries(
    ['before', 'after', 'user', 'before6', 'after6', 'user6'].map((r) => [`etc/ufw/${r}.rules`, pkg(`usr/share/ufw/iptables/${r}.rules`)]),
  );
  // `ufw allow PORT/tcp` writes its tuple and rule under ### RULES ### in user6.rules.
  const user6 = rules['etc/ufw/user6.rules']!.replace(
    '### RULES ###\n',
    `### RULES ###\n${allow6.map((p) => `\n### tuple ### allow tcp ${p} ::/0 any ::/0 in\n-A ufw6-user-input -p tcp --dport ${p} -j ACCEPT\n`).join('')}`,
  );
  const tree: Tree = {
    'lib/systemd/system/sysinit.target': '[Unit]\nDescription=System Initialization\n',
    'lib/systemd/system/basic.target': '[Unit]\nRequires=sysinit.target\nAfter=sysinit.target\n',
    'lib/systemd/system/multi-user.target': '[Unit]\nRequires=basic.target\nAfter=basic.target\n',
    'etc/systemd/system/default.target': { link: '/lib/systemd/system/multi-user.target' },
    'lib/systemd/system/ufw.service': pkg('lib/systemd/system/ufw.service'),
    'etc/systemd/system/multi-user.target.wants/ufw.service': { link: '/lib/systemd/system/ufw.service' },
    'lib/ufw/ufw-init': pkg('lib/ufw/ufw-init'),
    'lib/ufw/ufw-init-functions': pkg('lib/ufw/ufw-init-functions'),
    // No sysctl file: ufw-init would apply it (to the namespace only, but nothing of it is judged here).
    'etc/default/ufw': edit(pkg('etc/default/ufw')).replace('IPT_SYSCTL=/etc/ufw/sysctl.conf', 'IPT_SYSCTL='),
    'etc/ufw/ufw.conf': pkg('usr/share/ufw/ufw.conf').replace('ENABLED=no', 'ENABLED=yes'),
    ...rules,
    'etc/ufw/user6.rules': user6,
  };
  buildTree(root, tree);
  return root;
}

/** ufw-init start in a fresh namespace: ip6tables' FORWARD policy, and its filter table as ip6tables-save prints it. */
function ufwInit(root: string): { forward: string; saved: string } {
  const script = 'sh "$1/lib/ufw/ufw-init" --rootdir "$1" --datadir "$1" start >&2 && ip6tables -S FORWARD | head -1 && echo ---- && ip6tables-save -t filter';
  const r = spawnSync('unshare', ['-rn', 'sh', '-c', script, 'sh', root], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ufw-init: exit ${r.status}: ${r.stderr}`);
  const [forward, saved] = r.stdout.split('----\n');
  return { forward: forward!.trim(), saved: saved! };
}

/** The kernel's answer for a new IPv6 connection to each port under that ruleset. */
function kernel(saved: string, loader: 'iptables' | 'nft' = 'iptables'): number[][] {
  const file = path.join(tmp(), 'saved6');
  writeFileSync(file, saved);
  const out = execFileSync('sh', [path.resolve('test/helpers/firewall-oracle6.sh'), loader, file, ...PORTS.map(String)], { encoding: 'utf8' });
  return out
    .trim()
    .split('\n')
    .map((l) => [Number(l.split(' ')[0]), l.split(' ')[1] === 'accept' ? 1 : 0]);
}

async function ours(root: string) {
  const host = new Host({ root, live: false });
  const f = await readForward(host);
  const w = await readFirewall(host, known(6443));
  const v6 = f.known && f.value.ipv6?.known ? f.value.ipv6.value.atBoot : null;
  const ports = w.known && w.value.ipv6?.known ? w.value.ipv6.value.atBoot : null;
  return { forward: v6, ports, verdicts: ports?.map((v) => [v.port, v.verdict.verdict === 'accept' ? 1 : 0]) };
}

describe("ufw's IPv6 at the next boot, as ufw-init sets it", () => {
  it('IPV6=yes (Debian\'s default), DEFAULT_FORWARD_POLICY="DROP", 6443 and 10250 allowed in user6.rules', async () => {
    const root = ufwRoot((d) => d, ['6443', '10250']);
    const k = ufwInit(root);
    expect(k.forward).toBe('-P FORWARD DROP');
    const o = await ours(root);
    expect(o.forward).toEqual([
      {
        what: 'ufw (IPv6)',
        where:
          '/etc/ufw/ufw.conf:6 ENABLED=yes, /etc/default/ufw:7 IPV6=yes, /etc/default/ufw:19 DEFAULT_FORWARD_POLICY="DROP", /lib/systemd/system/ufw.service starts at boot',
      },
    ]);
    expect(o.verdicts).toEqual(kernel(k.saved));
    expect(o.ports!.filter((v) => v.verdict.verdict === 'accept').map((v) => [v.port, v.file, v.verdict.line])).toEqual([
      [6443, '/etc/ufw/user6.rules', 8],
      [10250, '/etc/ufw/user6.rules', 11],
    ]);
  });

  it("IPV6=no: ufw-init sets ip6tables' INPUT and FORWARD to DROP, only lo accepted, whatever user6.rules allows", async () => {
    const root = ufwRoot((d) => d.replace('IPV6=yes', 'IPV6=no'), ['6443']);
    const k = ufwInit(root);
    expect(k.forward).toBe('-P FORWARD DROP');
    const o = await ours(root);
    expect(o.forward).toEqual([
      {
        what: 'ufw (IPv6)',
        where:
          "/etc/ufw/ufw.conf:6 ENABLED=yes, /etc/default/ufw:7 IPV6=no: ufw-init sets ip6tables' FORWARD to DROP (/lib/ufw/ufw-init-functions:149), /lib/systemd/system/ufw.service starts at boot",
      },
    ]);
    expect(o.verdicts).toEqual(kernel(k.saved));
    expect(o.ports!.map((v) => `${v.file}:${v.verdict.line}`)).toEqual(PORTS.map(() => '/lib/ufw/ufw-init-functions:148'));
  });

  it('IPV6=yes, DEFAULT_FORWARD_POLICY="ACCEPT" and DEFAULT_INPUT_POLICY="ACCEPT": nothing for IPv6', async () => {
    const root = ufwRoot((d) => d.replace('FORWARD_POLICY="DROP"', 'FORWARD_POLICY="ACCEPT"').replace('INPUT_POLICY="DROP"', 'INPUT_POLICY="ACCEPT"'), []);
    const k = ufwInit(root);
    expect(k.forward).toBe('-P FORWARD ACCEPT');
    const o = await ours(root);
    expect(o.forward).toEqual([]);
    expect(o.verdicts).toEqual(kernel(k.saved));
    expect(o.verdicts!.every(([, a]) => a === 1)).toBe(true);
  });
});

describe('rules.v6 and nftables.conf at the next boot, a new IPv6 connection', () => {
  const units = (name: string): Tree => ({
    'lib/systemd/system/sysinit.target': '[Unit]\nDescription=System Initialization\n',
    'lib/systemd/system/basic.target': '[Unit]\nRequires=sysinit.target\nAfter=sysinit.target\n',
    'lib/systemd/system/multi-user.target': '[Unit]\nRequires=basic.target\nAfter=basic.target\n',
    'etc/systemd/system/default.target': { link: '/lib/systemd/system/multi-user.target' },
    [`lib/systemd/system/${name}`]: `[Unit]\nDescription=${name}\n\n[Service]\nType=oneshot\nExecStart=/bin/true\n\n[Install]\nWantedBy=multi-user.target\n`,
    [`etc/systemd/system/multi-user.target.wants/${name}`]: { link: `/lib/systemd/system/${name}` },
  });
  const at = async (tree: Tree) => {
    const root = tmp();
    buildTree(root, tree);
    const w = await readFirewall(new Host({ root, live: false }), known(6443));
    return w.known && w.value.ipv6?.known ? w.value.ipv6.value.atBoot.map((v) => [v.port, v.verdict.verdict === 'accept' ? 1 : 0]) : w;
  };

  it('rules.v6: INPUT DROP with the API server and etcd accepted', async () => {
    const v6 =
      '*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -p tcp -m multiport --dports 6443,2379:2380 -j ACCEPT\nCOMMIT\n';
    const k = kernel(v6);
    expect(k.some(([, a]) => a === 0) && k.some(([, a]) => a === 1)).toBe(true);
    expect(await at({ ...units('netfilter-persistent.service'), 'etc/iptables/rules.v6': v6 })).toEqual(k);
  });

  it('nftables.conf: an inet rule on IPv4 addresses passes it by, an ip6 table drops kubelet, an ip table is not met', async () => {
    const conf =
      'flush ruleset\ntable inet filter {\n  chain input {\n    type filter hook input priority 0; policy accept;\n    ip daddr 192.0.2.1 tcp dport 6443 drop\n  }\n}\n' +
      'table ip6 own {\n  chain input {\n    type filter hook input priority 0; policy accept;\n    tcp dport 10250 drop\n  }\n}\n' +
      'table ip four {\n  chain input {\n    type filter hook input priority 0; policy drop;\n  }\n}\n';
    const k = kernel(conf, 'nft');
    expect(k.some(([, a]) => a === 0) && k.some(([, a]) => a === 1)).toBe(true);
    expect(await at({ ...units('nftables.service'), 'etc/nftables.conf': conf })).toEqual(k);
  });
});
