// moby's on-disk container state read as data. The files are hand-written from
// moby's daemon/container/container.go (config.v2.json: the Container struct;
// hostconfig.json: api/types/container/hostconfig.go's HostConfig, whose
// PortBindings is nat.PortMap "PORT/PROTO" -> [{HostIp, HostPort}]).
import { describe, expect, it } from 'vitest';
import { readDockerContainer, resolveDockerId, dockerContainerIds } from '../../src/containers/docker-state.js';
import { idOf, treeHost } from '../helpers/container-tree.js';
import { Host } from '../../src/host.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Files dockerd itself wrote (test/fixtures/docker-20.10/README.md says how).
const RECORDED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/docker-20.10');
const RECORDED_ID = '11492d9ffa9a5aa161cb3f83fbac65c7853fcf9b84a4614af0f309bfbbca55f7';

const A = idOf('a1');
const B = idOf('a2');
const dir = (id: string) => `var/lib/docker/containers/${id}`;
const cfg = JSON.stringify({ ID: A, Name: '/web', Config: { Image: 'nginx:1.25' }, State: { Running: false, Pid: 0 } });

describe('readDockerContainer', () => {
  it("reads the files Debian's dockerd 20.10 wrote for docker run --name api6443 --restart=always -p 6443:6443 farm/busybox:1", async () => {
    const host = new Host({ root: RECORDED });
    expect(await dockerContainerIds(host)).toEqual([RECORDED_ID]);
    // What the docker run line asked for; "default" is the NetworkMode dockerd stores when no --network is given.
    expect(await readDockerContainer(host, RECORDED_ID)).toEqual({
      runtime: 'docker',
      id: RECORDED_ID,
      name: 'api6443',
      image: 'farm/busybox:1',
      running: false,
      pid: null,
      restart: 'always',
      networkMode: 'default',
      published: [{ port: 6443, proto: 'tcp', hostIp: '' }],
      unknown: [],
    });
  });

  it('reads name, image, state, restart policy, network mode and every published host port (a range too)', async () => {
    const hc = {
      RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 3 },
      NetworkMode: 'default',
      PortBindings: { '53/udp': [{ HostIp: '127.0.0.1', HostPort: '53' }], '80/tcp': [{ HostIp: '', HostPort: '8000-8002' }] },
    };
    const c = await readDockerContainer(treeHost({ [`${dir(A)}/config.v2.json`]: cfg, [`${dir(A)}/hostconfig.json`]: JSON.stringify(hc) }), A);
    expect(c).toEqual({
      runtime: 'docker',
      id: A,
      name: 'web',
      image: 'nginx:1.25',
      running: false,
      pid: null,
      restart: 'on-failure',
      networkMode: 'default',
      published: [
        { port: 53, proto: 'udp', hostIp: '127.0.0.1' },
        { port: 8000, proto: 'tcp', hostIp: '' },
        { port: 8001, proto: 'tcp', hostIp: '' },
        { port: 8002, proto: 'tcp', hostIp: '' },
      ],
      unknown: [],
    });
  });

  it('an unknown restart policy, an ephemeral HostPort, a PortBindings that is no object: each an unknown naming hostconfig.json', async () => {
    const f = `/${dir(A)}/hostconfig.json`;
    const h1 = JSON.stringify({ RestartPolicy: { Name: 'sometimes' }, PortBindings: { '80/tcp': [{ HostIp: '', HostPort: '' }] } });
    const c1 = await readDockerContainer(treeHost({ [`${dir(A)}/config.v2.json`]: cfg, [`${dir(A)}/hostconfig.json`]: h1 }), A);
    expect([c1.restart, c1.published, c1.unknown]).toEqual([
      null,
      [],
      [
        `${f}: RestartPolicy.Name "sometimes" is not one of no, always, unless-stopped, on-failure`,
        `${f}: PortBindings["80/tcp"] has HostPort "", which does not name a host port`,
      ],
    ]);
    const h2 = JSON.stringify({ RestartPolicy: { Name: 'always' }, PortBindings: ['6443'] });
    const c2 = await readDockerContainer(treeHost({ [`${dir(A)}/config.v2.json`]: cfg, [`${dir(A)}/hostconfig.json`]: h2 }), A);
    expect(c2.unknown).toEqual([`${f}: PortBindings is not an object`]);
  });

  it('missing files, a JSON array and a config without Name or Config.Image are unknowns naming the file', async () => {
    const c0 = await readDockerContainer(treeHost({ [`${dir(A)}/.keep`]: '' }), A);
    expect(c0.unknown).toEqual([`/${dir(A)}/config.v2.json does not exist`, `/${dir(A)}/hostconfig.json does not exist`]);
    const c1 = await readDockerContainer(treeHost({ [`${dir(A)}/config.v2.json`]: '[]', [`${dir(A)}/hostconfig.json`]: '{"RestartPolicy":{"Name":""}}' }), A);
    expect([c1.restart, c1.unknown]).toEqual(['no', [`/${dir(A)}/config.v2.json is not a JSON object`]]);
    const c2 = await readDockerContainer(
      treeHost({ [`${dir(A)}/config.v2.json`]: '{"State":{}}', [`${dir(A)}/hostconfig.json`]: '{"RestartPolicy":{"Name":"no"}}' }),
      A,
    );
    expect(c2.unknown).toEqual([`/${dir(A)}/config.v2.json: no Name`, `/${dir(A)}/config.v2.json: no Config.Image`]);
  });
});

describe('resolveDockerId', () => {
  it('finds the one directory a prefix names; two or none are errors; other names are not containers', async () => {
    const fs = treeHost({ [`${dir(A)}/x`]: '', [`${dir(B)}/x`]: '', 'var/lib/docker/containers/not-an-id/x': '' });
    expect(await dockerContainerIds(fs)).toEqual([A, B]);
    expect(await resolveDockerId(fs, A.slice(0, 12))).toEqual({ id: A });
    expect(await resolveDockerId(fs, 'a')).toEqual({ error: '2 directories in /var/lib/docker/containers start with a' });
    expect(await resolveDockerId(fs, 'ff')).toEqual({ error: 'no directory /var/lib/docker/containers/ff* exists' });
    expect(await resolveDockerId(treeHost({}), 'ff')).toEqual({ error: '/var/lib/docker/containers could not be read' });
  });
});
