// Who makes kubeadm's Service-Kubelet pass: kubespray's roles/kubernetes/node
// (played before kubespray's control-plane and kubeadm roles in
// playbooks/cluster.yml) writes /etc/systemd/system/kubelet.service
// ("Write kubelet systemd init file", a template) and enables and starts it
// ("Enable kubelet", service: enabled: true). Both tasks are looked up in
// the checkout and their conditions evaluated for this node. What the host
// has does not stand in the way: Ansible's template writes with follow:
// false, renaming its file over the path, so a mask in /etc (a link to
// /dev/null) is replaced; a mask or a package's unit in /run/systemd/system
// or /lib comes after /etc in systemd's search path, so kubespray's file wins.
// Only a unit in a directory before /etc (a transient unit, an early
// generator's, system.control) would shadow it: not modelled, unknown.
import type { KubesprayNode } from '../kubespray/report.js';
import type { KubeletServiceFacts } from './checker.js';
import type { Task } from '../kubespray/tasks.js';
import { walkRole } from '../kubespray/tasks.js';
import { runStatus, taskContext } from '../kubespray/who-fixes.js';
import { SYSTEM_UNIT_PATH, SYSTEMD_SYSTEM_ETC } from '../systemd/unit-dirs.js';

const ROLE = 'kubernetes/node';
const UNIT_FILE = '/etc/systemd/system/kubelet.service';

export type ServiceKubeletWho =
  { who: 'kubespray'; quiet: true; says: string; evidence: string[] } | { who: 'operator' | 'unknown'; says: string; evidence: string[] };

/** The search-path directories systemd reads before /etc/systemd/system. */
const BEFORE_ETC = SYSTEM_UNIT_PATH.slice(0, SYSTEM_UNIT_PATH.indexOf(SYSTEMD_SYSTEM_ETC));

const at = (t: Task) => `${t.ref.file}:${t.ref.line} ${t.ref.name}`;
const writes = (t: Task) => (t.module === 'template' || t.module === 'copy') && t.args.dest === UNIT_FILE;
const enables = (t: Task) =>
  ['service', 'systemd', 'systemd_service'].includes(t.module) &&
  ['kubelet', 'kubelet.service'].includes(String(t.args.name)) &&
  [true, 'true', 'yes'].includes(t.args.enabled as never);

export async function serviceKubeletWhoFixes(node: KubesprayNode, unit: KubeletServiceFacts): Promise<ServiceKubeletWho> {
  const unknown = (why: string, evidence: string[] = []): ServiceKubeletWho => ({
    who: 'unknown',
    says: `whether kubespray writes and enables kubelet.service cannot be evaluated: ${why}`,
    evidence,
  });
  const ctx = await node.vars(ROLE).catch((e: Error) => e);
  if (ctx instanceof Error) return unknown(`the variables of ${ROLE} cannot be read: ${ctx.message}`);
  const walked = await walkRole(node.checkout, ROLE, (value) => {
    const t = ctx.template(value);
    return t.ok && typeof t.value === 'string' ? { value: t.value } : { reason: t.ok ? 'not a file name' : t.reason };
  }).catch((e: Error) => e);
  if (walked instanceof Error) return unknown(`${ROLE}'s tasks cannot be read: ${walked.message}`);
  const tasks = [walked.tasks.find(writes), walked.tasks.find(enables)];
  if (!tasks[0] || !tasks[1]) return unknown(`roles/${ROLE} has no task ${!tasks[0] ? `writing ${UNIT_FILE}` : 'enabling kubelet (service: enabled: true)'}`);
  const evidence = tasks.map((t) => at(t!));
  for (const t of tasks) {
    const s = runStatus(t!.conditions, taskContext(ctx, t!));
    if (s.runs === 'no') return { who: 'operator', says: `kubespray does not run ${at(t!)} on this node: enable kubelet.service`, evidence };
    if (s.runs !== 'yes') return unknown(`whether ${at(t!)} runs: ${s.runs === 'unknown' ? s.reason : s.on}`, evidence);
  }
  const shadow = BEFORE_ETC.find((d) => unit.entry?.startsWith(`${d}/`));
  if (shadow !== undefined)
    return unknown(`${unit.entry} comes before ${UNIT_FILE} in systemd's search path, so kubespray's file would not be the one loaded`, evidence);
  return { who: 'kubespray', quiet: true, says: `kubespray writes ${UNIT_FILE} and enables it before kubeadm runs`, evidence };
}
