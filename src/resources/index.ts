// The provider registry: `type` -> provider. A resource is one folder
// (src/resources/<type>/: provider, spec and schema branch, promise kinds,
// what boot scripts can do to it); registering it is one import and one line
// below. The desired-state schema, ResourceSpec, the plan's words for its
// promises and the boot farm's judge are assembled from here. The engine takes a registry as a parameter
// (PROVIDERS by default), so a test hands it its own. A provider with `derive`
// (FirstBoot) is not a desired-state type: the engine derives its resource.
import type { Provider } from './types.js';
import { swapOffProvider } from './swap-off/provider.js';
import { modulesLoadProvider } from './modules-load/provider.js';
import { portFreeProvider } from './port-free/provider.js';
import { sysctlFileProvider } from './sysctl-file/provider.js';
import { firstBootProvider } from './first-boot/provider.js';
import { bootWatchProvider } from './boot-watch/provider.js';
import { previousClusterProvider } from './previous-cluster/provider.js';

export type AnyProvider = Provider<any, any, any>;
export type ProviderRegistry = Readonly<Record<string, AnyProvider>>;

// In the order of the lab's before.json fields (swap_total_kb, ip_forward, br_netfilter, busy_ports: each a
// provider's beforeState) and of the schema's "must be one of"; plan order is the document's.
const REGISTERED = {
  SwapOff: swapOffProvider,
  SysctlFile: sysctlFileProvider,
  ModulesLoad: modulesLoadProvider,
  PortFree: portFreeProvider,
  PreviousCluster: previousClusterProvider,
  FirstBoot: firstBootProvider,
  BootWatch: bootWatchProvider,
} as const;

type SpecOf<P> = P extends Provider<infer S, any, any> ? S : never;
/** The spec a provider of the registry takes. */
type Registered = { readonly [T in keyof typeof REGISTERED]: SpecOf<(typeof REGISTERED)[T]> };
/** A desired-state entry: the spec of a registered desired type (FirstBoot is derived, never written). */
export type ResourceSpec = Registered[Exclude<keyof Registered, 'FirstBoot' | 'BootWatch'>];

/** Each key is its provider's own type. */
type Keyed = { readonly [T in keyof Registered]: Provider<Registered[T] & { type: T }, any, any> };

export const PROVIDERS: ProviderRegistry = Object.freeze(REGISTERED satisfies Keyed);

/** The types a desired state may name (`--providers`): every provider but those the engine derives. */
export function desiredTypes(registry: ProviderRegistry = PROVIDERS): string[] {
  return Object.keys(registry).filter((t) => !registry[t]!.derive);
}
