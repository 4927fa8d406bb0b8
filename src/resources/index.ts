// The provider registry: desired-state `type` -> provider. One provider per file.
import type { Provider } from './types.js';
import { swapOffProvider } from './swap-off.js';
import { modulesLoadProvider } from './modules-load.js';
import { portFreeProvider } from './port-free.js';
import { sysctlFileProvider } from './sysctl-file.js';
import { modulesConcern, swapConcern, sysctlConcern, withBootScripts } from './boot-script-hook.js';

// Each provider file adds one import and one entry below.

export const providers: Record<string, Provider<any, any, any>> = {
  // Boot-time scripts that would undo a resource (issue 17): see boot-script-hook.ts.
  SwapOff: withBootScripts(swapOffProvider, swapConcern),
  ModulesLoad: withBootScripts(modulesLoadProvider, modulesConcern),
  PortFree: portFreeProvider,
  SysctlFile: withBootScripts(sysctlFileProvider, sysctlConcern),
};

export function providerFor(type: string): Provider<any, any, any> | undefined {
  return providers[type];
}
