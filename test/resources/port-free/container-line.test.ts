// A port held by a Docker or podman container outside Kubernetes: the
// container is named from the runtime's own on-disk state and the plan says
// what brings it back and what to run. The fixture files are hand-written
// from upstream's structs: moby's daemon/container/container.go (config.v2.json
// is the Container struct, hostconfig.json is api/types/container/hostconfig.go's
// HostConfig) and containers/storage's containers.go (overlay-containers/containers.json).
// Whether docker.service is enabled is told by the real systemctl --root.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../../src/host.js';
import { buildTree, type Tree } from '../../helpers/tree.js';
import { readDockerContainer } from '../../../src/containers/docker-state.js';
import { containersOf } from '../../../src/containers/holder.js';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';
import type { BusyPort, LivePortsObserved, PortHolder } from '../../../src/ports/observed.js';
import { placementOfPath } from '../../../src/systemd/cgroup.js';
import { spec } from '../../helpers/port-listeners.js';
import { systemctlRoot } from '../../helpers/systemd-oracle.js';

const ID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';
const DIR = `var/lib/docker/containers/${ID}`;
const roots: string[] = [];
afterEach(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

function tree(files: Tree): string {
  const root = mkdtempSync(path.join(tmpdir(), 'containers-'));
  roots.push(root);
  buildTree(root, files);
  return root;
}

const config = (name: string) =>
  JSON.stringify({
    ID,
    Name: `/${name}`,
    Image: 'sha256:0123',
    Config: { Image: 'registry.example/api:1.2', Hostname: 'x' },
    State: { Running: true, Pid: 4242 },
  });
const hostconfig = (restart: string, mode = 'bridge') =>
  JSON.stringify({
    RestartPolicy: { Name: restart, MaximumRetryCount: 0 },
    NetworkMode: mode,
    PortBindings: { '6443/tcp': [{ HostIp: '', HostPort: '6443' }] },
  });

const DOCKER_UNIT: Tree = {
  'usr/lib/systemd/system/docker.service': '[Service]\nExecStart=/usr/sbin/dockerd\n[Install]\nWantedBy=multi-user.target\n',
  'usr/lib/systemd/system/multi-user.target': '[Unit]\n',
};
const ENABLED: Tree = { 'etc/systemd/system/multi-user.target.wants/docker.service': { link: '/usr/lib/systemd/system/docker.service' } };

function holder(pid: number, comm: string, cgroup: string, argv: string[] | null = null): PortHolder {
  const ancestry = argv ? { chain: [{ pid, ppid: 1, argv, exe: null, comm, uid: 0 } as never], complete: true } : null;
  return { pid, comm, placement: placementOfPath(cgroup, 'v2'), ancestry, mainHoldsSocket: null };
}

async function observedOf(root: string, holders: PortHolder[]): Promise<LivePortsObserved> {
  const b: BusyPort = { port: 6443, listeners: [{ family: 'ipv4', address: '0.0.0.0', port: 6443, inode: 1 } as never], holders, activation: null };
  const fs = new Host({ root });
  const o: LivePortsObserved = {
    mode: 'live',
    busy: [b],
    selfUnit: null,
    unreadablePids: 0,
    units: {},
    crontabs: null,
    uids: {},
    supervisor: null,
    containers: await containersOf(fs, [b]),
  };
  return o;
}

async function plan(root: string, h: PortHolder | PortHolder[], stopContainers?: string[]) {
  const desired = { ...spec([6443]), ...(stopContainers ? { stop_containers: stopContainers } : {}) };
  return portFreeProvider.diff(desired, await observedOf(root, Array.isArray(h) ? h : [h]), { live: true });
}

describe('a container holding 6443', () => {
  it('docker-proxy of a restart=always container on an enabled docker.service: named, with what to run', async () => {
    const root = tree({ [`${DIR}/config.v2.json`]: config('api'), [`${DIR}/hostconfig.json`]: hostconfig('always'), ...DOCKER_UNIT, ...ENABLED });
    expect((await systemctlRoot(root, 'is-enabled', 'docker.service')).stdout.trim()).toBe('enabled');
    const proxy = [
      '/usr/bin/docker-proxy',
      '-proto',
      'tcp',
      '-host-ip',
      '0.0.0.0',
      '-host-port',
      '6443',
      '-container-ip',
      '172.17.0.2',
      '-container-port',
      '6443',
    ];
    const [c] = await plan(root, holder(900, 'docker-proxy', '/system.slice/docker.service', proxy));
    expect(c!.action).toBe('operator');
    expect(c!.withdraws).toEqual([{ promise: 'port:6443', from: 'apply' }]);
    expect(c!.operator).toBe(
      'pid 900 (docker-proxy): it is docker container a1b2c3d4e5f6 "api" (image registry.example/api:1.2, restart policy always, network bridge), ' +
        'found as docker-proxy publishes -host-port 6443 to -container-ip 172.17.0.2:6443; docker.service is enabled and the restart policy always starts it again at every boot. ' +
        'Run: docker update --restart=no api && docker stop api (dockerd itself is never stopped: it runs every container on this host)',
    );
  });

  it('two docker-proxies of one published port (0.0.0.0 and ::, as Debian docker.io starts them): the container is named once', async () => {
    // The argv recorded from dockerd 20.10 (Debian bookworm's docker.io) in the boot farm (test/boot/catalogue/docker.mjs).
    const root = tree({ [`${DIR}/config.v2.json`]: config('api'), [`${DIR}/hostconfig.json`]: hostconfig('always', 'default'), ...DOCKER_UNIT, ...ENABLED });
    const proxy = (hostIp: string) => [
      '/usr/sbin/docker-proxy',
      '-proto',
      'tcp',
      '-host-ip',
      hostIp,
      '-host-port',
      '6443',
      '-container-ip',
      '172.17.0.2',
      '-container-port',
      '6443',
    ];
    const holders = [
      holder(186, 'docker-proxy', '/system.slice/docker.service', proxy('0.0.0.0')),
      holder(193, 'docker-proxy', '/system.slice/docker.service', proxy('::')),
    ];
    const [c] = await plan(root, holders);
    expect(c!.action).toBe('operator');
    expect(c!.operator).toBe(
      'pids 186, 193 (docker-proxy): it is docker container a1b2c3d4e5f6 "api" (image registry.example/api:1.2, restart policy always, network default), ' +
        'found as docker-proxy publishes -host-port 6443 to -container-ip 172.17.0.2:6443; docker.service is enabled and the restart policy always starts it again at every boot. ' +
        'Run: docker update --restart=no api && docker stop api (dockerd itself is never stopped: it runs every container on this host)',
    );
    // Allowed to stop it: one stop, naming both holders.
    const [s] = await portFreeProvider.diff(spec([6443], { stop_containers: ['api'] }), await observedOf(root, holders), { live: true });
    expect(s!.action).toBe('stop');
    expect(s!.summary).toContain('held by pids 186, 193 (docker-proxy), docker container a1b2c3d4e5f6 "api" (restart policy always)');
  });

  it('a host-network container in its docker scope, restart=unless-stopped, docker.service not enabled', async () => {
    const root = tree({ [`${DIR}/config.v2.json`]: config('etcd'), [`${DIR}/hostconfig.json`]: hostconfig('unless-stopped', 'host'), ...DOCKER_UNIT });
    expect((await systemctlRoot(root, 'is-enabled', 'docker.service')).stdout.trim()).toBe('disabled');
    const [c] = await plan(root, holder(77, 'etcd', `/system.slice/docker-${ID}.scope`));
    expect(c!.operator).toBe(
      'pid 77 (etcd): it is docker container a1b2c3d4e5f6 "etcd" (image registry.example/api:1.2, restart policy unless-stopped, network host), ' +
        `found as docker-${ID}.scope is the container's scope; its restart policy unless-stopped starts it whenever dockerd starts; docker.service is not enabled, but anything that starts dockerd (docker.socket, a person) brings it back. ` +
        'Run: docker update --restart=no etcd && docker stop etcd (dockerd itself is never stopped: it runs every container on this host)',
    );
  });

  it('restart policy "" (unset) is "no": it does not come back at boot', async () => {
    const root = tree({ [`${DIR}/config.v2.json`]: config('api'), [`${DIR}/hostconfig.json`]: hostconfig(''), ...DOCKER_UNIT, ...ENABLED });
    const c = await readDockerContainer(new Host({ root }), ID);
    expect([c.restart, c.name, c.published]).toEqual(['no', 'api', [{ port: 6443, proto: 'tcp', hostIp: '' }]]);
    const [d] = await plan(root, holder(77, 'api', `/system.slice/docker-${ID}.scope`));
    expect(d!.operator).toContain('; its restart policy no does not start it at boot. Run: docker update --restart=no api && docker stop api');
  });

  it('a malformed config.v2.json is unknown naming the file; an unreadable one too', async () => {
    const root = tree({ [`${DIR}/config.v2.json`]: '{"ID": "a1', [`${DIR}/hostconfig.json`]: hostconfig('always'), ...DOCKER_UNIT, ...ENABLED });
    const [c] = await plan(root, holder(77, 'api', `/system.slice/docker-${ID}.scope`));
    expect(c!.operator).toMatch(
      new RegExp(
        `^pid 77 \\(api\\): it is docker container a1b2c3d4e5f6 "unknown name" \\(image unknown, restart policy always, network bridge\\), .*; unknown: /var/lib/docker/containers/${ID}/config.v2.json is not valid JSON \\(`,
      ),
    );
    expect(c!.operator).toContain('Run: docker update --restart=no a1b2c3d4e5f6 && docker stop a1b2c3d4e5f6');
    // A directory where the file should be cannot be read, even as root.
    const root2 = tree({ [`${DIR}/config.v2.json/x`]: '', [`${DIR}/hostconfig.json`]: hostconfig('always'), ...DOCKER_UNIT });
    const [u] = await plan(root2, holder(77, 'api', `/system.slice/docker-${ID}.scope`));
    expect(u!.operator).toContain(`; unknown: /var/lib/docker/containers/${ID}/config.v2.json could not be read (`);
  });

  it('a scope whose container directory is missing: unknown, and nothing is stopped', async () => {
    const root = tree({ 'var/lib/docker/containers/.keep': '' });
    const [c] = await plan(root, holder(77, 'api', `/system.slice/docker-${ID}.scope`));
    expect(c!.action).toBe('operator');
    expect(c!.operator).toBe(
      `pid 77 (api) belongs to a container (docker-${ID}.scope is the container's scope), but which one is unknown: no directory /var/lib/docker/containers/${ID}* exists; find it with docker ps or podman ps`,
    );
  });

  const PID = 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100';
  const podmanTree = (name: string): Tree => ({
    'var/lib/containers/storage/overlay-containers/containers.json': JSON.stringify([
      { id: PID, names: [name], image: '9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0', layer: 'l', metadata: '{}' },
    ]),
    'usr/lib/systemd/system/podman-restart.service':
      '[Service]\nExecStart=/usr/bin/podman start --all --filter restart-policy=always\n[Install]\nWantedBy=default.target\n',
    'usr/lib/systemd/system/default.target': '[Unit]\n',
  });
  const UNKNOWN =
    "unknown: podman's restart policy and the units that start it are in libpod's database (/var/lib/containers/storage/libpod), which is not read";

  it('a podman container with no unit: named from containers.json, its restart policy unknown', async () => {
    const root = tree(podmanTree('web'));
    expect((await systemctlRoot(root, 'is-enabled', 'podman-restart.service')).stdout.trim()).toBe('disabled');
    const [c] = await plan(root, holder(55, 'conmon', `/machine.slice/libpod-conmon-${PID}.scope`));
    expect(c!.operator).toBe(
      `pid 55 (conmon): it is podman container ffeeddccbbaa "web" (image ID 9f8e7d6c5b4a), found as libpod-conmon-${PID}.scope is the container's scope; ` +
        `podman-restart.service starts every container whose restart policy is always at boot (it is not enabled); ${UNKNOWN}. ` +
        'Run: podman stop web && podman update --restart=no web (podman 5 and later; older: podman rm web) (podman is never stopped as a whole)',
    );
  });

  it('a quadlet on 10250 with [Install] WantedBy: the generated unit is named, and moving the file away is what to run', async () => {
    // podman-systemd.unit(5): NAME.container, [Container] ContainerName= (default systemd-%N), PublishPort=, [Install] applied by the generator.
    const quadlet =
      '[Unit]\nDescription=x\n\n[Container]\nImage=localhost/web\nPublishPort=6443:8080\nPublishPort=\\\n  10250:10250\n\n[Install]\nWantedBy=multi-user.target default.target\n';
    const root = tree({ ...podmanTree('systemd-web'), 'etc/containers/systemd/web.container': quadlet });
    const [c] = await plan(root, holder(55, 'server', `/machine.slice/libpod-${PID}.scope`));
    expect(c!.operator).toBe(
      `pid 55 (server): it is podman container ffeeddccbbaa "systemd-web" (image ID 9f8e7d6c5b4a), found as libpod-${PID}.scope is the container's scope; ` +
        'the quadlet /etc/containers/systemd/web.container makes web.service (ContainerName=systemd-web, PublishPort=6443:8080, PublishPort=10250:10250); its [Install] multi-user.target default.target starts it at every boot; ' +
        `podman-restart.service starts every container whose restart policy is always at boot (it is not enabled); ${UNKNOWN}. ` +
        "Run: systemctl stop web.service, move /etc/containers/systemd/web.container out of /etc/containers/systemd and run systemctl daemon-reload (a quadlet's unit is generated: systemctl disable cannot disable it) (podman is never stopped as a whole)",
    );
  });

  it('a unit from podman generate systemd (ExecStart=podman start NAME), enabled', async () => {
    const unit = '[Service]\nExecStart=/usr/bin/podman start api\nExecStop=/usr/bin/podman stop -t 10 api\n[Install]\nWantedBy=default.target\n';
    const root = tree({
      ...podmanTree('api'),
      'etc/systemd/system/container-api.service': unit,
      'etc/systemd/system/default.target.wants/container-api.service': { link: '/etc/systemd/system/container-api.service' },
      'etc/systemd/system/other.service': '[Service]\nExecStart=/usr/bin/podman run --name other img\n',
    });
    expect((await systemctlRoot(root, 'is-enabled', 'container-api.service')).stdout.trim()).toBe('enabled');
    const [c] = await plan(root, holder(55, 'api', `/machine.slice/libpod-${PID}.scope`));
    expect(c!.operator).toBe(
      `pid 55 (api): it is podman container ffeeddccbbaa "api" (image ID 9f8e7d6c5b4a), found as libpod-${PID}.scope is the container's scope; ` +
        'container-api.service (/etc/systemd/system/container-api.service:2) starts it with podman; it is enabled; ' +
        `podman-restart.service starts every container whose restart policy is always at boot (it is not enabled); ${UNKNOWN}. ` +
        'Run: systemctl disable --now container-api.service (podman is never stopped as a whole)',
    );
  });

  // What Debian 12's podman 4.3.1 wrote in the boot farm's nspawn for `podman create --name api --network=host
  // --cgroups=disabled ... && podman generate systemd --new --files --name api` (the ulimit flags left out): the real
  // program's output, not written to match the parser.
  const GENERATED = [
    '[Unit]',
    'Description=Podman container-api.service',
    'Wants=network-online.target',
    'After=network-online.target',
    'RequiresMountsFor=%t/containers',
    '',
    '[Service]',
    'Environment=PODMAN_SYSTEMD_UNIT=%n',
    'Restart=on-failure',
    'TimeoutStopSec=70',
    'ExecStartPre=/bin/rm \\',
    '\t-f %t/%n.ctr-id',
    'ExecStart=/usr/bin/podman run \\',
    '\t--cidfile=%t/%n.ctr-id \\',
    '\t--cgroups=no-conmon \\',
    '\t--rm \\',
    '\t--sdnotify=conmon \\',
    '\t-d \\',
    '\t--replace \\',
    '\t--name api \\',
    '\t--network=host \\',
    '\t--cgroups=disabled localhost/tiny:1 /bin/busybox httpd \\',
    '\t-f \\',
    '\t-p 6443',
    'ExecStop=/usr/bin/podman stop \\',
    '\t--ignore -t 10 \\',
    '\t--cidfile=%t/%n.ctr-id',
    'Type=notify',
    'NotifyAccess=all',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
  // The container's first process as --cgroups=disabled leaves it: in the unit's cgroup, its parent conmon.
  const underConmon = (): PortHolder => ({
    pid: 135,
    comm: 'busybox',
    placement: placementOfPath('/system.slice/container-api.service', 'v2'),
    ancestry: {
      chain: [
        { pid: 135, ppid: 133, argv: ['/bin/busybox', 'httpd', '-f', '-p', '6443'], exe: null, comm: 'busybox', uid: 0 } as never,
        {
          pid: 133,
          ppid: 1,
          argv: ['/usr/bin/conmon', '--api-version', '1', '-c', PID, '-u', PID, '-r', '/usr/bin/crun', '-n', 'api'],
          exe: null,
          comm: 'conmon',
          uid: 0,
        } as never,
        { pid: 1, ppid: 0, argv: ['/sbin/init'], exe: null, comm: 'systemd', uid: 0 } as never,
      ],
      complete: true,
    },
    mainHoldsSocket: null,
  });
  const vfsTree = (): Tree => {
    const t = podmanTree('api');
    const json = t['var/lib/containers/storage/overlay-containers/containers.json']!;
    delete t['var/lib/containers/storage/overlay-containers/containers.json'];
    return {
      ...t,
      'var/lib/containers/storage/vfs-containers/containers.json': json,
      'etc/systemd/system/container-api.service': GENERATED,
      'etc/systemd/system/default.target.wants/container-api.service': { link: '/etc/systemd/system/container-api.service' },
    };
  };

  it('a container under conmon in its generated unit (--cgroups=disabled, vfs storage): named, the unit is what to disable', async () => {
    const root = tree(vfsTree());
    expect((await systemctlRoot(root, 'is-enabled', 'container-api.service')).stdout.trim()).toBe('enabled');
    const [c] = await plan(root, underConmon());
    expect(c!.action).toBe('operator');
    expect(c!.withdraws).toEqual([{ promise: 'port:6443', from: 'apply' }]);
    expect(c!.operator).toBe(
      `pid 135 (busybox): it is podman container ffeeddccbbaa "api" (image ID 9f8e7d6c5b4a), found as its ancestor conmon (pid 133) monitors container ffeeddccbbaa (-c); ` +
        'container-api.service (/etc/systemd/system/container-api.service:13) starts it with podman; it is enabled; ' +
        `podman-restart.service starts every container whose restart policy is always at boot (it is not enabled); ${UNKNOWN}. ` +
        'Run: systemctl disable --now container-api.service (podman is never stopped as a whole)',
    );
  });

  it('named in stop_containers: its generated unit is stopped and disabled like any unit, the promise kept', async () => {
    const root = tree(vfsTree());
    const [c] = await plan(root, underConmon(), ['api']);
    expect(c!.action).toBe('stop');
    expect(c!.withdraws).toBeUndefined();
    // Never masked (spec's mask: auto would mask for an unknown comeback): a mask sets the /etc file aside, and the stop must run ExecStop=.
    expect(c!.op).toMatchObject({ kind: 'stop', port: 6443, pid: 135, unit: 'container-api.service', units: ['container-api.service'], mask: false });
    expect(c!.summary).toContain(': stop and disable container-api.service');
    expect(c!.summary).toContain(
      'podman container ffeeddccbbaa "api" (its ancestor conmon (pid 133) monitors container ffeeddccbbaa (-c)), named in stop_containers, is started by container-api.service',
    );
    // Another name, or the same container also named by a quadlet: the operator line stays.
    expect((await plan(root, underConmon(), ['other']))[0]!.action).toBe('operator');
    const q = tree({ ...vfsTree(), 'etc/containers/systemd/api.container': '[Container]\nImage=localhost/tiny:1\nContainerName=api\n' });
    const withQuadlet = (await plan(q, underConmon(), ['api']))[0]!;
    expect(withQuadlet.action).toBe('operator');
    expect(withQuadlet.operator).toContain(
      '; "api" is named in stop_containers but not stopped: its quadlet /etc/containers/systemd/api.container makes its unit, and apply does not set quadlets aside',
    );
  });

  it('a conmon whose -c is no container id names no container', async () => {
    const h = underConmon();
    (h.ancestry!.chain[1] as { argv: string[] }).argv = ['/usr/bin/conmon', '-c', 'not-an-id'];
    const [c] = await plan(tree(vfsTree()), h);
    expect(c!.operator ?? c!.summary).not.toContain('podman container');
  });

  it('named in stop_containers with no unit: not stopped, and the line says why (podman 4 cannot set its restart policy)', async () => {
    const root = tree(podmanTree('web'));
    const [c] = await plan(root, holder(55, 'conmon', `/machine.slice/libpod-conmon-${PID}.scope`), ['web']);
    expect(c!.action).toBe('operator');
    expect(c!.withdraws).toEqual([{ promise: 'port:6443', from: 'apply' }]);
    expect(c!.operator).toMatch(
      /; "web" is named in stop_containers but not stopped: no unit starts it, so what brings it back is its restart policy, which is in libpod's database and not read; podman 4's podman update has no --restart to set it to no, and podman-restart.service starts a stopped container whose policy is always again at boot$/,
    );
    // Not named: no such sentence.
    expect((await plan(root, holder(55, 'conmon', `/machine.slice/libpod-conmon-${PID}.scope`)))[0]!.operator).not.toContain('stop_containers');
  });

  it("podman's cgroupfs manager (/libpod_parent/libpod-ID, no unit): the container is named by its conmon ancestor", async () => {
    // The shape the boot farm's podman-restart-always-10250 showed: a container created where systemd was not running.
    const h = underConmon();
    const p: PortHolder = { ...h, placement: placementOfPath(`/libpod_parent/libpod-${PID}`, 'v2') };
    expect(p.placement?.container).toContain('belongs to a container runtime');
    const [c] = await plan(tree(podmanTree('api')), p);
    expect(c!.operator).toContain(
      `pid 135 (busybox): it is podman container ffeeddccbbaa "api" (image ID 9f8e7d6c5b4a), found as its ancestor conmon (pid 133) monitors`,
    );
  });
});
