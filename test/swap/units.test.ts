// .swap unit files read with the one unit-file parser, with systemctl as the
// oracle: `systemctl --root DIR enable` links the unit exactly where its
// [Install] section (resets and continuations included) says.
import { afterAll, describe, expect, it } from 'vitest';
import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { buildTree } from '../helpers/tree.js';
import { Host } from '../../src/host.js';
import { readEnabledSwapUnits, scanSwapUnits } from '../../src/swap/units.js';
import { applySwap, diffSwap, observeSwap } from '../../src/resources/swap-off/provider.js';
import type { SwapOffSpec } from '../../src/resources/swap-off/spec.js';
import { ETC, LIB, NODEFAULT, oracle, oracleStarted, unitTree } from '../helpers/systemd-oracle.js';
import { openDoor } from '../helpers/door.js';

const roots: string[] = [];
// The links point at /etc/... of the image, absent here: look at the link itself.
const isLink = (p: string) => {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
};
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

const UNIT = [
  '[Unit]',
  'Description=extra swap',
  '[Swap]',
  'What=/swap-old',
  'What=/swap-extra',
  '[Install]',
  'WantedBy=multi-user.target',
  'WantedBy=',
  'WantedBy=swap.target \\',
  '  local-fs.target',
  '',
].join('\n');

describe('.swap unit files', () => {
  it('[Install] as systemctl enable reads it: an empty WantedBy= resets the list, a backslash continues the line', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'swap-units-'));
    roots.push(root);
    buildTree(root, { 'etc/systemd/system/swap\\x2dextra.swap': UNIT });
    const r = spawnSync('systemctl', ['--root', root, 'enable', 'swap\\x2dextra.swap'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const linkedUnder = readdirSync(path.join(root, 'etc/systemd/system'))
      .filter((d) => d.endsWith('.wants') && isLink(path.join(root, 'etc/systemd/system', d, 'swap\\x2dextra.swap')))
      .map((d) => d.slice(0, -'.wants'.length))
      .sort();
    // The enabled unit as SwapOff reads it from the tree systemctl just linked.
    const units = await readEnabledSwapUnits(new Host({ root }));
    expect(units.map((u) => [u.unit, u.kind, u.file])).toEqual([['swap\\x2dextra.swap', 'swap-unit', '/etc/systemd/system/swap\\x2dextra.swap']]);
    expect([...units[0]!.installedBy].sort()).toEqual(linkedUnder);
    expect(linkedUnder).toEqual(['local-fs.target', 'swap.target']);
    // What= is single-valued: the last assignment is the device.
    expect(units[0]!.what).toBe('/swap-extra');
  });
});

