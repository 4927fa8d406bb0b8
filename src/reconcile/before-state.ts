// The host as it was before anything changed: the lab's before.json fields,
// read with the same observers the providers use.
import type { Host } from '../host.js';
import { CONTROL_PLANE_PORTS } from '../desired-state.js';
import { readMeminfo } from '../observe/meminfo.js';
import { readLiveSysctl } from '../observe/sysctl-live.js';
import { moduleStates } from '../observe/modules.js';
import { busyPorts, readListeners } from '../observe/listeners.js';

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

/** Live only: offline there is no running kernel to describe. */
export async function observeBeforeState(host: Host): Promise<BeforeState> {
  host.assertLive('the before-state');
  const meminfo = await readMeminfo(host);
  const ipForward = await readLiveSysctl(host, 'net.ipv4.ip_forward');
  const [brNetfilter] = await moduleStates(host, ['br_netfilter']);
  return {
    swap_total_kb: meminfo.get('SwapTotal') ?? 0,
    ip_forward: ipForward === null ? 0 : Number(ipForward),
    br_netfilter: brNetfilter?.loaded ?? false,
    busy_ports: busyPorts(await readListeners(host), [...CONTROL_PLANE_PORTS]),
  };
}
