// kube-proxy's nftables tables, read from the real nft's `nft -j list tables` in network namespaces this test
// creates (unshare -n; this machine's own ruleset is never touched), and removed by the commands the module
// gives: the expectation is what nft lists afterwards beside a namespace that only ever had the admin's
// tables. The tables are made as kube-proxy's nftables proxier names them (table "kube-proxy" in ip and ip6).
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { kubeNftCommands, readKubeNftTables } from '../../src/former-node/kube-nft-tables.js';

if (process.getuid?.() !== 0) throw new Error('kube-nft-tables needs root (unshare -n, nft)');

const held: ChildProcess[] = [];
async function namespace(): Promise<(line: string) => { status: number | null; stdout: string; stderr: string }> {
  const p = spawn('unshare', ['-n', 'sleep', '300'], { stdio: 'ignore' });
  held.push(p);
  await new Promise((r) => setTimeout(r, 200));
  return (line: string) => {
    const r = spawnSync('nsenter', ['-t', String(p.pid), '-n', 'sh', '-c', line], { encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
}
afterAll(() => {
  for (const p of held) p.kill('SIGKILL');
});

const ADMIN = [
  'nft add table inet filter',
  "nft 'add chain inet filter input { type filter hook input priority 0; policy accept; }'",
  // A firewall's table of the same name in another family is the admin's: kube-proxy makes ip and ip6 only.
  'nft add table inet kube-proxy',
  'nft add table ip nat',
];
const KUBE_PROXY = [
  'nft add table ip kube-proxy',
  "nft 'add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100; policy accept; }'",
  "nft 'add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict; }'",
  'nft add table ip6 kube-proxy',
  "nft 'add chain ip6 kube-proxy filter-input { type filter hook input priority -110; policy accept; }'",
];

describe("kube-proxy's nftables tables", () => {
  it('are found in ip and ip6 and removed with everything in them, leaving every other table', async () => {
    const node = await namespace();
    const admin = await namespace();
    for (const c of [...ADMIN, ...KUBE_PROXY]) expect(node(c).status, c).toBe(0);
    for (const c of ADMIN) expect(admin(c).status, c).toBe(0);
    const read = readKubeNftTables(node('nft -j list tables').stdout);
    expect(read).toEqual({
      ok: true,
      tables: [
        { family: 'ip', name: 'kube-proxy' },
        { family: 'ip6', name: 'kube-proxy' },
      ],
    });
    const commands = kubeNftCommands(read.ok ? read.tables : []);
    for (const c of commands) expect(node(c).status, c).toBe(0);
    expect(node('nft list ruleset').stdout).toBe(admin('nft list ruleset').stdout);
  });

  it('a namespace without them has none; its JSON still reads', async () => {
    const ns = await namespace();
    for (const c of ADMIN) expect(ns(c).status, c).toBe(0);
    expect(readKubeNftTables(ns('nft -j list tables').stdout)).toEqual({ ok: true, tables: [] });
    expect(readKubeNftTables(ns('nft -j list tables').stdout.replace('"family": "inet"', '"family": 4'))).toMatchObject({ ok: false });
  });

  it('text that is not nft JSON says why, never an empty reading', () => {
    expect(readKubeNftTables('table ip kube-proxy')).toMatchObject({ ok: false, reason: expect.stringMatching(/^not JSON/) });
    expect(readKubeNftTables('{"tables": []}')).toEqual({ ok: false, reason: 'no "nftables" array' });
    expect(readKubeNftTables('null')).toEqual({ ok: false, reason: 'no "nftables" array' });
  });
});
