// PortFree's live apply: record each holder, stop and disable its units (or
// disable, mask, then stop) through the door's runtime steps, then wait for the ports to stay free.
import path from 'node:path';
import type { TargetHost, Host } from '../../host.js';
import type { PortFreeSpec } from './spec.js';
import type { ApplyContext } from '../types.js';
import { linkDelta, unitLinkSnapshot } from '../../systemd/unit-links.js';
import { restartDelayMs, waitFree } from '../../ports/wait-free.js';
import type { StopOp } from './ops.js';
import { loadUnitGraph } from '../../systemd/unit-loader.js';
import { userConfigDir, userUnitPath } from '../../systemd/unit-dirs.js';
import { userLinkSnapshot, userSystemctl } from '../../ports/user-manager.js';
import { SYSTEM_SYSTEMCTL, systemctlArgv, type Systemctl } from '../../systemd/systemctl-show.js';
import { maskOver, maskSpotOf } from '../../systemd/unit-mask.js';
import { rcLinkSnapshot } from '../../systemd/sysv.js';
import { SYSTEMD_SYSTEM_ETC } from '../../systemd/unit-dirs.js';
import { comebackOf, graphUnknown } from '../../ports/stays-free.js';
import { readListeners } from '../../observe/listeners.js';
import { findSocketHolders } from '../../ports/proc-fd.js';
import { parseCgroup } from '../../systemd/cgroup.js';

export interface FreedPort {
  port: number;
  unit: string;
  pid: number;
  /** Set for socket activation: the socket unit stopped with the service. */
  socket?: string;
  /** Set when the unit is a user manager's: whose. */
  user?: string;
}

/**
 * `disable` removes [Install] links only. A unit that is still "static",
 * "indirect" or enabled afterwards can be pulled in at boot by something
 * else (a Wants= elsewhere, a vendor .wants link, a /run link); say so,
 * since only mask: true rules that out. A warning, not an error: a static
 * unit that nothing wants stays down.
 */
async function warnIfStillStartable(host: TargetHost, unit: string, progress: (m: string) => void): Promise<void> {
  let state = '';
  try {
    state = (await host.run('systemctl', ['is-enabled', unit])).stdout.trim();
  } catch {
    return;
  }
  if (['static', 'indirect', 'enabled', 'enabled-runtime', 'generated', 'alias', 'linked', 'linked-runtime'].includes(state)) {
    progress(`PortFree: warning: ${unit} is "${state}" after disable; if another unit pulls it in at boot it comes back (mask: true prevents that)`);
  }
}

/** The apply across its ops: the units already acted on, and what came of each port. */
interface PortApply {
  host: Host;
  ctx: ApplyContext;
  timeoutMs: number;
  /** Unit (by doneKey) -> its restart delay; one unit may hold several ports (etcd: 2379 and 2380): act on it once. */
  done: Map<string, number>;
  /** Port -> how long it must stay free before it counts as freed. */
  holds: Map<number, number>;
  stopped: Set<number>;
  failedPorts: Set<number>;
  errors: string[];
}

/** One op's units being stopped: through which manager, named how in the journal. */
interface UnitStop {
  host: Host;
  ctx: ApplyContext;
  op: StopOp;
  via: Systemctl;
  timeoutMs: number;
  who: JournalWho;
  /** Triggers first, in a call of their own: a .path or .timer still active starts the unit again as soon as it stops. */
  triggers: string[];
  rest: string[];
}

type JournalWho = ReturnType<typeof journalWho>;

