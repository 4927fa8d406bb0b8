// The operator line for a port held by a container outside Kubernetes: which
// container (id, name, image, restart policy), what brings it back at boot,
// and exactly what to run. The runtime itself (dockerd, containerd, podman)
// is never stopped for it: it runs every container on the host. Pure.
import type { Change } from '../types.js';
import type { BusyPort, LivePortsObserved } from '../../ports/observed.js';
import type { ContainerHold } from '../../containers/holder.js';
import type { DockerContainer } from '../../containers/docker-state.js';
import type { HeldContainer } from '../../containers/holder.js';
import type { PodmanContainer } from '../../containers/podman-state.js';
import { operatorChange, type PortFreeOp } from './ops.js';
import type { PortFreeSpec } from './spec.js';

const short = (id: string) => id.slice(0, 12);

/** What starts a Docker container again at boot: dockerd starts always and unless-stopped ones (not stopped by hand) when it starts. */
function dockerComeback(c: DockerContainer, enabled: boolean | null): string {
  if (c.restart === null) return 'whether it comes back at boot is unknown (its restart policy could not be read)';
  if (c.restart === 'no' || c.restart === 'on-failure') return `its restart policy ${c.restart} does not start it at boot`;
  if (enabled === false)
    return `its restart policy ${c.restart} starts it whenever dockerd starts; docker.service is not enabled, but anything that starts dockerd (docker.socket, a person) brings it back`;
  if (enabled === null) return `its restart policy ${c.restart} starts it whenever dockerd starts, and whether docker.service is enabled is unknown`;
  return `docker.service is enabled and the restart policy ${c.restart} starts it again at every boot`;
}

function dockerLine(c: DockerContainer, hold: ContainerHold): string {
  const ref = c.name ?? short(c.id);
  const what = `docker container ${short(c.id)} "${c.name ?? 'unknown name'}" (image ${c.image ?? 'unknown'}, restart policy ${c.restart ?? 'unknown'}${c.networkMode ? `, network ${c.networkMode}` : ''})`;
  const unknown = c.unknown.length > 0 ? `; unknown: ${c.unknown.join('; ')}` : '';
  return `it is ${what}, found as ${hold.how}; ${dockerComeback(c, hold.runtimeEnabled)}${unknown}. Run: docker update --restart=no ${ref} && docker stop ${ref} (dockerd itself is never stopped: it runs every container on this host)`;
}

/** What brings a podman container back at boot: its quadlet, a generated unit, podman-restart.service. */
function podmanComeback(ref: string, hold: ContainerHold): { back: string; run: string[] } {
  const q = hold.quadlet ?? null;
  const run: string[] = [];
  const back: string[] = [];
  if (q !== null) {
    const net = [...q.publishPorts.map((p) => `PublishPort=${p}`), ...(q.network ? [`Network=${q.network}`] : [])].join(', ');
    const boot =
      q.startedBy.length > 0
        ? `its [Install] ${q.startedBy.join(' ')} starts it at every boot`
        : 'it has no [Install] target, so it does not start at boot by itself';
    back.push(`the quadlet ${q.file} makes ${q.unit} (ContainerName=${q.containerName}${net ? `, ${net}` : ''}); ${boot}`);
    run.push(
      `systemctl stop ${q.unit}, move ${q.file} out of ${q.file.slice(0, q.file.lastIndexOf('/'))} and run systemctl daemon-reload (a quadlet's unit is generated: systemctl disable cannot disable it)`,
    );
  }
  for (const u of hold.podmanUnits ?? []) {
    const en = u.enabled === null ? 'whether it is enabled is unknown' : u.enabled ? 'it is enabled' : 'it is not enabled';
    back.push(`${u.unit} (${u.file}:${u.line}) starts it with podman; ${en}`);
    run.push(`systemctl disable --now ${u.unit}`);
  }
  const restart = hold.runtimeEnabled === null ? 'whether it is enabled is unknown' : hold.runtimeEnabled ? 'it is enabled' : 'it is not enabled';
  back.push(`podman-restart.service starts every container whose restart policy is always at boot (${restart})`);
  if (run.length === 0) run.push(`podman stop ${ref} && podman update --restart=no ${ref} (podman 5 and later; older: podman rm ${ref})`);
  return { back: back.join('; '), run };
}

