// containers/storage's overlay-containers/containers.json (vfs-containers/ with the vfs driver) (containers.go's
// Container: "id", "names", "image", "layer", "metadata"), hand-written.
import { describe, expect, it } from 'vitest';
import { PODMAN_CONTAINERS_JSON, readPodmanContainer } from '../../src/containers/podman-state.js';
import { idOf, treeHost } from '../helpers/container-tree.js';

const A = idOf('c3');
const LIBPOD = "podman's restart policy and the units that start it are in libpod's database (/var/lib/containers/storage/libpod), which is not read";
const at = (text: string) => treeHost({ [PODMAN_CONTAINERS_JSON.slice(1)]: text });

describe('readPodmanContainer', () => {
  it('finds the container by id prefix: its full id, first name and image ID; the restart policy is always unknown', async () => {
    const json = JSON.stringify([
      { id: idOf('d4'), names: ['other'] },
      { id: A, names: ['web', 'alias'], image: idOf('e5'), layer: 'l', metadata: '{"image-name":"x"}' },
    ]);
    expect(await readPodmanContainer(at(json), A.slice(0, 12))).toEqual({ runtime: 'podman', id: A, name: 'web', image: idOf('e5'), unknown: [LIBPOD] });
  });

  it('a missing, malformed or silent containers.json is an unknown naming it', async () => {
    const none =
      'none of /var/lib/containers/storage/overlay-containers/containers.json, /var/lib/containers/storage/vfs-containers/containers.json, ' +
      '/var/lib/containers/storage/btrfs-containers/containers.json, /var/lib/containers/storage/zfs-containers/containers.json exists';
    expect((await readPodmanContainer(treeHost({}), A)).unknown).toEqual([LIBPOD, none]);
    expect((await readPodmanContainer(at('[{"id":'), A)).unknown[1]).toMatch(
      /^\/var\/lib\/containers\/storage\/overlay-containers\/containers\.json could not be read as JSON \(/,
    );
    expect((await readPodmanContainer(at('{"id":"x"}'), A)).unknown).toEqual([LIBPOD, `${PODMAN_CONTAINERS_JSON} has no container ${A}`]);
  });

  it('another graph driver keeps DRIVER-containers/containers.json (vfs where the root is an overlay); overlay is read first', async () => {
    const vfs = 'var/lib/containers/storage/vfs-containers/containers.json';
    const only = treeHost({ [vfs]: JSON.stringify([{ id: A, names: ['farmweb'] }]) });
    expect((await readPodmanContainer(only, A.slice(0, 12))).name).toBe('farmweb');
    const both = treeHost({
      [vfs]: JSON.stringify([{ id: A, names: ['farmweb'] }]),
      [PODMAN_CONTAINERS_JSON.slice(1)]: JSON.stringify([{ id: A, names: ['web'] }]),
    });
    expect((await readPodmanContainer(both, A)).name).toBe('web');
    expect((await readPodmanContainer(treeHost({ [vfs]: '[]' }), A)).unknown[1]).toBe(`/${vfs} has no container ${A}`);
  });
});