export async function applyLive(
  host: Host,
  spec: PortFreeSpec,
  ops: StopOp[],
  ctx: ApplyContext,
): Promise<{ freed: FreedPort[]; error?: string; failedPorts?: number[] }> {
  // 1. Record what holds each port before anything is touched.
  const records = recordHolders(ops, ctx);
  const a: PortApply = {
    host,
    ctx,
    timeoutMs: spec.timeout_seconds * 1000,
    done: new Map(),
    holds: new Map(),
    stopped: new Set(),
    failedPorts: new Set(),
    errors: [],
  };
  for (const op of ops) await freePort(a, op);
  const failed = a.holds.size > 0 ? await waitFree(host, a.holds, a.timeoutMs, ctx.progress) : new Map<number, string>();
  for (const [, why] of failed) a.errors.push(why);
  // Free now is not free at boot: ask the unit graph, as it is after the disable and mask, what still starts them.
  // A transient unit is not in the unit graph once stopped; what makes it again is the plan's own line (transient.ts).
  const lastingOps = ops
    .filter((op) => a.stopped.has(op.port))
    .map((op) => ({ ...op, units: op.units.filter((u) => !op.transient?.includes(u)) }))
    .filter((op) => op.units.length > 0);
  for (const [port, why] of await stillStartedAtBoot(host, lastingOps, ctx.progress)) {
    failed.set(port, why);
    a.errors.push(why);
  }
  const freed = records.filter((r) => a.stopped.has(r.port) && !failed.has(r.port));
  for (const port of failed.keys()) a.failedPorts.add(port);
  if (a.errors.length > 0) {
    const ok = freed.length > 0 ? ` (freed: ${freed.map((f) => `${f.port} from ${f.unit}`).join(', ')})` : '';
    return { freed, error: `PortFree: ${a.errors.join('; ')}${ok}`, failedPorts: [...a.failedPorts].sort((x, y) => x - y) };
  }
  return { freed };
}

function recordHolders(ops: StopOp[], ctx: ApplyContext): FreedPort[] {
  const records: FreedPort[] = ops.map((op) => ({
    port: op.port,
    unit: op.unit,
    pid: op.pid,
    ...(op.socket ? { socket: op.socket } : {}),
    ...(op.user ? { user: op.user.name } : {}),
  }));
  for (const r of records) ctx.progress(`PortFree: port ${r.port}: recorded unit ${r.unit}, pid ${r.pid}${r.socket ? `, socket ${r.socket}` : ''}`);
  return records;
}

/** A user manager's unit is a different unit from a system one of the same name. */
function doneKey(op: StopOp, u: string): string {
  return op.user ? `${op.user.name}@:${u}` : u;
}

