// The host as it was before anything changed: the lab's before.json. Each
// field is a provider's (Provider.beforeState: swap_total_kb, ip_forward,
// br_netfilter, busy_ports in the shipped registry), from what a planned
// resource observed when one did (the plan's facts), else read with the
// observer that provider uses. Every provider is asked, desired or not.
import type { TargetFs } from '../host.js';
import type { BeforeFields } from '../resources/types.js';
import { PROVIDERS, type ProviderRegistry } from '../resources/index.js';
import { planFacts, type Plan } from './plan.js';

/** before.json: the registry's fields, in registry order. */
export type BeforeState = Readonly<BeforeFields>;

/** Live only: offline there is no running kernel to describe. `plan`: observed just now, before anything changed. */
export async function observeBeforeState(host: TargetFs, plan: Plan, registry: ProviderRegistry = PROVIDERS): Promise<BeforeState> {
  host.assertLive('the before-state');
  const seen = planFacts(plan);
  const out: BeforeFields = {};
  for (const provider of Object.values(registry)) {
    if (provider.beforeState) Object.assign(out, await provider.beforeState(host, seen));
  }
  return out;
}
