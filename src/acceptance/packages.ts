// Who puts a program kubeadm needs on the host: kubespray's system_packages
// role installs every entry of its `pkgs` map whose conditions are all true
// (roles/system_packages/tasks/main.yml "Manage packages": selectattr('value',
// 'ansible.builtin.all')). The conditions are evaluated for this node with
// the audit's variables; where they cannot be, the answer is unknown with the
// reason. Which package ships a program is the distribution's packaging,
// modelled for Debian's family only (packages.debian.org's contents).
import type { Facts } from '../facts/linux.js';
import type { KubesprayNode } from '../kubespray/report.js';
import { isMap, isScalar, type Node } from 'yaml';
import { lineOf } from '../kubespray/checkout.js';

export const SYSTEM_PACKAGES_VARS = 'roles/system_packages/vars/main.yml';
const ROLE = 'system_packages';

/** Debian's package for each program kubeadm looks up (bookworm and trixie agree). */
export const DEBIAN_PACKAGE_OF: Readonly<Record<string, string>> = {
  conntrack: 'conntrack',
  ip: 'iproute2',
  tc: 'iproute2',
  iptables: 'iptables',
  ebtables: 'ebtables',
  ethtool: 'ethtool',
  socat: 'socat',
  mount: 'mount',
  nsenter: 'util-linux',
  touch: 'coreutils',
};

export type Installs =
  | { by: 'kubespray'; package: string; evidence: string }
  | { by: 'operator'; package: string; reason: string; evidence: string }
  | { by: 'unknown'; reason: string };

/** The 1-based line of `pkgs.<name>` in the vars file; 0 when it cannot be found. */
async function entryLine(node: KubesprayNode, file: string, name: string): Promise<number> {
  const y = await node.checkout.yaml(file).catch(() => null);
  const pkgs = y && isMap(y.doc.contents) ? y.doc.contents.get('pkgs', true) : null;
  if (!y || !isMap(pkgs)) return 0;
  const pair = pkgs.items.find((p) => isScalar(p.key) && p.key.value === name);
  return pair ? lineOf(y, pair.key as Node) : 0;
}

export async function whoInstalls(program: string, node: KubesprayNode, facts: Facts | undefined): Promise<Installs> {
  if (!facts) return { by: 'unknown', reason: "the host's facts (os_family) were not gathered" };
  const family = facts.extra?.os_family;
  const pkg = family === 'Debian' ? DEBIAN_PACKAGE_OF[program] : undefined;
  if (pkg === undefined) return { by: 'unknown', reason: `which package ships ${program} on os_family ${String(family)} is not modelled` };
  if (!(await node.checkout.exists(SYSTEM_PACKAGES_VARS)))
    return {
      by: 'unknown',
      reason: `${node.checkout.dir} has no ${SYSTEM_PACKAGES_VARS} (kubespray's package list; older releases keep it elsewhere, not read)`,
    };
  const ctx = await node.vars(ROLE);
  const def = ctx.get('pkgs');
  if (!def || 'runtime' in def || def.value === null || typeof def.value !== 'object' || Array.isArray(def.value))
    return { by: 'unknown', reason: `pkgs is not a mapping as ${ROLE} sees it` };
  const where = `${def.file}:${await entryLine(node, def.file, pkg)} pkgs.${pkg}`;
  if (!Object.prototype.hasOwnProperty.call(def.value, pkg))
    return { by: 'operator', package: pkg, reason: `kubespray's pkgs (${def.file}:${def.line}) has no ${pkg}`, evidence: `${def.file}:${def.line} pkgs` };
  const conditions = (def.value as Record<string, unknown>)[pkg];
  if (!Array.isArray(conditions)) return { by: 'unknown', reason: `${where} is not a list of conditions` };
  for (const c of conditions) {
    const r = ctx.template(c);
    if (!r.ok) return { by: 'unknown', reason: `${where}: ${JSON.stringify(c)} cannot be evaluated: ${r.reason}` };
    if (typeof r.value !== 'boolean') return { by: 'unknown', reason: `${where}: ${JSON.stringify(c)} gives ${JSON.stringify(r.value)}, not a boolean` };
    if (!r.value) return { by: 'operator', package: pkg, reason: `${where}: ${String(c)} is false on this host`, evidence: where };
  }
  return {
    by: 'kubespray',
    package: pkg,
    evidence: `${where}: ${conditions.length === 0 ? 'no condition' : conditions.map(String).join(' and ')} (all true here)`,
  };
}
