// What a person must do, read from the plan document alone: the operator
// lines (apply never makes them) and the unknowns (the tool cannot judge
// them), each cause once. One unknown boot-time line is one finding per
// resource it may undo, and every promise it takes back names it again;
// listed once here, the text plan can point at it by number instead.
import type { Withdrawal } from '../promises.js';
import type { PlanDocument } from './plan-document.js';

export interface MustDo {
  kind: 'operator' | 'unknown';
  /** The resources this line is about, in plan order. */
  resources: string[];
  /** An operator line's summary; an unknown's message without its resource. */
  what: string;
  /** An operator line's own fix text (the change's `operator`); null for an unknown. */
  fix: string | null;
  /** The promises it takes back, each once. */
  withdraws: Withdrawal[];
  /** Where the plan document names it: `resource\0change id` for an operator line, the message for an unknown. */
  refs: string[];
  /** An operator change that would write a file shows its diff (the document's display text). */
  file: { path: string; before: string | null; after: string | null } | null;
}

const addOnce = <T>(list: T[], xs: T[], same: (a: T, b: T) => boolean) => {
  for (const x of xs) if (!list.some((y) => same(x, y))) list.push(x);
};
const sameWithdrawal = (a: Withdrawal, b: Withdrawal) => a.promise === b.promise && a.from === b.from;

/** An unknown finding's message is `Resource: unknown: ...` (plan.ts planWarnings): the cause is what follows the resource. */
function causeOf(message: string, names: string[]): { resource: string | null; cause: string } {
  const r = names.find((n) => message.startsWith(`${n}: `));
  return r === undefined ? { resource: null, cause: message } : { resource: r, cause: message.slice(r.length + 2) };
}

/** Operator lines first, in plan order, then unknowns; the same line from two resources is one entry. */
export function mustDo(plan: PlanDocument): MustDo[] {
  const items: MustDo[] = [];
  const add = (key: (m: MustDo) => boolean, fresh: MustDo, resource: string | null) => {
    const seen = items.find(key);
    if (!seen) return void items.push(fresh);
    if (resource !== null && !seen.resources.includes(resource)) seen.resources.push(resource);
    addOnce(seen.withdraws, fresh.withdraws, sameWithdrawal);
    addOnce(seen.refs, fresh.refs, (a, b) => a === b);
  };
  for (const r of plan.resources)
    for (const c of r.changes) {
      if (c.operator === null) continue;
      const file = c.path === null ? null : { path: c.path, before: c.before, after: c.after };
      const fresh: MustDo = {
        kind: 'operator',
        resources: [r.name],
        what: c.summary,
        fix: c.operator,
        withdraws: [...c.withdraws],
        refs: [`${r.name}\0${c.id}`],
        file,
      };
      add((m) => m.kind === 'operator' && m.what === c.summary && m.fix === c.operator, fresh, r.name);
    }
  const names = plan.resources.map((r) => r.name);
  for (const f of plan.findings) {
    if (!f.unknown || !f.withdraws) continue;
    const { resource, cause } = causeOf(f.message, names);
    const fresh: MustDo = {
      kind: 'unknown',
      resources: resource === null ? [] : [resource],
      what: cause,
      fix: null,
      withdraws: [...f.withdraws],
      refs: [cause],
      file: null,
    };
    add((m) => m.kind === 'unknown' && m.what === cause, fresh, resource);
  }
  return items;
}

/** The entry (1-based) that a promise's withdrawal names, or null when it names none (a failure of apply). */
export function entryOf(items: MustDo[], w: { by: string; resource: string; line: string }): number | null {
  const ref = w.by === 'operator' ? `${w.resource}\0${w.line}` : w.by === 'unknown' ? w.line : null;
  const i = ref === null ? -1 : items.findIndex((m) => m.refs.includes(ref));
  return i < 0 ? null : i + 1;
}

/** `a, b (at the next boot); c (after apply and at boot)`: the promises grouped by when they are taken back. */
export function describeWithdrawals(ws: Withdrawal[]): string {
  const groups: Array<[string, string[]]> = [];
  for (const w of ws) {
    const when = w.from === 'apply' ? 'after apply and at boot' : 'at the next boot';
    const g = groups.find(([x]) => x === when);
    if (g) g[1].push(w.promise);
    else groups.push([when, [w.promise]]);
  }
  return groups.map(([when, ids]) => `${ids.join(', ')} (${when})`).join('; ');
}
