// observeModules: what ModulesLoad reads of a host, on fixture roots laid out
// as a used server. Expectations are worked from the formats' documentation:
// /proc/modules (name first), modules.builtin and modules.dep (depmod(8)),
// modprobe.d(5) and modules-load.d(5) (same-named files in earlier
// directories win, a link to /dev/null masks), and the kernel's
// module_blacklist= / libkmod's modprobe.blacklist= on the command line.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { observeModules, parseModulesLoad } from '../../src/modprobe/observe.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const SPEC = { file: '/etc/modules-load.d/k8s.conf', modules: ['overlay', 'br-netfilter', 'ext4'] };
const RELEASE = '6.1.0-test';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'modprobe-observe-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const KERNEL: Tree = {
  'proc/sys/kernel/osrelease': `${RELEASE}\n`,
  'proc/modules': 'overlay 163840 0 - Live 0x0000000000000000\nnf_conntrack 172032 0 - Live 0x0\n',
  'proc/cmdline': 'BOOT_IMAGE=/vmlinuz root=/dev/vda ro module_blacklist=bridge\n',
  [`lib/modules/${RELEASE}/modules.builtin`]: 'kernel/fs/ext4/ext4.ko\n',
  [`lib/modules/${RELEASE}/modules.dep`]:
    'kernel/net/bridge/br_netfilter.ko.xz: kernel/net/bridge/bridge.ko.xz kernel/net/802/stp.ko.xz kernel/net/llc/llc.ko.xz\nkernel/fs/overlayfs/overlay.ko.xz:\n',
  // An older kernel still installed: only the running one's modules.dep counts live.
  'lib/modules/5.10.0-old/modules.dep': 'kernel/net/bridge/br_netfilter.ko: kernel/net/nf_old.ko\n',
};

const CONFIG: Tree = {
  // Masked in /etc: the vendor file of the same name is not read.
  'etc/modprobe.d/masked.conf': { link: '/dev/null' },
  'usr/lib/modprobe.d/masked.conf': 'install overlay /bin/false\n',
  // An /etc entry that is a link: fixed by a regular file at the same path.
  'etc/modprobe.d/linked.conf': { link: '/usr/share/hardening/linked.conf' },
  'usr/share/hardening/linked.conf': 'install bridge /bin/true\n',
  // A vendor file with a blacklist: fixed by a same-named /etc override.
  'usr/lib/modprobe.d/vendor.conf': 'blacklist overlay\n',
  'etc/modprobe.d/unknown.conf': 'install br_netfilter /usr/local/sbin/load-bridge\n',
  'usr/lib/modprobe.d/old.conf': 'install nf_old /bin/false\n',
  'etc/modules-load.d/k8s.conf': { link: '/dev/null' },
  'usr/lib/modules-load.d/other.conf': '; listed by a package\nbr-netfilter\n',
  'usr/lib/modules-load.d/ignored.txt': 'overlay\n',
  'etc/modules-load.d/quiet.conf': { link: '/dev/null' },
  'usr/lib/modules-load.d/quiet.conf': 'overlay\n',
  'etc/default/grub': 'GRUB_CMDLINE_LINUX="quiet modprobe.blacklist=overlay"\n',
};

describe('parseModulesLoad', () => {
  it('one name a line, blanks trimmed, # and ; comments, - read as _', () => {
    expect(parseModulesLoad('# k8s\n  overlay  \n\n; x\nbr-netfilter\n')).toEqual(['overlay', 'br_netfilter']);
  });
});

