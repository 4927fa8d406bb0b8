// The kernel command line's module blacklists.
// - libkmod's modprobe.blacklist=: the oracle is kmod itself. `modprobe -c`
//   prints the blacklist it builds, and reads /proc/cmdline for it; a private
//   mount namespace binds a test command line over /proc/cmdline, so kmod
//   reads ours and this machine's modules are never touched (-c only reads).
// - the kernel's module_blacklist=: what kernel/params.c (next_arg,
//   parse_args, parameq) and kernel/module/main.c (core_param charp,
//   blacklisted()) do; the qemu scenario swap-unit-cmdline boots with it.
// - GRUB's defaults are shell: the oracle is sh sourcing the same files as
//   grub-mkconfig does and printing "$GRUB_CMDLINE_LINUX $GRUB_CMDLINE_LINUX_DEFAULT".
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cmdlineBlocks, kernelBlacklist, kernelParams, kmodBlacklist } from '../../src/modprobe/kernel-cmdline.js';
import { expandValue, readBootCmdlines } from '../../src/modprobe/boot-cmdline.js';
import { Host } from '../../src/host.js';
import { buildTree } from '../helpers/tree.js';

const work = mkdtempSync(path.join(tmpdir(), 'kcmdline-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const canNamespace = spawnSync('unshare', ['-m', '--propagation', 'private', 'true']).status === 0 && spawnSync('modprobe', ['--version']).status === 0;

/** kmod's blacklist for `cmdline`, as `modprobe -c` prints it with no config files. */
function kmodOracle(cmdline: string): string[] {
  const file = path.join(work, 'cmdline');
  const empty = path.join(work, 'empty');
  mkdirSync(empty, { recursive: true });
  writeFileSync(file, cmdline + '\n');
  const out = execFileSync(
    'unshare',
    ['-m', '--propagation', 'private', 'sh', '-c', 'mount --bind "$1" /proc/cmdline && exec modprobe -c -C "$2"', 'sh', file, empty],
    { encoding: 'utf8' },
  );
  return out
    .split('\n')
    .filter((l) => l.startsWith('blacklist '))
    .map((l) => l.slice('blacklist '.length));
}

const KMOD_CASES = [
  'root=/dev/vda ro quiet modprobe.blacklist=br_netfilter',
  'modprobe.blacklist=br_netfilter,nfs quiet',
  'modprobe.blacklist=a modprobe.blacklist=b,,c',
  'modprobe.blacklist="br_netfilter,x" quiet',
  '"modprobe.blacklist=br_netfilter"',
  'quiet "x y" modprobe.blacklist=g\tmodprobe.blacklist=h',
  'modprobe-blacklist=i modprobe.blacklist.x=j Modprobe.blacklist=k modprobe.blacklist',
  'a=b"modprobe.blacklist=l m"  modprobe.blacklist=n -- modprobe.blacklist=o',
  'module_blacklist=br_netfilter modprobe.blacklist=br-netfilter',
  'x.y="a b" modprobe.blacklist=p"q" modprobe.blacklist=r',
];

describe.runIf(canNamespace)("libkmod's modprobe.blacklist= (oracle: modprobe -c over a bound /proc/cmdline)", () => {
  for (const c of KMOD_CASES) {
    it(JSON.stringify(c), () => {
      expect(kmodBlacklist(c).map((b) => b.entry)).toEqual(kmodOracle(c));
    });
  }
});

describe("the kernel's module_blacklist=", () => {
  it('splits as next_arg does: quotes group, a quote opening the value is removed, "--" ends the parameters', () => {
    expect(kernelParams('root=/dev/vda  module_blacklist="a,b" "x=y z" -- module_blacklist=c')).toEqual([
      { param: 'root', value: '/dev/vda', word: 'root=/dev/vda' },
      { param: 'module_blacklist', value: 'a,b', word: 'module_blacklist="a,b"' },
      { param: 'x', value: 'y z', word: '"x=y z"' },
    ]);
  });

  it('takes the last occurrence (a charp parameter), and module-blacklist= as the same name', () => {
    expect(kernelBlacklist('module_blacklist=br_netfilter quiet module_blacklist=nouveau')?.entries).toEqual(['nouveau']);
    expect(kernelBlacklist('module-blacklist=br_netfilter')?.entries).toEqual(['br_netfilter']);
    expect(kernelBlacklist('quiet -- module_blacklist=br_netfilter')).toBeNull();
  });

  it('stops a wanted module by its exact name, or a module it needs; libkmod only by the module itself', () => {
    const deps = new Map([['br_netfilter', ['bridge', 'stp', 'llc']]]);
    expect(cmdlineBlocks('module_blacklist=nfs,bridge', ['overlay', 'br_netfilter'], deps)).toEqual([
      { module: 'br_netfilter', entry: 'bridge', word: 'module_blacklist=nfs,bridge', kind: 'kernel', via: 'bridge' },
    ]);
    // blacklisted() compares names exactly: a dashed entry names no module.
    expect(cmdlineBlocks('module_blacklist=br-netfilter', ['br_netfilter'], deps)).toEqual([]);
    expect(cmdlineBlocks('modprobe.blacklist=bridge,overlay', ['overlay', 'br_netfilter'], deps)).toEqual([
      { module: 'overlay', entry: 'overlay', word: 'modprobe.blacklist=bridge,overlay', kind: 'kmod' },
    ]);
  });
});

/** What grub-mkconfig's shell makes of the files: sourced in its order, the default entry's command line. */
function shOracle(root: string): string {
  const d = path.join(root, 'etc/default/grub.d');
  const cfgs = (() => {
    try {
      return readdirSync(d)
        .filter((n) => n.endsWith('.cfg'))
        .sort();
    } catch {
      return [];
    }
  })();
  const script = [
    '. ./etc/default/grub',
    ...cfgs.map((n) => `. ./etc/default/grub.d/${n}`),
    'printf %s "$GRUB_CMDLINE_LINUX $GRUB_CMDLINE_LINUX_DEFAULT"',
  ].join('\n');
  return execFileSync('sh', ['-c', script], { cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
}

const STOCK_GRUB = [
  "# If you change this file, run 'update-grub' afterwards to update",
  'GRUB_DEFAULT=0',
  'GRUB_TIMEOUT=5',
  'GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`',
  'GRUB_CMDLINE_LINUX_DEFAULT="quiet"',
  'GRUB_CMDLINE_LINUX="module_blacklist=br_netfilter"',
  '',
].join('\n');

describe('the next boot: /etc/default/grub, grub.d and /etc/kernel/cmdline', () => {
  const cases: Array<{ name: string; files: Record<string, string>; blocked: string[] }> = [
    { name: 'stock Debian file with a blacklist in GRUB_CMDLINE_LINUX', files: { 'etc/default/grub': STOCK_GRUB }, blocked: ['br_netfilter'] },
    {
      name: 'a grub.d drop-in appending to the variable',
      files: {
        'etc/default/grub': 'GRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n',
        'etc/default/grub.d/50-hardening.cfg': 'GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} modprobe.blacklist=overlay,usb_storage"\n',
      },
      blocked: ['overlay'],
    },
    {
      name: 'a later drop-in replacing the kernel list (the last module_blacklist= wins)',
      files: {
        'etc/default/grub': "GRUB_CMDLINE_LINUX='module_blacklist=br_netfilter'\n",
        'etc/default/grub.d/90-gpu.cfg': 'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT module_blacklist=nouveau"\n',
      },
      blocked: [],
    },
    {
      name: 'export and a comment',
      files: { 'etc/default/grub': 'export GRUB_CMDLINE_LINUX="quiet module_blacklist=x,br_netfilter" # keep\n' },
      blocked: ['br_netfilter'],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const root = mkdtempSync(path.join(work, 'grub-'));
      buildTree(root, c.files);
      const read = await readBootCmdlines(new Host({ root }));
      expect(read.unknown).toEqual([]);
      const grub = read.cmdlines.find((x) => x.loader === 'grub')!;
      // The text the shell builds, word for word.
      expect(grub.text.split(/\s+/).filter(Boolean)).toEqual(shOracle(root).split(/\s+/).filter(Boolean));
      expect(cmdlineBlocks(grub.text, ['overlay', 'br_netfilter']).map((b) => b.module)).toEqual(c.blocked);
    });
  }

  it('names the file and line of the assignment that holds the entry', async () => {
    const root = mkdtempSync(path.join(work, 'grub-'));
    buildTree(root, { 'etc/default/grub': STOCK_GRUB, 'etc/kernel/cmdline': 'root=UUID=1 ro\nmodprobe.blacklist=br_netfilter\n' });
    const read = await readBootCmdlines(new Host({ root }));
    expect(read.cmdlines.map((c) => [c.loader, c.pieces.map((p) => `${p.file}:${p.line}`)])).toEqual([
      ['grub', ['/etc/default/grub:6', '/etc/default/grub:5']],
      ['kernel-install', ['/etc/kernel/cmdline:1', '/etc/kernel/cmdline:2']],
    ]);
    expect(read.searched).toEqual(['/etc/default/grub', '/etc/default/grub.d/*.cfg', '/etc/kernel/cmdline']);
  });

  it('an assignment it cannot evaluate is unknown, naming file and line; other variables do not matter', async () => {
    const root = mkdtempSync(path.join(work, 'grub-'));
    buildTree(root, {
      'etc/default/grub': STOCK_GRUB,
      'etc/default/grub.d/10-cloud.cfg': 'if [ -e /x ]; then\n  GRUB_CMDLINE_LINUX="a"\nfi\nGRUB_CMDLINE_LINUX_DEFAULT="$(cat /etc/extra)"\n',
    });
    const read = await readBootCmdlines(new Host({ root }));
    expect(read.unknown.map((u) => `${u.file}:${u.line}`)).toEqual(['/etc/default/grub.d/10-cloud.cfg:2', '/etc/default/grub.d/10-cloud.cfg:4']);
    expect(expandValue('"$A b"', new Map([['A', 'a']]))).toBe('a b');
    expect(expandValue('"${A:-x}"', new Map())).toBeNull();
  });
});
