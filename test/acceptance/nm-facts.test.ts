// NetworkManager's facts read from an image's tree, offline: whether
// NetworkManager.service starts at boot (systemd --test on the same tree is
// the oracle), its configuration files in the directories NetworkManager.conf(5)
// names (*.conf only), and which copy of its veth udev rule udev(7) would read
// (/etc and /run shadow /lib).
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { Host } from '../../src/host.js';
import { readNetworkManager } from '../../src/acceptance/nm-facts.js';
import { ETC, LIB, oracle, oracleStarted, unitTree } from '../helpers/systemd-oracle.js';
import type { Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});
const UNIT = 'NetworkManager.service';
const NM_UNIT_FILE = `[Unit]\nDefaultDependencies=no\n[Service]\nExecStart=/usr/sbin/NetworkManager --no-daemon\n[Install]\nWantedBy=multi-user.target\n`;
const ENABLED: Tree = { [`${LIB}/${UNIT}`]: NM_UNIT_FILE, [`${ETC}/multi-user.target.wants/${UNIT}`]: { link: `../../../../${LIB}/${UNIT}` } };
const CONF: Tree = {
  'etc/NetworkManager/NetworkManager.conf': '[main]\nplugins=ifupdown,keyfile\n',
  'etc/NetworkManager/conf.d/calico.conf': '[keyfile]\nunmanaged-devices=interface-name:cali*\n',
  'etc/NetworkManager/conf.d/notes.txt': 'not read\n',
  'usr/lib/NetworkManager/conf.d/10-globally-managed-devices.conf': '[keyfile]\nunmanaged-devices=*,except:type:wifi\n',
  'lib/udev/rules.d/85-nm-unmanaged.rules': 'ENV{ID_NET_DRIVER}=="veth", ENV{NM_UNMANAGED}="1"\n',
};

async function read(files: Tree) {
  const root = unitTree(roots, 'nm-facts-', files);
  const started = oracleStarted(await oracle(root)).has(UNIT);
  return { facts: await readNetworkManager(new Host({ root, live: false })), started };
}

describe('readNetworkManager, offline', () => {
  it('no unit file: nothing runs, and nothing more is read', async () => {
    const { facts, started } = await read(CONF);
    expect(started).toBe(false);
    expect(facts).toEqual({
      known: true,
      value: { runs: null, active: { known: true, value: false }, main: null, dirs: {}, vethRule: { state: 'absent', file: '' } },
    });
  });
  it('enabled: it starts at boot as systemd says, with its main file, the *.conf files of each directory and the rule in force', async () => {
    const { facts, started } = await read({ ...ENABLED, ...CONF });
    expect(started).toBe(true);
    expect(facts.known).toBe(true);
    if (!facts.known) return;
    const v = facts.value;
    expect(v.runs).toEqual({ yes: true, how: `/usr/lib/systemd/system/${UNIT} starts at boot` });
    expect(v.active).toMatchObject({ known: false, reason: expect.stringContaining('offline') });
    expect(v.main).toEqual({ path: '/etc/NetworkManager/NetworkManager.conf', text: '[main]\nplugins=ifupdown,keyfile\n' });
    expect(v.dirs['/etc/NetworkManager/conf.d']!.map((f) => f.path)).toEqual(['/etc/NetworkManager/conf.d/calico.conf']);
    expect(v.dirs['/usr/lib/NetworkManager/conf.d']!.map((f) => f.path)).toEqual(['/usr/lib/NetworkManager/conf.d/10-globally-managed-devices.conf']);
    expect(v.vethRule).toEqual({ state: 'in force', file: '/lib/udev/rules.d/85-nm-unmanaged.rules' });
  });
  it("a copy of the rule in /etc/udev/rules.d shadows the package's; no copy anywhere is absent", async () => {
    const shadow = await read({ ...ENABLED, ...CONF, 'etc/udev/rules.d/85-nm-unmanaged.rules': '# local\n' });
    expect(shadow.facts.known && shadow.facts.value.vethRule).toEqual({ state: 'shadowed', file: '/etc/udev/rules.d/85-nm-unmanaged.rules' });
    const { 'lib/udev/rules.d/85-nm-unmanaged.rules': _, ...noRule } = CONF;
    const none = await read({ ...ENABLED, ...noRule });
    expect(none.facts.known && none.facts.value.vethRule).toEqual({ state: 'absent', file: '/lib/udev/rules.d/85-nm-unmanaged.rules' });
  });
  it('installed but not enabled, or masked: it does not run, as systemd says', async () => {
    const off = await read({ [`${LIB}/${UNIT}`]: NM_UNIT_FILE, ...CONF });
    expect(off.started).toBe(false);
    expect(off.facts).toMatchObject({ known: true, value: { runs: { yes: false, how: `/usr/lib/systemd/system/${UNIT} does not start at boot` } } });
    const masked = await read({ ...ENABLED, [`${ETC}/${UNIT}`]: { link: '/dev/null' }, ...CONF });
    expect(masked.started).toBe(false);
    expect(masked.facts).toMatchObject({ known: true, value: { runs: { yes: false } } });
  });
});
