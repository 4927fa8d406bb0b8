// Table-driven: each case is a tree of sysctl files written into a temp root,
// read through Host + observeSysctlTree, and judged by the engine under both
// programs. Expected values follow systemd 252 and procps 4.0.2 (Debian 12).
import { afterAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { observeSysctlTree } from '../../src/sysctl/observe.js';
import { beatingAssignments, readOrder, verdict } from '../../src/sysctl/order.js';
import type { SysctlModel, SysctlTree } from '../../src/sysctl/order.js';

/** path -> file content, or { link } for a symlink, or { dir: true }. */
export type FixtureTree = Record<string, string | { link: string } | { dir: true }>;

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await fs.rm(r, { recursive: true, force: true });
});

export async function writeTree(root: string, tree: FixtureTree): Promise<void> {
  for (const [p, v] of Object.entries(tree)) {
    const at = path.join(root, p);
    if (typeof v === 'object' && 'dir' in v) {
      await fs.mkdir(at, { recursive: true });
      continue;
    }
    await fs.mkdir(path.dirname(at), { recursive: true });
    if (typeof v === 'string') await fs.writeFile(at, v);
    else await fs.symlink(v.link, at);
  }
}

async function observeTree(tree: FixtureTree): Promise<SysctlTree> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sysctl-order-'));
  roots.push(root);
  await writeTree(root, tree);
  return (await observeSysctlTree(new Host({ root }))).tree;
}

const K8S = '/etc/sysctl.d/k8s.conf';
const k8s = 'net.ipv4.ip_forward = 1\nnet.bridge.bridge-nf-call-iptables = 1\n';

/** Expected [value, "file:line" of the winner] per key; null winner: nothing sets it. */
type Expect = Record<string, [string | null, string | null]>;

interface Case {
  name: string;
  tree: FixtureTree;
  boot: Expect;
  system: Expect;
}