function podmanLine(c: PodmanContainer, hold: ContainerHold): string {
  const ref = c.name ?? short(c.id);
  const what = `podman container ${short(c.id)} "${c.name ?? 'unknown name'}" (image ID ${c.image ? short(c.image) : 'unknown'})`;
  const unread = (hold.quadletsUnread ?? []).length > 0 ? `; not read: ${hold.quadletsUnread!.join(', ')}` : '';
  const { back, run } = podmanComeback(ref, hold);
  return `it is ${what}, found as ${hold.how}; ${back}; unknown: ${c.unknown.join('; ')}${unread}. Run: ${run.join('; ')} (podman is never stopped as a whole)`;
}

function holdLine(pids: number[], comm: string | null, hold: ContainerHold): string {
  const who = `${pids.length > 1 ? 'pids' : 'pid'} ${pids.join(', ')} (${comm ?? 'unknown'})`;
  if (hold.container === null)
    return `${who} belongs to a container (${hold.how}), but which one is unknown: ${hold.error}; find it with docker ps or podman ps`;
  return `${who}: ${hold.container.runtime === 'docker' ? dockerLine(hold.container, hold) : podmanLine(hold.container, hold)}`;
}

/**
 * The port's container holders, one group per container found the same way: dockerd starts one docker-proxy per
 * address family for a published port (-host-ip 0.0.0.0 and -host-ip ::, seen on Debian's docker.io in the boot
 * farm), so one container stands behind two holders and is named once. A holder whose container is unknown stays alone.
 */
function holdGroups(o: LivePortsObserved, b: BusyPort): { pids: number[]; comm: string | null; hold: ContainerHold }[] {
  const groups: { key: string; pids: number[]; comm: string | null; hold: ContainerHold }[] = [];
  for (const h of b.holders) {
    const hold = o.containers?.[`${b.port}:${h.pid}`];
    if (hold === undefined) continue;
    const c = hold.container;
    const key = c === null ? `pid ${h.pid}` : JSON.stringify([c.runtime, c.id, h.comm, hold.how]);
    const g = groups.find((x) => x.key === key);
    if (g !== undefined) g.pids.push(h.pid);
    else groups.push({ key, pids: [h.pid], comm: h.comm, hold });
  }
  return groups;
}

/** Whether stop_containers names this container: by name, or by an id prefix of 12 or more characters. */
function allowed(spec: PortFreeSpec, c: HeldContainer): boolean {
  return (spec.stop_containers ?? []).some((n) => n === c.name || (n.length >= 12 && c.id.startsWith(n)));
}

/** The stop for a port every holder of which is one Docker container stop_containers names, with its restart policy known; else null. */
function containerStop(spec: PortFreeSpec, o: LivePortsObserved, b: BusyPort, id: string, head: string): Change<PortFreeOp> | null {
  const holds = b.holders.map((h) => o.containers?.[`${b.port}:${h.pid}`]?.container ?? null);
  const c = holds[0];
  if (!c || c.runtime !== 'docker' || c.restart === null || !holds.every((x) => x?.id === c.id) || !allowed(spec, c)) return null;
  const h = b.holders[0]!;
  const ref = c.name ?? short(c.id);
  const pids = b.holders.map((x) => x.pid);
  return {
    id,
    action: 'stop',
    runtime: true,
    summary: `${head} held by ${pids.length > 1 ? 'pids' : 'pid'} ${pids.join(', ')} (${h.comm ?? 'unknown'}), docker container ${short(c.id)} "${ref}" (restart policy ${c.restart}), named in stop_containers: docker update --restart=no ${ref}, then docker stop ${ref} (--rollback sets --restart=${c.restart} again and starts it)`,
    op: { kind: 'container-stop', port: b.port, pid: h.pid, runtime: 'docker', id: c.id, name: c.name, restart: c.restart },
  };
}