async function freePort(a: PortApply, op: StopOp): Promise<void> {
  try {
    const todo = op.units.filter((u) => !a.done.has(doneKey(op, u)));
    if (todo.length > 0) await stopAndDisable(a, op, todo);
    a.holds.set(op.port, Math.max(...op.units.map((u) => a.done.get(doneKey(op, u)) ?? 0)) + 1000);
    a.stopped.add(op.port);
  } catch (e) {
    a.failedPorts.add(op.port);
    a.errors.push(`port ${op.port} (${op.units.join(', ')}${op.user ? ` of ${op.user.name}'s manager` : ''}): ${(e as Error).message}`);
  }
}

/** The journal names the route too: the rollback asks the user's manager the same way. */
function journalWho(op: StopOp) {
  return op.user ? { user: op.user.name, ...(op.user.route === 'private' ? { route: 'private' as const, uid: op.user.uid, gid: op.user.gid } : {}) } : {};
}

async function stopAndDisable(a: PortApply, op: StopOp, todo: string[]): Promise<void> {
  const triggers = todo.filter((u) => op.triggers?.includes(u));
  const s: UnitStop = {
    host: a.host,
    ctx: a.ctx,
    op,
    via: op.user ? userSystemctl(op.user) : SYSTEM_SYSTEMCTL,
    timeoutMs: a.timeoutMs,
    who: journalWho(op),
    triggers,
    rest: todo.filter((u) => !triggers.includes(u)),
  };
  // Read before the stop: a stopped unit may be garbage-collected and lose its properties.
  const restart = await restartDelayMs(a.host, todo, s.via);
  // A unit that is masked is mask-first: the manager starts an unmasked unit again the moment it stops when
  // another active unit upholds it (Upholds=, systemd 249+) or a starter pulls it in; a masked one it refuses.
  // The rollback undoes links before it starts units, so this order undoes cleanly.
  // A stop that fails still gets the disable: left enabled, the unit would start again at boot.
  let stopFailed: unknown = null;
  if (!op.mask) await stopUnits(s).catch((e: unknown) => (stopFailed = e));
  // A transient unit's file goes with its stop: there is nothing to disable or mask (the plan said so).
  const lasting = todo.filter((u) => !op.transient?.includes(u));
  if (lasting.length > 0) await linkStep(s, 'unit-disable', lasting);
  if (op.mask) {
    await maskUnits(s, lasting);
    await stopUnits(s);
  }
  for (const u of todo) a.done.set(doneKey(op, u), restart);
  if (!op.mask && !op.user && lasting.length > 0) await warnIfStillStartable(a.host, op.socket ?? op.unit, a.ctx.progress);
  if (stopFailed !== null) throw stopFailed;
}

function systemctl(s: UnitStop, rest: string[]) {
  return s.host.runChecked(...systemctlArgv(s.via, rest), { timeoutMs: s.timeoutMs });
}

/** The system's links include /etc/rc?.d: disabling an init script's unit renames them (update-rc.d). */
async function linkSnapshot(s: UnitStop) {
  return s.op.user ? userLinkSnapshot(s.host, s.op.user.home) : new Map([...(await unitLinkSnapshot(s.host)), ...(await rcLinkSnapshot(s.host))]);
}

/**
 * `systemctl disable|mask UNITS` through the door. The journal gets the links systemctl itself changed, read
 * before and after, so a rollback puts back exactly those.
 */
async function linkStep(s: UnitStop, step: 'unit-disable' | 'unit-mask', units: string[]): Promise<void> {
  const before = await linkSnapshot(s);
  await s.ctx.door.runtime(
    { step, units, ...s.who },
    () => systemctl(s, [step === 'unit-disable' ? 'disable' : 'mask', ...units]),
    async () => linkDelta(before, await linkSnapshot(s)),
  );
}

/** A unit whose own file holds the mask link's place (an admin's unit in /etc): set aside and masked through the door. */
async function maskUnits(s: UnitStop, lasting: string[]): Promise<void> {
  const { host, op, ctx } = s;
  const dir = op.user ? userConfigDir(op.user.home) : SYSTEMD_SYSTEM_ETC;
  const over: string[] = [];
  for (const u of lasting) if ((await maskSpotOf(host, dir, u)).kind === 'taken') over.push(u);
  const plain = lasting.filter((u) => !over.includes(u));
  if (plain.length > 0) await linkStep(s, 'unit-mask', plain);
  for (const u of over) {
    const aside = await maskOver(ctx.door, host, dir, u);
    ctx.progress(`PortFree: port ${op.port}: masked ${u}: ${path.posix.join(dir, u)} -> /dev/null${aside ? `; its unit file is kept at ${aside}` : ''}`);
  }
  if (over.length > 0) await s.ctx.door.runtime({ step: 'daemon-reload', ...s.who }, () => systemctl(s, ['daemon-reload']));
}

/** One journaled step, so a rollback starts them in one transaction (a socket before its service). */
function stopUnits(s: UnitStop): Promise<void> {
  const { op, ctx } = s;
  return ctx.door
    .runtime({ step: 'unit-stop', units: [...s.triggers, ...s.rest], ...s.who }, async () => {
      for (const batch of [s.triggers, s.rest]) {
        if (batch.length === 0) continue;
        ctx.progress(
          `PortFree: port ${op.port}: ${systemctlArgv(s.via, ['stop', ...batch])
            .flat()
            .join(' ')}`,
        );
        await systemctl(s, ['stop', ...batch]);
      }
    })
    .then(() => killLeftovers(s.host, op.port, op.user ? [] : s.rest, ctx, (units) => killStep(s, units)));
}

function killStep(s: UnitStop, units: string[]): Promise<void> {
  const { host, op, ctx } = s;
  return ctx.door.runtime({ step: 'unit-kill', units }, async () => {
    ctx.progress(
      `PortFree: port ${op.port}: still held in ${units.join(' and ')}'s cgroup after the stop (KillMode=process or none): ${systemctlArgv(s.via, [
        'kill',
        '--kill-whom=all',
        '--signal=SIGTERM',
        ...units,
      ])
        .flat()
        .join(' ')}`,
    );
    try {
      await systemctl(s, ['kill', '--kill-whom=all', '--signal=SIGTERM', ...units]);
    } catch (e) {
      await killByPid(host, op.port, units, (e as Error).message, ctx);
    }
  });
}

/**
 * A unit with KillMode=process (or none) leaves the rest of its cgroup running
 * when it stops. When the port is still held by a process whose cgroup is one
 * of the stopped services (the kernel's record that the unit started it; the
 * plan proved it is the unit's own), the rest of that unit's cgroup gets
 * SIGTERM through the manager, and nothing outside the unit does.
 */
async function killLeftovers(host: Host, port: number, services: string[], ctx: ApplyContext, kill: (units: string[]) => Promise<unknown>): Promise<void> {
  if (services.length === 0) return;
  const left = new Set((await leftovers(host, port, services)).values());
  if (left.size === 0) return;
  await kill([...left]);
  ctx.progress(`PortFree: port ${port}: sent SIGTERM to what was left in ${[...left].join(' and ')}`);
}

/** The processes holding `port` whose cgroup is one of `services` (pid -> unit), as the kernel shows them now. */
async function leftovers(host: Host, port: number, services: string[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  const inodes = (await readListeners(host)).filter((l) => l.port === port).map((l) => l.inode);
  if (inodes.length === 0) return out;
  const scan = await findSocketHolders(host, inodes);
  for (const pid of new Set([...scan.holders.values()].flat())) {
    const cg = await host.readKernel(`/proc/${pid}/cgroup`).catch(() => null);
    const unit = cg === null ? null : (parseCgroup(cg)?.unit ?? null);
    if (unit !== null && services.includes(unit)) out.set(pid, unit);
  }
  return out;
}

/**
 * `systemctl kill` failed. systemd 252 answers "Failed to send signal SIGTERM
 * to auxiliary processes: Input/output error" when the stopped unit was
 * garbage-collected or its cgroup emptied while it signalled (seen on a
 * loaded machine; the boot farm's seed 478), sometimes after the signal went
 * out. What is left decides: nothing of the units holding the port is done;
 * else the processes the kernel shows in the units' cgroups, holding the
 * port, get SIGTERM by pid (read again just before, so no other process does).
 */
async function killByPid(host: Host, port: number, units: string[], why: string, ctx: ApplyContext): Promise<void> {
  const left = await leftovers(host, port, units);
  if (left.size === 0) {
    ctx.progress(`PortFree: port ${port}: systemctl kill failed (${why.split('\n')[0]}), but nothing of ${units.join(' and ')} holds the port any more`);
    return;
  }
  const pids = [...left.keys()].sort((a, b) => a - b).map(String);
  ctx.progress(
    `PortFree: port ${port}: systemctl kill failed (${why.split('\n')[0]}); the kernel still shows pid ${pids.join(', ')} in ${units.join(' and ')}'s cgroup holding the port: kill -s TERM -- ${pids.join(' ')}`,
  );
  await host.runChecked('kill', ['-s', 'TERM', '--', ...pids]);
}

/** Per port: why a unit PortFree stopped would still start at boot (the unit files as they are now). */
async function stillStartedAtBoot(host: Host, ops: StopOp[], progress: (m: string) => void): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  if (ops.length === 0) return out;
  host.forgetLinks(); // systemctl changed links behind the Host's back
  // One graph per manager: the system's, and each user's own unit tree.
  const trees = new Map<string, StopOp[]>();
  for (const op of ops) {
    const k = op.user ? op.user.home : '';
    trees.set(k, [...(trees.get(k) ?? []), op]);
  }
  for (const [home, group] of trees) {
    const graph = await loadUnitGraph(host, { names: group.flatMap((op) => op.units), ...(home ? { dirs: userUnitPath(home) } : {}) });
    const unknown = graphUnknown(graph);
    if (unknown !== null) {
      progress(`PortFree: warning: whether the stopped units start again${home ? ` (user manager of ${group[0]!.user!.name})` : ''} is unknown: ${unknown}`);
      continue;
    }
    for (const op of group) {
      const reach = comebackOf(graph, op.units);
      const when = op.user ? (op.user.lingers ? 'at boot' : `when ${op.user.name} logs in`) : 'at boot';
      if (reach.reasons.length > 0)
        out.set(op.port, `port ${op.port} is free now, but ${reach.reasons.join('; ')}: it would start again ${when} (mask: auto or true masks it)`);
    }
  }
  return out;
}

/** ports.json: the lowest freed port at top level, every freed port under `freed`. */
export function portsReport(freed: FreedPort[]): Record<string, unknown> | null {
  if (freed.length === 0) return null;
  const sorted = [...freed].sort((a, b) => a.port - b.port);
  const top = sorted[0]!;
  return {
    port: top.port,
    unit: top.unit,
    pid: top.pid,
    ...(top.socket ? { socket: top.socket } : {}),
    ...(top.user ? { user: top.user } : {}),
    freed: sorted,
  };
}
