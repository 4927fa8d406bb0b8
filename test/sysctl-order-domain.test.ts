// Sysctl ordering rules the table tests leave open, each stated by what
// systemd-sysctl 252 and procps 4.0.2 do (src/sysctl/order.ts has the source
// references; test/sysctl-netns.test.ts runs both programs on the glob and
// coupling forms): what "beats ours" means when ours does not set the key,
// systemd's "same value keeps its earlier place" rule seen through a coupled
// key, and the tree after our writes (a write reaches every link to the file).
import { afterAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import { execFileSync } from 'node:child_process';
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

/**
 * The kernel as the oracle for couplings: in a fresh network namespace
 * (unshare -n; net.ipv4 keys are per namespace, this machine's are never
 * touched) start from the boot value ip_forward = 0, write `writes` in
 * order with sysctl -w, and read `keys` back.
 */
function kernelAfter(writes: Array<[string, string]>, keys: string[]): Record<string, string> {
  for (const [k] of writes) if (!k.startsWith('net.ipv4.')) throw new Error('only per-namespace keys');
  const script = ['sysctl -q -w net.ipv4.ip_forward=0', ...writes.map(([k, v]) => `sysctl -q -w ${k}=${v}`), `sysctl -n ${keys.join(' ')}`].join(' && ');
  const out = execFileSync('unshare', ['-n', 'sh', '-c', script], { encoding: 'utf8' }).trim().split('\n');
  return Object.fromEntries(keys.map((k, i) => [k, out[i]!]));
}

describe('couplings at boot, against the kernel in a fresh network namespace', () => {
  const KEYS = ['net.ipv4.ip_forward', 'net.ipv4.conf.default.forwarding', 'net.ipv4.conf.lo.forwarding', 'net.ipv4.conf.all.accept_redirects'];
  const cases: Array<{ name: string; files: Record<string, string>; order: Array<[string, string]> }> = [
    {
      name: 'ip_forward turned on after its followers were set: the change resets them',
      files: { '/etc/sysctl.d/10-a.conf': 'net.ipv4.conf.default.forwarding = 0\nnet.ipv4.conf.all.accept_redirects = 1\n', [K8S]: 'net.ipv4.ip_forward = 1\n' },
      order: [['net.ipv4.conf.default.forwarding', '0'], ['net.ipv4.conf.all.accept_redirects', '1'], ['net.ipv4.ip_forward', '1']],
    },
    {
      name: 'ip_forward written with the value it already has at boot: no change, the followers keep theirs',
      files: { '/etc/sysctl.d/10-a.conf': 'net.ipv4.conf.default.forwarding = 1\nnet.ipv4.conf.all.accept_redirects = 0\n', [K8S]: 'net.ipv4.ip_forward = 0\n' },
      order: [['net.ipv4.conf.default.forwarding', '1'], ['net.ipv4.conf.all.accept_redirects', '0'], ['net.ipv4.ip_forward', '0']],
    },
    {
      name: 'the followers written after the change keep their own values',
      files: { [K8S]: 'net.ipv4.ip_forward = 1\n', '/etc/sysctl.d/zz.conf': 'net.ipv4.conf.default.forwarding = 0\n' },
      order: [['net.ipv4.ip_forward', '1'], ['net.ipv4.conf.default.forwarding', '0']],
    },
    {
      name: 'all.forwarding is ip_forward under another name',
      files: { '/etc/sysctl.d/10-a.conf': 'net.ipv4.conf.all.forwarding = 1\n', '/etc/sysctl.d/20-b.conf': 'net.ipv4.conf.all.accept_redirects = 1\n' },
      order: [['net.ipv4.conf.all.forwarding', '1'], ['net.ipv4.conf.all.accept_redirects', '1']],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const tree = await observe(c.files);
      const kernel = kernelAfter(c.order, KEYS);
      const untouched = kernelAfter([], KEYS);
      for (const k of KEYS) {
        const v = verdict(tree, k, 'boot');
        // null: nothing the files write reaches the key, so the kernel keeps its boot value.
        expect(v.value ?? untouched[k], k).toBe(kernel[k]);
      }
    });
  }
});

