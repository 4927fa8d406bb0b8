// Who makes forwarded pod traffic pass a FORWARD hook that drops by default:
// evaluated from the roles playbooks/cluster.yml runs on this node that could
// set the policy or accept the pod traffic (kubernetes/preinstall,
// kubernetes/node, and the network plugin's role when the checkout has one),
// walked with the node's variables (kubespray/who-fixes.ts
// evaluateAuditedRoles): an `iptables` task on chain FORWARD that sets the
// policy to ACCEPT or jumps to ACCEPT is kubespray's fix when it runs here;
// one whose run or arguments are decided at run time, or a role that cannot
// be walked whole, is unknown with file:line; none is the operator's. Such a
// task changes the running ruleset when cluster.yml runs, not a writer's
// file: a drop a writer sets again at every boot stays the operator's.
// (kubespray v2.20.0, v2.24.0 and master have none in cluster.yml's roles:
// only master's roles/reset sets FORWARD to ACCEPT, with flush_iptables.)
import type { KubesprayNode } from '../kubespray/report.js';
import { evaluateAuditedRoles, type EvaluatedTask } from '../kubespray/who-fixes.js';

export type ForwardWho = { who: 'kubespray' | 'operator' | 'unknown'; says: string; evidence: string[] };

const at = (e: EvaluatedTask) => `${e.task.ref.file}:${e.task.ref.line} ${e.task.ref.name}`;
const accepts = (e: EvaluatedTask) => e.args.policy === 'ACCEPT' || e.args.jump === 'ACCEPT';

/** The roles walked: the two the audit reads, then roles/network_plugin/PLUGIN when it is there. */
async function forwardRoles(node: KubesprayNode, plugin: string | null): Promise<string[]> {
  const roles = ['kubernetes/preinstall', 'kubernetes/node'];
  if (plugin !== null && /^[a-z0-9_-]+$/.test(plugin) && (await node.checkout.exists(`roles/network_plugin/${plugin}`))) roles.push(`network_plugin/${plugin}`);
  return roles;
}

/**
 * Who opens the control-plane ports in a firewall: a `ufw`, `firewalld` or `iptables` (chain INPUT, accepting)
 * task of the same roles that runs here would be kubespray's answer, which is not judged port by port (unknown,
 * citing it); none (v2.20.0, v2.24.0, master) is the operator's.
 */
export async function inputWhoFixes(node: KubesprayNode, plugin: string | null): Promise<ForwardWho> {
  const roles = await forwardRoles(node, plugin);
  const walked = await evaluateAuditedRoles(node.checkout, node.audit, roles).catch((e: Error) => e);
  if (walked instanceof Error) return { who: 'unknown', says: `the roles ${roles.join(', ')} cannot be read: ${walked.message}`, evidence: [] };
  const opens = walked.evaluated.filter(
    (e) => e.status.runs !== 'no' && (['ufw', 'firewalld'].includes(e.task.module) || (e.task.module === 'iptables' && e.args.chain === 'INPUT' && accepts(e))),
  );
  if (opens.length > 0)
    return {
      who: 'unknown',
      says: `kubespray's ${opens.map(at).join('; ')} changes the firewall: which ports it opens is not judged here`,
      evidence: opens.map(at),
    };
  return {
    who: 'operator',
    says: `no task of kubespray's ${roles.join(', ')} (walked for this node) configures ufw, firewalld or iptables' INPUT: allow the ports from the other nodes`,
    evidence: [],
  };
}

export async function forwardWhoFixes(node: KubesprayNode, plugin: string | null, writers: string[]): Promise<ForwardWho> {
  const unknown = (why: string, evidence: string[] = []): ForwardWho => ({
    who: 'unknown',
    says: `whether kubespray accepts forwarded pod traffic cannot be evaluated: ${why}`,
    evidence,
  });
  const roles = await forwardRoles(node, plugin);
  const walked = await evaluateAuditedRoles(node.checkout, node.audit, roles).catch((e: Error) => e);
  if (walked instanceof Error) return unknown(`the roles ${roles.join(', ')} cannot be read: ${walked.message}`);
  const forward = walked.evaluated.filter((e) => e.task.module === 'iptables' && e.status.runs !== 'no');
  for (const e of forward) {
    if (e.status.runs !== 'yes') return unknown(`${at(e)}: whether it runs is decided at run time`, [at(e)]);
    if (e.unresolved.length > 0 || typeof e.args.chain !== 'string') return unknown(`${at(e)}: its chain cannot be evaluated for this node`, [at(e)]);
  }
  const fix = forward.find((e) => e.args.chain === 'FORWARD' && accepts(e));
  if (fix && writers.length > 0)
    return {
      who: 'operator',
      says: `kubespray's ${at(fix)} accepts it when cluster.yml runs, but ${writers.join(', ')} sets the drop again at every boot: the operator must change that`,
      evidence: [at(fix)],
    };
  if (fix) return { who: 'kubespray', says: `kubespray's ${at(fix)} accepts it when cluster.yml runs`, evidence: [at(fix)] };
  const gaps = walked.issues.map((i) => `${i.ref.file}:${i.ref.line} "${i.ref.name}": ${i.message}`);
  if (gaps.length > 0)
    return unknown(
      `no task of ${roles.join(', ')} read here sets FORWARD's policy or accepts on it, and ${gaps.length} include(s) could not be read: ${gaps.slice(0, 3).join('; ')}`,
    );
  return {
    who: 'operator',
    says: `no task of kubespray's ${roles.join(', ')} (walked for this node) sets FORWARD's policy or accepts on it: the operator must`,
    evidence: [],
  };
}