describe('observeModules, live', () => {
  it("module state: /proc/modules, /sys/module, or built into the running kernel's modules.builtin", async () => {
    buildTree(root, { ...KERNEL, ...CONFIG });
    mkdirSync(path.join(root, 'sys/module/br_netfilter'), { recursive: true });
    const o = await observeModules(new Host({ root, live: true }), SPEC);
    expect(o.live).toBe(true);
    expect(o.kernelRelease).toBe(RELEASE);
    expect(o.states).toEqual([
      { name: 'overlay', loaded: true, builtin: false },
      { name: 'br_netfilter', loaded: true, builtin: false },
      { name: 'ext4', loaded: true, builtin: true },
    ]);
  });

  it('a module in none of them is not loaded', async () => {
    buildTree(root, { ...KERNEL, 'proc/modules': '' });
    const o = await observeModules(new Host({ root, live: true }), { file: SPEC.file, modules: ['br_netfilter'] });
    expect(o.states).toEqual([{ name: 'br_netfilter', loaded: false, builtin: false }]);
  });

  it('blocker files: masks skipped, a linked /etc entry replaced, a vendor file overridden in /etc; dependencies of the running kernel only', async () => {
    buildTree(root, { ...KERNEL, ...CONFIG });
    const o = await observeModules(new Host({ root, live: true }), SPEC);
    expect(
      o.blockerFiles.map((b) => ({
        source: b.source,
        target: b.target,
        replaceLink: b.replaceLink,
        targetContent: b.targetContent,
        blockers: b.blockers.map((x) => `${x.kind} ${x.module}`),
      })),
    ).toEqual([
      {
        source: '/etc/modprobe.d/linked.conf',
        target: '/etc/modprobe.d/linked.conf',
        replaceLink: true,
        targetContent: null,
        blockers: ['install bridge'],
      },
      {
        source: '/usr/lib/modprobe.d/vendor.conf',
        target: '/etc/modprobe.d/vendor.conf',
        replaceLink: false,
        targetContent: null,
        blockers: ['blacklist overlay'],
      },
    ]);
    expect(o.blockerFiles[0]!.sourceContent).toBe('install bridge /bin/true\n');
    expect(o.unjudged!.map((u) => [u.module, u.firstLine])).toEqual([['br_netfilter', 1]]);
  });

  it('our file masked: no content, the link named; other .conf files listing a wanted module, masks and other names left out', async () => {
    buildTree(root, { ...KERNEL, ...CONFIG });
    const o = await observeModules(new Host({ root, live: true }), SPEC);
    expect(o.file).toEqual({ path: SPEC.file, content: null, link: '/dev/null' });
    expect(o.alsoListedIn).toEqual([{ module: 'br_netfilter', files: ['/usr/lib/modules-load.d/other.conf'] }]);
  });

  it('the running command line and the next boot: the kernel stops br_netfilter through bridge, GRUB will stop overlay', async () => {
    buildTree(root, { ...KERNEL, ...CONFIG });
    const o = await observeModules(new Host({ root, live: true }), SPEC);
    expect(o.cmdline!.running!.text).toBe('BOOT_IMAGE=/vmlinuz root=/dev/vda ro module_blacklist=bridge');
    expect(o.cmdline!.running!.blocks.map((b) => [b.module, b.entry, b.kind])).toEqual([['br_netfilter', 'bridge', 'kernel']]);
    expect(o.cmdline!.loaders).toEqual(['grub']);
    expect(o.cmdline!.boot.map((b) => [b.loader, b.block.module, b.block.kind, b.piece?.file, b.piece?.line])).toEqual([
      ['grub', 'overlay', 'kmod', '/etc/default/grub', 1],
    ]);
    expect(o.cmdline!.unknown).toEqual([]);
  });

  it('a regular file of ours is read as it is; an /etc blocker file is fixed in place', async () => {
    buildTree(root, { ...KERNEL, 'etc/modules-load.d/k8s.conf': 'overlay\r\n', 'etc/modprobe.d/cis.conf': 'install overlay /bin/false\n' });
    const o = await observeModules(new Host({ root, live: true }), SPEC);
    expect(o.file).toEqual({ path: SPEC.file, content: 'overlay\r\n', link: null });
    expect(o.blockerFiles.map((b) => [b.source, b.target, b.replaceLink, b.targetContent])).toEqual([
      ['/etc/modprobe.d/cis.conf', '/etc/modprobe.d/cis.conf', false, 'install overlay /bin/false\n'],
    ]);
  });
});

describe('observeModules, offline (an image)', () => {
  it('reads no kernel state, and counts the dependencies of every installed kernel', async () => {
    buildTree(root, { ...KERNEL, ...CONFIG });
    const o = await observeModules(new Host({ root }), SPEC);
    expect(o.live).toBe(false);
    expect(o.states).toBeNull();
    expect(o.kernelRelease).toBeNull();
    expect(o.cmdline!.running).toBeNull();
    // The old kernel's br_netfilter needs nf_old, whose install line is a no-op: a blocker, which live it is not.
    expect(o.blockerFiles.map((b) => b.source)).toContain('/usr/lib/modprobe.d/old.conf');
    const live = await observeModules(new Host({ root, live: true }), SPEC);
    expect(live.blockerFiles.map((b) => b.source)).not.toContain('/usr/lib/modprobe.d/old.conf');
  });
});
