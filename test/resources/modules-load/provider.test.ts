import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyContext, openDoor } from '../../helpers/door.js';
import { existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host, type CommandRunner } from '../../../src/host.js';
import type { ModulesLoadSpec } from '../../../src/resources/modules-load/spec.js';
import { applyModules, diffModules, modulesLoadProvider } from '../../../src/resources/modules-load/provider.js';
import { observeModules, type ModulesObserved } from '../../../src/modprobe/observe.js';
import { MODPROBE_MARKER } from '../../../src/modprobe/modprobe-d.js';
import { PROVIDERS } from '../../../src/resources/index.js';
import { buildTree, type Tree } from '../../helpers/tree.js';

const SPEC: ModulesLoadSpec = { type: 'ModulesLoad', file: '/etc/modules-load.d/k8s.conf', modules: ['overlay', 'br_netfilter'] };
const RUN = '/var/backups/test';
const BACKUPS = `${RUN}/backup`;

// A previous admin's hardening file: the br_netfilter blacklist sits among lines that must stay.
const HARDENING = '# CIS hardening\ninstall cramfs /bin/false\nblacklist cramfs\nblacklist br_netfilter\noptions snd slots=1';
const VENDOR = '# shipped by a package\ninstall overlay /bin/true\nblacklist pcspkr\n';

let root: string;
const build = (files: Tree): void => buildTree(root, files);
const read = (p: string) => readFileSync(path.join(root, p), 'utf8');
const pending = <T extends { action: string }>(cs: T[]) => cs.filter((c) => c.action !== 'deferred');