// A .swap unit starts at boot through whatever reaches it from
// default.target, not only swap.target. systemd's own loader (`systemd --test`,
// test/helpers/systemd-oracle.ts) says which swap units the boot starts, before
// SwapOff's plan is applied to the tree and after.
describe('swap units in the boot transaction (oracle: systemd --test)', () => {
  // systemd loads a .swap unit only when its name is the escaped What= path (else "bad-setting", and it never starts).
  const swapUnit = (what: string, install = '') => `${NODEFAULT}[Swap]\nWhat=${what}\n${install}`;
  const tree = (): string =>
    unitTree(roots, 'swap-graph-', {
      [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=sysinit.target\n`,
      [`${LIB}/sysinit.target`]: `${NODEFAULT}Wants=local-fs.target swap.target\n`,
      // A vendor unit linked under local-fs.target.wants in /usr/lib: disable cannot remove that link.
      [`${LIB}/dev-sdz7.swap`]: swapUnit('/dev/sdz7'),
      [`${LIB}/local-fs.target.wants/dev-sdz7.swap`]: { link: '../dev-sdz7.swap' },
      // Pulled in by Wants= of an enabled service.
      [`${LIB}/agent.service`]: `${NODEFAULT}Wants=dev-sdz8.swap\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n`,
      [`${ETC}/multi-user.target.wants/agent.service`]: { link: '../../../../usr/lib/systemd/system/agent.service' },
      [`${LIB}/dev-sdz8.swap`]: swapUnit('/dev/sdz8'),
      // Under swap.target only, by a vendor link: masking swap.target stops it.
      [`${LIB}/dev-sdz9.swap`]: swapUnit('/dev/sdz9'),
      [`${LIB}/swap.target.wants/dev-sdz9.swap`]: { link: '../dev-sdz9.swap' },
      // An admin's unit, enabled under local-fs.target: disable removes its only way in.
      [`${ETC}/swap\\x2dlocal.swap`]: swapUnit('/swap-local', '[Install]\nWantedBy=local-fs.target\n'),
      [`${ETC}/local-fs.target.wants/swap\\x2dlocal.swap`]: { link: '../swap\\x2dlocal.swap' },
      // Nothing reaches it.
      [`${LIB}/dev-sdz10.swap`]: swapUnit('/dev/sdz10'),
    });
  const startedSwaps = async (root: string) => [...oracleStarted(await oracle(root))].filter((u) => u.endsWith('.swap')).sort();

  it('finds every swap unit systemd starts at boot, through any dependency', async () => {
    const root = tree();
    const theirs = await startedSwaps(root);
    expect(theirs).toEqual(['dev-sdz7.swap', 'dev-sdz8.swap', 'dev-sdz9.swap', 'swap\\x2dlocal.swap']);
    const scan = await scanSwapUnits(new Host({ root }), { swapTargetMasked: false });
    expect(scan.unknown).toBeNull();
    expect(scan.units.filter((u) => u.reach !== null).map((u) => u.unit)).toEqual(theirs);
    expect(scan.units.find((u) => u.unit === 'dev-sdz7.swap')!.reach).toContain('local-fs.target');
    expect(scan.units.find((u) => u.unit === 'dev-sdz8.swap')!.reach).toContain(`Wants= at ${'/' + LIB}/agent.service:3`);
  });

  for (const mask of [true, false]) {
    it(`after SwapOff's plan (mask_swap_target: ${mask}) systemd starts no swap unit at boot, and a second plan is empty`, async () => {
      const root = tree();
      expect(await startedSwaps(root)).toHaveLength(4);
      const host = new Host({ root });
      const spec: SwapOffSpec = { type: 'SwapOff', mask_swap_target: mask, remove_swap_files: false };
      const changes = diffSwap(spec, await observeSwap(host, spec), { live: false });
      expect(changes.filter((c) => c.action === 'operator')).toEqual([]);
      await applySwap(host, changes, await openDoor(host));
      expect(await startedSwaps(root)).toEqual([]);
      expect(diffSwap(spec, await observeSwap(new Host({ root }), spec), { live: false })).toEqual([]);
    });
  }

  it('a unit whose own file is in /etc/systemd/system and is pulled in by another unit is an operator line naming the file', async () => {
    const root = unitTree(roots, 'swap-graph-', {
      [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=local-fs.target\n`,
      [`${LIB}/local-fs.target`]: `${NODEFAULT}Wants=swapmine.swap\n`,
      [`${ETC}/swapmine.swap`]: swapUnit('/swapmine'),
    });
    expect(await startedSwaps(root)).toEqual(['swapmine.swap']);
    const spec: SwapOffSpec = { type: 'SwapOff', mask_swap_target: true, remove_swap_files: false };
    const changes = diffSwap(spec, await observeSwap(new Host({ root }), spec), { live: false });
    const line = changes.find((c) => c.id === 'mask-unit:swapmine.swap')!;
    expect(line.action).toBe('operator');
    expect(line.operator).toContain('/etc/systemd/system/swapmine.swap');
    expect(line.summary).toContain(`Wants= at /${LIB}/local-fs.target:3`);
  });
});
