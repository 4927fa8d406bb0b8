// Which kernel modules are present: /proc/modules (name first on each line),
// modules.builtin (paths of built-in modules, depmod(8)), /sys/module/NAME.
// kmod treats "-" and "_" in a name alike.
import { describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { liveFixtureHosts } from '../helpers/live-fixture-host.js';

/** Live hosts over fixture roots holding `files`, and an empty folder for an image host. */
const { live, work } = liveFixtureHosts('observe-');
import { canonicalModuleName, moduleStates, parseModulesBuiltin, parseProcModules } from '../../src/observe/modules.js';

describe('modules', () => {
  it('parses /proc/modules and treats - and _ alike', () => {
    const s = parseProcModules('br_netfilter 32768 0 - Live 0x0\nbridge 311296 1 br_netfilter, Live 0x0\noverlay 163840 0 - Live 0x0\n');
    expect([...s].sort()).toEqual(['br_netfilter', 'bridge', 'overlay']);
    expect(canonicalModuleName('br-netfilter')).toBe('br_netfilter');
  });
  it('parses modules.builtin paths', () => {
    const s = parseModulesBuiltin('kernel/fs/overlayfs/overlay.ko\nkernel/net/bridge/br_netfilter.ko.xz\n');
    expect(s.has('overlay')).toBe(true);
    expect(s.has('br_netfilter')).toBe(true);
  });
});

describe('moduleStates', () => {
  it("without the running kernel's release no module counts as built in", async () => {
    const host = live({ 'proc/modules': '', 'lib/modules/6.1.0/modules.builtin': 'kernel/fs/overlayfs/overlay.ko\n' });
    expect(await moduleStates(host, ['overlay'], null)).toEqual([{ name: 'overlay', loaded: false, builtin: false }]);
    expect(await moduleStates(host, ['overlay'], '6.1.0')).toEqual([{ name: 'overlay', loaded: true, builtin: true }]);
  });
  it('reads the release itself when not given one, and names modules canonically', async () => {
    const host = live({ 'proc/sys/kernel/osrelease': '6.1.0\n', 'proc/modules': 'br_netfilter 32768 0 - Live 0x0\n', 'lib/modules/6.1.0/modules.builtin': '' });
    expect(await moduleStates(host, ['br-netfilter', 'overlay'])).toEqual([
      { name: 'br_netfilter', loaded: true, builtin: false },
      { name: 'overlay', loaded: false, builtin: false },
    ]);
  });
  it('refuses an image', async () => {
    await expect(moduleStates(new Host({ root: work }), ['overlay'])).rejects.toThrow(/module state needs a running host/);
  });
});
