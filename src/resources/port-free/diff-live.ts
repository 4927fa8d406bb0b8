// PortFree's diff on a live host: one change per busy port, a stop when the
// holder's own service can be proven, else an operator line saying why not.
import type { PortFreeSpec } from './spec.js';
import type { Change } from '../types.js';
import { showArgv } from '../../ports/proc.js';
import { argvMatches } from '../../ports/argv.js';
import { attribute, cronOrigins, loginSessionOf, pidPath, spawnerHarm, type Attribution } from '../../ports/identity.js';
import { protectionOf, spawnerKind } from '../../ports/protection.js';
import { SUPERVISOR_UNIT_STEMS, stemOf } from '../../ports/discover.js';
import type { BusyPort, LivePortsObserved, PortHolder } from '../../ports/observed.js';
import { operatorChange, type PortFreeOp } from './ops.js';
import { diffUserPort } from './diff-user.js';
import { withTriggers } from '../../ports/triggers.js';
import { setAsidePath } from '../../systemd/unit-mask.js';
import { kubePodOf } from '../../systemd/cgroup.js';
import { TRANSIENT_DIR } from './transient.js';
import { endsText, sharedEnds, sharedOperator, unreadNote } from './shared-holder.js';
import { containerChange, podmanUnitToStop } from './container-line.js';
import path from 'node:path';

function describeHolder(h: PortHolder): string {
  const where = h.placement?.unit ? ` in ${h.placement.unit}` : '';
  return `pid ${h.pid} (${h.comm ?? 'unknown'})${where}`;
}

/** Why a holder cannot be handled by stopping a system service, or null when it can. */
function holderProblem(h: PortHolder): string | null {
  const p = h.placement;
  const who = `pid ${h.pid} (${h.comm ?? 'unknown'})`;
  if (p === null) return `${who}: its cgroup (/proc/${h.pid}/cgroup) could not be read, so its unit is unknown`;
  if (p.container) return `${who} runs in a container (${p.container}); stop it with its container runtime`;
  if (p.unit === null) return `${who} is not in any systemd unit (cgroup ${p.path}); it was started by hand or by a non-systemd init, so stop it by hand`;
  if (p.userUnit !== null || /^user@\d+\.service$/.test(p.unit)) {
    return `${who} belongs to ${p.userUnit ? `user unit ${p.userUnit} of ` : ''}the per-user manager ${p.unit}; stop it with systemctl --user as that user`;
  }
  if (p.unitKind === 'scope')
    return `${who} runs in ${p.unit}, a scope (login session or transient process), not a service that can be stopped and disabled; stop it by hand`;
  if (p.unitKind !== 'service' && p.unitKind !== 'socket') return `${who} runs in ${p.unit}, which is not a service`;
  return null;
}

/** Whether the holder's cgroup unit is its own; unknown when it was not observed. */
function attributionOf(o: LivePortsObserved, h: PortHolder): Attribution {
  const unit = h.placement?.unit ?? '(none)';
  const facts = o.units[unit];
  if (facts === undefined || h.ancestry === null) {
    return { own: false, unit, reason: `pid ${h.pid}'s origin in ${unit} was not read`, unknown: true, path: [] };
  }
  return attribute(h.ancestry, facts, h.mainHoldsSocket);
}

