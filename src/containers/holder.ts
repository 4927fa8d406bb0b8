// Which container holds a port, from the holder's cgroup (a docker-<id>.scope or
// libpod-<id>.scope: host networking, or any process of the container) or from
// docker-proxy's argv (a published port: dockerd starts one per binding with
// -host-port and -container-ip, see moby's cmd/docker-proxy). Then the
// container's own on-disk state (docker-state.ts, podman-state.ts).
import type { TargetFs } from '../host.js';
import type { PortHolder } from '../ports/observed.js';
import { dockerContainerIds, readDockerContainer, resolveDockerId, type DockerContainer } from './docker-state.js';
import { readPodmanContainer, type PodmanContainer } from './podman-state.js';
import { enablementOf } from '../systemd/unit-links.js';
import { containerScopeOf, kubePodOf } from '../systemd/cgroup.js';
import { readQuadlets, type Quadlet } from './quadlet.js';
import { podmanUnitsFor, type PodmanUnit } from './podman-units.js';

export type HeldContainer = DockerContainer | PodmanContainer;

/** What a holder is, as far as containers go; the --json plan's `container` observation. */
export interface ContainerHold {
  /** How the container was found (the scope, or docker-proxy's argv). */
  how: string;
  container: HeldContainer | null;
  /** Why the container could not be named; null when it was. */
  error: string | null;
  /** docker.service (podman: podman-restart.service, which starts restart=always containers at boot) is enabled; null when not read. */
  runtimeEnabled: boolean | null;
  /** Podman: the quadlet whose ContainerName= is the container's name; null when none is. */
  quadlet?: Quadlet | null;
  /** Podman: quadlet files or directories that could not be read (one of them may start it). */
  quadletsUnread?: string[];
  /** Podman: services made by `podman generate systemd` that start it, each with whether it is enabled (null: unknown). */
  podmanUnits?: (PodmanUnit & { enabled: boolean | null })[];
}

/** docker-proxy's value after `flag` (it takes "-flag value"). */
function flagOf(argv: string[], flag: string): string | null {
  const i = argv.indexOf(flag);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1]! : null;
}

/**
 * Podman's monitor among the holder's ancestors, with the container id of its -c: conmon is the parent of every
 * podman container's first process, in whatever cgroup the container runs (--cgroups=disabled or no-conmon leave
 * it in the unit that ran podman, not in a libpod scope). A -c that is no 64-hex id names no container.
 */
function conmonOf(h: PortHolder): { pid: number; id: string } | null {
  for (const p of h.ancestry?.chain.slice(1) ?? []) {
    if (p.comm !== 'conmon' || p.argv === null) continue;
    const id = flagOf(p.argv, '-c');
    if (id !== null && /^[0-9a-f]{64}$/.test(id)) return { pid: p.pid, id };
  }
  return null;
}

async function unitEnabled(fs: TargetFs, unit: string): Promise<boolean | null> {
  try {
    const e = (await enablementOf(fs, [unit])).get(unit);
    return e === undefined ? null : e.links.length > 0;
  } catch {
    return null;
  }
}

async function byScope(fs: TargetFs, runtime: string, id: string, how: string): Promise<ContainerHold> {
  if (runtime === 'libpod') {
    const c = await readPodmanContainer(fs, id);
    const q = await readQuadlets(fs);
    const quadlet = c.name === null ? null : (q.quadlets.find((x) => x.containerName === c.name) ?? null);
    const u = await podmanUnitsFor(fs, c.name, c.id);
    const podmanUnits = [];
    for (const x of u.units) podmanUnits.push({ ...x, enabled: await unitEnabled(fs, x.unit) });
    const runtimeEnabled = await unitEnabled(fs, 'podman-restart.service');
    return { how, container: c, error: null, runtimeEnabled, quadlet, quadletsUnread: [...q.unreadable, ...u.unreadable], podmanUnits };
  }
  const r = await resolveDockerId(fs, id);
  if ('error' in r) return { how, container: null, error: r.error, runtimeEnabled: null };
  return { how, container: await readDockerContainer(fs, r.id), error: null, runtimeEnabled: await unitEnabled(fs, 'docker.service') };
}

/** docker-proxy for host port `port`: the running container whose PortBindings publish it. */
async function byProxy(fs: TargetFs, argv: string[], port: number): Promise<ContainerHold> {
  const how = `docker-proxy publishes -host-port ${flagOf(argv, '-host-port') ?? '?'} to -container-ip ${flagOf(argv, '-container-ip') ?? '?'}:${flagOf(argv, '-container-port') ?? '?'}`;
  const ids = await dockerContainerIds(fs);
  if (ids === null) return { how, container: null, error: `/var/lib/docker/containers could not be read`, runtimeEnabled: null };
  const proto = flagOf(argv, '-proto') ?? 'tcp';
  const hits: DockerContainer[] = [];
  for (const id of ids) {
    const c = await readDockerContainer(fs, id);
    if (c.running !== false && c.published.some((p) => p.port === port && p.proto === proto)) hits.push(c);
  }
  if (hits.length !== 1) {
    const why =
      hits.length === 0 ? `no container in /var/lib/docker/containers publishes ${port}/${proto}` : `${hits.length} containers publish ${port}/${proto}`;
    return { how, container: null, error: why, runtimeEnabled: null };
  }
  return { how, container: hits[0]!, error: null, runtimeEnabled: await unitEnabled(fs, 'docker.service') };
}

/** The container behind one holder of `port`, or null when the holder is no container's. */
export async function containerOfHolder(fs: TargetFs, h: PortHolder, port: number): Promise<ContainerHold | null> {
  // A container of a Kubernetes pod (cri-dockerd puts docker-ID.scope below kubepods.slice): kubelet starts it
  // again whatever its restart policy, so it is the former node's (diff-live.ts says so), not a container to name here.
  if (h.placement && kubePodOf(h.placement.path) !== null) return null;
  const unit = h.placement?.unit ?? '';
  // libpod-conmon-<id>.scope counts too: rootful podman hands the published ports' sockets to conmon, which holds them.
  const scope = containerScopeOf(unit);
  if (scope?.runtime === 'docker' || scope?.runtime === 'libpod') return byScope(fs, scope.runtime, scope.id, `${unit} is the container's scope`);
  const mon = conmonOf(h);
  if (mon !== null) return byScope(fs, 'libpod', mon.id, `its ancestor conmon (pid ${mon.pid}) monitors container ${mon.id.slice(0, 12)} (-c)`);
  const argv = h.ancestry?.chain[0]?.argv ?? null;
  if (h.comm === 'docker-proxy' && argv !== null && argv.includes('-container-ip')) return byProxy(fs, argv, port);
  return null;
}

/** Per busy port and holder ("PORT:PID"): the container behind it, for every holder that is a container's. */
export async function containersOf(fs: TargetFs, busy: { port: number; holders: PortHolder[] }[]): Promise<Record<string, ContainerHold>> {
  const out: Record<string, ContainerHold> = {};
  for (const b of busy) {
    for (const h of b.holders) {
      const c = await containerOfHolder(fs, h, b.port);
      if (c !== null) out[`${b.port}:${h.pid}`] = c;
    }
  }
  return out;
}
