// PortFree's change operations: what apply does for each change.
import type { Change } from '../types.js';
import type { UserRoute } from '../../ports/user-manager.js';
import { portPromise } from './promises.js';
import type { SharedEnd } from './shared-holder.js';

export interface StopOp {
  kind: 'stop';
  port: number;
  /** PID recorded before the stop (the service's process; PID 1 only when nothing else holds it). */
  pid: number;
  comm: string | null;
  /** The unit reported in ports.json: the service (for socket activation, the socket's service). */
  unit: string;
  /** Units to stop, disable (and mask), socket before its service so it cannot re-activate it. */
  units: string[];
  socket: string | null;
  /** The units of `units` that only trigger the others (.path, .timer, .socket): stopped before them, in a call of their own. */
  triggers?: string[];
  /** Decided by the diff: mask: true, or mask: auto with a way back at boot. */
  mask: boolean;
  /** What would still start the units at boot after the disable (the reasons mask: auto masks for). */
  comeback?: string[];
  /** Set for a holder in a per-user manager: every systemctl call goes to that user's manager. */
  user?: { name: string; uid: number; gid: number; home: string; lingers: boolean; route: UserRoute };
  /** The units of `units` that are transient (systemd-run): stopped only, with no file to disable or mask. */
  transient?: string[];
  /** How the unit was identified as the holder's own (or released by stop_spawner_units). */
  proof: string;
  /** What else stopping the units ends (a holder that serves others, stopped because stop_shared_holders is true). */
  ends?: SharedEnd[];
}

export interface OfflineDisableOp {
  kind: 'disable-links';
  unit: string;
  /** Enablement links to remove (what `systemctl --root disable UNIT` removes); emptied directories go too. */
  links: string[];
}

export interface OfflineMaskOp {
  kind: 'mask-link';
  unit: string;
}

export interface OperatorOp {
  kind: 'operator';
  port: number | null;
  unit: string | null;
  pid: number | null;
  /** A holder that serves others, left running (stop_shared_holders: false): what its stop would end. */
  ends?: SharedEnd[];
}

/** Offline, with a first boot: a candidate the first-boot run waits for (never applied by the bake). */
export interface FirstBootWaitOp {
  kind: 'first-boot-wait';
  port: number;
  unit: string;
}

/** A Docker container stopped for a port (stop_containers): its restart policy set to no, then stopped. */
export interface ContainerStopOp {
  kind: 'container-stop';
  port: number;
  pid: number;
  runtime: 'docker';
  /** The full container id (the directory under /var/lib/docker/containers). */
  id: string;
  name: string | null;
  /** Its restart policy before: the journal keeps it for --rollback. */
  restart: 'no' | 'always' | 'unless-stopped' | 'on-failure';
}

export type PortFreeOp = ContainerStopOp | StopOp | OfflineDisableOp | OfflineMaskOp | OperatorOp | FirstBootWaitOp;

export function operatorChange(id: string, summary: string, reason: string, op: Omit<OperatorOp, 'kind'>): Change<PortFreeOp> {
  // The renderer prints `operator` as the reason, so the summary only names what was found.
  // A line about one port takes back that port's promise; one about a unit (offline), every port's.
  const withdraws = op.port !== null ? [{ promise: portPromise(op.port), from: 'apply' as const }] : undefined;
  return { id, action: 'operator', summary, operator: reason, op: { kind: 'operator', ...op }, ...(withdraws ? { withdraws } : {}) };
}
