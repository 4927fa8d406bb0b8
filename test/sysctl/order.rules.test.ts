// Sysctl ordering rules beyond the table cases, each stated by what
// systemd-sysctl 252 and procps 4.0.2 do (src/sysctl/order.ts has the source
// references; test/sysctl/order.namespace.test.ts runs both programs on the glob and
// coupling forms): what "beats ours" means when ours does not set the key,
// systemd's "same value keeps its earlier place" rule seen through a coupled
// key, and the tree after our writes (a write reaches every link to the file).
import { afterAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { observeSysctlTree } from '../../src/sysctl/observe.js';
import { beatingAssignments, treeAfterWrites, verdict } from '../../src/sysctl/order.js';
import type { SysctlTree } from '../../src/sysctl/order.js';
import { buildTree } from '../helpers/tree.js';
import { ownedFileProblem } from '../../src/sysctl/order.js';
import type { SysctlModel } from '../../src/sysctl/order.js';
import { type Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await fs.rm(r, { recursive: true, force: true });
});

async function observe(tree: Record<string, string | { link: string }>): Promise<SysctlTree> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sysctl-domain-'));
  roots.push(root);
  buildTree(root, tree);
  return (await observeSysctlTree(new Host({ root }))).tree;
}

const K8S = '/etc/sysctl.d/k8s.conf';
const at = (b: ReturnType<typeof beatingAssignments>) =>
  b.map((x) => `${x.applied.assignment.file}:${x.applied.assignment.line}${x.through ? ` via ${x.through}` : ''}`);

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
      files: {
        '/etc/sysctl.d/10-a.conf': 'net.ipv4.conf.default.forwarding = 0\nnet.ipv4.conf.all.accept_redirects = 1\n',
        [K8S]: 'net.ipv4.ip_forward = 1\n',
      },
      order: [
        ['net.ipv4.conf.default.forwarding', '0'],
        ['net.ipv4.conf.all.accept_redirects', '1'],
        ['net.ipv4.ip_forward', '1'],
      ],
    },
    {
      name: 'ip_forward written with the value it already has at boot: no change, the followers keep theirs',
      files: {
        '/etc/sysctl.d/10-a.conf': 'net.ipv4.conf.default.forwarding = 1\nnet.ipv4.conf.all.accept_redirects = 0\n',
        [K8S]: 'net.ipv4.ip_forward = 0\n',
      },
      order: [
        ['net.ipv4.conf.default.forwarding', '1'],
        ['net.ipv4.conf.all.accept_redirects', '0'],
        ['net.ipv4.ip_forward', '0'],
      ],
    },
    {
      name: 'the followers written after the change keep their own values',
      files: { [K8S]: 'net.ipv4.ip_forward = 1\n', '/etc/sysctl.d/zz.conf': 'net.ipv4.conf.default.forwarding = 0\n' },
      order: [
        ['net.ipv4.ip_forward', '1'],
        ['net.ipv4.conf.default.forwarding', '0'],
      ],
    },
    {
      name: 'all.forwarding is ip_forward under another name',
      files: { '/etc/sysctl.d/10-a.conf': 'net.ipv4.conf.all.forwarding = 1\n', '/etc/sysctl.d/20-b.conf': 'net.ipv4.conf.all.accept_redirects = 1\n' },
      order: [
        ['net.ipv4.conf.all.forwarding', '1'],
        ['net.ipv4.conf.all.accept_redirects', '1'],
      ],
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

/**
 * procps `sysctl --system` as the oracle on a running host, whose starting
 * values nobody knows: in a fresh network + private mount namespace the
 * fixture tree is bind-mounted over every directory sysctl --system reads,
 * and it runs twice, once from every key at 0 and once from every key at 1.
 * A key that ends the same both times was written (by its own line or
 * through a coupled key); one that keeps its start was left alone.
 */
function systemRuns(root: string, keys: string[]): Array<Record<string, string>> {
  for (const k of keys) if (!k.startsWith('net.ipv4.')) throw new Error('only per-namespace keys');
  const proc = (k: string) => `/proc/sys/${k.replace(/\./g, '/')}`;
  const runs: Array<Record<string, string>> = [];
  for (const start of ['0', '1']) {
    const script = [
      `mount --bind ${root}/etc/sysctl.d /etc/sysctl.d`,
      `mount --bind /dev/null /etc/sysctl.conf`,
      `mount --bind ${root}/run /run`,
      `mount --bind ${root}/usr/local/lib /usr/local/lib`,
      `mount --bind ${root}/usr/lib/sysctl.d /usr/lib/sysctl.d`,
      // ip_forward first: writing it resets its followers, which are then set to the start as well.
      ...keys.map((k) => `echo ${start} > ${proc(k)}`),
      `sysctl -q --system --pattern '^-?net[./]ipv4[./]' >/dev/null 2>&1 || true`,
      ...keys.map((k) => `cat ${proc(k)}`),
    ].join(' && ');
    const out = execFileSync('unshare', ['-n', '-m', '--propagation', 'private', 'sh', '-c', script], { encoding: 'utf8' }).trim().split('\n');
    runs.push(Object.fromEntries(keys.map((k, i) => [k, out[i]!])));
  }
  return runs;
}

async function fixtureRoot(files: Record<string, string>): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sysctl-system-'));
  roots.push(root);
  for (const d of ['/etc/sysctl.d', '/run/sysctl.d', '/usr/local/lib/sysctl.d', '/usr/lib/sysctl.d']) await fs.mkdir(path.join(root, d), { recursive: true });
  for (const [p, v] of Object.entries(files)) await fs.writeFile(path.join(root, p), v);
  return root;
}