const cases: Case[] = [
  {
    name: 'a later /etc file beats ours under both',
    tree: {
      [K8S]: k8s,
      '/etc/sysctl.d/security-baseline.conf': '# CIS 3.1.1\nkernel.kptr_restrict = 2\nnet.ipv4.ip_forward = 0\n',
    },
    boot: { 'net.ipv4.ip_forward': ['0', '/etc/sysctl.d/security-baseline.conf:3'], 'kernel.kptr_restrict': ['2', '/etc/sysctl.d/security-baseline.conf:2'] },
    system: { 'net.ipv4.ip_forward': ['0', '/etc/sysctl.d/security-baseline.conf:3'] },
  },
  {
    name: 'an earlier /etc file loses to ours',
    tree: { [K8S]: k8s, '/etc/sysctl.d/10-old.conf': 'net.ipv4.ip_forward = 0\n' },
    boot: { 'net.ipv4.ip_forward': ['1', `${K8S}:1`] },
    system: { 'net.ipv4.ip_forward': ['1', `${K8S}:1`] },
  },
  {
    name: 'a vendor file in /usr/lib sorting later beats ours',
    tree: { [K8S]: k8s, '/usr/lib/sysctl.d/zz-vendor.conf': 'net.ipv4.ip_forward=0\n' },
    boot: { 'net.ipv4.ip_forward': ['0', '/usr/lib/sysctl.d/zz-vendor.conf:1'] },
    system: { 'net.ipv4.ip_forward': ['0', '/usr/lib/sysctl.d/zz-vendor.conf:1'] },
  },
  {
    name: 'a same-name /etc file overrides the vendor file; /run overrides /usr/lib',
    tree: {
      '/usr/lib/sysctl.d/50-vendor.conf': 'net.ipv4.ip_forward = 0\nnet.ipv4.conf.all.rp_filter = 2\n',
      '/etc/sysctl.d/50-vendor.conf': 'net.ipv4.ip_forward = 1\n',
      '/usr/lib/sysctl.d/60-other.conf': 'vm.swappiness = 60\n',
      '/run/sysctl.d/60-other.conf': 'vm.swappiness = 10\n',
      '/usr/local/lib/sysctl.d/60-other.conf': 'vm.swappiness = 30\n',
    },
    // The /usr/lib file is not read at all, so its rp_filter line does nothing.
    boot: {
      'net.ipv4.ip_forward': ['1', '/etc/sysctl.d/50-vendor.conf:1'],
      'net.ipv4.conf.all.rp_filter': [null, null],
      'vm.swappiness': ['10', '/run/sysctl.d/60-other.conf:1'],
    },
    system: {
      'net.ipv4.ip_forward': ['1', '/etc/sysctl.d/50-vendor.conf:1'],
      'net.ipv4.conf.all.rp_filter': [null, null],
      'vm.swappiness': ['10', '/run/sysctl.d/60-other.conf:1'],
    },
  },
  {
    name: 'a /dev/null symlink in /etc masks the vendor file',
    tree: {
      [K8S]: k8s,
      '/usr/lib/sysctl.d/zz-vendor.conf': 'net.ipv4.ip_forward = 0\n',
      '/etc/sysctl.d/zz-vendor.conf': { link: '/dev/null' },
    },
    boot: { 'net.ipv4.ip_forward': ['1', `${K8S}:1`] },
    system: { 'net.ipv4.ip_forward': ['1', `${K8S}:1`] },
  },
  {
    name: 'a glob matches a wanted key; an explicit key beats it whatever the order; "-key" excludes',
    tree: {
      '/etc/sysctl.d/10-explicit.conf': 'net.ipv4.conf.all.rp_filter = 1\n-net.ipv4.conf.lo.rp_filter\n',
      '/usr/lib/sysctl.d/50-default.conf': '# from systemd\nnet.ipv4.conf.*.rp_filter = 2\n',
      '/etc/sysctl.d/90-glob.conf': 'net/ipv4/conf/d*/rp_filter = 0\n',
    },
    boot: {
      'net.ipv4.conf.all.rp_filter': ['1', '/etc/sysctl.d/10-explicit.conf:1'],
      'net.ipv4.conf.eth0.rp_filter': ['2', '/usr/lib/sysctl.d/50-default.conf:2'],
      'net.ipv4.conf.default.rp_filter': ['0', '/etc/sysctl.d/90-glob.conf:1'],
      'net.ipv4.conf.lo.rp_filter': [null, '/etc/sysctl.d/10-explicit.conf:2'],
      'net.ipv4.conf.eth0.log_martians': [null, null],
    },
    system: {
      'net.ipv4.conf.all.rp_filter': ['1', '/etc/sysctl.d/10-explicit.conf:1'],
      'net.ipv4.conf.eth0.rp_filter': ['2', '/usr/lib/sysctl.d/50-default.conf:2'],
      'net.ipv4.conf.default.rp_filter': ['0', '/etc/sysctl.d/90-glob.conf:1'],
      'net.ipv4.conf.lo.rp_filter': [null, '/etc/sysctl.d/10-explicit.conf:2'],
    },
  },
  {
    name: '/etc/sysctl.conf (via 99-sysctl.conf) loses at boot but wins under sysctl --system',
    tree: {
      [K8S]: k8s,
      '/etc/sysctl.conf': '# legacy\nnet.ipv4.ip_forward = 0\n',
      '/etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' },
    },
    boot: { 'net.ipv4.ip_forward': ['1', `${K8S}:1`] },
    system: { 'net.ipv4.ip_forward': ['0', '/etc/sysctl.conf:2'] },
  },
  {
    name: 'without the 99-sysctl.conf link systemd never reads /etc/sysctl.conf',
    tree: { '/etc/sysctl.conf': 'vm.swappiness = 1\n' },
    boot: { 'vm.swappiness': [null, null] },
    system: { 'vm.swappiness': ['1', '/etc/sysctl.conf:1'] },
  },
  {
    name: "'-' prefixed assignments count; a later bare '-key' cancels ours at boot only",
    tree: {
      [K8S]: k8s,
      '/etc/sysctl.d/zz-cancel.conf': '-net.ipv4.ip_forward\n-net.bridge.bridge-nf-call-iptables = 0\n',
    },
    boot: { 'net.ipv4.ip_forward': [null, '/etc/sysctl.d/zz-cancel.conf:1'], 'net.bridge.bridge-nf-call-iptables': ['0', '/etc/sysctl.d/zz-cancel.conf:2'] },
    system: { 'net.ipv4.ip_forward': ['1', `${K8S}:1`], 'net.bridge.bridge-nf-call-iptables': ['0', '/etc/sysctl.d/zz-cancel.conf:2'] },
  },
  {
    name: "';' and '#' comments in a later file change nothing",
    tree: { [K8S]: k8s, '/etc/sysctl.d/zz-comments.conf': '; net.ipv4.ip_forward = 0\n   # net.ipv4.ip_forward = 0\n' },
    boot: { 'net.ipv4.ip_forward': ['1', `${K8S}:1`] },
    system: { 'net.ipv4.ip_forward': ['1', `${K8S}:1`] },
  },
  {
    name: 'a key written with slashes is the same key',
    tree: { [K8S]: k8s, '/run/sysctl.d/zz-slash.conf': 'net/ipv4/ip_forward = 0\n' },
    boot: { 'net.ipv4.ip_forward': ['0', '/run/sysctl.d/zz-slash.conf:1'] },
    system: { 'net.ipv4.ip_forward': ['0', '/run/sysctl.d/zz-slash.conf:1'] },
  },
  {
    // ('.' sorts before digits and letters, so it could never beat ours anyway.)
    name: 'a hidden .conf file is read by procps only',
    tree: { '/etc/sysctl.d/.hidden.conf': 'vm.swappiness = 7\n' },
    boot: { 'vm.swappiness': [null, null] },
    system: { 'vm.swappiness': ['7', '/etc/sysctl.d/.hidden.conf:1'] },
  },
  {
    name: 'split-usr /lib/sysctl.d is read after /usr/lib; a /lib -> usr/lib alias is read once',
    tree: {
      '/usr/lib/sysctl.d/50-a.conf': 'vm.swappiness = 5\n',
      '/lib/sysctl.d/50-a.conf': 'vm.swappiness = 6\n',
      '/lib/sysctl.d/60-b.conf': 'vm.overcommit_memory = 1\n',
    },
    boot: { 'vm.swappiness': ['5', '/usr/lib/sysctl.d/50-a.conf:1'], 'vm.overcommit_memory': ['1', '/lib/sysctl.d/60-b.conf:1'] },
    system: { 'vm.swappiness': ['5', '/usr/lib/sysctl.d/50-a.conf:1'], 'vm.overcommit_memory': ['1', '/lib/sysctl.d/60-b.conf:1'] },
  },
  {
    name: 'files that do not end in .conf are ignored',
    tree: { [K8S]: k8s, '/etc/sysctl.d/README.sysctl': 'net.ipv4.ip_forward = 0\n', '/etc/sysctl.d/zz.conf.dpkg-old': 'net.ipv4.ip_forward = 0\n' },
    boot: { 'net.ipv4.ip_forward': ['1', `${K8S}:1`] },
    system: { 'net.ipv4.ip_forward': ['1', `${K8S}:1`] },
  },
];

