// A host that was a Kubernetes node, as one finding: the evidence with its
// paths, what kubeadm's preflight will say about it by kubeadm's own check
// names, and what clears it. Whether kubespray's own run stops on those
// checks depends on how it runs kubeadm for this inventory (it retries init
// with the manifests' checks ignored; with its default host etcd the etcd
// directory check never runs), which this finding does not evaluate: it is
// unknown, loudly, and the plan does not call the host ready (exit 2).
import type { DesiredState } from '../desired-state.js';
import type { Finding } from '../findings.js';
import type { NodeEvidence } from './evidence.js';
import { clearsClause, clearsSentence, type KubesprayClears } from './kubespray-clears.js';

/** What kubespray's reset (roles/reset/tasks/main.yml) does, so the operator knows what running it costs. */
const RESET_DOES =
  "stops and removes kubelet, containerd and etcd units and every CRI container and pod, flushes every iptables table and chain (not only Kubernetes'), deletes /etc/kubernetes, /var/lib/kubelet, /var/lib/etcd and /etc/cni; it cannot be undone";

/** The finding's stable name. */
export const FORMER_NODE_CHECK = 'FormerNode';

/** Pure: the finding for this evidence; none when nothing strong says the host was a node. */
export function formerNodeFindings(evidence: NodeEvidence[], kubespray: DesiredState['kubespray'], clears: KubesprayClears | null = null): Finding[] {
  if (!evidence.some((e) => e.strong)) return [];
  const checks = evidence.filter((e) => e.kubeadm);
  const byCommand = (cmd: 'init' | 'join') => checks.filter((e) => e.kubeadm!.in === cmd).map((e) => `[ERROR ${e.kubeadm!.check}]: ${e.kubeadm!.says}`);
  const init = byCommand('init');
  const join = byCommand('join');
  const kubeadm = [
    ...(init.length > 0 ? [`kubeadm init's preflight would stop on ${init.join(', ')}`] : []),
    ...(join.length > 0 ? [`kubeadm join's on ${join.join(', ')}`] : []),
  ];
  const reset = kubespray
    ? `in ${kubespray.dir}: ansible-playbook -i ${kubespray.inventory} reset.yml --limit ${kubespray.node} -e reset_confirmation=yes`
    : "kubespray's reset.yml for this node (ansible-playbook -i INVENTORY reset.yml --limit NODE -e reset_confirmation=yes)";
  const paths = evidence.map((e) => e.path);
  return [
    {
      level: 'warning',
      unknown: true,
      check: FORMER_NODE_CHECK,
      message:
        `this host was a Kubernetes node (${paths.length} piece${paths.length === 1 ? '' : 's'} of evidence: ${paths.join(', ')})` +
        (kubeadm.length > 0 ? `; ${kubeadm.join('; ')}` : '') +
        (clears ? `; ${clearsSentence(clears, paths)}` : '') +
        `; whether kubespray's install stops on it or works around it is not evaluated; clear it before the install: ${reset} (kubespray's reset ${RESET_DOES}), or this tool's PreviousCluster resource with policy: reset, which moves them aside (--rollback puts them back)`,
      evidence: evidence.map((e) => {
        const clause = clears ? clearsClause(clears, e.path) : '';
        return `${e.path}: ${e.what}${e.kubeadm ? ` (kubeadm ${e.kubeadm.in}: [ERROR ${e.kubeadm.check}]: ${e.kubeadm.says})` : ''}${clause ? `; ${clause}` : ''}`;
      }),
    },
  ];
}