/** Where the listener really comes from, when it can be found: a crontab line, a login session. */
function originOf(o: LivePortsObserved, a: Attribution & { own: false }): string | null {
  if (a.path.length === 0) return null;
  if (o.crontabs !== null) {
    const uids = new Map(Object.entries(o.uids));
    const hits = cronOrigins(a.path, o.crontabs.entries, uids);
    if (hits.length > 0) {
      const lines = hits.map((e) => `${e.file}:${e.line}: ${e.text}`).join(' and ');
      return `It was started by the crontab line ${lines}: remove or change that line, then stop pid ${a.path[0]!.pid}`;
    }
    const unreadable = o.crontabs.unreadable.length > 0 ? `; unreadable: ${o.crontabs.unreadable.join(', ')}` : '';
    return `Its origin is unknown: no crontab line runs its command (read ${o.crontabs.read.join(', ') || 'no crontab'}${unreadable})`;
  }
  if (o.supervisor !== null && SUPERVISOR_UNIT_STEMS.has(stemOf(a.unit))) {
    // supervisord execs command= itself, without a shell.
    const below = a.path.slice(0, -1);
    const hits = o.supervisor.programs.filter((p) => p.argv !== null && below.some((q) => argvMatches(q.argv, p.argv!)));
    if (hits.length > 0) {
      const names = hits.map((p) => `program "${p.name}" (${p.file}:${p.line}: command=${p.command})`).join(' and ');
      return `It is supervisord's ${names}: remove it there, then supervisorctl reread && supervisorctl update`;
    }
    const unreadable = o.supervisor.unreadable.length > 0 ? `; unreadable: ${o.supervisor.unreadable.join(', ')}` : '';
    return `Its origin is unknown: no supervisord program runs its command (read ${o.supervisor.read.join(', ') || 'no supervisord configuration'}${unreadable})`;
  }
  const session = loginSessionOf(a.path.slice(0, -1));
  if (session !== null) return `It was started in the login session of pid ${session.pid} (${showArgv(session.argv)}): stop it there`;
  return null;
}

/** The operator line for a holder whose unit is not its own (or whose origin could not be told). */
function spawnerReason(spec: PortFreeSpec, o: LivePortsObserved, h: PortHolder, a: Attribution & { own: false }): string {
  const self = h.ancestry?.chain[0];
  const who = `pid ${h.pid} (${self ? showArgv(self.argv) : (h.comm ?? 'unknown')})`;
  const optIn = `name ${a.unit} in stop_spawner_units to stop and disable it anyway`;
  const prot = protectionOf(a.unit, { ...spec, stop_spawner_units: [] }, o.selfUnit);
  // The core built-ins (ssh, getty, systemd-*) and protected_units are never released.
  const release = prot !== null && spawnerKind(a.unit) === null ? '' : ` Or ${optIn}.`;
  if (a.unknown) return `${who} in ${a.unit}: ${a.reason}. A unit is never stopped on a guess: find what started pid ${h.pid}.${release}`;
  const path = a.path.length > 0 ? ` (${pidPath(a.path)})` : '';
  const origin = originOf(o, a);
  const harm = prot !== null && spawnerKind(a.unit) === null ? `${prot}; it is never stopped automatically` : spawnerHarm(a.unit, spawnerKind(a.unit));
  return `${who} is not ${a.unit}'s own process: ${a.reason}. ${a.unit} only spawned it${path}: ${harm}.${origin ? ` ${origin}.` : ''}${release}`;
}

/** The units proven to be the holder's own, and how the stop line names them. */
interface StopSelection {
  id: string;
  head: string;
  opBase: { port: number; unit: string | null; pid: number | null };
  units: string[];
  reportUnit: string;
  pid: number;
  comm: string | null;
  socket: string | null;
  proof: string;
  /** Never masked, whatever `mask` says: a unit whose ExecStop= must run (a podman unit: masking sets its file aside). */
  noMask?: boolean;
}

