// Carries out a plan, resource by resource in dependency order. One
// resource failing does not stop the others: everything that can converge does.
import type { Host } from '../host.js';
import type { ApplyContext } from '../resources/types.js';
import { actionable, applyOrder } from './plan.js';
import type { Plan } from './plan.js';

export interface ResourceFailure {
  resource: string;
  message: string;
}

export interface ApplyResult {
  applied: Array<{ resource: string; changes: string[] }>;
  failures: ResourceFailure[];
  reports: Record<string, unknown>;
}

export async function applyPlan(host: Host, plan: Plan, ctx: ApplyContext): Promise<ApplyResult> {
  const result: ApplyResult = { applied: [], failures: [], reports: {} };
  const failedTypes = new Set<string>();
  for (const r of applyOrder(plan.resources)) {
    const todo = actionable(r.changes);
    if (todo.length === 0) continue;
    const blockedBy = r.provider.after.find((t) => failedTypes.has(t));
    if (blockedBy) {
      result.failures.push({ resource: r.name, message: `not applied: ${blockedBy}, which it depends on, failed` });
      failedTypes.add(r.type);
      continue;
    }
    ctx.progress(`${r.name}: applying ${todo.length} change${todo.length === 1 ? '' : 's'}`);
    try {
      const outcome = await r.provider.apply(host, r.spec, todo, ctx);
      Object.assign(result.reports, outcome?.reports ?? {});
      if (outcome?.error) {
        result.failures.push({ resource: r.name, message: outcome.error });
        failedTypes.add(r.type);
      } else result.applied.push({ resource: r.name, changes: todo.map((c) => c.id) });
    } catch (e) {
      result.failures.push({ resource: r.name, message: (e as Error).message });
      failedTypes.add(r.type);
    }
  }
  return result;
}
