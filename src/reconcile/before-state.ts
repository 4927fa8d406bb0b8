// The host as it was before anything changed: the lab's before.json fields.
// Each comes from what a provider observed for the plan when one did (its
// `facts`: SwapTotal, live sysctl values, module states, listeners); only a
// field no planned resource observed is read here, with the same observer
// the provider would use.
import type { TargetFs } from '../host.js';
import { CONTROL_PLANE_PORTS } from '../desired-state.js';
import { readMeminfo } from '../observe/meminfo.js';
import { readLiveSysctl } from '../observe/sysctl-live.js';
import { canonicalModuleName, moduleStates } from '../observe/modules.js';
import { busyPorts, readListeners } from '../observe/listeners.js';
import { planFacts, type Plan } from './plan.js';

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

/** Pure: the before-state fields the planned resources observed (their providers' `facts`). */
export function observedBefore(plan: Plan): ObservedBefore {
  const facts = planFacts(plan);
  const out: ObservedBefore = {};
  if (facts.swapTotalKb !== undefined) out.swapTotalKb = facts.swapTotalKb;
  if (facts.sysctls?.has(IP_FORWARD)) out.ipForward = facts.sysctls.get(IP_FORWARD);
  const br = facts.modules?.get(canonicalModuleName('br_netfilter'));
  if (br !== undefined) out.brNetfilter = br;
  // Only when the resources looked at every control-plane port is their answer the whole field.
  const seen = new Set(facts.listeners?.ports ?? []);
  const busy = new Set(facts.listeners?.busy ?? []);
  if (CONTROL_PLANE_PORTS.every((p) => seen.has(p))) out.busyPorts = CONTROL_PLANE_PORTS.filter((p) => busy.has(p)).sort((a, b) => a - b);
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
