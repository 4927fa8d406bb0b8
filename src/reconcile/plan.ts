// observe all -> diff all, in dependency order. Observation touches nothing.
import type { Host } from '../host.js';
import { resourceName, type DesiredState } from '../desired-state.js';
import type { BaseSpec, Change, DiffContext, HostFacts, PlannedResource, Provider } from '../resources/types.js';
import { PROVIDERS, type AnyProvider, type ProviderRegistry } from '../resources/index.js';
import { ReconcileError } from '../errors.js';
import type { Finding } from '../findings.js';
import { assertHostInputs } from './host-checks.js';
import { readDesiredStateFile } from './load.js';
import { bytesOf } from '../bytes.js';

export interface ResourcePlan extends PlannedResource {
  /** A desired-state resource, or one a provider derives from their plan (the first-boot install in image mode). */
  spec: BaseSpec;
  provider: Provider<any, any, any>;
  observed: unknown;
}

export interface Plan {
  live: boolean;
  root: string;
  resources: ResourcePlan[];
}

/** Specs sorted so every provider comes after the types it names in `after`. */
export function dependencyOrder(specs: BaseSpec[], registry: ProviderRegistry = PROVIDERS): BaseSpec[] {
  const remaining = specs.map((spec, index) => ({ spec, index }));
  const out: BaseSpec[] = [];
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

export async function observeAll(
  host: Host,
  desired: DesiredState,
  registry: ProviderRegistry = PROVIDERS,
): Promise<Array<{ spec: BaseSpec; observed: unknown }>> {
  const out: Array<{ spec: BaseSpec; observed: unknown }> = [];
  for (const spec of dependencyOrder(desired.resources, registry)) {
    const observed = await providerOrThrow(registry, spec.type).observe(host, spec);
    out.push({ spec, observed });
  }
  return out;
}

/** Pure: observations -> plan. */
export function diffAll(
  observations: Array<{ spec: BaseSpec; observed: unknown }>,
  ctx: DiffContext & { root: string },
  registry: ProviderRegistry = PROVIDERS,
): Plan {
  return {
    live: ctx.live,
    root: ctx.root,
    resources: observations.map(({ spec, observed }) => {
      const provider = providerOrThrow(registry, spec.type);
      return {
        name: resourceName(spec),
        type: spec.type,
        spec,
        provider,
        observed,
        changes: provider.diff(spec, observed, { live: ctx.live, firstBoot: ctx.firstBoot }),
      };
    }),
  };
}

/** What a run asks of the plan beside the desired state. */
export interface PlanOptions {
  /** --watch-next-boot: derive the boot watch's install. */
  watchNextBoot?: boolean;
}

export async function makePlan(host: Host, desired: DesiredState, registry: ProviderRegistry = PROVIDERS, opts: PlanOptions = {}): Promise<Plan> {
  await assertHostInputs(host, desired, registry);
  const firstBoot = !host.live && desired.first_boot !== 'off';
  const plan = diffAll(await observeAll(host, desired, registry), { live: host.live, root: host.root, firstBoot }, registry);
  // A provider that derives its resource from the desired ones' plan (image mode's first-boot run) is
  // planned after them: their positions stay those of the desired state.
  const desiredPlan = [...plan.resources];
  for (const provider of Object.values(registry)) {
    const spec = provider.derive?.({
      desired,
      live: host.live,
      resources: desiredPlan,
      desiredBytes: () => bytesOf(readDesiredStateFile(desired.source)),
      watchNextBoot: opts.watchNextBoot === true,
    });
    if (!spec) continue;
    const observed = await provider.observe(host, spec);
    plan.resources.push({ name: resourceName(spec), type: spec.type, spec, provider, observed, changes: provider.diff(spec, observed, { live: host.live }) });
  }
  return plan;
}

/** The order apply takes: the plan's, except that a provider that asks for it (`applyFirst`) goes first. */
export function applyOrder(resources: ResourcePlan[]): ResourcePlan[] {
  return [...resources.filter((r) => r.provider.applyFirst), ...resources.filter((r) => !r.provider.applyFirst)];
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
    ...(r.provider.unknowns?.(r.spec, r.observed) ?? []).map((u) => ({
      level: 'warning' as const,
      message: `${r.name}: ${u.message}`,
      unknown: true,
      withdraws: u.withdraws,
    })),
  ]);
}

/**
 * Pure: what the planned resources' observations say about the host (each
 * provider's `facts`), merged in plan order: the first resource to tell a
 * fact gives it, a map's keys one by one; the ports looked at and found
 * busy add up. A fact no resource observed is left out.
 */
export function planFacts(plan: Plan | null): HostFacts {
  const out: HostFacts = {};
  for (const r of plan?.resources ?? []) {
    const f = r.provider.facts?.(r.spec, r.observed);
    if (!f) continue;
    if (out.swapTotalKb === undefined && f.swapTotalKb !== undefined) out.swapTotalKb = f.swapTotalKb;
    if (out.memTotalKb === undefined && f.memTotalKb !== undefined) out.memTotalKb = f.memTotalKb;
    if (out.kernelRelease === undefined && f.kernelRelease !== undefined) out.kernelRelease = f.kernelRelease;
    if (out.sysctlTree === undefined && f.sysctlTree !== undefined) out.sysctlTree = f.sysctlTree;
    if (f.sysctls) out.sysctls = new Map([...f.sysctls, ...(out.sysctls ?? [])]);
    if (f.modules) out.modules = new Map([...f.modules, ...(out.modules ?? [])]);
    if (f.listeners)
      out.listeners = { ports: [...(out.listeners?.ports ?? []), ...f.listeners.ports], busy: [...(out.listeners?.busy ?? []), ...f.listeners.busy] };
  }
  return out;
}
