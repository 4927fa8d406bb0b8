// Who leaves the CNI's interfaces to it when NetworkManager runs: kubespray's
// roles/kubernetes/preinstall, evaluated for this node. Its main.yml imports
// 0062-networkmanager-unmanaged-devices.yml when `networkmanager_enabled.rc
// == 0` (the register of its `systemctl is-active NetworkManager.service`
// task, answered with what that command returns here: 0 active, 3 not), and
// that file's copy tasks write conf.d files under their own `when` (calico.conf
// only for kube_network_plugin calico; k8s.conf always). Each copy that runs is
// rendered (its content and dest templated for this node) and put in
// /etc/NetworkManager/conf.d beside the host's files; NM's merge then says
// whether the CNI's interfaces are left alone: kubespray; if not, the
// operator, with the file to add; unknown where a step cannot be evaluated.
import type { KubesprayNode } from '../kubespray/report.js';
import type { VarDefinition } from '../kubespray/checkout.js';
import type { Task } from '../kubespray/tasks.js';
import { roleTasks } from './role-tasks.js';
import { runStatus, taskContext } from '../kubespray/who-fixes.js';
import type { Known } from './checker.js';
import { known, notKnown } from './checker.js';
import { CNI_INTERFACES } from './cni-interfaces.js';
import { isActiveUnit } from './resolv-conf-who.js';
import { NM_ETC_CONF_DIR, isConfName, type NmConfFile } from './nm-conf.js';
import { NM_UNIT, type NetworkManagerFacts } from './nm-facts.js';
import { hostFiles, stillManaged } from './network-manager.js';

const ROLE = 'kubernetes/preinstall';
export const UNMANAGED_TASKS = `roles/${ROLE}/tasks/0062-networkmanager-unmanaged-devices.yml`;
/** The file we tell the operator to add: last in /etc's conf.d order, appending (+=) to whatever came before. */
export const OPERATOR_FILE = `${NM_ETC_CONF_DIR}/99-kubernetes-cni.conf`;

export type NetworkManagerWho = { who: 'kubespray' | 'operator' | 'unknown'; says: string; evidence: string[] };

const at = (t: Task) => `${t.ref.file}:${t.ref.line} ${t.ref.name}`;

/** The register of kubespray's is-active task for NetworkManager, as this host answers it. */
function nmRegister(tasks: Task[], active: Known<boolean>): Known<VarDefinition[]> {
  const out: VarDefinition[] = [];
  for (const t of tasks) {
    if (isActiveUnit(t) !== NM_UNIT || t.register === undefined) continue;
    if (!active.known) return active;
    out.push({ name: t.register, value: { rc: active.value ? 0 : 3, stdout: active.value ? 'active' : 'inactive' }, file: t.ref.file, line: t.ref.line });
  }
  return known(out);
}

/** The conf.d files kubespray's 0062 tasks write on this node, rendered; not known with the task that cannot be evaluated. */
async function kubesprayWrites(node: KubesprayNode, nm: NetworkManagerFacts): Promise<Known<{ files: NmConfFile[]; tasks: string[] }>> {
  const role = await roleTasks(node, ROLE);
  if (!role.known) return role;
  const { ctx, walked } = role.value;
  const regs = nmRegister(walked.tasks, nm.active);
  if (!regs.known) return regs;
  const base = ctx.child(regs.value);
  const files: NmConfFile[] = [];
  const tasks: string[] = [];
  for (const t of walked.tasks.filter((x) => x.ref.file === UNMANAGED_TASKS && x.module === 'copy')) {
    const tctx = taskContext(base, t);
    const s = runStatus(t.conditions, tctx);
    if (s.runs === 'no') continue;
    if (s.runs !== 'yes') return notKnown(`whether ${at(t)} runs: ${s.runs === 'unknown' ? s.reason : s.on}`);
    const dest = tctx.template(t.args.dest);
    const content = tctx.template(t.args.content);
    if (!dest.ok || !content.ok || typeof dest.value !== 'string' || typeof content.value !== 'string')
      return notKnown(`${at(t)}: its dest or content cannot be rendered for this node`);
    const name = dest.value.slice(dest.value.lastIndexOf('/') + 1);
    // NM reads only *.conf directly in its conf.d: a file elsewhere changes nothing it reads.
    if (dest.value !== `${NM_ETC_CONF_DIR}/${name}` || !isConfName(name)) continue;
    files.push({ path: dest.value, text: content.value });
    tasks.push(at(t));
  }
  return known({ files, tasks });
}

export async function networkManagerWhoFixes(node: KubesprayNode, nm: NetworkManagerFacts, plugin: string): Promise<NetworkManagerWho> {
  const unknown = (why: string, evidence: string[] = []): NetworkManagerWho => ({
    who: 'unknown',
    says: `whether kubespray leaves the CNI's interfaces unmanaged cannot be evaluated: ${why}`,
    evidence,
  });
  const cni = CNI_INTERFACES[plugin];
  if (!cni) return unknown(`kube_network_plugin ${plugin}'s interfaces are not known here`);
  const writes = await kubesprayWrites(node, nm);
  if (!writes.known) return unknown(writes.reason);
  const after = stillManaged(cni, nm, hostFiles(nm, writes.value.files), 'unknown');
  if (!after.known) return unknown(after.reason, writes.value.tasks);
  if (after.value.managed.length === 0)
    return {
      who: 'kubespray',
      says: `kubespray writes ${writes.value.files.map((f) => f.path).join(', ')} (${writes.value.tasks.join('; ')}), after which NetworkManager leaves ${cni.patterns.join(', ')} alone`,
      evidence: writes.value.tasks,
    };
  const line = `unmanaged-devices+=${after.value.managed.map((p) => `interface-name:${p}`).join(';')}`;
  const wrote =
    writes.value.files.length > 0
      ? `kubespray writes only ${writes.value.files.map((f) => f.path).join(', ')}`
      : 'kubespray writes no unmanaged-devices file here';
  return {
    who: 'operator',
    says: `${wrote}, and NetworkManager would still manage ${after.value.managed.join(', ')}: add ${OPERATOR_FILE} with "[keyfile]" and "${line}", then nmcli general reload`,
    evidence: writes.value.tasks,
  };
}