function usedHost(): void {
  build({
    'etc/modprobe.d/hardening.conf': HARDENING,
    'usr/lib/modprobe.d/vendor.conf': VENDOR,
    'etc/modules': '# /etc/modules\noverlay\n',
    'etc/modules-load.d/modules.conf': { link: '../modules' },
  });
}

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'modules-test-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('ModulesLoad offline (fixture root)', () => {
  it('is registered', () => {
    expect(PROVIDERS.ModulesLoad).toBe(modulesLoadProvider);
  });

  it('observes blockers in all modprobe.d directories and other modules-load.d files', async () => {
    usedHost();
    const o = await observeModules(new Host({ root }), SPEC);
    expect(o.states).toBeNull();
    expect(o.file).toEqual({ path: SPEC.file, content: null, link: null });
    expect(o.blockerFiles.map((b) => [b.source, b.target, b.blockers.map((x) => `${x.kind} ${x.module}`)])).toEqual([
      ['/etc/modprobe.d/hardening.conf', '/etc/modprobe.d/hardening.conf', ['blacklist br_netfilter']],
      ['/usr/lib/modprobe.d/vendor.conf', '/etc/modprobe.d/vendor.conf', ['install overlay']],
    ]);
    expect(o.alsoListedIn).toEqual([{ module: 'overlay', files: ['/etc/modules-load.d/modules.conf'] }]);
  });

  it('plans blocker fixes, the file, and a deferred first-boot load', async () => {
    usedHost();
    const changes = diffModules(SPEC, await observeModules(new Host({ root }), SPEC), { live: false });
    expect(changes.map((c) => [c.id, c.action])).toEqual([
      ['modprobe.d:/etc/modprobe.d/hardening.conf', 'update'],
      ['modprobe.d:/etc/modprobe.d/vendor.conf', 'create'],
      ['file:/etc/modules-load.d/k8s.conf', 'create'],
      ['modprobe:first-boot', 'deferred'],
    ]);
    expect(changes.some((c) => c.runtime)).toBe(false);
    expect(changes[2]!.file).toEqual({ path: SPEC.file, before: null, after: 'overlay\nbr_netfilter\n' });
    expect(changes[0]!.summary).toContain('blacklist br_netfilter');
    expect(changes[1]!.summary).toContain('override /usr/lib/modprobe.d/vendor.conf');
  });

  it('converges: apply then observe again leaves only the deferred note; other bytes and backups kept', async () => {
    usedHost();
    const calls: string[] = [];
    const runner: CommandRunner = async (cmd, args) => {
      calls.push([cmd, ...args].join(' '));
      return { command: cmd, exitCode: 0, stdout: '', stderr: '' };
    };
    const host = new Host({ root, runner });
    const changes = diffModules(SPEC, await observeModules(host, SPEC), { live: false });
    await modulesLoadProvider.apply(host, SPEC, changes, await applyContext(host, RUN));

    expect(read('etc/modules-load.d/k8s.conf')).toBe('overlay\nbr_netfilter\n');
    // Only the blacklist line changed; the rest, including the missing final newline, is identical.
    expect(read('etc/modprobe.d/hardening.conf')).toBe(
      `# CIS hardening\ninstall cramfs /bin/false\nblacklist cramfs\n${MODPROBE_MARKER}\n#blacklist br_netfilter\noptions snd slots=1`,
    );
    // Vendor file untouched; a same-named /etc copy overrides it.
    expect(read('usr/lib/modprobe.d/vendor.conf')).toBe(VENDOR);
    const override = read('etc/modprobe.d/vendor.conf');
    expect(override).toContain(`${MODPROBE_MARKER}\n#install overlay /bin/true\nblacklist pcspkr\n`);
    expect(read('etc/modules')).toBe('# /etc/modules\noverlay\n');

    expect(read(path.join(BACKUPS, 'etc/modprobe.d/hardening.conf'))).toBe(HARDENING);
    expect(calls).toEqual([]);

    const again = diffModules(SPEC, await observeModules(new Host({ root }), SPEC), { live: false });
    expect(pending(again)).toEqual([]);
    expect(again.map((c) => c.id)).toEqual(['modprobe:first-boot']);
  });

  it('rewrites a file with other content to exactly one module per line', async () => {
    build({ 'etc/modules-load.d/k8s.conf': 'overlay\n' });
    const host = new Host({ root });
    const changes = pending(diffModules(SPEC, await observeModules(host, SPEC), { live: false }));
    expect(changes.map((c) => [c.id, c.action, c.file?.before])).toEqual([['file:/etc/modules-load.d/k8s.conf', 'update', 'overlay\n']]);
    await applyModules(host, changes, await openDoor(host, RUN));
    expect(read('etc/modules-load.d/k8s.conf')).toBe('overlay\nbr_netfilter\n');
    expect(read(path.join(BACKUPS, 'etc/modules-load.d/k8s.conf'))).toBe('overlay\n');
  });

  it('replaces a /dev/null mask on its own file instead of writing through it', async () => {
    build({ 'etc/modules-load.d/k8s.conf': { link: '/dev/null' } });
    const host = new Host({ root });
    const o = await observeModules(host, SPEC);
    expect(o.file).toEqual({ path: SPEC.file, content: null, link: '/dev/null' });
    await applyModules(host, diffModules(SPEC, o, { live: false }), await openDoor(host, RUN));
    expect(lstatSync(path.join(root, 'etc/modules-load.d/k8s.conf')).isFile()).toBe(true);
    expect(read('etc/modules-load.d/k8s.conf')).toBe('overlay\nbr_netfilter\n');
    expect(existsSync(path.join(root, 'dev/null'))).toBe(false);
    expect(readlinkSync(path.join(root, BACKUPS, 'etc/modules-load.d/k8s.conf'))).toBe('/dev/null');
    expect(pending(diffModules(SPEC, await observeModules(host, SPEC), { live: false }))).toEqual([]);
  });

  it('replaces its own file when it links to another file, leaving that file alone', async () => {
    build({ 'etc/modules': 'loop\n', 'etc/modules-load.d/k8s.conf': { link: '../modules' } });
    const host = new Host({ root });
    await applyModules(host, diffModules(SPEC, await observeModules(host, SPEC), { live: false }), await openDoor(host, RUN));
    expect(read('etc/modules')).toBe('loop\n');
    expect(read('etc/modules-load.d/k8s.conf')).toBe('overlay\nbr_netfilter\n');
  });

  it("neutralises a no-op install line of a dependency from any installed kernel's modules.dep", async () => {
    build({
      'lib/modules/6.1.0-28-amd64/modules.dep': 'kernel/net/bridge/br_netfilter.ko: kernel/net/bridge/bridge.ko kernel/net/802/stp.ko kernel/net/llc/llc.ko\n',
      'etc/modprobe.d/nobridge.conf': 'install bridge /bin/false\nblacklist stp\n',
    });
    const host = new Host({ root });
    const changes = diffModules(SPEC, await observeModules(host, SPEC), { live: false });
    const fix = changes.find((c) => c.id === 'modprobe.d:/etc/modprobe.d/nobridge.conf')!;
    expect(fix.summary).toContain('a dependency of br_netfilter');
    expect(fix.file!.after).toBe(`${MODPROBE_MARKER}\n#install bridge /bin/false\nblacklist stp\n`);
    await applyModules(host, changes, await openDoor(host, RUN));
    expect(pending(diffModules(SPEC, await observeModules(host, SPEC), { live: false }))).toEqual([]);
  });

  it('ignores vendor blockers masked or overridden from /etc', async () => {
    build({
      'usr/lib/modprobe.d/a.conf': 'blacklist br_netfilter\n',
      'etc/modprobe.d/a.conf': { link: '/dev/null' },
      'lib/modprobe.d/b.conf': 'install overlay /bin/false\n',
      'run/modprobe.d/b.conf': '# fixed\n',
    });
    const o = await observeModules(new Host({ root }), SPEC);
    expect(o.blockerFiles).toEqual([]);
  });

  it('turns a blocker file in /etc that links to a vendor file into a regular file', async () => {
    build({
      'usr/share/hardening/k.conf': 'blacklist br-netfilter\n',
      'etc/modprobe.d/k.conf': { link: '/usr/share/hardening/k.conf' },
    });
    const host = new Host({ root });
    await applyModules(host, diffModules(SPEC, await observeModules(host, SPEC), { live: false }), await openDoor(host, RUN));
    expect(read('usr/share/hardening/k.conf')).toBe('blacklist br-netfilter\n');
    expect(lstatSync(path.join(root, 'etc/modprobe.d/k.conf')).isFile()).toBe(true);
    expect(read('etc/modprobe.d/k.conf')).toContain('#blacklist br-netfilter\n');
    expect(pending(diffModules(SPEC, await observeModules(host, SPEC), { live: false }))).toEqual([]);
  });
});

