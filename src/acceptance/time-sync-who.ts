// Who gives a node without a time client one: kubespray, when ntp_enabled is
// true for this node (roles/kubernetes/preinstall/tasks/main.yml "Configure
// NTP" imports 0081-ntp-configurations.yml `when: ntp_enabled`, and
// roles/system_packages installs chrony or ntp on the same condition); else
// the operator. ntp_enabled is evaluated with the node's variables as
// roles/kubernetes/preinstall sees them (kubespray_defaults sets it false);
// a value that is not a boolean, or a checkout without that task, is unknown.
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import type { KubesprayNode } from '../kubespray/report.js';
import { lineOf } from '../kubespray/checkout.js';

export const NTP_VAR = 'ntp_enabled';
const ROLE = 'kubernetes/preinstall';
const TASKS = 'roles/kubernetes/preinstall/tasks/main.yml';
const NTP_TASKS = '0081-ntp-configurations.yml';

export type TimeSyncWho = { who: 'kubespray' | 'operator' | 'unknown'; says: string; evidence: string[] };

/** `TASKS:line` of the task importing (or including) NTP_TASKS; null when the checkout has none. */
async function ntpTaskLine(node: KubesprayNode): Promise<string | null> {
  const y = await node.checkout.yaml(TASKS).catch(() => null);
  if (!y || !isSeq(y.doc.contents)) return null;
  for (const task of y.doc.contents.items) {
    if (!isMap(task)) continue;
    const imports = task.items.find(
      (p) => isScalar(p.key) && /^(ansible\.builtin\.)?(import|include)_tasks$/.test(String(p.key.value)) && isScalar(p.value) && p.value.value === NTP_TASKS,
    );
    if (imports) return `${TASKS}:${lineOf(y, task as Node)}`;
  }
  return null;
}

export async function timeSyncWhoFixes(node: KubesprayNode): Promise<TimeSyncWho> {
  const unknown = (why: string): TimeSyncWho => ({
    who: 'unknown',
    says: `whether kubespray configures a time client cannot be evaluated: ${why}`,
    evidence: [],
  });
  const ctx = await node.vars(ROLE).catch((e: Error) => e);
  if (ctx instanceof Error) return unknown(`the variables of ${ROLE} cannot be read: ${ctx.message}`);
  const def = ctx.get(NTP_VAR);
  if (!def) return unknown(`${NTP_VAR} is not defined for ${ROLE}`);
  if ('runtime' in def) return unknown(`${NTP_VAR} is set at run time (${def.file}:${def.line})`);
  const r = ctx.template(def.value);
  const where = `${def.file}:${def.line} ${NTP_VAR}`;
  if (!r.ok) return unknown(`${where}: ${r.reason}`);
  if (r.value === false)
    return {
      who: 'operator',
      says: `kubespray configures no time client (${NTP_VAR} is false): install and enable one (chrony, systemd-timesyncd), or set ${NTP_VAR}: true in the inventory`,
      evidence: [where],
    };
  if (r.value !== true) return unknown(`${where} is ${JSON.stringify(r.value)}, not a boolean`);
  const task = await ntpTaskLine(node);
  if (task === null) return unknown(`${NTP_VAR} is true (${where}), but ${TASKS} has no task importing ${NTP_TASKS}`);
  return { who: 'kubespray', says: `kubespray installs, configures and starts an NTP client (${NTP_VAR} is true)`, evidence: [where, `${task} ${NTP_TASKS}`] };
}