describe('sysctl ordering engine', () => {
  for (const c of cases) {
    for (const model of ['boot', 'system'] as SysctlModel[]) {
      it(`${c.name} [${model}]`, async () => {
        const tree = await observeTree(c.tree);
        for (const [key, [value, at]] of Object.entries(c[model])) {
          const v = verdict(tree, key, model);
          const winner = v.winner ? `${v.winner.assignment.file}:${v.winner.assignment.line}` : null;
          expect({ key, value: v.value, winner }).toEqual({ key, value, winner: at });
        }
      });
    }
  }

  it('a /lib symlink to usr/lib does not make files count twice', async () => {
    const tree = await observeTree({ '/usr/lib/sysctl.d/50-a.conf': 'vm.swappiness = 5\n', '/lib': { link: 'usr/lib' } });
    expect(tree.files.map((f) => f.path)).toEqual(['/usr/lib/sysctl.d/50-a.conf']);
  });

  it('reads 99-sysctl.conf through its link, and procps reads /etc/sysctl.conf again last', async () => {
    const tree = await observeTree({ [K8S]: k8s, '/etc/sysctl.conf': 'a.b = 1\n', '/etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' } });
    expect(readOrder(tree, 'boot').map((o) => o.file.path)).toEqual(['/etc/sysctl.d/99-sysctl.conf', K8S]);
    expect(readOrder(tree, 'system').map((o) => o.file.path)).toEqual(['/etc/sysctl.d/99-sysctl.conf', K8S, '/etc/sysctl.conf']);
    expect(tree.files.find((f) => f.path.endsWith('99-sysctl.conf'))!.realPath).toBe('/etc/sysctl.conf');
  });
});

