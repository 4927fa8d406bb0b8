// The provider registry: `type` -> provider. One provider per file; each adds
// one import and one line below. The engine takes a registry as a parameter
// (PROVIDERS by default), so a test hands it its own. A provider with `derive`
// (FirstBoot) is not a desired-state type: the engine derives its resource.
import type { Provider } from './types.js';
import type { ResourceSpec } from '../desired-state.js';
import { swapOffProvider } from './swap-off/provider.js';
import { modulesLoadProvider } from './modules-load/provider.js';
import { portFreeProvider } from './port-free/provider.js';
import { sysctlFileProvider } from './sysctl-file/provider.js';
import { firstBootProvider } from './first-boot/provider.js';

export type AnyProvider = Provider<any, any, any>;
export type ProviderRegistry = Readonly<Record<string, AnyProvider>>;

/** Each desired-state type has exactly its provider, taking the spec that type names. */
type Complete = { readonly [T in ResourceSpec['type']]: Provider<Extract<ResourceSpec, { type: T }>, any, any> } & { readonly FirstBoot: AnyProvider };

export const PROVIDERS: ProviderRegistry = Object.freeze({
  SwapOff: swapOffProvider,
  ModulesLoad: modulesLoadProvider,
  PortFree: portFreeProvider,
  SysctlFile: sysctlFileProvider,
  FirstBoot: firstBootProvider,
} satisfies Complete);

/** The types a desired state may name (`--providers`): every provider but those the engine derives. */
export function desiredTypes(registry: ProviderRegistry = PROVIDERS): string[] {
  return Object.keys(registry).filter((t) => !registry[t]!.derive);
}
