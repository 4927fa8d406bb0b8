// PreviousCluster's promises: each directory a reset moves aside stays absent, and each node unit stays
// down, after apply and at the next boot. A tier records `paths` (target path -> whether anything is
// there, a link included) and `units` (unit -> its ACTIVE state as systemctl list-units prints it).
import type { Promised, PromiseKind } from '../../promises.js';
import { RESET_DIRS } from '../../former-node/reset-targets.js';

export const absentPromise = (p: string): string => `absent:${p}`;
export const unitDownPromise = (u: string): string => `unit-down:${u}`;

/** The node units promised down by name (a unit running kubelet under another name is stopped, not promised: its name is the host's). */
export const PROMISED_UNITS = ['kubelet.service', 'etcd.service', 'k3s.service', 'k3s-agent.service', 'rke2-server.service', 'rke2-agent.service'] as const;

export function resetPromises(): Promised[] {
  return [
    ...RESET_DIRS.map((p) => ({ id: absentPromise(p), kind: 'path-absent', subject: p, expect: 'absent' })),
    ...PROMISED_UNITS.map((u) => ({ id: unitDownPromise(u), kind: 'unit-down', subject: u, expect: 'not running' })),
  ];
}

/** `seen.paths`: target path -> true when an entry is there. */
export const PATH_ABSENT_KIND: PromiseKind = {
  describe: (p) => `${p.subject} absent (moved aside)`,
  judge: (p, seen) => {
    const paths = seen['paths'] as ReadonlyMap<string, boolean> | undefined;
    return paths?.get(p.subject) === true ? `${p.subject} exists` : null;
  },
};

/** What systemd calls a unit that runs or is about to. */
const UP = new Set(['active', 'activating', 'reloading', 'refreshing']);

/** `seen.units`: unit -> ACTIVE column; a unit not listed is not loaded, so not running. */
export const UNIT_DOWN_KIND: PromiseKind = {
  describe: (p) => `${p.subject} not running`,
  judge: (p, seen) => {
    const units = seen['units'] as ReadonlyMap<string, string> | undefined;
    const state = units?.get(p.subject);
    return state !== undefined && UP.has(state) ? `${p.subject} is ${state}` : null;
  },
};
