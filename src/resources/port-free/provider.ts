// PortFree: frees control-plane ports by stopping and disabling the systemd
// unit behind each listener, never by killing a PID (Restart=always would
// bring it straight back). Offline it disables, in the image, the units that
// would take a wanted port at boot.
import { resourceName } from '../../desired-state.js';
import { busyPorts, readListeners } from '../../observe/listeners.js';
import { CONTROL_PLANE_PORTS, PORT_FREE_SCHEMA, type PortFreeSpec } from './spec.js';
import type { Change, Provider } from '../types.js';
import type { WriteDoor } from '../../door/door.js';
import { removeUnitLinks } from '../../systemd/unit-links.js';
import { maskOver } from '../../systemd/unit-mask.js';
import type { TargetFs } from '../../host.js';
import { SYSTEMD_SYSTEM_ETC } from '../../systemd/unit-dirs.js';
import { observeLive, observeOffline } from '../../ports/discover.js';
import { waitForPortCandidates } from './first-boot-wait.js';
import type { PortFreeObserved } from '../../ports/observed.js';
import type { ContainerStopOp, PortFreeOp, StopOp } from './ops.js';
import { diffLivePort } from './diff-live.js';
import { diffOffline } from './diff-offline.js';
import { applyLive, portsReport } from './apply-live.js';
import { applyContainerStops } from './apply-containers.js';
import { PORT_KIND, portPromise } from './promises.js';
import { bootStarterUnknowns, offlineBootUnknowns } from './boot-starters.js';
import { transientMakerChanges, transientMakers, transientUnknowns, type TransientMaker } from './transient.js';

async function applyOffline(door: WriteDoor, host: TargetFs, changes: Change<PortFreeOp>[]): Promise<void> {
  for (const c of changes) {
    const op = c.op;
    if (op.kind === 'disable-links') {
      await removeUnitLinks(door, op.links);
    } else if (op.kind === 'mask-link') {
      await maskOver(door, host, SYSTEMD_SYSTEM_ETC, op.unit);
    }
  }
}

export const portFreeProvider: Provider<PortFreeSpec, PortFreeObserved & { transientMakers?: TransientMaker[] }, PortFreeOp> = {
  type: 'PortFree',
  schema: PORT_FREE_SCHEMA,
  after: [],

  promised: (spec) => spec.ports.map((p) => ({ id: portPromise(p), kind: 'port', subject: String(p), expect: 'free' })),
  promiseKinds: { port: PORT_KIND },
  // before.json's busy_ports: the control-plane ports with a LISTEN socket, ascending; the plan's answer when its
  // resources looked at every one of them.
  beforeState: async (host, seen) => {
    const looked = new Set(seen.listeners?.ports ?? []);
    const busy = new Set(seen.listeners?.busy ?? []);
    if (CONTROL_PLANE_PORTS.every((p) => looked.has(p))) return { busy_ports: CONTROL_PLANE_PORTS.filter((p) => busy.has(p)) };
    return { busy_ports: busyPorts(await readListeners(host), [...CONTROL_PLANE_PORTS]) };
  },

  // Before.json's busy_ports: what was listening on the running host before anything changed.
  facts: (spec, o) => (o.mode === 'live' ? { listeners: { ports: spec.ports, busy: o.busy.map((b) => b.port) } } : {}),

  // Who listens on a port is known only once services run: the image's first boot frees the ports,
  // after waiting for the candidates the bake found.
  atFirstBoot: (spec, changes) => ({
    work: [`${resourceName(spec)}: free ${spec.ports.join(', ')} from whatever holds them then`],
    candidates: changes.flatMap((c) => (c.op.kind === 'first-boot-wait' ? [c.op.unit] : [])),
    timeoutSec: spec.timeout_seconds,
  }),
  // The first boot waits for the running candidates to listen or stop before it frees the ports (first-boot-wait.ts).
  firstBootWait: (host, spec, ctx) => waitForPortCandidates(host, spec, ctx, observeLive),

  async observe(host, spec) {
    if (!host.live) return observeOffline(host, spec);
    const o = await observeLive(host, spec);
    const makers = await transientMakers(host, o);
    return makers === undefined ? o : { ...o, transientMakers: makers };
  },

  // What starts a unit at boot could not be told from the image's unit files: say so, with why.
  warnings: (_spec, o) =>
    o.mode === 'offline' && o.graphUnknown !== null && o.sockets.length + o.disableUnits.length + o.candidates.length > 0
      ? [`PortFree: what would start the units above again at boot is unknown (${o.graphUnknown}); only their own links and vendor links were judged`]
      : [],

  unknowns: (spec, o) => (o.mode === 'live' ? [...transientUnknowns(o), ...bootStarterUnknowns(spec, o)] : offlineBootUnknowns(spec, o)),

  diff(spec, observed, ctx) {
    if (observed.mode === 'live') return [...observed.busy.map((b) => diffLivePort(spec, observed, b)), ...transientMakerChanges(observed)];
    return diffOffline(spec, observed, ctx?.firstBoot === true);
  },

  async apply(host, spec, changes, ctx) {
    if (!host.live) {
      await applyOffline(ctx.door, host, changes);
      return;
    }
    const ops = changes.map((c) => c.op).filter((op): op is StopOp => op.kind === 'stop');
    const boxes = changes.map((c) => c.op).filter((op): op is ContainerStopOp => op.kind === 'container-stop');
    if (ops.length === 0 && boxes.length === 0) return;
    const held = boxes.length > 0 ? await applyContainerStops(host, boxes, spec.timeout_seconds * 1000, ctx) : { errors: [], failedPorts: [] };
    const live = ops.length > 0 ? await applyLive(host, spec, ops, ctx) : { freed: [] };
    const { freed } = live;
    const failedPorts = [...(live.failedPorts ?? []), ...held.failedPorts];
    const error = [live.error, ...(held.errors.length > 0 ? [`PortFree: ${held.errors.join('; ')}`] : [])].filter(Boolean).join('; ') || undefined;
    const report = portsReport(freed);
    // Each change is one port: a port that failed is its change, and its promise, and no other's.
    const failed = new Set(failedPorts);
    const failedIds = changes
      .filter((c) => ['stop', 'container-stop'].includes((c.op as PortFreeOp).kind) && failed.has((c.op as StopOp | ContainerStopOp).port))
      .map((c) => c.id);
    return {
      ...(report ? { reports: { 'ports.json': report } } : {}),
      ...(error ? { error, ...(failedPorts.length > 0 ? { failedChanges: failedIds, failedPromises: [...failed].map(portPromise) } : {}) } : {}),
    };
  },
};
