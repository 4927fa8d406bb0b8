// The fleet grouped by cause: every host's causes (document.ts reads them from
// the documents' structured fields), each cause once with the hosts it stands
// on. Twenty-five hosts with the same rc.local line are one entry naming
// twenty-five hosts, not twenty-five rows to compare by eye. Pure.
//
// Two hosts share a cause when its kind, text and fix are equal (causeKey).
// Nothing host-specific is cut out of the text: the texts are the documents'
// own (a change's summary names the file and line in the host's tree, which is
// the same path on every host), and a text that differs (another line number,
// another command) is another cause. The check names it is filed under are
// merged across hosts.
import { causeKey, type HostCause, type HostSummary } from './document.js';

export interface FleetCause extends HostCause {
  /** The hosts it stands on, by name in byte order (a name repeated in the fleet is listed once). */
  hosts: string[];
}

/** Worst first, as the verdicts are; accepted findings last (they make no verdict). */
export const CAUSE_KINDS: readonly HostCause['kind'][] = ['unusable', 'failed', 'operator', 'unknown', 'accepted'];

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Worst kind first, then the cause on most hosts, then by text (byte order). */
export function fleetCauses(hosts: readonly HostSummary[]): FleetCause[] {
  const causes = new Map<string, { cause: HostCause; checks: Set<string>; hosts: Set<string> }>();
  for (const h of hosts)
    for (const c of h.causes) {
      const key = causeKey(c);
      let g = causes.get(key);
      if (g === undefined) causes.set(key, (g = { cause: c, checks: new Set(), hosts: new Set() }));
      for (const n of c.checks) g.checks.add(n);
      g.hosts.add(h.host);
    }
  const rank = (k: HostCause['kind']) => CAUSE_KINDS.indexOf(k);
  return [...causes.values()]
    .map((g) => ({ ...g.cause, checks: [...g.checks].sort(byteOrder), hosts: [...g.hosts].sort(byteOrder) }))
    .sort((a, b) => rank(a.kind) - rank(b.kind) || b.hosts.length - a.hosts.length || byteOrder(a.text, b.text) || byteOrder(a.fix ?? '', b.fix ?? ''));
}

/** "SysctlFile, SwapOff" or the kind when the documents name no check. */
export const causeName = (c: Pick<HostCause, 'kind' | 'checks'>): string => (c.checks.length > 0 ? c.checks.join(', ') : c.kind);