/** What the stop line adds about the units themselves: an init script's links, a file a mask sets aside, a transient unit. */
function stopNotes(o: LivePortsObserved, units: string[], mask: boolean, transient: string[]): string {
  const transientNote =
    transient.length > 0
      ? `; ${transient.join(' and ')} ${transient.length > 1 ? 'are transient units' : 'is a transient unit'} (systemd-run): stopped only, ${transient.length > 1 ? 'their files go' : 'its file goes'} with the stop, so there is nothing to disable or mask`
      : '';
  const scripts = units.flatMap((u) =>
    o.units[u]?.sysv
      ? [
          `${u} is the init script ${o.units[u]!.sysv}: disabling it runs update-rc.d ${path.posix.basename(o.units[u]!.sysv!)} disable, which turns its /etc/rc?.d S links into K links`,
        ]
      : [],
  );
  const sysvNote = scripts.length > 0 ? `; ${scripts.join('; ')}` : '';
  const asides = mask
    ? units.flatMap((u) =>
        o.etcFiles?.[u]
          ? [`${o.etcFiles[u]} is moved to ${setAsidePath(o.etcFiles[u])} (out of the unit search path; --rollback puts it back) and replaced by the mask link`]
          : [],
      )
    : [];
  const asideNote = asides.length > 0 ? `; ${asides.join('; ')}` : '';
  return `${sysvNote}${asideNote}${transientNote}`;
}

/** The stop line for units proven to hold the port: their triggers first, a mask when something would start them at boot. */
function stopChange(spec: PortFreeSpec, o: LivePortsObserved, b: BusyPort, sel: StopSelection): Change<PortFreeOp> {
  // A trigger would start the unit again the moment it stops: it goes first, in the same group.
  const { id, head, opBase, reportUnit, pid, comm, socket, proof } = sel;
  const held = sel.units;
  const units = withTriggers(held, o.triggers);
  const triggers = units.filter((u) => !held.includes(u));
  const protectedWhy = units.map((u) => protectionOf(u, spec, o.selfUnit)).filter((p): p is string => p !== null);
  if (protectedWhy.length > 0) {
    return operatorChange(
      id,
      `${head} held by ${b.holders.map(describeHolder).join(', ')}`,
      `${protectedWhy.join('; ')}; it is never stopped automatically`,
      opBase,
    );
  }
  // A holder that serves others: its stop ends them too, so the desired state decides (stop_shared_holders).
  const ends = sharedEnds(o, b, held);
  if (ends.length > 0 && spec.stop_shared_holders !== true) {
    return operatorChange(id, `${head} held by pid ${pid} (${comm ?? 'unknown'}) in ${reportUnit}`, sharedOperator(b.port, ends), { ...opBase, ends });
  }
  // What would start them again at boot once disabled; not read (a hand-built observation) counts as unknown.
  const cb = o.comeback?.[units.join(' ')];
  const reasons = cb?.reasons ?? [];
  const unknown = cb === undefined ? 'what would start it again at boot was not read' : cb.unknown;
  // A transient unit (systemd-run) has no file of its own to disable or mask: its file in /run/systemd/transient goes
  // when it stops (systemctl disable then fails: "Unit file ... does not exist"). Stopping it is all apply can do; what
  // makes it again at boot is an operator line or an unknown of its own (transient.ts).
  const transient = units.filter((u) => o.units[u]?.fragment?.startsWith(TRANSIENT_DIR) === true);
  const lasting = units.filter((u) => !transient.includes(u));
  const mask = lasting.length > 0 && sel.noMask !== true && (spec.mask === true || (spec.mask === 'auto' && (reasons.length > 0 || unknown !== null)));
  const verbs = lasting.length === 0 ? 'stop' : mask ? 'stop, disable and mask' : 'stop and disable';
  const via = socket ? ` (socket-activated by ${socket})` : '';
  const goFirst =
    triggers.length > 0
      ? `; ${triggers.join(' and ')} trigger${triggers.length > 1 ? '' : 's'} ${held.join(' and ')}, so ${triggers.length > 1 ? 'they go' : 'it goes'} first`
      : '';
  const because =
    spec.mask === 'auto' && mask
      ? ` (${reasons.length > 0 ? reasons.join('; ') : `unknown: ${unknown}`})`
      : !mask && reasons.length > 0
        ? `; but ${reasons.join('; ')}: it would start again at boot, so apply will fail verification (mask: auto or true masks it)`
        : '';
  const notes = stopNotes(o, units, mask, transient);
  const alsoNote = (ends.length > 0 ? `; ${endsText(b.port, ends)} (stop_shared_holders: true)` : '') + unreadNote(o, held);
  return {
    id,
    action: 'stop',
    runtime: true,
    summary: `${head} held by pid ${pid} (${comm ?? 'unknown'}) in ${reportUnit}${via}; ${proof}${goFirst}: ${verbs} ${units.join(' and ')}${because}${notes}${alsoNote}`,
    op: {
      kind: 'stop',
      port: b.port,
      pid,
      comm,
      unit: reportUnit,
      units,
      socket,
      mask,
      proof,
      ...(triggers.length > 0 ? { triggers } : {}),
      ...(reasons.length > 0 ? { comeback: reasons } : {}),
      ...(transient.length > 0 ? { transient } : {}),
      ...(ends.length > 0 ? { ends } : {}),
    },
  };
}

