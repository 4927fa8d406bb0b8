// Drop-ins are applied in the order systemd itself uses; the oracle is
// systemd-analyze cat-config on the same fixture tree.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { loadUnitGraph } from '../../src/systemd/unit-loader.js';

const root = mkdtempSync(path.join(tmpdir(), 'dropins-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function put(rel: string, text: string) {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), text);
}

describe('drop-in order', () => {
  it('matches systemd-analyze cat-config, byte order across /etc and /usr/lib', async () => {
    put('usr/lib/systemd/system/agent.service', '[Service]\nExecStart=/usr/bin/agent\n');
    const names = ['Z.conf', 'a.conf', '10-y.conf', '10_x.conf', 'é.conf', 'B.conf'];
    for (const n of names) put(`etc/systemd/system/agent.service.d/${n}`, `[Service]\nEnvironment=FROM=${n}\n`);
    put('usr/lib/systemd/system/agent.service.d/5-vendor.conf', '[Service]\nEnvironment=FROM=vendor\n');
    put('usr/lib/systemd/system/agent.service.d/a.conf', '[Service]\nEnvironment=FROM=shadowed\n');
    const oracle = spawnSync('systemd-analyze', [`--root=${root}`, 'cat-config', 'systemd/system/agent.service'], { encoding: 'utf8' });
    expect(oracle.status).toBe(0);
    const expected = oracle.stdout
      .split('\n')
      .filter((l) => l.startsWith(`# ${root}/`))
      .map((l) => l.slice(2 + root.length));
    expect(expected).toHaveLength(names.length + 2);
    const unit = (await loadUnitGraph(new Host({ root }))).units.get('agent.service')!;
    const files = [...new Set(unit.directives.map((d) => d.file))];
    expect(files).toEqual(expected);
  });
});