/**
 * For a port every holder of which is one podman container stop_containers names, started by exactly one unit
 * `podman generate systemd` wrote and no quadlet: that unit, to be stopped and disabled the way PortFree stops any
 * unit (journaled; stopping it runs its ExecStop=, podman stop), never masked: the mask of an admin's unit in /etc
 * sets its file aside first, and a stop without its ExecStop= leaves the container (in its libpod scope) running,
 * as the boot farm showed. Null otherwise (the operator line stays).
 */
export function podmanUnitToStop(spec: PortFreeSpec, o: LivePortsObserved, b: BusyPort): { unit: string; proof: string } | null {
  const holds = b.holders.map((h) => o.containers?.[`${b.port}:${h.pid}`] ?? null);
  const c = holds[0]?.container ?? null;
  if (c === null || c.runtime !== 'podman' || !holds.every((x) => x?.container?.id === c.id) || !allowed(spec, c)) return null;
  const hold = holds[0]!;
  const units = hold.podmanUnits ?? [];
  if ((hold.quadlet ?? null) !== null || (hold.quadletsUnread ?? []).length > 0 || units.length !== 1) return null;
  const u = units[0]!;
  const ref = c.name ?? short(c.id);
  return {
    unit: u.unit,
    proof: `podman container ${short(c.id)} "${ref}" (${hold.how}), named in stop_containers, is started by ${u.unit} (${u.file}:${u.line}, written by podman generate systemd; not masked: a mask sets its file aside, and the stop must run its ExecStop=, podman stop, for the container runs in a scope of its own)`,
  };
}

/** Why a podman container stop_containers names is still left to a person (podmanUnitToStop found no unit to stop); null when none is named. */
function podmanNotStopped(spec: PortFreeSpec, o: LivePortsObserved, b: BusyPort): string | null {
  const hold = o.containers?.[`${b.port}:${b.holders[0]?.pid}`];
  const c = hold?.container ?? null;
  if (!hold || c === null || c.runtime !== 'podman' || !allowed(spec, c)) return null;
  const units = hold.podmanUnits ?? [];
  const why =
    (hold.quadlet ?? null) !== null
      ? `its quadlet ${hold.quadlet!.file} makes its unit, and apply does not set quadlets aside`
      : (hold.quadletsUnread ?? []).length > 0
        ? `a quadlet that could not be read may start it`
        : units.length > 1
          ? `${units.length} units start it (${units.map((u) => u.unit).join(', ')})`
          : b.holders.some((h) => o.containers?.[`${b.port}:${h.pid}`]?.container?.id !== c.id)
            ? 'another process holds the port too'
            : "no unit starts it, so what brings it back is its restart policy, which is in libpod's database and not read; " +
              "podman 4's podman update has no --restart to set it to no, and podman-restart.service starts a stopped container whose policy is always again at boot";
  return `"${c.name ?? short(c.id)}" is named in stop_containers but not stopped: ${why}`;
}

/** The operator line when a holder of the port is a container's (or its stop, when stop_containers names it); null when none is. */
export function containerChange(
  spec: PortFreeSpec,
  o: LivePortsObserved,
  b: BusyPort,
  id: string,
  head: string,
  opBase: { port: number; unit: string | null; pid: number | null },
): Change<PortFreeOp> | null {
  const lines = holdGroups(o, b).map((g) => holdLine(g.pids, g.comm, g.hold));
  if (lines.length === 0) return null;
  const stop = containerStop(spec, o, b, id, head);
  if (stop !== null) return stop;
  const holders = b.holders.map((h) => `pid ${h.pid} (${h.comm ?? 'unknown'})${h.placement?.unit ? ` in ${h.placement.unit}` : ''}`).join(', ');
  const notStopped = podmanNotStopped(spec, o, b);
  return operatorChange(id, `${head} held by ${holders}`, [...lines, ...(notStopped ? [notStopped] : [])].join('; '), opBase);
}
