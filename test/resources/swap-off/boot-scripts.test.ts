// What a boot script can do to SwapOff (swap-off/boot-scripts.ts): turn swap
// on again. The lines are read by the real boot-script scan from an rc.local
// on a fixture root; `swapon -a` is judged against /etc/fstab as the plan
// leaves it (swapon(8): every swap line of fstab but those with noauto).
// test/boot-scripts/swapon-fstab.test.ts runs the same through the bundle on
// open-iscsi's stock script.
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../../src/host.js';
import { scanBootScripts, type BootScriptHit } from '../../../src/boot-scripts/scan.js';
import { swapConcern } from '../../../src/resources/swap-off/boot-scripts.js';
import { buildTree, type Tree } from '../../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});
async function hits(rcLocal: string, more: Tree = {}): Promise<BootScriptHit[]> {
  const root = mkdtempSync(path.join(tmpdir(), 'swap-concern-'));
  roots.push(root);
  buildTree(root, { 'etc/rc.local': rcLocal, ...more });
  chmodSync(path.join(root, 'etc/rc.local'), 0o755);
  return (await scanBootScripts(new Host({ root, live: false }))).hits;
}
const spec = { type: 'SwapOff' };
const FSTAB = 'UUID=1 / ext4 defaults 0 1\n/swapfile none swap sw 0 0\n/dev/sdb2 none swap noauto 0 0\n';

describe('swapConcern', () => {
  it('a swapon naming a file turns swap on, whatever fstab says', async () => {
    const [h] = await hits('#!/bin/sh\nswapon /swapfile\n');
    expect(swapConcern.judge(spec, h!, undefined)).toBe('turns swap on (swapon /swapfile)');
  });

  it('swapon -a with the swap line fstab keeps: turned on, naming the line; a noauto line is not', async () => {
    const [h] = await hits('#!/bin/sh\nswapon -a\n', { 'etc/fstab': FSTAB });
    expect(swapConcern.judge(spec, h!, undefined)).toBe('turns swap on (swapon -a: /etc/fstab:2 /swapfile stays a swap line once this plan is applied)');
  });

  it("swapon -a after the plan's rewrite of fstab (its swap lines commented out) turns nothing on", async () => {
    const [h] = await hits('#!/bin/sh\nswapon -a\n', { 'etc/fstab': FSTAB });
    const planned = new Map([['/etc/fstab', 'UUID=1 / ext4 defaults 0 1\n#/swapfile none swap sw 0 0\n/dev/sdb2 none swap noauto 0 0\n']]);
    expect(swapConcern.judge(spec, h!, planned)).toBeNull();
  });

  it('swapon -a on an image without fstab turns nothing on', async () => {
    const [h] = await hits('#!/bin/sh\nswapon -a\n');
    expect(swapConcern.judge(spec, h!, undefined)).toBeNull();
  });

  it('other lines are not its concern; it withdraws swap:off at boot', async () => {
    const [h] = await hits('#!/bin/sh\nrmmod overlay\n');
    expect(swapConcern.judge(spec, h!, undefined)).toBeNull();
    expect(swapConcern.withdraws(spec, h!)).toEqual([{ promise: 'swap:off', from: 'boot' }]);
    expect(swapConcern.marker(spec)).toContain('swap disabled for Kubernetes (kubelet needs swap off)');
  });
});
