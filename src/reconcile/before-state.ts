// The host as it was before anything changed: the lab's before.json fields.
// Each comes from what a provider observed for the plan when one did (SwapOff's
// SwapTotal, SysctlFile's live values, ModulesLoad's module states, PortFree's
// listeners); only a field no planned resource observed is read here, with the
// same observer the provider would use.
import type { TargetFs } from '../host.js';
import { CONTROL_PLANE_PORTS } from '../desired-state.js';
import { readMeminfo } from '../observe/meminfo.js';
import { normalizeSysctlKey, readLiveSysctl } from '../observe/sysctl-live.js';
import { canonicalModuleName, moduleStates } from '../observe/modules.js';
import { busyPorts, readListeners } from '../observe/listeners.js';
import type { SwapObserved } from '../resources/swap-off/observed.js';
import type { SysctlFileObserved } from '../resources/sysctl-file/observed.js';
import type { ModulesObserved } from '../modprobe/observe.js';
import type { PortFreeObserved } from '../ports/observed.js';
import type { PortFreeSpec } from '../desired-state.js';
import type { Plan } from './plan.js';

export interface BeforeState {
  /** SwapTotal of /proc/meminfo, kB. */
  swap_total_kb: number;
  /** Live net.ipv4.ip_forward. */
  ip_forward: number;
  /** br_netfilter loaded (or built in). */
  br_netfilter: boolean;
  /** Control-plane ports with a LISTEN socket, IPv4 or IPv6, ascending. */
  busy_ports: number[];
}

const IP_FORWARD = 'net.ipv4.ip_forward';

/** What the plan's observations already say; undefined where no resource observed it. */
export interface ObservedBefore {
  swapTotalKb?: number;
  /** The live value as readLiveSysctl gives it (null: the kernel lacks the key). */
  ipForward?: string | null;
  brNetfilter?: boolean;
  busyPorts?: number[];
}

/** Pure: the before-state fields the planned resources observed. */
export function observedBefore(plan: Plan): ObservedBefore {
  const out: ObservedBefore = {};
  const ports = new Set<number>();
  const seenPorts = new Set<number>();
  for (const r of plan.resources) {
    if (r.type === 'SwapOff') {
      const o = r.observed as SwapObserved;
      if (o.swapTotalKb !== null && out.swapTotalKb === undefined) out.swapTotalKb = o.swapTotalKb;
    } else if (r.type === 'SysctlFile') {
      const runtime = (r.observed as SysctlFileObserved).runtime;
      for (const [k, v] of Object.entries(runtime ?? {})) if (normalizeSysctlKey(k) === IP_FORWARD && out.ipForward === undefined) out.ipForward = v;
    } else if (r.type === 'ModulesLoad') {
      const s = (r.observed as ModulesObserved).states?.find((m) => m.name === canonicalModuleName('br_netfilter'));
      if (s && out.brNetfilter === undefined) out.brNetfilter = s.loaded;
    } else if (r.type === 'PortFree') {
      const o = r.observed as PortFreeObserved;
      if (o.mode !== 'live') continue;
      for (const p of (r.spec as PortFreeSpec).ports) seenPorts.add(p);
      for (const b of o.busy) ports.add(b.port);
    }
  }
  // Only when the PortFree resources looked at every control-plane port is their answer the whole field.
  if (CONTROL_PLANE_PORTS.every((p) => seenPorts.has(p))) out.busyPorts = CONTROL_PLANE_PORTS.filter((p) => ports.has(p)).sort((a, b) => a - b);
  return out;
}

/** Live only: offline there is no running kernel to describe. `plan`: observed just now, before anything changed. */
export async function observeBeforeState(host: TargetFs, plan: Plan): Promise<BeforeState> {
  host.assertLive('the before-state');
  const seen = observedBefore(plan);
  const swapTotalKb = seen.swapTotalKb ?? (await readMeminfo(host)).get('SwapTotal') ?? 0;
  const ipForward = seen.ipForward !== undefined ? seen.ipForward : await readLiveSysctl(host, IP_FORWARD);
  const brNetfilter = seen.brNetfilter ?? (await moduleStates(host, ['br_netfilter']))[0]?.loaded ?? false;
  return {
    swap_total_kb: swapTotalKb,
    ip_forward: ipForward === null ? 0 : Number(ipForward),
    br_netfilter: brNetfilter,
    busy_ports: seen.busyPorts ?? busyPorts(await readListeners(host), [...CONTROL_PLANE_PORTS]),
  };
}
