// .swap unit files read with the one unit-file parser, with systemctl as the
// oracle: `systemctl --root DIR enable` links the unit exactly where its
// [Install] section (resets and continuations included) says.
import { afterAll, describe, expect, it } from 'vitest';
import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { buildTree } from './helpers/tree.js';
import { Host } from '../src/host.js';
import { readEnabledSwapUnits } from '../src/swap/units.js';

const roots: string[] = [];
// The links point at /etc/... of the image, absent here: look at the link itself.
const isLink = (p: string) => { try { return lstatSync(p).isSymbolicLink(); } catch { return false; } };
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