/**
 * A holder that is a kubelet, or a container of a Kubernetes pod (its cgroup
 * is below kubepods): the port is a former node's, and stopping the one
 * process frees nothing for long (kubelet starts its static pods again).
 */
function formerNodeHolder(b: BusyPort): string | null {
  for (const h of b.holders) {
    const pod = h.placement ? kubePodOf(h.placement.path) : null;
    if (pod !== null) return `pid ${h.pid} is a container of the Kubernetes pod ${pod}`;
    if (h.comm === 'kubelet') return `pid ${h.pid} is a kubelet`;
  }
  return null;
}

/** One change per busy port; an operator line for a former node's holder points to the FormerNode finding. */
export function diffLivePort(spec: PortFreeSpec, o: LivePortsObserved, b: BusyPort): Change<PortFreeOp> {
  const c = diffBusyPort(spec, o, b);
  const node = c.action === 'operator' ? formerNodeHolder(b) : null;
  if (c.action !== 'operator' || node === null) return c;
  return {
    ...c,
    operator: `${c.operator}; ${node}: this host was a Kubernetes node (see the FormerNode finding), so its kubelet starts the pods again until the node is reset (kubespray's reset.yml)`,
  };
}

/** The stop of the unit `podman generate systemd` wrote for a container stop_containers names; null when there is none. */
function podmanUnitChange(
  spec: PortFreeSpec,
  o: LivePortsObserved,
  b: BusyPort,
  base: { id: string; head: string; opBase: StopSelection['opBase'] },
): Change<PortFreeOp> | null {
  const pu = podmanUnitToStop(spec, o, b);
  if (pu === null) return null;
  const first = b.holders[0]!;
  // Never masked: a mask sets an /etc unit's file aside, and its ExecStop= (podman stop) must run (podmanUnitToStop).
  const sel = { ...base, units: [pu.unit], reportUnit: pu.unit, pid: first.pid, comm: first.comm, socket: null, proof: pu.proof, noMask: true };
  return stopChange(spec, o, b, sel);
}