describe('beatingAssignments', () => {
  const at = (b: ReturnType<typeof beatingAssignments>) => b.map((x) => `${x.applied.assignment.file}:${x.applied.assignment.line}`);

  it('lists every later disagreeing line, not only the last one', async () => {
    const tree = await observeTree({
      [K8S]: k8s,
      '/etc/sysctl.d/security-baseline.conf': 'net.ipv4.ip_forward = 0\n',
      '/usr/lib/sysctl.d/zz-vendor.conf': 'net.ipv4.ip_forward = 0\n',
    });
    const expected = ['/etc/sysctl.d/security-baseline.conf:1', '/usr/lib/sysctl.d/zz-vendor.conf:1'];
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'boot'))).toEqual(expected);
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'system'))).toEqual(expected);
  });

  it('ignores a disagreeing line that a later agreeing line overrides', async () => {
    const tree = await observeTree({
      [K8S]: k8s,
      '/etc/sysctl.d/m-off.conf': 'net.ipv4.ip_forward = 0\n',
      '/etc/sysctl.d/n-on.conf': 'net.ipv4.ip_forward = 1\n',
    });
    expect(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'boot')).toEqual([]);
  });

  it('a later agreeing line ends what beats ours: only the disagreeing lines after it are named', async () => {
    // Both programs apply the files in name order and the last value of a key stays: k8s (1), m-off (0), n-on (1),
    // zz-off (0) ends at 0, and without zz-off's line alone it ends at n-on's 1. m-off's line needs no removal.
    const tree = await observeTree({
      [K8S]: k8s,
      '/etc/sysctl.d/m-off.conf': 'net.ipv4.ip_forward = 0\n',
      '/etc/sysctl.d/n-on.conf': 'net.ipv4.ip_forward = 1\n',
      '/etc/sysctl.d/zz-off.conf': 'net.ipv4.ip_forward = 0\n',
    });
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'boot'))).toEqual(['/etc/sysctl.d/zz-off.conf:1']);
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'system'))).toEqual(['/etc/sysctl.d/zz-off.conf:1']);
  });

  it('read without a line (commented out), the lines still read are named and the gone one is not', async () => {
    // k8s (1), zz-a (0), zz-b (0): with zz-a's line commented out, zz-b's 0 still ends the key; naming zz-a again
    // would ask the operator to comment out a line that is already gone.
    const tree = await observeTree({
      [K8S]: k8s,
      '/etc/sysctl.d/zz-a.conf': 'net.ipv4.ip_forward = 0\n',
      '/etc/sysctl.d/zz-b.conf': 'net.ipv4.ip_forward = 0\n',
    });
    const gone = new Set(['/etc/sysctl.d/zz-a.conf\u00001']);
    for (const model of ['boot', 'system'] as const) {
      expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', model, gone))).toEqual(['/etc/sysctl.d/zz-b.conf:1']);
      expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', model))).toEqual(['/etc/sysctl.d/zz-a.conf:1', '/etc/sysctl.d/zz-b.conf:1']);
    }
  });

  it('a bare "-key" between ours and a later 0 is named at boot only, beside the 0', async () => {
    // Under sysctl --system a bare "-key" writes nothing and cancels nothing: only zz-b's 0 beats ours. At boot
    // systemd-sysctl drops the key's entry for zz-a's "-key", then zz-b's 0 makes a new one: with only zz-b's line
    // gone the "-key" still leaves the kernel's value, so both lines stand between ours and 1.
    const tree = await observeTree({ [K8S]: k8s, '/etc/sysctl.d/zz-a.conf': '-net.ipv4.ip_forward\n', '/etc/sysctl.d/zz-b.conf': 'net.ipv4.ip_forward = 0\n' });
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'system'))).toEqual(['/etc/sysctl.d/zz-b.conf:1']);
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'boot'))).toEqual(['/etc/sysctl.d/zz-a.conf:1', '/etc/sysctl.d/zz-b.conf:1']);
  });

  it('counts /etc/sysctl.conf only under sysctl --system when 99-sysctl.conf sorts first', async () => {
    const tree = await observeTree({ [K8S]: k8s, '/etc/sysctl.conf': 'net.ipv4.ip_forward = 0\n', '/etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' } });
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'boot'))).toEqual([]);
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'system'))).toEqual(['/etc/sysctl.conf:1']);
  });

  it('a later bare "-key" beats ours at boot only; globs never do', async () => {
    const tree = await observeTree({ [K8S]: k8s, '/etc/sysctl.d/zz.conf': '-net.ipv4.ip_forward\nnet.ipv4.ip_*= 0\n' });
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'boot'))).toEqual(['/etc/sysctl.d/zz.conf:1']);
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'system'))).toEqual([]);
  });
});
