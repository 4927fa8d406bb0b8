// The links under /etc/systemd/system come back in byte order (what `LC_ALL=C ls`
// and systemd's own strcmp-sorted directory reads give), never in a locale's
// collation: "Zeta" (0x5A) sorts before "alpha" (0x61), and "a-b" (0x2D) before "a.b" (0x2E)
// before "a_b" (0x5F), whatever the locale says.
import { afterEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { readConfigLinks } from '../../src/systemd/unit-links.js';

const roots: string[] = [];
afterEach(async () => {
  for (const r of roots.splice(0)) await fs.rm(r, { recursive: true, force: true });
});

describe('readConfigLinks', () => {
  it('lists links in byte order, not a locale collation', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'links-order-'));
    roots.push(root);
    const wants = path.join(root, 'etc/systemd/system/multi-user.target.wants');
    await fs.mkdir(wants, { recursive: true });
    await fs.mkdir(path.join(root, 'usr/lib/systemd/system'), { recursive: true });
    for (const name of ['alpha.service', 'Zeta.service', 'a_b.service', 'a.b.service', 'a-b.service']) {
      await fs.writeFile(path.join(root, 'usr/lib/systemd/system', name), '[Service]\nExecStart=/bin/true\n');
      await fs.symlink(`/usr/lib/systemd/system/${name}`, path.join(wants, name));
    }
    const links = await readConfigLinks(new Host({ root }));
    expect(links.map((l) => l.name)).toEqual(['Zeta.service', 'a-b.service', 'a.b.service', 'a_b.service', 'alpha.service']);
  });

  it('orders whole paths, so a link whose name extends a directory name with a byte below "/" comes before that directory\'s links', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'links-order-'));
    roots.push(root);
    const etc = path.join(root, 'etc/systemd/system');
    await fs.mkdir(path.join(etc, 'x.target.wants'), { recursive: true });
    await fs.symlink('/usr/lib/systemd/system/a.service', path.join(etc, 'x.target.wants/a.service'));
    await fs.symlink('/usr/lib/systemd/system/b.service', path.join(etc, 'x.target.wants-old.service'));
    await fs.symlink('/usr/lib/systemd/system/c.service', path.join(etc, 'x.target.wants.service'));
    const links = await readConfigLinks(new Host({ root }));
    // "-" (0x2D) and "." (0x2E) sort before "/" (0x2F).
    expect(links.map((l) => l.path)).toEqual([
      '/etc/systemd/system/x.target.wants-old.service',
      '/etc/systemd/system/x.target.wants.service',
      '/etc/systemd/system/x.target.wants/a.service',
    ]);
  });
});