function diffBusyPort(spec: PortFreeSpec, o: LivePortsObserved, b: BusyPort): Change<PortFreeOp> {
  const id = `port-${b.port}`;
  const addrs = b.listeners.map((l) => (l.family === 'ipv6' ? `[${l.address}]:${l.port}` : `${l.address}:${l.port}`)).join(', ');
  const head = `port ${b.port} (${addrs})`;
  if (b.holders.length === 0) {
    const hint = o.unreadablePids > 0 ? `; ${o.unreadablePids} processes' fds could not be read (run as root)` : '';
    return operatorChange(id, head, `no process holding the listening socket was found${hint}; look with ss -ltnp 'sport = :${b.port}'`, {
      port: b.port,
      unit: null,
      pid: null,
    });
  }
  const first = b.holders[0]!;
  const opBase = { port: b.port, unit: first.placement?.unit ?? null, pid: first.pid };
  // A podman container stop_containers names, started by its generated unit: that unit is stopped like any other.
  const podmanUnit = b.activation ? null : podmanUnitChange(spec, o, b, { id, head, opBase });
  if (podmanUnit !== null) return podmanUnit;
  // A container's holder is named with its container, never stopped through its runtime's unit.
  const inContainer = b.activation ? null : containerChange(spec, o, b, id, head, opBase);
  if (inContainer !== null) return inContainer;

  let units: string[];
  let reportUnit: string;
  let pid = first.pid;
  let comm = first.comm;
  let socket: string | null = null;
  let proof: string;
  if (b.activation) {
    socket = b.activation.socket;
    proof = `the listening socket is ${b.activation.socket}'s, handed to ${b.activation.service ?? 'its per-connection services'} by systemd (found by ${b.activation.source})`;
    units = [b.activation.socket, ...(b.activation.service ? [b.activation.service] : [])];
    reportUnit = b.activation.service ?? b.activation.socket;
    const svc = b.holders.find((h) => h.pid !== 1 && h.placement?.unit === b.activation!.service);
    if (b.activation.servicePid !== null) pid = b.activation.servicePid;
    else if (svc) pid = svc.pid;
    if (svc) comm = svc.comm;
    // Any holder outside the socket/service pair still needs a person.
    const stray = b.holders.filter((h) => h.pid !== 1 && !units.includes(h.placement?.unit ?? ''));
    const problems = stray.map((h) => holderProblem(h) ?? `${describeHolder(h)} also holds the port`);
    if (problems.length > 0) return operatorChange(id, `${head} held by ${b.holders.map(describeHolder).join(', ')}`, problems.join('; '), opBase);
  } else {
    const init = b.holders.find((h) => h.pid === 1);
    if (init) {
      const why =
        init.comm === 'systemd' || init.placement?.unit === 'init.scope'
          ? `systemd (PID 1) holds the socket but no .socket unit declares ListenStream= on ${b.port}`
          : `PID 1 (${init.comm ?? 'unknown'}) holds the socket and is not systemd, so no unit can be stopped for it`;
      return operatorChange(id, `${head} held by ${b.holders.map(describeHolder).join(', ')}`, why, opBase);
    }
    const user = diffUserPort(spec, o, b, head, opBase);
    if (user !== null) return user;
    const problems = b.holders.map(holderProblem).filter((p): p is string => p !== null);
    if (problems.length > 0) return operatorChange(id, `${head} held by ${b.holders.map(describeHolder).join(', ')}`, problems.join('; '), opBase);
    // The cgroup only names where each holder lives; stop a unit only for a holder that is its own.
    const proofs: string[] = [];
    const refused: string[] = [];
    for (const h of b.holders) {
      if (o.selfUnit !== null && h.placement?.unit === o.selfUnit) {
        refused.push(`${describeHolder(h)}: ${protectionOf(o.selfUnit, spec, o.selfUnit)}; it is never stopped automatically`);
        continue;
      }
      const a = attributionOf(o, h);
      if (a.own) proofs.push(a.proof);
      else if (spec.stop_spawner_units.includes(a.unit) && protectionOf(a.unit, { ...spec, stop_spawner_units: [a.unit] }, o.selfUnit) === null) {
        proofs.push(`pid ${h.pid} is not ${a.unit}'s own process (${a.reason}), but stop_spawner_units names ${a.unit}`);
      } else refused.push(spawnerReason(spec, o, h, a));
    }
    if (refused.length > 0) return operatorChange(id, `${head} held by ${b.holders.map(describeHolder).join(', ')}`, refused.join('; '), opBase);
    units = [...new Set(b.holders.map((h) => h.placement!.unit!))];
    reportUnit = units[0]!;
    proof = proofs.join('; ');
  }
  return stopChange(spec, o, b, { id, head, opBase, units, reportUnit, pid, comm, socket, proof });
}
