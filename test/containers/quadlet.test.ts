// Rootful quadlets, hand-written from podman-systemd.unit(5): NAME.container in
// /run, /etc and /usr/share/containers/systemd (that order of precedence),
// [Container] ContainerName= (default systemd-%N), PublishPort=, Network=,
// and the [Install] targets the generator applies.
import { describe, expect, it } from 'vitest';
import { readQuadlets } from '../../src/containers/quadlet.js';
import { treeHost } from '../helpers/container-tree.js';

describe('readQuadlets', () => {
  it('reads each .container once, the highest directory winning, with its defaults and an empty PublishPort= resetting the list', async () => {
    const fs = treeHost({
      'usr/share/containers/systemd/web.container': '[Container]\nContainerName=vendor\n',
      'etc/containers/systemd/web.container':
        '[Container]\nImage=x\nPublishPort=80:80\nPublishPort=\nPublishPort=127.0.0.1:6443:6443/tcp\nNetwork=host\n[Install]\nWantedBy=multi-user.target\nRequiredBy=a.target b.target\n',
      'etc/containers/systemd/db.container': '# a comment\n[Container]\nContainerName=pg\n',
      'etc/containers/systemd/db.volume': '[Volume]\n',
    });
    expect(await readQuadlets(fs)).toEqual({
      quadlets: [
        { file: '/etc/containers/systemd/db.container', unit: 'db.service', containerName: 'pg', startedBy: [], publishPorts: [], network: null },
        {
          file: '/etc/containers/systemd/web.container',
          unit: 'web.service',
          containerName: 'systemd-web',
          startedBy: ['multi-user.target', 'a.target', 'b.target'],
          publishPorts: ['127.0.0.1:6443:6443/tcp'],
          network: 'host',
        },
      ],
      unreadable: [],
    });
  });

  it('a .container that cannot be read is named', async () => {
    const fs = treeHost({ 'etc/containers/systemd/bad.container/x': '' });
    expect(await readQuadlets(fs)).toEqual({ quadlets: [], unreadable: ['/etc/containers/systemd/bad.container'] });
  });
});