describe('sysctl --system on a running host: the starting value is unknown, so any write may be a change', () => {
  const KEYS = ['net.ipv4.ip_forward', 'net.ipv4.conf.default.forwarding', 'net.ipv4.conf.lo.forwarding', 'net.ipv4.conf.all.accept_redirects'];

  it('all.forwarding = 0 written over an unknown start: the followers come out 0 however the host started', async () => {
    const files = { '/etc/sysctl.d/50-a.conf': 'net.ipv4.conf.all.forwarding = 0\n' };
    const root = await fixtureRoot(files);
    const [from0, from1] = systemRuns(root, KEYS);
    const tree = await observe(files);
    // The kernel: from 1 the write is a change and resets the followers to 0; from 0 they were 0 already.
    expect(from0!['net.ipv4.conf.default.forwarding']).toBe('0');
    expect(from1!['net.ipv4.conf.default.forwarding']).toBe('0');
    for (const k of KEYS) {
      const v = verdict(tree, k, 'system');
      if (from0![k] === from1![k]) expect(v.value, k).toBe(from0![k]);
      // Depends on the start (accept_redirects: flipped only when forwarding changed): the engine assumes a change.
      else expect([from0![k], from1![k]], k).toContain(v.value);
    }
    // At boot the kernel default is known (0), so the same write changes nothing and reaches no follower.
    expect(verdict(tree, 'net.ipv4.conf.default.forwarding', 'boot')).toMatchObject({ value: null, via: 'none' });
  });

  it('a verdict reached through a coupled key names that key and the line that wrote it', async () => {
    const tree = await observe({ [K8S]: 'net.ipv4.conf.default.forwarding = 1\n', '/etc/sysctl.d/zz.conf': 'net.ipv4.conf.all.forwarding = 0\n' });
    for (const model of ['boot', 'system'] as const) {
      const v = verdict(tree, 'net.ipv4.conf.default.forwarding', model);
      if (model === 'system') {
        expect(v).toMatchObject({ value: '0', via: 'coupled', through: 'net.ipv4.conf.all.forwarding' });
        expect(`${v.winner?.assignment.file}:${v.winner?.assignment.line}`).toBe('/etc/sysctl.d/zz.conf:1');
        expect(at(beatingAssignments(tree, K8S, 'net.ipv4.conf.default.forwarding', '1', model))).toEqual([
          '/etc/sysctl.d/zz.conf:1 via net.ipv4.conf.all.forwarding',
        ]);
      } else {
        // At boot all.forwarding = 0 is the kernel default: no change, so our 1 stands, told as our own line.
        expect(v).toMatchObject({ value: '1', via: 'explicit' });
        expect(v.through).toBeUndefined();
        expect(beatingAssignments(tree, K8S, 'net.ipv4.conf.default.forwarding', '1', model)).toEqual([]);
      }
    }
    // The kernel under sysctl --system: from a host with forwarding on, zz.conf's write is a change and
    // turns our 1 into 0; from one with it off, our 1 stands. The start is unknown, so ours may be beaten: the engine's 0.
    const root = await fixtureRoot({
      '/etc/sysctl.d/k8s.conf': 'net.ipv4.conf.default.forwarding = 1\n',
      '/etc/sysctl.d/zz.conf': 'net.ipv4.conf.all.forwarding = 0\n',
    });
    const [from0, from1] = systemRuns(root, KEYS);
    expect(from0!['net.ipv4.conf.default.forwarding']).toBe('1');
    expect(from1!['net.ipv4.conf.default.forwarding']).toBe('0');
  });

  it('at boot, our line cancelled by a later "-key" and the key then turned off through a coupled key: both lines beat ours', async () => {
    const tree = await observe({
      [K8S]: 'net.ipv4.ip_forward = 1\n',
      '/etc/sysctl.d/zz-a.conf': '-net.ipv4.ip_forward\n',
      '/etc/sysctl.d/zz-b.conf': 'net.ipv4.conf.all.forwarding = 1\nnet.ipv4.conf.all.forwarding = 0\n',
    });
    // The key never holds 1 at boot: the cancelling line and the coupled write after it both stand in the way.
    expect(verdict(tree, 'net.ipv4.ip_forward', 'boot')).toMatchObject({ value: '0', via: 'coupled', through: 'net.ipv4.conf.all.forwarding' });
    expect(at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'boot'))).toEqual([
      '/etc/sysctl.d/zz-a.conf:1',
      '/etc/sysctl.d/zz-b.conf:2 via net.ipv4.conf.all.forwarding',
    ]);
    // systemd-sysctl from the boot value 0: removing both lines, and only both, makes the key come out 1.
    const bootIpForward = async (files: Record<string, string>) => {
      const root = await fixtureRoot(files);
      const script = [
        `mount --bind ${root}/etc/sysctl.d /etc/sysctl.d`,
        'mount --bind /dev/null /etc/sysctl.conf',
        `mount --bind ${root}/run /run`,
        `mount --bind ${root}/usr/local/lib /usr/local/lib`,
        `mount --bind ${root}/usr/lib/sysctl.d /usr/lib/sysctl.d`,
        'echo 0 > /proc/sys/net/ipv4/ip_forward',
        'SYSTEMD_LOG_LEVEL=err /lib/systemd/systemd-sysctl --prefix=net/ipv4 || true',
        'cat /proc/sys/net/ipv4/ip_forward',
      ].join(' && ');
      return execFileSync('unshare', ['-n', '-m', '--propagation', 'private', 'sh', '-c', script], { encoding: 'utf8' }).trim();
    };
    const ours = { [K8S]: 'net.ipv4.ip_forward = 1\n' };
    const a = { '/etc/sysctl.d/zz-a.conf': '-net.ipv4.ip_forward\n' };
    const b = { '/etc/sysctl.d/zz-b.conf': 'net.ipv4.conf.all.forwarding = 1\nnet.ipv4.conf.all.forwarding = 0\n' };
    expect(await bootIpForward({ ...ours, ...a, ...b })).toBe('0');
    expect(await bootIpForward({ ...ours, ...a })).toBe('0');
    expect(await bootIpForward({ ...ours, ...b })).toBe('0');
    expect(await bootIpForward(ours)).toBe('1');
  });
});

