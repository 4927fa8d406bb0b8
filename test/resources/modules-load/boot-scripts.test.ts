// What a boot script can do to ModulesLoad (modules-load/boot-scripts.ts):
// remove a wanted module. The lines are read by the real boot-script scan
// from an rc.local on a fixture root (systemd-rc-local-generator runs an
// executable /etc/rc.local at boot); the concern judges each hit it gets.
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../../src/host.js';
import { scanBootScripts, type BootScriptHit } from '../../../src/boot-scripts/scan.js';
import { modulesConcern } from '../../../src/resources/modules-load/boot-scripts.js';
import { buildTree } from '../../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});
async function hits(rcLocal: string): Promise<BootScriptHit[]> {
  const root = mkdtempSync(path.join(tmpdir(), 'modules-concern-'));
  roots.push(root);
  buildTree(root, { 'etc/rc.local': rcLocal });
  chmodSync(path.join(root, 'etc/rc.local'), 0o755);
  return (await scanBootScripts(new Host({ root, live: false }))).hits;
}
const spec = { type: 'ModulesLoad', modules: ['br_netfilter', 'overlay'] };

describe('modulesConcern', () => {
  it('a modprobe -r or rmmod of a wanted module removes it, named with its program; another module does not', async () => {
    const h = await hits('#!/bin/sh\nmodprobe -r br-netfilter\nrmmod overlay\nrmmod nf_tables\nexit 0\n');
    const judged = h.map((x) => [x.line, modulesConcern.judge(spec, x, undefined)]);
    expect(judged.filter(([, j]) => j !== null)).toEqual([
      [2, expect.stringMatching(/^removes br_netfilter \(/)],
      [3, expect.stringMatching(/^removes overlay \(/)],
    ]);
    expect(judged.find(([l]) => l === 4)?.[1] ?? null).toBeNull();
  });

  it("withdraws the removed module's promise at boot; asked without a line, every wanted module's", async () => {
    const [h] = await hits('#!/bin/sh\nrmmod overlay\n');
    expect(modulesConcern.withdraws(spec, h!)).toEqual([{ promise: 'module:overlay', from: 'boot' }]);
    expect(modulesConcern.withdraws(spec, null)).toEqual([
      { promise: 'module:br_netfilter', from: 'boot' },
      { promise: 'module:overlay', from: 'boot' },
    ]);
  });

  it('other lines are not its concern: a swapon judged null, and withdraws nothing', async () => {
    const [h] = await hits('#!/bin/sh\nswapon /swapfile\n');
    expect(h!.action.kind).toBe('swapon');
    expect(modulesConcern.judge(spec, h!, undefined)).toBeNull();
    expect(modulesConcern.withdraws(spec, h!)).toEqual([]);
  });

  it('the marker a neutralised line gets says why', () => {
    expect(modulesConcern.marker(spec)).toContain('this line would remove a module Kubernetes needs');
  });
});
