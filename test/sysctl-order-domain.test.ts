// Sysctl ordering rules the table tests leave open, each stated by what
// systemd-sysctl 252 and procps 4.0.2 do (src/sysctl/order.ts has the source
// references; test/sysctl-netns.test.ts runs both programs on the glob and
// coupling forms): what "beats ours" means when ours does not set the key,
// systemd's "same value keeps its earlier place" rule seen through a coupled
// key, and the tree after our writes (a write reaches every link to the file).
import { afterAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../src/host.js';
import { observeSysctlTree } from '../src/sysctl/observe.js';
import { beatingAssignments, treeAfterWrites, verdict } from '../src/sysctl/order.js';
import type { SysctlTree } from '../src/sysctl/order.js';

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await fs.rm(r, { recursive: true, force: true });
});

async function observe(tree: Record<string, string | { link: string }>): Promise<SysctlTree> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sysctl-domain-'));
  roots.push(root);
  for (const [p, v] of Object.entries(tree)) {
    const at = path.join(root, p);
    await fs.mkdir(path.dirname(at), { recursive: true });
    if (typeof v === 'string') await fs.writeFile(at, v);
    else await fs.symlink(v.link, at);
  }
  return (await observeSysctlTree(new Host({ root }))).tree;
}

const K8S = '/etc/sysctl.d/k8s.conf';
const at = (b: ReturnType<typeof beatingAssignments>) => b.map((x) => `${x.applied.assignment.file}:${x.applied.assignment.line}${x.through ? ` via ${x.through}` : ''}`);

describe('beatingAssignments', () => {
  it('when our file does not set the key, nothing beats us on it, whatever other files say', async () => {
    const tree = await observe({
      '/etc/sysctl.d/10-a.conf': 'net.ipv4.conf.all.rp_filter = 0\n',
      [K8S]: 'net.ipv4.ip_forward = 1\n',
      '/etc/sysctl.d/zz.conf': 'net.ipv4.conf.all.rp_filter = 0\n',
    });
    for (const model of ['boot', 'system'] as const) {
      expect(beatingAssignments(tree, K8S, 'net.ipv4.conf.all.rp_filter', '1', model)).toEqual([]);
      // And for the key it does set, the other files are no threat.
      expect(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', model)).toEqual([]);
    }
  });

  it('our line read only through /etc/sysctl.conf at the end of sysctl --system is not "ours in sysctl.d"', async () => {
    const tree = await observe({ '/etc/sysctl.conf': 'net.ipv4.ip_forward = 1\n', '/etc/sysctl.d/zz.conf': 'net.ipv4.ip_forward = 0\n' });
    expect(beatingAssignments(tree, '/etc/sysctl.conf', 'net.ipv4.ip_forward', '1', 'system')).toEqual([]);
  });

  it('at boot a repeated value keeps the slot of its first file, so a coupled write after that slot beats ours; sysctl --system writes in file order', async () => {
    // 10-a and k8s.conf both say ip_forward = 1; 50-b turns all.forwarding (the same kernel switch) off.
    const tree = await observe({
      [K8S]: 'net.ipv4.ip_forward = 1\n',
      '/etc/sysctl.d/10-a.conf': 'net.ipv4.ip_forward = 1\n',
      '/etc/sysctl.d/50-b.conf': 'net.ipv4.conf.all.forwarding = 0\n',
    });
    expect(verdict(tree, 'net.ipv4.ip_forward', 'boot').value).toBe('0');
    expect(verdict(tree, 'net.ipv4.ip_forward', 'system').value).toBe('1');
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'boot'))).toEqual(['/etc/sysctl.d/50-b.conf:1 via net.ipv4.conf.all.forwarding']);
    expect(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'system')).toEqual([]);
  });

  it('a new value moves the key to the end at boot: a later file with a different value wins', async () => {
    const tree = await observe({
      '/etc/sysctl.d/10-a.conf': 'net.ipv4.ip_forward = 0\n',
      '/etc/sysctl.d/50-b.conf': 'net.ipv4.conf.all.forwarding = 0\n',
      [K8S]: 'net.ipv4.ip_forward = 1\n',
    });
    expect(verdict(tree, 'net.ipv4.ip_forward', 'boot')).toMatchObject({ value: '1', via: 'explicit' });
    expect(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'boot')).toEqual([]);
  });
});

