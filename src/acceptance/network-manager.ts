// NetworkManagerCNI: not a kubeadm check, what breaks at the first pod.
// NetworkManager manages every device it is not told to leave alone: when the
// CNI plugin creates its bridge, tunnels and pod veths, NM takes them over
// (flushes the addresses the plugin set, removes its routes) and pods lose
// the network. What tells NM to leave them is [keyfile] unmanaged-devices,
// merged from its configuration files as NM merges them (nm-conf.ts); the
// CNI's interface names are the plugin's own (cni-interfaces.ts).
import type { AcceptanceFacts, Checker, CheckOutcome, Known } from './checker.js';
import { notJudged, pass } from './checker.js';
import { CNI_INTERFACES, NO_CNI_INTERFACES, type CniInterfaces } from './cni-interfaces.js';
import type { NetworkManagerFacts } from './nm-facts.js';
import { mergeUnmanaged, readOrder, type NmConfFile } from './nm-conf.js';
import { unmanagedCovers } from './nm-match.js';

/** The CNI's patterns NM would still manage under these files: not known with the file:line that cannot be judged. */
export function managedPatterns(files: NmConfFile[], patterns: string[]): Known<{ managed: string[]; from: string[] }> {
  const merged = mergeUnmanaged(files);
  if (!merged.known) return merged;
  const managed: string[] = [];
  for (const p of patterns) {
    const c = unmanagedCovers(merged.value.specs, p);
    if (!c.known) return { known: false, reason: `${c.reason} (set at ${merged.value.from.join(', ') || 'nowhere'})` };
    if (!c.value) managed.push(p);
  }
  return { known: true, value: { managed, from: merged.value.from } };
}

/**
 * The CNI's patterns NM would manage, its udev rule for veths taken into
 * account: in force, the veths are not NM's. Shadowed by a file not read
 * here, a veth the configuration leaves managed may be NM's: the check counts
 * it (`shadowed: 'managed'`), so that who-fixes looks at what kubespray
 * writes; who-fixes, after kubespray's files, cannot say (`'unknown'`).
 */
export function stillManaged(
  cni: CniInterfaces,
  nm: NetworkManagerFacts,
  files: NmConfFile[],
  shadowed: 'managed' | 'unknown',
): Known<{ managed: string[]; from: string[] }> {
  const m = managedPatterns(files, cni.patterns);
  if (!m.known) return m;
  const rule = nm.vethRule;
  const veths = m.value.managed.filter((p) => cni.veths.includes(p));
  if (rule.state === 'in force') return { known: true, value: { ...m.value, managed: m.value.managed.filter((p) => !veths.includes(p)) } };
  if (rule.state === 'shadowed' && veths.length > 0 && shadowed === 'unknown')
    return { known: false, reason: `${rule.file} shadows NetworkManager's udev rule for veth devices (${veths.join(', ')}), and udev rules are not read here` };
  return m;
}

/** The files NM reads on this host, in its order. */
export const hostFiles = (nm: NetworkManagerFacts, extra: NmConfFile[] = []): NmConfFile[] => {
  const etc = '/etc/NetworkManager/conf.d';
  const added = new Set(extra.map((f) => f.path));
  const dirs = { ...nm.dirs, [etc]: [...(nm.dirs[etc] ?? []).filter((f) => !added.has(f.path)), ...extra] };
  return readOrder(nm.main, dirs);
};

function judge(f: AcceptanceFacts): CheckOutcome {
  if (!f.networkManager.known) return notJudged(f.networkManager);
  const nm = f.networkManager.value;
  if (nm.runs === null || !nm.runs.yes) return pass();
  if (!f.networkPlugin.known) return { skipped: f.networkPlugin.reason };
  const plugin = f.networkPlugin.value;
  if (NO_CNI_INTERFACES.includes(plugin)) return pass();
  const cni = CNI_INTERFACES[plugin];
  if (!cni) return { unknown: `kube_network_plugin is ${JSON.stringify(plugin)}, whose interface names are not known here (src/acceptance/cni-interfaces.ts)` };
  const m = stillManaged(cni, nm, hostFiles(nm), 'managed');
  if (!m.known) return { unknown: m.reason };
  if (m.value.managed.length === 0) return pass();
  return {
    warnings: [
      `NetworkManager runs (${nm.runs.how}) and would manage ${plugin}'s interfaces ${m.value.managed.join(', ')} (${cni.source}): its [keyfile] unmanaged-devices ${m.value.from.length > 0 ? `(${m.value.from.join(', ')})` : '(not set)'} does not leave them alone`,
    ],
    errors: [],
  };
}

export const networkManagerCniCheck: Checker = {
  name: 'NetworkManagerCNI',
  runsOn: 'every node',
  breaksLater: "NetworkManager takes over the CNI's interfaces: their addresses flushed, routes removed, pods losing the network",
  source: 'NetworkManager.conf(5) [keyfile] unmanaged-devices; kubespray roles/kubernetes/preinstall/tasks/0062-networkmanager-unmanaged-devices.yml',
  check: judge,
};
