// Which container holds a port: from the cgroup scope or docker-proxy's argv
// (moby's cmd/docker-proxy flags: -proto -host-ip -host-port -container-ip -container-port).
import { describe, expect, it } from 'vitest';
import { containerOfHolder } from '../../src/containers/holder.js';
import { placementOfPath } from '../../src/systemd/cgroup.js';
import type { PortHolder } from '../../src/ports/observed.js';
import { idOf, treeHost } from '../helpers/container-tree.js';

const A = idOf('a1');
const B = idOf('b2');
const files = (id: string, name: string, running: boolean, port: string) => ({
  [`var/lib/docker/containers/${id}/config.v2.json`]: JSON.stringify({
    ID: id,
    Name: `/${name}`,
    Config: { Image: 'img' },
    State: { Running: running, Pid: 1 },
  }),
  [`var/lib/docker/containers/${id}/hostconfig.json`]: JSON.stringify({
    RestartPolicy: { Name: 'always' },
    PortBindings: { [`${port}/tcp`]: [{ HostIp: '', HostPort: port }] },
  }),
});
const proxy = (port: number): PortHolder => ({
  pid: 9,
  comm: 'docker-proxy',
  placement: placementOfPath('/system.slice/docker.service', 'v2'),
  ancestry: {
    chain: [
      {
        pid: 9,
        argv: [
          '/usr/bin/docker-proxy',
          '-proto',
          'tcp',
          '-host-ip',
          '0.0.0.0',
          '-host-port',
          String(port),
          '-container-ip',
          '172.17.0.3',
          '-container-port',
          '80',
        ],
      } as never,
    ],
    complete: true,
  },
  mainHoldsSocket: null,
});

describe('containerOfHolder', () => {
  it('docker-proxy: the running container publishing the port, not a stopped one publishing it too', async () => {
    const fs = treeHost({ ...files(A, 'old', false, '6443'), ...files(B, 'new', true, '6443') });
    const h = await containerOfHolder(fs, proxy(6443), 6443);
    expect(h?.how).toBe('docker-proxy publishes -host-port 6443 to -container-ip 172.17.0.3:80');
    expect([h?.container?.name, h?.error]).toEqual(['new', null]);
  });

  it('docker-proxy: two running containers publishing it, or none, is an error, never a guess', async () => {
    const two = await containerOfHolder(treeHost({ ...files(A, 'x', true, '6443'), ...files(B, 'y', true, '6443') }), proxy(6443), 6443);
    expect([two?.container, two?.error]).toEqual([null, '2 containers publish 6443/tcp']);
    const none = await containerOfHolder(treeHost(files(A, 'x', true, '80')), proxy(6443), 6443);
    expect([none?.container, none?.error]).toEqual([null, 'no container in /var/lib/docker/containers publishes 6443/tcp']);
  });

  it('a process in docker.service that is not docker-proxy, or one in a plain service, is no container', async () => {
    const dockerd: PortHolder = { ...proxy(6443), comm: 'dockerd', ancestry: { chain: [{ pid: 9, argv: ['/usr/sbin/dockerd'] } as never], complete: true } };
    expect(await containerOfHolder(treeHost(files(A, 'x', true, '6443')), dockerd, 6443)).toBeNull();
    const other: PortHolder = { pid: 3, comm: 'x', placement: placementOfPath('/system.slice/x.service', 'v2'), ancestry: null, mainHoldsSocket: null };
    expect(await containerOfHolder(treeHost({}), other, 6443)).toBeNull();
  });

  it("a docker scope below kubepods.slice (cri-dockerd) is a pod's container, left to the former-node line", async () => {
    const path = `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/docker-${A}.scope`;
    const s: PortHolder = { pid: 3, comm: 'kube-apiserver', placement: placementOfPath(path, 'v2'), ancestry: null, mainHoldsSocket: null };
    expect(s.placement?.unit).toBe(`docker-${A}.scope`);
    expect(await containerOfHolder(treeHost(files(A, 'k8s_kube-apiserver', true, '6443')), s, 6443)).toBeNull();
  });

  it('a docker scope names its container; a libpod-conmon scope its podman container', async () => {
    const s: PortHolder = { pid: 3, comm: 'etcd', placement: placementOfPath(`/system.slice/docker-${A}.scope`, 'v2'), ancestry: null, mainHoldsSocket: null };
    expect((await containerOfHolder(treeHost(files(A, 'etcd', true, '2379')), s, 2379))?.container?.name).toBe('etcd');
    const p: PortHolder = { ...s, placement: placementOfPath(`/machine.slice/libpod-conmon-${A}.scope`, 'v2') };
    const h = await containerOfHolder(treeHost({}), p, 2379);
    expect([h?.container?.runtime, h?.how]).toEqual(['podman', `libpod-conmon-${A}.scope is the container's scope`]);
  });
});
