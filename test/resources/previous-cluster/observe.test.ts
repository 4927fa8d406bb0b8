// What PreviousCluster reads from a former node: the node's units with the files an apply would move
// aside and the links a disable removes, the reset directories measured, and live, each unit's
// ActiveState and the Kubernetes chains iptables-save shows. Expectations come from elsewhere than the
// code: the links are what systemd's own `systemctl --root COPY disable` removes from a copy of the
// image (and leaves, for a vendor directory's link); sizes and file counts are find(1)'s. Live, the
// only fake is the command runner, answering as systemctl and iptables-save print.
import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, rmSync, symlinkSync, mkdirSync, existsSync, lstatSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host, type CommandRunner } from '../../../src/host.js';
import { buildTree } from '../../helpers/tree.js';
import { observePreviousCluster, ADMIN_UNIT_DIRS } from '../../../src/resources/previous-cluster/observe.js';
import type { PreviousClusterSpec } from '../../../src/resources/previous-cluster/spec.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const temp = (p: string) => {
  const d = mkdtempSync(path.join(tmpdir(), p));
  dirs.push(d);
  return d;
};
const spec = (policy: PreviousClusterSpec['policy']): PreviousClusterSpec => ({ type: 'PreviousCluster', policy, warn_above_bytes: 1024 ** 3 });
const unit = (exec: string) => `[Unit]\nDescription=x\n\n[Service]\nExecStart=${exec}\n\n[Install]\nWantedBy=multi-user.target\n`;

/** kubelet an admin's unit with kubeadm's drop-in; etcd and k3s a package's, etcd with an admin's drop-in; k3s enabled in the vendor dir only. */
function formerNode(): string {
  const root = temp('pc-observe-');
  buildTree(root, {
    'etc/systemd/system/kubelet.service': unit('/usr/local/bin/kubelet'),
    'etc/systemd/system/kubelet.service.d/10-kubeadm.conf': '[Service]\nEnvironment=A=1\n',
    'usr/lib/systemd/system/etcd.service': unit('/usr/bin/etcd'),
    'etc/systemd/system/etcd.service.d/override.conf': '[Service]\nNice=5\n',
    'usr/lib/systemd/system/k3s.service': unit('/usr/local/bin/k3s server'),
    'etc/kubernetes/admin.conf': 'apiVersion: v1\nkind: Config\n',
    'var/lib/etcd/member/snap/db': 'x'.repeat(3000),
    'var/lib/etcd/member/wal/0.wal': 'wal\n',
  });
  mkdirSync(path.join(root, 'etc/systemd/system/multi-user.target.wants'), { recursive: true });
  mkdirSync(path.join(root, 'usr/lib/systemd/system/multi-user.target.wants'), { recursive: true });
  symlinkSync('/etc/systemd/system/kubelet.service', path.join(root, 'etc/systemd/system/multi-user.target.wants/kubelet.service'));
  symlinkSync('/usr/lib/systemd/system/etcd.service', path.join(root, 'etc/systemd/system/multi-user.target.wants/etcd.service'));
  symlinkSync('../k3s.service', path.join(root, 'usr/lib/systemd/system/multi-user.target.wants/k3s.service'));
  return root;
}

