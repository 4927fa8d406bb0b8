// The commands that remove kube-proxy's and a CNI plugin's iptables chains, judged by the real iptables in
// network namespaces this test creates (unshare -n; this machine's own rules are never touched): one
// namespace gets an admin's rules and the chains a former node left (kube-proxy's KUBE-SERVICES -> KUBE-SVC
// -> KUBE-SEP in nat, KUBE-FORWARD and KUBE-FIREWALL in filter, a CNI-<id> chain whose rule has a comment
// with escaped quotes, as the bridge plugin writes them), another gets the admin's rules alone. After the
// commands run in the first, its iptables-save is the second's, line for line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { kubeChainCommands, readKubeChains } from '../../src/former-node/kube-chains.js';

if (process.getuid?.() !== 0) throw new Error('kube-chains needs root (unshare -n, iptables)');

const ADMIN = [
  'iptables -A INPUT -p tcp --dport 22 -j ACCEPT',
  'iptables -N ADMIN-LOG',
  'iptables -A ADMIN-LOG -j LOG --log-prefix "admin: "',
  'iptables -A INPUT -p tcp --dport 8080 -j ADMIN-LOG',
  'iptables -t nat -A POSTROUTING -o eth0 -j MASQUERADE',
];
const FORMER_NODE = [
  'iptables -t nat -N KUBE-SERVICES',
  'iptables -t nat -N KUBE-SVC-NPX46M4PTMTKRN6Y',
  'iptables -t nat -N KUBE-SEP-XYZ123',
  'iptables -t nat -N KUBE-POSTROUTING',
  'iptables -t nat -N CNI-0c9e4f1a2b3c4d5e6f708192',
  'iptables -t nat -A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  'iptables -t nat -A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  'iptables -t nat -A KUBE-SERVICES -d 10.96.0.1/32 -p tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y',
  'iptables -t nat -A KUBE-SVC-NPX46M4PTMTKRN6Y -j KUBE-SEP-XYZ123',
  'iptables -t nat -A KUBE-SEP-XYZ123 -p tcp -j DNAT --to-destination 192.168.1.10:6443',
  'iptables -t nat -A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
  'iptables -t nat -A KUBE-POSTROUTING -j MASQUERADE',
  `iptables -t nat -A POSTROUTING -s 10.244.0.5/32 -m comment --comment 'name: "cbr0" id: "0c9e4f1a"' -j CNI-0c9e4f1a2b3c4d5e6f708192`,
  'iptables -t nat -A CNI-0c9e4f1a2b3c4d5e6f708192 -d 10.244.0.0/24 -j ACCEPT',
  'iptables -N KUBE-FORWARD',
  'iptables -N KUBE-FIREWALL',
  'iptables -A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
  'iptables -A KUBE-FORWARD -m mark --mark 0x4000/0x4000 -j ACCEPT',
  'iptables -A INPUT -j KUBE-FIREWALL',
  'iptables -A KUBE-FIREWALL -m mark --mark 0x8000/0x8000 -j DROP',
];

const held: ChildProcess[] = [];
/** A network namespace of our own, held open by a sleeping process; `sh` runs a shell line in it. */
async function namespace(): Promise<{ sh: (line: string) => { status: number | null; stdout: string; stderr: string } }> {
  const p = spawn('unshare', ['-n', 'sleep', '300'], { stdio: 'ignore' });
  held.push(p);
  await new Promise((r) => setTimeout(r, 200));
  const sh = (line: string) => {
    const r = spawnSync('nsenter', ['-t', String(p.pid), '-n', 'sh', '-c', line], { encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  return { sh };
}
afterAll(() => {
  for (const p of held) p.kill('SIGKILL');
});

const rules = (save: string) => save.split('\n').filter((l) => l !== '' && !l.startsWith('#'));

describe("removing Kubernetes' iptables chains", () => {
  let before = '';
  let expected = '';
  let after = '';
  let commands: string[] = [];
  beforeAll(async () => {
    const node = await namespace();
    const admin = await namespace();
    for (const c of [...ADMIN, ...FORMER_NODE]) expect(node.sh(c).status, c).toBe(0);
    for (const c of ADMIN) expect(admin.sh(c).status, c).toBe(0);
    before = node.sh('iptables-save').stdout;
    expected = admin.sh('iptables-save').stdout;
    commands = kubeChainCommands('iptables', readKubeChains(before));
    for (const c of commands) {
      const r = node.sh(c);
      if (r.status !== 0) throw new Error(`${c}: ${r.stderr}`);
    }
    after = node.sh('iptables-save').stdout;
  });

  it('finds every chain a former node left, and no admin chain', () => {
    const k = readKubeChains(before);
    expect(Object.fromEntries(k.chains)).toEqual({
      filter: ['KUBE-FIREWALL', 'KUBE-FORWARD'],
      nat: ['CNI-0c9e4f1a2b3c4d5e6f708192', 'KUBE-POSTROUTING', 'KUBE-SEP-XYZ123', 'KUBE-SERVICES', 'KUBE-SVC-NPX46M4PTMTKRN6Y'],
    });
    expect(k.jumps.map((j) => `${j.table} ${j.chain}`).sort()).toEqual([
      'filter FORWARD',
      'filter INPUT',
      'nat OUTPUT',
      'nat POSTROUTING',
      'nat POSTROUTING',
      'nat PREROUTING',
    ]);
    expect(k.unread).toEqual([]);
  });

  it("its commands leave exactly the admin's rules, as iptables-save prints them", () => {
    expect(commands.length).toBe(6 + 7 + 7);
    expect(rules(after)).toEqual(rules(expected));
  });
});