describe('treeAfterWrites', () => {
  it("writing /etc/sysctl.conf reaches Debian's 99-sysctl.conf link to it, and procps' last pass", async () => {
    const tree = await observe({
      '/etc/sysctl.conf': 'net.ipv4.ip_forward = 0\n',
      '/etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' },
    });
    const after = treeAfterWrites(tree, [{ path: '/etc/sysctl.conf', content: 'net.ipv4.ip_forward = 1\n' }]);
    for (const model of ['boot', 'system'] as const) {
      const v = verdict(after, 'net.ipv4.ip_forward', model);
      expect(v.value, model).toBe('1');
    }
    expect(verdict(after, 'net.ipv4.ip_forward', 'boot').winner!.source.path).toBe('/etc/sysctl.d/99-sysctl.conf');
    expect(verdict(after, 'net.ipv4.ip_forward', 'system').winner!.tail).toBe(true);
    // The tree we were given is unchanged.
    expect(verdict(tree, 'net.ipv4.ip_forward', 'boot').value).toBe('0');
  });

  it('a write to a link path replaces the link with a file: its old target keeps its bytes', async () => {
    const tree = await observe({
      '/usr/lib/sysctl.d/50-vendor.conf': 'net.ipv4.ip_forward = 0\n',
      '/etc/sysctl.d/60-link.conf': { link: '/usr/lib/sysctl.d/50-vendor.conf' },
    });
    const after = treeAfterWrites(tree, [{ path: '/etc/sysctl.d/60-link.conf', content: 'net.ipv4.ip_forward = 1\n' }]);
    const vendor = after.files.find((f) => f.path === '/usr/lib/sysctl.d/50-vendor.conf')!;
    expect(vendor.content).toBe('net.ipv4.ip_forward = 0\n');
    const link = after.files.find((f) => f.path === '/etc/sysctl.d/60-link.conf')!;
    expect([link.realPath, link.masked, link.content]).toEqual(['/etc/sysctl.d/60-link.conf', false, 'net.ipv4.ip_forward = 1\n']);
    expect(verdict(after, 'net.ipv4.ip_forward', 'boot').value).toBe('1');
  });

  it('a write through a mask is no write to /dev/null: the masked name stays empty', async () => {
    const tree = await observe({
      '/etc/sysctl.d/50-x.conf': { link: '/dev/null' },
      '/usr/lib/sysctl.d/50-x.conf': 'net.ipv4.ip_forward = 0\n',
    });
    const after = treeAfterWrites(tree, [{ path: '/dev/null', content: 'net.ipv4.ip_forward = 1\n' }]);
    expect(verdict(after, 'net.ipv4.ip_forward', 'boot')).toMatchObject({ value: null, via: 'none' });
  });

  it('a new file counts only in a sysctl.d directory and with a .conf name', async () => {
    const tree = await observe({ '/etc/sysctl.d/README': 'x\n' });
    const write = (p: string) => verdict(treeAfterWrites(tree, [{ path: p, content: 'net.ipv4.ip_forward = 1\n' }]), 'net.ipv4.ip_forward', 'boot').value;
    expect(write('/etc/sysctl.d/k8s.conf')).toBe('1');
    expect(write('/run/sysctl.d/k8s.conf')).toBe('1');
    expect(write('/etc/sysctl.d/k8s.conf.bak')).toBeNull();
    expect(write('/etc/sysctl.d.old/k8s.conf')).toBeNull();
    expect(write('/etc/k8s.conf')).toBeNull();
  });
});
