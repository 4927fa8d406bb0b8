// observe all -> diff all, in dependency order. Observation touches nothing.
import type { Host } from '../host.js';
import { resourceName, type DesiredState, type ResourceSpec } from '../desired-state.js';
import type { Change, DiffContext, Provider } from '../resources/types.js';
import { PROVIDERS, type AnyProvider, type ProviderRegistry } from '../resources/index.js';
import { ReconcileError } from '../errors.js';
import type { Finding } from '../findings.js';
import { assertHostInputs } from './host-checks.js';
import { firstBootProvider, type FirstBootSpec } from '../first-boot/bake.js';
import { firstBootSpec } from '../first-boot/plan.js';

export interface ResourcePlan {
  name: string;
  type: string;
  /** A desired-state resource, or the first-boot install the engine adds in image mode. */
  spec: ResourceSpec | FirstBootSpec;
  provider: Provider<any, any, any>;
  observed: unknown;
  changes: Change[];
}

export interface Plan {
  live: boolean;
  root: string;
  resources: ResourcePlan[];
}

/** Specs sorted so every provider comes after the types it names in `after`. */
export function dependencyOrder(specs: ResourceSpec[], registry: ProviderRegistry = PROVIDERS): ResourceSpec[] {
  const remaining = specs.map((spec, index) => ({ spec, index }));
  const out: ResourceSpec[] = [];
  const placed = new Set<string>();
  while (remaining.length > 0) {
    const i = remaining.findIndex(({ spec }) => {
      const after = registry[spec.type]?.after ?? [];
      return after.every((t) => placed.has(t) || !remaining.some((r) => r.spec.type === t));
    });
    if (i < 0) throw new ReconcileError(`resource ordering has a cycle among: ${remaining.map((r) => r.spec.type).join(', ')}`);
    const [next] = remaining.splice(i, 1);
    out.push(next!.spec);
    if (!remaining.some((r) => r.spec.type === next!.spec.type)) placed.add(next!.spec.type);
  }
  return out;
}

function providerOrThrow(registry: ProviderRegistry, type: string): AnyProvider {
  const p = registry[type];
  if (!p) throw new ReconcileError(`no provider is registered for resource type ${type}`);
  return p;
}

export async function observeAll(host: Host, desired: DesiredState, registry: ProviderRegistry = PROVIDERS): Promise<Array<{ spec: ResourceSpec; observed: unknown }>> {
  const out: Array<{ spec: ResourceSpec; observed: unknown }> = [];
  for (const spec of dependencyOrder(desired.resources, registry)) {
    const observed = await providerOrThrow(registry, spec.type).observe(host, spec);
    out.push({ spec, observed });
  }
  return out;
}

/** Pure: observations -> plan. */
export function diffAll(observations: Array<{ spec: ResourceSpec; observed: unknown }>, ctx: DiffContext & { root: string }, registry: ProviderRegistry = PROVIDERS): Plan {
  return {
    live: ctx.live,
    root: ctx.root,
    resources: observations.map(({ spec, observed }) => {
      const provider = providerOrThrow(registry, spec.type);
      return { name: resourceName(spec), type: spec.type, spec, provider, observed, changes: provider.diff(spec, observed, { live: ctx.live, firstBoot: ctx.firstBoot }) };
    }),
  };
}

export async function makePlan(host: Host, desired: DesiredState, registry: ProviderRegistry = PROVIDERS): Promise<Plan> {
  await assertHostInputs(host, desired);
  const firstBoot = !host.live && desired.first_boot !== 'off';
  const plan = diffAll(await observeAll(host, desired, registry), { live: host.live, root: host.root, firstBoot }, registry);
  // Image mode: what the running system must finish is installed as a first-boot run, planned like a
  // resource and listed after the desired ones (their positions stay those of the desired state).
  const spec = firstBoot ? firstBootSpec(desired, plan.resources) : null;
  if (spec) {
    const observed = await firstBootProvider.observe(host, spec);
    plan.resources.push({ name: 'FirstBoot', type: 'FirstBoot', spec, provider: firstBootProvider, observed, changes: firstBootProvider.diff(spec, observed, { live: false }) });
  }
  return plan;
}

/**
 * The order apply takes: the plan's, except that the first-boot install goes
 * first. Its .wants link then keeps multi-user.target.wants from being
 * emptied (and removed) by a disable only to be created again, so an
 * interrupted bake never leaves that directory missing.
 */
export function applyOrder(resources: ResourcePlan[]): ResourcePlan[] {
  return [...resources.filter((r) => r.type === 'FirstBoot'), ...resources.filter((r) => r.type !== 'FirstBoot')];
}

/** Changes this run would carry out (not the operator's, not those deferred to boot). */
export function actionable(changes: Change[]): Change[] {
  return changes.filter((c) => c.action !== 'operator' && c.action !== 'deferred');
}

export function operatorChanges(plan: Plan): Array<{ resource: string; change: Change }> {
  return plan.resources.flatMap((r) => r.changes.filter((c) => c.operator).map((change) => ({ resource: r.name, change })));
}

export function pendingCount(plan: Plan): number {
  return plan.resources.reduce((n, r) => n + actionable(r.changes).length, 0);
}

/**
 * Each provider's warnings about what it observed, as plan findings naming the
 * resource; its unknowns are loud: `unknown`, with the promises they withdraw.
 */
export function planWarnings(plan: Plan): Finding[] {
  return plan.resources.flatMap((r): Finding[] => [
    ...(r.provider.warnings?.(r.spec, r.observed) ?? []).map((message) => ({ level: 'warning' as const, message: `${r.name}: ${message}` })),
    ...(r.provider.unknowns?.(r.spec, r.observed) ?? []).map((u) => ({ level: 'warning' as const, message: `${r.name}: ${u.message}`, unknown: true, withdraws: u.withdraws })),
  ]);
}
