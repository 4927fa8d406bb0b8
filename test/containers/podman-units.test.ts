// Units `podman generate systemd` writes: ExecStart=/usr/bin/podman start NAME,
// or with --new: podman run --cidfile=... --rm -d --replace --name NAME IMAGE.
import { describe, expect, it } from 'vitest';
import { podmanTarget, podmanUnitsFor } from '../../src/containers/podman-units.js';
import { idOf, treeHost } from '../helpers/container-tree.js';

describe('podmanTarget', () => {
  it("names start's operand and run's --name, and nothing for other commands", () => {
    expect(podmanTarget(['/usr/bin/podman', 'start', 'web'])).toBe('web');
    expect(podmanTarget(['/usr/bin/podman', '--log-level=info', 'start', '--attach', 'web'])).toBe('web');
    expect(podmanTarget(['/usr/bin/podman', 'run', '--cidfile=%t/%n.ctr-id', '--rm', '-d', '--replace', '--name', 'web', 'img'])).toBe('web');
    expect(podmanTarget(['/usr/bin/podman', 'run', '--name=web', 'img'])).toBe('web');
    expect(podmanTarget(['/usr/bin/podman', 'run', 'img'])).toBeNull();
    expect(podmanTarget(['/usr/bin/podman', 'stop', 'web'])).toBeNull();
    expect(podmanTarget(['/usr/bin/docker', 'start', 'web'])).toBeNull();
  });
});

describe('podmanUnitsFor', () => {
  it('finds the /etc/systemd/system services whose ExecStart= starts the container by name or id, with the line', async () => {
    const id = idOf('ab');
    const fs = treeHost({
      'etc/systemd/system/container-web.service': '[Unit]\nDescription=web\n[Service]\nExecStart=/usr/bin/podman \\\n  start web\n',
      'etc/systemd/system/by-id.service': `[Service]\nExecStart=/usr/bin/podman start ${id.slice(0, 12)}\n`,
      'etc/systemd/system/other.service': '[Service]\nExecStart=/usr/bin/podman start webby\n',
      'etc/systemd/system/reset.service': '[Service]\nExecStart=/usr/bin/podman start web\nExecStart=\nExecStart=/bin/true\n',
    });
    const r = await podmanUnitsFor(fs, 'web', id);
    expect(r).toEqual({
      units: [
        { unit: 'by-id.service', file: '/etc/systemd/system/by-id.service', line: 2 },
        { unit: 'container-web.service', file: '/etc/systemd/system/container-web.service', line: 4 },
      ],
      unreadable: [],
    });
  });
});
