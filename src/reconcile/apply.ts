// Carries out a plan, resource by resource in dependency order. One
// resource failing does not stop the others, and one change failing stops
// only the changes that need it: everything that can converge does.
import type { Host } from '../host.js';
import type { ApplyContext, Change, ChangeNeed, Provider } from '../resources/types.js';
import { actionable, applyOrder } from './plan.js';
import type { Plan } from './plan.js';

export interface ResourceFailure {
  resource: string;
  message: string;
  /** Ids of the changes not carried out because of it (blocked, or the resource's own failed apply). */
  changes?: string[];
  /**
   * The promises it takes back in promises_after (src/promises.ts): what the
   * provider said its failure leaves unkept, else every promise of the resource.
   * A change that failed is no promise, whatever the host looks like afterwards
   * (a unit left enabled is not running when apply looks again, and starts at boot).
   */
  promises?: string[];
}

export interface ApplyResult {
  applied: Array<{ resource: string; changes: string[] }>;
  failures: ResourceFailure[];
  reports: Record<string, unknown>;
}

/** Per resource type: the facts its apply failed to establish, or 'all' when it cannot tell which. */
type Failed = Map<string, Set<string> | 'all'>;

/** What a change needs: the provider's answer, else all of every type in `after`. */
function needsOf(provider: Provider, spec: Parameters<Provider['apply']>[1], change: Change): Array<ChangeNeed | { type: string; fact: null }> {
  return provider.needs ? provider.needs(spec, change) : provider.after.map((type) => ({ type, fact: null }));
}

/** The first need `failed` breaks, or undefined. */
export function brokenNeed(needs: Array<ChangeNeed | { type: string; fact: null }>, failed: Failed): { type: string; fact: string | null } | undefined {
  return needs.find((n) => {
    const f = failed.get(n.type);
    return f !== undefined && (f === 'all' || n.fact === null || f.has(n.fact));
  });
}

/** Keys are "what|failed" or "what|is left to an operator". */
function blockMessage(byNeed: Map<string, string[]>, whole: boolean): string {
  const parts = [...byNeed].map(([key, ids]) => ({ what: key.slice(0, key.indexOf('|')), how: key.slice(key.indexOf('|') + 1), ids }));
  if (whole && parts.length === 1) return `not applied: ${parts[0]!.what}, which it depends on, ${parts[0]!.how}`;
  return parts.map((p) => `${p.ids.join(', ')} not applied: ${p.what}, which ${p.ids.length === 1 ? 'it depends' : 'they depend'} on, ${p.how}`).join('; ');
}

export async function applyPlan(host: Host, plan: Plan, ctx: ApplyContext): Promise<ApplyResult> {
  const result: ApplyResult = { applied: [], failures: [], reports: {} };
  const failed: Failed = new Map();
  const add = (into: Failed, type: string, facts: string[] | 'all') => {
    const had = into.get(type);
    if (facts === 'all' || had === 'all') into.set(type, 'all');
    else into.set(type, new Set([...(had ?? []), ...facts]));
  };
  const fail = (type: string, facts: string[] | 'all') => add(failed, type, facts);
  // What the plan already leaves to an operator is as missing as what fails: a change needing it waits too.
  const withheld: Failed = new Map();
  for (const r of plan.resources) for (const c of r.changes) if (c.action === 'operator' && c.unmet?.length) add(withheld, r.type, c.unmet);
  for (const r of applyOrder(plan.resources)) {
    const all = actionable(r.changes);
    if (all.length === 0) continue;
    const blocked = new Map<string, string[]>(); // "<type>'s <fact>|failed" -> change ids (a module a sysctl write needs)
    const todo = all.filter((c) => {
      const needs = needsOf(r.provider, r.spec, c);
      const w = brokenNeed(
        needs.filter((n) => n.fact !== null),
        withheld,
      );
      const b = w ?? brokenNeed(needs, failed);
      if (b === undefined) return true;
      const key = w !== undefined ? `${w.type}'s ${w.fact}|is left to an operator` : `${b.fact === null ? b.type : `${b.type}'s ${b.fact}`}|failed`;
      blocked.set(key, [...(blocked.get(key) ?? []), c.id]);
      return false;
    });
    if (blocked.size > 0) {
      const ids = [...blocked.values()].flat();
      // What the blocked changes were to make hold, when the provider can tell (a bridge key's write: that key alone).
      const each = ids.map(
        (id) =>
          r.provider.changePromises?.(
            r.spec,
            all.find((c) => c.id === id)!,
          ) ?? null,
      );
      const promises = each.every((p) => p !== null) ? [...new Set(each.flat())] : undefined;
      result.failures.push({ resource: r.name, message: blockMessage(blocked, todo.length === 0), changes: ids, ...(promises ? { promises } : {}) });
      // What depends on this resource cannot tell which of its facts the blocked changes were to establish.
      fail(r.type, 'all');
    }
    if (todo.length === 0) continue;
    ctx.progress(`${r.name}: applying ${todo.length} change${todo.length === 1 ? '' : 's'}${blocked.size > 0 ? ` (${all.length - todo.length} blocked)` : ''}`);
    try {
      const outcome = await r.provider.apply(host, r.spec, todo, ctx);
      Object.assign(result.reports, outcome?.reports ?? {});
      const failedIds = outcome?.error ? (outcome.failedChanges ?? todo.map((c) => c.id)) : [];
      if (outcome?.error) {
        result.failures.push({
          resource: r.name,
          message: outcome.error,
          changes: failedIds,
          ...(outcome.failedPromises ? { promises: outcome.failedPromises } : {}),
        });
        fail(r.type, outcome.failedFacts ?? 'all');
      }
      const done = todo.filter((c) => !failedIds.includes(c.id)).map((c) => c.id);
      if (done.length > 0) result.applied.push({ resource: r.name, changes: done });
    } catch (e) {
      result.failures.push({ resource: r.name, message: (e as Error).message, changes: todo.map((c) => c.id) });
      fail(r.type, 'all');
    }
  }
  return result;
}
