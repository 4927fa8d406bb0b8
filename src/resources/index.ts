// The provider registry: desired-state `type` -> provider. One provider per
// file; each adds one import and one line below. The engine takes a registry
// as a parameter (PROVIDERS by default), so a test hands it its own.
import type { Provider } from './types.js';
import type { ResourceSpec } from '../desired-state.js';
import { swapOffProvider } from './swap-off.js';
import { modulesLoadProvider } from './modules-load.js';
import { portFreeProvider } from './port-free.js';
import { sysctlFileProvider } from './sysctl-file.js';

export type AnyProvider = Provider<any, any, any>;
export type ProviderRegistry = Readonly<Record<string, AnyProvider>>;

/** Each desired-state type has exactly its provider, taking the spec that type names. */
type Complete = { readonly [T in ResourceSpec['type']]: Provider<Extract<ResourceSpec, { type: T }>, any, any> };

export const PROVIDERS: ProviderRegistry = Object.freeze({
  SwapOff: swapOffProvider,
  ModulesLoad: modulesLoadProvider,
  PortFree: portFreeProvider,
  SysctlFile: sysctlFileProvider,
} satisfies Complete);
