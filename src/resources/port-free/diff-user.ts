// PortFree's diff for a holder in a per-user manager (user@UID.service): the
// same proof as for a system service (the holder is the user unit's own
// process), the same protection rules, the same stays-free question asked of
// that user's unit tree, and the stop goes through `systemctl --user -M USER@`.
import type { PortFreeSpec } from './spec.js';
import type { Change } from '../types.js';
import { attribute } from '../../ports/identity.js';
import { protectionOf } from '../../ports/protection.js';
import type { BusyPort, LivePortsObserved } from '../../ports/observed.js';
import { describeRoute, lingerSentence, userManagerUid } from '../../ports/user-manager.js';
import { operatorChange, type OperatorOp, type PortFreeOp } from './ops.js';

/** The change for a port whose holders all sit in one service of one user manager; null when they do not. */
export function diffUserPort(spec: PortFreeSpec, o: LivePortsObserved, b: BusyPort, head: string, opBase: Omit<OperatorOp, 'kind'>): Change<PortFreeOp> | null {
  const places = b.holders.map((h) => h.placement);
  if (
    places.length === 0 ||
    places.some((p) => p === null || p.container !== null || p.unit === null || userManagerUid(p.unit) === null || !p.userUnit?.endsWith('.service'))
  )
    return null;
  const keys = new Set(places.map((p) => `${userManagerUid(p!.unit!)}:${p!.userUnit}`));
  if (keys.size !== 1) return null;
  const entry = o.userUnits?.[[...keys][0]!];
  if (!entry) return null;
  const id = `port-${b.port}`;
  const manager = `user@${entry.uid}.service`;
  const who = b.holders.map((h) => `pid ${h.pid} (${h.comm ?? 'unknown'}) in user unit ${entry.unit} of ${manager}`).join(', ');
  const summary = `${head} held by ${who}`;
  const op = { ...opBase, unit: entry.unit };
  if (entry.account === null)
    return operatorChange(id, summary, `${entry.facts.error ?? `UID ${entry.uid} has no account`}; stop it as that user with systemctl --user`, op);
  const a = entry.account;
  const prot = protectionOf(entry.unit, spec, null);
  if (prot !== null) return operatorChange(id, summary, `${prot} (in ${a.name}'s manager); it is never stopped automatically`, op);
  const proofs: string[] = [];
  for (const h of b.holders) {
    if (h.ancestry === null) return operatorChange(id, summary, `pid ${h.pid}'s origin in ${entry.unit} was not read`, op);
    const at = attribute(h.ancestry, entry.facts, h.mainHoldsSocket);
    if (!at.own) {
      if (spec.stop_spawner_units.includes(entry.unit))
        proofs.push(`pid ${h.pid} is not ${entry.unit}'s own process (${at.reason}), but stop_spawner_units names ${entry.unit}`);
      else
        return operatorChange(
          id,
          summary,
          `pid ${h.pid} is not ${a.name}'s ${entry.unit}'s own process: ${at.reason}. A unit is never stopped on a guess; name ${entry.unit} in stop_spawner_units to stop it anyway`,
          op,
        );
    } else proofs.push(`${at.proof} (${a.name}'s manager)`);
  }
  const cb = entry.comeback;
  const reasons = cb?.reasons ?? [];
  const unknown = cb === null ? 'the user unit tree was not read' : cb.unknown;
  const mask = spec.mask === true || (spec.mask === 'auto' && (reasons.length > 0 || unknown !== null));
  const verbs = mask ? 'stop, disable and mask' : 'stop and disable';
  const because =
    spec.mask === 'auto' && mask
      ? ` (${reasons.length > 0 ? reasons.join('; ') : `unknown: ${unknown}`})`
      : !mask && reasons.length > 0
        ? `; but ${reasons.join('; ')}: it would start again, so apply will fail verification (mask: auto or true masks it)`
        : '';
  const pid = b.holders[0]!.pid;
  const comm = b.holders[0]!.comm;
  return {
    id,
    action: 'stop',
    runtime: true,
    summary: `${summary}; ${proofs.join('; ')}: ${verbs} ${entry.unit} through ${describeRoute({ ...a, route: entry.route })}${because}; ${lingerSentence(a)}`,
    op: {
      kind: 'stop',
      port: b.port,
      pid,
      comm,
      unit: entry.unit,
      units: [entry.unit],
      socket: null,
      mask,
      proof: proofs.join('; '),
      user: { name: a.name, uid: a.uid, gid: a.gid, home: a.home, lingers: a.lingers, route: entry.route },
      ...(reasons.length > 0 ? { comeback: reasons } : {}),
    },
  };
}
