// What "beats ours" means once the kernel's couplings come in, each case
// checked against the real programs: systemd-sysctl (boot, from the kernel's
// boot value) and procps `sysctl --system` (a running host, from both
// starting values), run in a fresh network + private mount namespace
// (`unshare -n -m`) over the fixture tree bind-mounted onto every directory
// they read. Only per-namespace net.ipv4 keys, and the programs are limited
// to them (--prefix / --pattern), so this machine's own sysctls are never
// written. The oracle decides which lines have to go: removing the lines the
// engine names, and only them, makes the key come out as wanted.
import { afterAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../src/host.js';
import { observeSysctlTree } from '../src/sysctl/observe.js';
import { beatingAssignments, ownedFileProblem, verdict } from '../src/sysctl/order.js';
import type { SysctlModel, SysctlTree } from '../src/sysctl/order.js';
import { buildTree, type Tree } from './helpers/tree.js';

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
    const run = model === 'boot'
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

const at = (b: ReturnType<typeof beatingAssignments>) => b.map((x) => `${x.applied.assignment.file}:${x.applied.assignment.line}${x.through ? ` via ${x.through}` : ''}`);
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
      owned: '/etc/sysctl.d/.k8s.conf', files: { '/etc/sysctl.d/.k8s.conf': ON },
      boot: '/etc/sysctl.d/.k8s.conf is a hidden file, which systemd-sysctl skips', system: null,
    },
    {
      owned: '/etc/sysctl.d/k8s.conf.bak', files: { '/etc/sysctl.d/k8s.conf.bak': ON },
      boot: '/etc/sysctl.d/k8s.conf.bak does not end in .conf, so it is never read', system: '/etc/sysctl.d/k8s.conf.bak does not end in .conf, so it is never read',
    },
    {
      owned: '/run/sysctl.d/k8s.conf', files: { '/run/sysctl.d/k8s.conf': ON, '/etc/sysctl.d/k8s.conf': { link: '/dev/null' } },
      boot: '/run/sysctl.d/k8s.conf is shadowed by /etc/sysctl.d/k8s.conf (a mask), which has the same name in a higher-precedence directory',
      system: '/run/sysctl.d/k8s.conf is shadowed by /etc/sysctl.d/k8s.conf (a mask), which has the same name in a higher-precedence directory',
    },
    {
      owned: '/usr/lib/sysctl.d/k8s.conf', files: { '/usr/lib/sysctl.d/k8s.conf': ON, '/etc/sysctl.d/k8s.conf': '# the admin took it out\n' },
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
