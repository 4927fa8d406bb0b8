// The provider registry: desired-state `type` -> provider. One provider per file.
import type { Provider } from './types.js';
import { swapOffProvider } from './swap-off.js';
import { modulesLoadProvider } from './modules-load.js';
import { portFreeProvider } from './port-free.js';
import { sysctlFileProvider } from './sysctl-file.js';

// Each provider file adds one import and one entry below.

export const providers: Record<string, Provider<any, any, any>> = {
  SwapOff: swapOffProvider,
  ModulesLoad: modulesLoadProvider,
  PortFree: portFreeProvider,
  SysctlFile: sysctlFileProvider,
};

export function providerFor(type: string): Provider<any, any, any> | undefined {
  return providers[type];
}
