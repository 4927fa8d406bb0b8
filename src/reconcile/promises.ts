// The plan's promises: what each resource says it leaves true after apply and
// at the next boot, and which operator or unknown line takes each back. Pure,
// over the plan; the boot farm (test/boot/) checks them against a real boot.
import type { Change } from '../resources/types.js';
import type { Promised, PromiseKind, PromiseMoment, ProviderUnknown, Withdrawal } from '../promises.js';
import type { AnyProvider } from '../resources/index.js';
import type { ResourcePlan, Plan } from './plan.js';

export interface WithdrawnBy {
  /** 'failure': only in promises_after, a change apply could not carry out. */
  by: 'operator' | 'unknown' | 'failure';
  resource: string;
  /** The operator change's id, the unknown's message (which names file and line), or the failure's message. */
  line: string;
  from: PromiseMoment;
}

export interface PlanPromise extends Promised {
  resource: string;
  /** The promise in the plan's words, as its provider's kind says it ("port 6443 free"). */
  what: string;
  /** Holds once apply has run (live: the running system; offline: the image). */
  after_apply: boolean;
  /** Holds after the next boot. */
  at_boot: boolean;
  /** A promise of a kind that names its holder (PromiseKind.held: a port) taken back from apply on: the operator line's summary. */
  held_by: string | null;
  withdrawn_by: WithdrawnBy[];
}

export interface PlanUnknown {
  resource: string;
  message: string;
  withdraws: Withdrawal[];
  outlivesApply?: boolean;
}

/** What an operator line takes back: what its provider named, else every promise of its resource from apply on. */
export function changeWithdrawals(r: Pick<ResourcePlan, 'spec' | 'provider'>, c: Change): Withdrawal[] {
  if (c.action !== 'operator') return [];
  if (c.withdraws) return c.withdraws;
  return (r.provider.promised?.(r.spec) ?? []).map((p: Promised) => ({ promise: p.id, from: 'apply' as const }));
}

/**
 * The provider's own kind of a promise it made. One it never declared is a
 * provider defect, said in the plan rather than guessed: never judged held.
 */
export function promiseKind(provider: AnyProvider, p: Promised): PromiseKind {
  return (
    (Object.hasOwn(provider.promiseKinds ?? {}, p.kind) ? provider.promiseKinds![p.kind] : undefined) ?? {
      describe: (q) => `${q.subject}: ${q.expect} (kind ${q.kind}, which ${provider.type} does not declare)`,
      judge: (q) => `a promise of kind ${q.kind} that ${provider.type} does not declare`,
    }
  );
}

export function planUnknowns(plan: Plan): PlanUnknown[] {
  return plan.resources.flatMap((r) => (r.provider.unknowns?.(r.spec, r.observed) ?? []).map((u: ProviderUnknown) => ({ resource: r.name, ...u })));
}

/** Operator lines of a plan whose cause outlives apply (Change.outlivesApply), with their resources. */
export function outlivingOperators(plan: Plan): Array<{ resource: ResourcePlan; change: Change }> {
  return plan.resources.flatMap((r) => r.changes.filter((c) => c.action === 'operator' && c.outlivesApply === true).map((change) => ({ resource: r, change })));
}

/** A failure of apply, as promises_after takes it: the promises it names, else every promise of its resource. */
export interface FailedPromises {
  resource: string;
  message: string;
  promises?: string[];
}

/**
 * `carried`: unknowns of the plan made before apply that outlive it
 * (outlivesApply), taken into the plan apply observes afterwards;
 * `carriedOperators`: the same for operator lines; `failures`: what apply
 * could not do, each taking back its promises from apply on.
 */
export function planPromises(
  plan: Plan,
  carried: PlanUnknown[] = [],
  carriedOperators: Array<{ resource: ResourcePlan; change: Change }> = [],
  failures: FailedPromises[] = [],
): PlanPromise[] {
  const promises: PlanPromise[] = [];
  const byId = new Map<string, PlanPromise>();
  const held = new Set<PlanPromise>();
  for (const r of plan.resources) {
    for (const p of r.provider.promised?.(r.spec) ?? []) {
      const entry: PlanPromise = {
        ...p,
        resource: r.name,
        what: promiseKind(r.provider, p).describe(p),
        after_apply: true,
        at_boot: true,
        held_by: null,
        withdrawn_by: [],
      };
      promises.push(entry);
      if (promiseKind(r.provider, p).held === true) held.add(entry);
      byId.set(`${r.name}\0${p.id}`, entry);
    }
  }
  const withdraw = (resource: string, w: Withdrawal, by: WithdrawnBy, heldBy: string | null) => {
    const p = byId.get(`${resource}\0${w.promise}`);
    if (!p || p.withdrawn_by.some((x) => x.by === by.by && x.resource === by.resource && x.line === by.line && x.from === by.from)) return;
    p.withdrawn_by.push(by);
    p.at_boot = false;
    if (w.from === 'apply') p.after_apply = false;
    if (held.has(p) && heldBy !== null && p.held_by === null) p.held_by = heldBy;
  };
  const operatorLines = [...plan.resources.flatMap((r) => r.changes.map((c) => ({ resource: r, change: c }))), ...carriedOperators];
  for (const { resource: r, change: c } of operatorLines) {
    for (const w of changeWithdrawals(r, c))
      withdraw(r.name, w, { by: 'operator', resource: r.name, line: c.id, from: w.from }, w.from === 'apply' ? c.summary : null);
  }
  for (const u of [...planUnknowns(plan), ...carried]) {
    for (const w of u.withdraws) withdraw(u.resource, w, { by: 'unknown', resource: u.resource, line: u.message, from: w.from }, null);
  }
  for (const f of failures) {
    const ids = f.promises ?? promises.filter((p) => p.resource === f.resource).map((p) => p.id);
    for (const id of ids) withdraw(f.resource, { promise: id, from: 'apply' }, { by: 'failure', resource: f.resource, line: f.message, from: 'apply' }, null);
  }
  // A promise that needs another (Promised.needs) is taken back by each line that takes that one back, from the same moment.
  for (const p of promises) {
    for (const id of p.needs ?? []) {
      for (const q of promises.filter((x) => x.id === id && x !== p)) {
        for (const by of [...q.withdrawn_by]) withdraw(p.resource, { promise: p.id, from: by.from }, by, null);
      }
    }
  }
  return promises;
}

/** Promises an unknown (not a person's decision) takes back: these keep `--plan` at 2 and apply at 1. */
export function withdrawnByUnknown(promises: PlanPromise[]): PlanPromise[] {
  return promises.filter((p) => p.withdrawn_by.some((w) => w.by === 'unknown'));
}