describe('ModulesLoad live branches (fake runner over a fixture tree)', () => {
  it('diff plans modprobe for each module not loaded, and no deferred note', () => {
    const observed: ModulesObserved = {
      live: true,
      states: [
        { name: 'overlay', loaded: true, builtin: false },
        { name: 'br_netfilter', loaded: false, builtin: false },
      ],
      kernelRelease: '6.1.0-test',
      file: { path: SPEC.file, content: 'overlay\nbr_netfilter\n', link: null },
      blockerFiles: [],
      alsoListedIn: [],
    };
    const changes = diffModules(SPEC, observed, { live: true });
    expect(changes.map((c) => [c.id, c.action, c.runtime])).toEqual([['modprobe:br_netfilter', 'runtime', true]]);
    expect(diffModules(SPEC, { ...observed, states: observed.states!.map((s) => ({ ...s, loaded: true })) }, { live: true })).toEqual([]);
  });

  it('apply neutralises blockers before modprobe, then observe again is clean', async () => {
    usedHost();
    build({
      'proc/modules': 'nf_conntrack 172032 0 - Live 0x0000000000000000\n',
      'proc/sys/kernel/osrelease': '6.1.0-test\n',
      'lib/modules/6.1.0-test/modules.builtin': 'kernel/fs/ext4/ext4.ko\n',
      'sys/module/overlay/refcnt': '0\n',
    });
    const seen: string[] = [];
    const runner: CommandRunner = async (cmd, args) => {
      const blocked = read('etc/modprobe.d/hardening.conf').includes('\nblacklist br_netfilter');
      const vendorOverridden = existsSync(path.join(root, 'etc/modprobe.d/vendor.conf'));
      seen.push(`${cmd} ${args.join(' ')} blocked=${blocked} overridden=${vendorOverridden}`);
      if (cmd === 'modprobe') writeFileSync(path.join(root, 'proc/modules'), `${args[0]} 32768 0 - Live 0x0\n`, { flag: 'a' });
      return { command: cmd, exitCode: 0, stdout: '', stderr: '' };
    };
    const host = new Host({ root, runner, live: true });
    const o = await observeModules(host, SPEC);
    expect(o.states).toEqual([
      { name: 'overlay', loaded: true, builtin: false },
      { name: 'br_netfilter', loaded: false, builtin: false },
    ]);
    const changes = diffModules(SPEC, o, { live: true });
    expect(changes.filter((c) => c.runtime).map((c) => c.id)).toEqual(['modprobe:br_netfilter']);
    await applyModules(host, changes, await openDoor(host, RUN));
    expect(seen).toEqual(['modprobe br_netfilter blocked=false overridden=true']);
    expect(diffModules(SPEC, await observeModules(host, SPEC), { live: true })).toEqual([]);
  });
});
