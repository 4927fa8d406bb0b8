// zram-generator's configuration (zram-generator.conf(5)): the first main
// file that exists in /etc, /run, /usr/local/lib, /usr/lib; drop-ins in
// zram-generator.conf.d from all of them (a same-named /etc one first, then
// by name), later keys winning; a [zramN] section becomes swap unless it
// has a mount-point or a non-swap fs-type. Worked by hand from that page.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { parseZramConfig, readZramDevices } from '../../src/swap/zram.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const work = mkdtempSync(path.join(tmpdir(), 'zram-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function devices(files: Tree) {
  const root = mkdtempSync(path.join(work, 'root-'));
  buildTree(root, files);
  return readZramDevices(new Host({ root }));
}

describe('parseZramConfig', () => {
  it('sections and keys, blanks around "=" trimmed, # and ; comments, keys before any section dropped', () => {
    const c = parseZramConfig(
      'orphan = 1\n# c\n[zram0]\nzram-size = min(ram / 2, 4096)\n; c\n[ zram1 ]\nfs-type=ext4\n[zram0]\ncompression-algorithm = zstd\n',
    );
    expect([...c].map(([d, k]) => [d, [...k]])).toEqual([
      [
        'zram0',
        [
          ['zram-size', 'min(ram / 2, 4096)'],
          ['compression-algorithm', 'zstd'],
        ],
      ],
      ['zram1', [['fs-type', 'ext4']]],
    ]);
  });
});

describe('readZramDevices', () => {
  it('no file: no device', async () => {
    expect(await devices({})).toEqual([]);
  });

  it('the first main file wins; /usr/lib is not read beside /etc', async () => {
    expect(
      await devices({
        'etc/systemd/zram-generator.conf': '[zram1]\n',
        'usr/lib/systemd/zram-generator.conf': '[zram0]\n',
      }),
    ).toEqual([{ device: 'zram1', file: '/etc/systemd/zram-generator.conf', swap: true }]);
  });

  it('an /etc main file linked to /dev/null disables the vendor one', async () => {
    expect(
      await devices({
        'etc/systemd/zram-generator.conf': { link: '/dev/null' },
        'usr/lib/systemd/zram-generator.conf': '[zram0]\n',
      }),
    ).toEqual([]);
  });

  it('drop-ins change a device and add others; a mount point or another fs-type is no swap; other sections are no device', async () => {
    expect(
      await devices({
        'usr/lib/systemd/zram-generator.conf': '[zram0]\nzram-size = 512\n[zram2]\n[swap]\n',
        'usr/lib/systemd/zram-generator.conf.d/10-tmp.conf': '[zram1]\nmount-point = /var/tmp\n',
        'etc/systemd/zram-generator.conf.d/20-ext4.conf': '[zram2]\nfs-type = ext4\n',
        'usr/lib/systemd/zram-generator.conf.d/20-ext4.conf': '[zram2]\nfs-type = swap\n',
        'run/systemd/zram-generator.conf.d/30-masked.conf': { link: '/dev/null' },
        'usr/lib/systemd/zram-generator.conf.d/30-masked.conf': '[zram3]\n',
        'usr/lib/systemd/zram-generator.conf.d/40-back.conf': '[zram10]\nfs-type = swap\n',
      }),
    ).toEqual([
      { device: 'zram0', file: '/usr/lib/systemd/zram-generator.conf', swap: true },
      { device: 'zram1', file: '/usr/lib/systemd/zram-generator.conf.d/10-tmp.conf', swap: false },
      { device: 'zram10', file: '/usr/lib/systemd/zram-generator.conf.d/40-back.conf', swap: true },
      { device: 'zram2', file: '/etc/systemd/zram-generator.conf.d/20-ext4.conf', swap: false },
    ]);
  });
});
