// The kernel command line's module blacklists.
// - libkmod's modprobe.blacklist=: the oracle is kmod itself. `modprobe -c`
//   prints the blacklist it builds, and reads /proc/cmdline for it; a private
//   mount namespace binds a test command line over /proc/cmdline, so kmod
//   reads ours and this machine's modules are never touched (-c only reads).
// - the kernel's module_blacklist=: what kernel/params.c (next_arg,
//   parse_args, parameq) and kernel/module/main.c (core_param charp,
//   blacklisted()) do; the qemu scenario swap-unit-cmdline boots with it.
// Where the next boot's command line comes from: test/modprobe/boot-cmdline.test.ts.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cmdlineBlocks, kernelBlacklist, kernelParams, kmodBlacklist } from '../../src/modprobe/kernel-cmdline.js';

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
