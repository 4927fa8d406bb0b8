// Which kernel modules are present now. Shared by the before-state and ModulesLoad.
import type { TargetFs } from '../host.js';
import { readKernelRelease } from './kernel-release.js';

/** Module names treat "-" and "_" as the same character (kmod does). */
export function canonicalModuleName(name: string): string {
  return name.trim().replace(/-/g, '_');
}

/** Names of loaded loadable modules from /proc/modules. */
export function parseProcModules(text: string): Set<string> {
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    const name = line.split(/\s+/)[0];
    if (name) out.add(canonicalModuleName(name));
  }
  return out;
}

/** Names from modules.builtin ("kernel/net/bridge/br_netfilter.ko" -> "br_netfilter"). */
export function parseModulesBuiltin(text: string): Set<string> {
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    const base = line.trim().split('/').pop();
    if (base) out.add(canonicalModuleName(base.replace(/\.ko(\.[a-z]+)?$/, '')));
  }
  return out;
}

export interface ModuleState {
  name: string;
  loaded: boolean;
  builtin: boolean;
}

/**
 * Live only: loaded per /proc/modules or /sys/module/NAME, or built into the
 * running kernel. `release`: the running kernel's, when the caller has read it.
 */
export async function moduleStates(host: TargetFs, names: string[], release?: string | null): Promise<ModuleState[]> {
  host.assertLive('module state');
  const loaded = parseProcModules((await host.readKernel('/proc/modules')) ?? '');
  const running = release === undefined ? await readKernelRelease(host) : release;
  const builtin = running === null ? new Set<string>() : parseModulesBuiltin((await host.readFile(`/lib/modules/${running}/modules.builtin`)) ?? '');
  const out: ModuleState[] = [];
  for (const n of names) {
    const name = canonicalModuleName(n);
    const isBuiltin = builtin.has(name);
    const inSys = (await host.lstat(`/sys/module/${name}`)) !== null;
    out.push({ name, loaded: loaded.has(name) || isBuiltin || inSys, builtin: isBuiltin });
  }
  return out;
}
