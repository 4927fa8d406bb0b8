// readFirewall: ufw at the next boot, its INPUT built as ufw-init builds it
// from its shipped rules files, on fixture trees.
import { describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { readFirewall } from '../../src/acceptance/firewall-facts.js';
import { known } from '../../src/acceptance/checker.js';
import { buildTree, type Tree } from '../helpers/tree.js';
import { tmp } from '../helpers/rulesets.js';

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