/** The links `systemctl --root disable UNIT` removes from a copy of the tree, and whether the vendor link survives. */
function disabledBySystemd(root: string, u: string): string[] {
  const copy = temp('pc-observe-oracle-');
  cpSync(root, copy, { recursive: true, verbatimSymlinks: true });
  const r = spawnSync('systemctl', ['--root', copy, 'disable', u], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return [...r.stderr.matchAll(/^Removed "?([^"\n]+?)"?\.?$/gm)].map((m) => m[1]!.replace(copy, '')).sort();
}

const findFigures = (dir: string) => {
  const sizes = spawnSync('find', [dir, '-type', 'f', '-printf', '%s\n'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  const files = spawnSync('find', [dir, '-mindepth', '1', '!', '-type', 'd'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  return { bytes: sizes.reduce((a, s) => a + Number(s), 0), files: files.length };
};

describe('observePreviousCluster offline', () => {
  it('under policy report reads nothing, even on a former node', async () => {
    const root = formerNode();
    expect(await observePreviousCluster(new Host({ root }), spec('report'))).toEqual({
      policy: 'report',
      live: false,
      evidence: [],
      dirs: [],
      units: [],
      chains: [],
      nftTables: null,
    });
  });

  it('names each node unit with the admin files moved with it and the links systemctl disable removes', async () => {
    const root = formerNode();
    const o = await observePreviousCluster(new Host({ root }), spec('reset'));
    expect(o.policy).toBe('reset');
    expect(o.live).toBe(false);
    expect(o.chains).toEqual([]);
    expect(o.units.map((u) => u.unit)).toEqual(['etcd.service', 'k3s.service', 'kubelet.service']);
    const by = new Map(o.units.map((u) => [u.unit, u]));
    for (const u of o.units) expect(u.active).toBeNull();

    expect(by.get('kubelet.service')!.file).toBe('/etc/systemd/system/kubelet.service');
    expect(by.get('kubelet.service')!.files).toEqual(['/etc/systemd/system/kubelet.service', '/etc/systemd/system/kubelet.service.d']);
    // A package's unit file stays; an admin's drop-in beside it goes.
    expect(by.get('etcd.service')!.file).toBe('/usr/lib/systemd/system/etcd.service');
    expect(by.get('etcd.service')!.files).toEqual(['/etc/systemd/system/etcd.service.d']);
    expect(by.get('k3s.service')!.files).toEqual([]);

    for (const u of ['kubelet.service', 'etcd.service']) expect([...by.get(u)!.links].sort()).toEqual(disabledBySystemd(root, u));
    expect(by.get('kubelet.service')!.links).toEqual(['/etc/systemd/system/multi-user.target.wants/kubelet.service']);
    // systemctl disable leaves a link in a vendor directory (the oracle removes nothing for k3s).
    expect(disabledBySystemd(root, 'k3s.service')).toEqual([]);
    expect(by.get('k3s.service')!.links).toEqual([]);
    expect(by.get('k3s.service')!.vendorLinks).toEqual(['/usr/lib/systemd/system/multi-user.target.wants/k3s.service']);
    expect(by.get('kubelet.service')!.vendorLinks).toEqual([]);
  });

  it('measures each reset directory that exists, as find(1) counts it', async () => {
    const root = formerNode();
    const o = await observePreviousCluster(new Host({ root }), spec('reset'));
    expect(o.dirs.map((d) => d.path).sort()).toEqual(['/etc/kubernetes', '/var/lib/etcd']);
    const etcd = o.dirs.find((d) => d.path === '/var/lib/etcd')!;
    expect(etcd).toMatchObject({ kind: 'dir', ...findFigures(path.join(root, 'var/lib/etcd')), partial: false, mounts: [] });
    expect(o.evidence.map((e) => e.path)).toContain('/etc/systemd/system/kubelet.service');
  });

  it('never moves a unit file that is a link (systemctl link), only the drop-ins beside it', async () => {
    const root = formerNode();
    buildTree(root, {
      'opt/rke2/rke2-server.service': unit('/opt/rke2/bin/rke2 server'),
      'etc/systemd/system/rke2-server.service.d/10-env.conf': '[Service]\nEnvironment=B=2\n',
    });
    symlinkSync('/opt/rke2/rke2-server.service', path.join(root, 'etc/systemd/system/rke2-server.service'));
    expect(lstatSync(path.join(root, 'etc/systemd/system/rke2-server.service')).isSymbolicLink()).toBe(true);
    const o = await observePreviousCluster(new Host({ root }), spec('reset'));
    const rke2 = o.units.find((u) => u.unit === 'rke2-server.service')!;
    expect(rke2.file).toBe('/etc/systemd/system/rke2-server.service');
    expect(ADMIN_UNIT_DIRS).toContain(path.posix.dirname(rke2.file));
    expect(rke2.files).toEqual(['/etc/systemd/system/rke2-server.service.d']);
  });

  it('names a masked unit by its mask, as systemctl is-enabled does, not by the package file the mask hides', async () => {
    const root = formerNode();
    symlinkSync('/dev/null', path.join(root, 'etc/systemd/system/k3s.service'));
    const isEnabled = spawnSync('systemctl', ['--root', root, 'is-enabled', 'k3s.service'], { encoding: 'utf8' });
    expect(isEnabled.stdout.trim()).toBe('masked');
    const o = await observePreviousCluster(new Host({ root }), spec('reset'));
    const k3s = o.units.find((u) => u.unit === 'k3s.service')!;
    expect(k3s.file).toBe('/etc/systemd/system/k3s.service');
    expect(k3s.masked).toBe(true);
    // The mask is a link: nothing of it is moved aside.
    expect(k3s.files).toEqual([]);
    for (const u of o.units.filter((x) => x.unit !== 'k3s.service')) {
      expect(spawnSync('systemctl', ['--root', root, 'is-enabled', u.unit], { encoding: 'utf8' }).stdout.trim()).not.toBe('masked');
      expect(u.masked).toBe(false);
    }
  });

  it("a unit file in /usr/local/lib/systemd/system is an admin's too", async () => {
    const root = formerNode();
    buildTree(root, { 'usr/local/lib/systemd/system/k3s-agent.service': unit('/usr/local/bin/k3s agent') });
    const o = await observePreviousCluster(new Host({ root }), spec('reset'));
    expect(o.units.find((u) => u.unit === 'k3s-agent.service')!.files).toEqual(['/usr/local/lib/systemd/system/k3s-agent.service']);
    expect(existsSync(path.join(root, 'usr/local/lib/systemd/system/k3s-agent.service.d'))).toBe(false);
  });
});

const SAVE = [
  '# Generated by iptables-save v1.8.9',
  '*nat',
  ':PREROUTING ACCEPT [0:0]',
  ':KUBE-SERVICES - [0:0]',
  '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  'COMMIT',
  '',
].join('\n');

function liveRunner(answers: Record<string, { exitCode: number; stdout?: string; stderr?: string }>, calls: string[]): CommandRunner {
  return async (cmd, args) => {
    const key = [cmd, ...args].join(' ');
    calls.push(key);
    const a = answers[key] ?? { exitCode: 127, stderr: `${cmd}: not found` };
    return { command: key, exitCode: a.exitCode, stdout: a.stdout ?? '', stderr: a.stderr ?? '' };
  };
}

describe('observePreviousCluster live', () => {
  it("reads each unit's ActiveState and the Kubernetes chains; a missing ip6tables-save is nothing to read", async () => {
    const root = formerNode();
    const calls: string[] = [];
    const runner = liveRunner(
      {
        'systemctl show -p ActiveState --value kubelet.service': { exitCode: 0, stdout: 'active\n' },
        'systemctl show -p ActiveState --value etcd.service': { exitCode: 0, stdout: 'inactive\n' },
        'iptables-save': { exitCode: 0, stdout: SAVE },
      },
      calls,
    );
    const o = await observePreviousCluster(new Host({ root, live: true, runner }), spec('reset'));
    expect(o.live).toBe(true);
    const by = new Map(o.units.map((u) => [u.unit, u.active]));
    expect(by.get('kubelet.service')).toBe('active');
    expect(by.get('etcd.service')).toBe('inactive');
    // systemctl show failing: no answer, never a guessed state.
    expect(by.get('k3s.service')).toBeNull();
    expect(o.chains).toHaveLength(1);
    const [c] = o.chains;
    expect(c!.program).toBe('iptables');
    expect('chains' in c! && [...c.chains.chains]).toEqual([['nat', ['KUBE-SERVICES']]]);
    expect(calls).toContain('ip6tables-save');
  });

  it("reads kube-proxy's nftables tables from nft's JSON; a failing nft is an error, a missing one nothing to read", async () => {
    const root = formerNode();
    const json =
      '{"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}, {"table": {"family": "inet", "name": "filter", "handle": 1}}, {"table": {"family": "ip", "name": "kube-proxy", "handle": 2}}]}\n';
    const read = async (answer: { exitCode: number; stdout?: string; stderr?: string } | null) =>
      (await observePreviousCluster(new Host({ root, live: true, runner: liveRunner(answer ? { 'nft -j list tables': answer } : {}, []) }), spec('reset')))
        .nftTables;
    expect(await read({ exitCode: 0, stdout: json })).toEqual({ tables: [{ family: 'ip', name: 'kube-proxy' }] });
    expect(await read({ exitCode: 1, stderr: 'netlink: Error: Operation not permitted\n' })).toEqual({
      error: 'nft -j list tables exited 1: netlink: Error: Operation not permitted',
    });
    expect(await read({ exitCode: 0, stdout: 'table ip kube-proxy\n' })).toEqual({
      error: expect.stringMatching(/^nft -j list tables printed what is not its JSON \(not JSON: /),
    });
    expect(await read(null)).toBeNull();
    // Offline (an image) there is no ruleset to read.
    expect((await observePreviousCluster(new Host({ root }), spec('reset'))).nftTables).toBeNull();
  });

  it('an iptables-save that fails is an error naming the program, its exit code and what it said', async () => {
    const root = formerNode();
    const runner = liveRunner(
      {
        'iptables-save': { exitCode: 1, stderr: 'iptables-save v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied\n' },
        'ip6tables-save': { exitCode: 4, stderr: 'no\n' },
      },
      [],
    );
    const o = await observePreviousCluster(new Host({ root, live: true, runner }), spec('reset'));
    expect(o.chains).toEqual([
      { program: 'iptables', error: 'iptables-save exited 1: iptables-save v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied' },
      { program: 'ip6tables', error: 'ip6tables-save exited 4: no' },
    ]);
  });

  it('a runner that throws is an error too, never an empty reading', async () => {
    const root = formerNode();
    const runner: CommandRunner = async (cmd) => {
      if (cmd.endsWith('tables-save')) throw new Error(`spawn ${cmd} EACCES`);
      return { command: cmd, exitCode: 1, stdout: '', stderr: '' };
    };
    const o = await observePreviousCluster(new Host({ root, live: true, runner }), spec('reset'));
    expect(o.chains).toEqual([
      { program: 'iptables', error: 'iptables-save exited -1: spawn iptables-save EACCES' },
      { program: 'ip6tables', error: 'ip6tables-save exited -1: spawn ip6tables-save EACCES' },
    ]);
  });
});