describe('a key only excluded, never written', () => {
  it("at boot two '-key' lines are one entry, kept at the first (streq_ptr on two NULLs)", async () => {
    const tree = await observe({
      '/etc/sysctl.d/10-a.conf': '-net.ipv4.conf.lo.rp_filter\n',
      '/etc/sysctl.d/20-b.conf': '-net.ipv4.conf.lo.rp_filter\n',
    });
    const boot = verdict(tree, 'net.ipv4.conf.lo.rp_filter', 'boot');
    expect(boot).toMatchObject({ value: null, via: 'excluded' });
    expect(boot.winner?.assignment.file).toBe('/etc/sysctl.d/10-a.conf');
    expect(verdict(tree, 'net.ipv4.conf.lo.rp_filter', 'system')).toMatchObject({ value: null, via: 'excluded' });
  });
});

// ---------------------------------------------------------------------------
// What "beats ours" means once the kernel's couplings come in, each case
// checked against the real programs: systemd-sysctl (boot, from the kernel's
// boot value) and procps `sysctl --system` (a running host, from both
// starting values), run in a fresh network + private mount namespace
// (`unshare -n -m`) over the fixture tree bind-mounted onto every directory
// they read. Only per-namespace net.ipv4 keys, and the programs are limited
// to them (--prefix / --pattern), so this machine's own sysctls are never
// written. The oracle decides which lines have to go: removing the lines the
// engine names, and only them, makes the key come out as wanted.
describe('a coupled write against systemd-sysctl and sysctl --system', () => {
  const roots: string[] = [];
  afterAll(async () => {
    for (const r of roots) await fs.rm(r, { recursive: true, force: true });
  });

  type Files = Tree;
  const K8S = '/etc/sysctl.d/k8s.conf';
  const DIRS = ['/etc/sysctl.d', '/run/sysctl.d', '/usr/local/lib/sysctl.d', '/usr/lib/sysctl.d'];

  async function fixture(files: Files): Promise<string> {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sysctl-coupled-'));
    roots.push(root);
    for (const d of DIRS) await fs.mkdir(path.join(root, d), { recursive: true });
    buildTree(root, files);
    return root;
  }

  async function observe(files: Files): Promise<SysctlTree> {
    return (await observeSysctlTree(new Host({ root: await fixture(files) }))).tree;
  }

  const proc = (k: string) => `/proc/sys/${k.replace(/\./g, '/')}`;

  /**
   * The real program over `files`, reading `key` afterwards. boot: systemd-sysctl
   * from the boot value 0 of the forwarding switch. system: sysctl --system from
   * every key at 0, then from every key at 1 (a running host's start is unknown).
   */
  async function program(model: SysctlModel, files: Files, key: string): Promise<string[]> {
    if (!key.startsWith('net.ipv4.')) throw new Error('only per-namespace keys');
    const root = await fixture(files);
    const mounts = [
      `mount --bind ${root}/etc/sysctl.d /etc/sysctl.d`,
      'mount --bind /dev/null /etc/sysctl.conf',
      `mount --bind ${root}/run /run`,
      `mount --bind ${root}/usr/local/lib /usr/local/lib`,
      `mount --bind ${root}/usr/lib/sysctl.d /usr/lib/sysctl.d`,
    ];
    const starts = model === 'boot' ? ['0'] : ['0', '1'];
    return starts.map((start) => {
      const run =
        model === 'boot'
          ? 'SYSTEMD_LOG_LEVEL=err /lib/systemd/systemd-sysctl --prefix=net/ipv4 || true'
          : "sysctl -q --system --pattern '^-?net[./]ipv4[./]' >/dev/null 2>&1 || true";
      // The switch first: writing it resets its followers, which then get the start too.
      const reset = ['net.ipv4.ip_forward', key].map((k) => `echo ${start} > ${proc(k)}`);
      const script = [...mounts, ...reset, run, `cat ${proc(key)}`].join(' && ');
      return execFileSync('unshare', ['-n', '-m', '--propagation', 'private', 'sh', '-c', script], { encoding: 'utf8' }).trim();
    });
  }

  /** `files` with the given lines (file:line) taken out, as commenting them out would. */
  function without(files: Files, lines: string[]): Files {
    const out: Files = {};
    for (const [p, text] of Object.entries(files)) {
      if (typeof text !== 'string') {
        out[p] = text;
        continue;
      }
      const kept = text.split('\n').map((l, i) => (lines.includes(`${p}:${i + 1}`) ? `# ${l}` : l));
      out[p] = kept.join('\n');
    }
    return out;
  }

  const at = (b: ReturnType<typeof beatingAssignments>) =>
    b.map((x) => `${x.applied.assignment.file}:${x.applied.assignment.line}${x.through ? ` via ${x.through}` : ''}`);
  const lineOf = (s: string) => s.split(' via ')[0]!;

  describe('a coupled write before our line does not beat it', () => {
    // 10-a turns the forwarding switch off through its other name, our line turns it on, zz turns it off again by name.
    const files: Files = {
      '/etc/sysctl.d/10-a.conf': 'net.ipv4.conf.all.forwarding = 0\n',
      [K8S]: 'net.ipv4.ip_forward = 1\n',
      '/etc/sysctl.d/zz.conf': 'net.ipv4.ip_forward = 0\n',
    };

    it('sysctl --system: only the later line by name beats ours; removing it alone gives 1 from any start', async () => {
      const tree = await observe(files);
      expect(verdict(tree, 'net.ipv4.ip_forward', 'system')).toMatchObject({ value: '0', via: 'explicit' });
      const beating = at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'system'));
      expect(beating).toEqual(['/etc/sysctl.d/zz.conf:1']);
      // The oracle: as it stands the key ends 0; with the named line gone it ends 1 whatever the host started from;
      // with only the earlier coupled line gone it still ends 0, so that line is no part of the answer.
      expect(await program('system', files, 'net.ipv4.ip_forward')).toEqual(['0', '0']);
      expect(await program('system', without(files, beating.map(lineOf)), 'net.ipv4.ip_forward')).toEqual(['1', '1']);
      expect(await program('system', without(files, ['/etc/sysctl.d/10-a.conf:1']), 'net.ipv4.ip_forward')).toEqual(['0', '0']);
    });

    it('boot: the same; zz.conf takes the key out of our place (a new value moves to the end), yet removing it alone gives 1', async () => {
      const tree = await observe(files);
      expect(verdict(tree, 'net.ipv4.ip_forward', 'boot')).toMatchObject({ value: '0', via: 'explicit' });
      const beating = at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', 'boot'));
      expect(beating).toEqual(['/etc/sysctl.d/zz.conf:1']);
      expect(await program('boot', files, 'net.ipv4.ip_forward')).toEqual(['0']);
      expect(await program('boot', without(files, beating.map(lineOf)), 'net.ipv4.ip_forward')).toEqual(['1']);
      expect(await program('boot', without(files, ['/etc/sysctl.d/10-a.conf:1']), 'net.ipv4.ip_forward')).toEqual(['0']);
    });
  });

  describe('a bare "-key" between our line and a later 0', () => {
    const files: Files = {
      [K8S]: 'net.ipv4.ip_forward = 1\n',
      '/etc/sysctl.d/zz-a.conf': '-net.ipv4.ip_forward\n',
      '/etc/sysctl.d/zz-b.conf': 'net.ipv4.ip_forward = 0\n',
    };
    for (const model of ['boot', 'system'] as const) {
      it(`${model}: removing the named lines gives 1 from any start, and no named line can stay`, async () => {
        const tree = await observe(files);
        const beating = at(beatingAssignments(tree, K8S, 'net.ipv4.ip_forward', '1', model));
        const starts = model === 'boot' ? 1 : 2;
        expect(await program(model, files, 'net.ipv4.ip_forward')).toEqual(Array(starts).fill('0'));
        expect(await program(model, without(files, beating.map(lineOf)), 'net.ipv4.ip_forward')).toEqual(Array(starts).fill('1'));
        // Each named line is needed: put any one back and the key no longer ends 1 from every start.
        for (const kept of beating) {
          const rest = beating.filter((b) => b !== kept).map(lineOf);
          expect(await program(model, without(files, rest), 'net.ipv4.ip_forward')).not.toEqual(Array(starts).fill('1'));
        }
        expect(beating.length).toBeGreaterThan(0);
      });
    }
  });

  describe('a good coupled write after our line, then a bad coupled one', () => {
    // Ours sets default.forwarding = 1; 50-b turns the switch on (a change: it sets default.forwarding to 1 too),
    // 60-c turns it off again (a change: default.forwarding follows to 0).
    const files: Files = {
      '/etc/sysctl.d/10-k8s.conf': 'net.ipv4.conf.default.forwarding = 1\n',
      '/etc/sysctl.d/50-b.conf': 'net.ipv4.ip_forward = 1\n',
      '/etc/sysctl.d/60-c.conf': 'net.ipv4.conf.all.forwarding = 0\n',
    };
    const OURS = '/etc/sysctl.d/10-k8s.conf';
    const KEY = 'net.ipv4.conf.default.forwarding';

    for (const model of ['boot', 'system'] as const) {
      it(`${model}: the last coupled write beats ours, the one that agreed does not`, async () => {
        const tree = await observe(files);
        expect(verdict(tree, KEY, model)).toMatchObject({ value: '0', via: 'coupled', through: 'net.ipv4.conf.all.forwarding' });
        const beating = at(beatingAssignments(tree, OURS, KEY, '1', model));
        expect(beating).toEqual(['/etc/sysctl.d/60-c.conf:1 via net.ipv4.conf.all.forwarding']);
        const starts = model === 'boot' ? 1 : 2;
        expect(await program(model, files, KEY)).toEqual(Array(starts).fill('0'));
        expect(await program(model, without(files, beating.map(lineOf)), KEY)).toEqual(Array(starts).fill('1'));
      });
    }
  });

  describe('where our file must live to be read at all (ownedFileProblem), against both programs', () => {
    const ON = 'net.ipv4.ip_forward = 1\n';
    const cases: Array<{ owned: string; files: Files; boot: string | null; system: string | null }> = [
      {
        owned: '/etc/sysctl.d/.k8s.conf',
        files: { '/etc/sysctl.d/.k8s.conf': ON },
        boot: '/etc/sysctl.d/.k8s.conf is a hidden file, which systemd-sysctl skips',
        system: null,
      },
      {
        owned: '/etc/sysctl.d/k8s.conf.bak',
        files: { '/etc/sysctl.d/k8s.conf.bak': ON },
        boot: '/etc/sysctl.d/k8s.conf.bak does not end in .conf, so it is never read',
        system: '/etc/sysctl.d/k8s.conf.bak does not end in .conf, so it is never read',
      },
      {
        owned: '/run/sysctl.d/k8s.conf',
        files: { '/run/sysctl.d/k8s.conf': ON, '/etc/sysctl.d/k8s.conf': { link: '/dev/null' } },
        boot: '/run/sysctl.d/k8s.conf is shadowed by /etc/sysctl.d/k8s.conf (a mask), which has the same name in a higher-precedence directory',
        system: '/run/sysctl.d/k8s.conf is shadowed by /etc/sysctl.d/k8s.conf (a mask), which has the same name in a higher-precedence directory',
      },
      {
        owned: '/usr/lib/sysctl.d/k8s.conf',
        files: { '/usr/lib/sysctl.d/k8s.conf': ON, '/etc/sysctl.d/k8s.conf': '# the admin took it out\n' },
        boot: '/usr/lib/sysctl.d/k8s.conf is shadowed by /etc/sysctl.d/k8s.conf, which has the same name in a higher-precedence directory',
        system: '/usr/lib/sysctl.d/k8s.conf is shadowed by /etc/sysctl.d/k8s.conf, which has the same name in a higher-precedence directory',
      },
      { owned: '/usr/local/lib/sysctl.d/k8s.conf', files: { '/usr/local/lib/sysctl.d/k8s.conf': ON }, boot: null, system: null },
    ];
    for (const c of cases) {
      it(`${c.owned}: a problem exactly where the program leaves ip_forward alone`, async () => {
        const tree = await observe(c.files);
        for (const model of ['boot', 'system'] as const) {
          expect(ownedFileProblem(tree, c.owned, model), model).toBe(c[model]);
          // The oracle: from 0 (and, for sysctl --system, also from 1) the key ends 1 only when the file is read.
          const ends = await program(model, c.files, 'net.ipv4.ip_forward');
          const read = model === 'boot' ? ends[0] === '1' : ends.every((v) => v === '1');
          expect(read, `${model}: ${ends.join(',')}`).toBe(c[model] === null);
        }
      });
    }

    it('a path outside every sysctl.d directory is named with the directories that are read', async () => {
      const tree = await observe({ '/etc/sysctl/k8s.conf': ON });
      for (const model of ['boot', 'system'] as const) {
        expect(ownedFileProblem(tree, '/etc/sysctl/k8s.conf', model)).toBe(
          '/etc/sysctl/k8s.conf is not in a sysctl.d directory (/etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d, /usr/lib/sysctl.d, /lib/sysctl.d)',
        );
        expect(await program(model, { '/etc/sysctl/k8s.conf': ON }, 'net.ipv4.ip_forward')).toEqual(model === 'boot' ? ['0'] : ['0', '1']);
      }
    });
  });
});
