// The file kubelet hands pods with dnsPolicy Default on this node, as
// kubespray sets it: kubelet-config.v1beta1.yaml.j2 writes `resolvConf: "{{
// kube_resolv_conf }}"`; roles/kubernetes/node/defaults/main.yml sets
// /etc/resolv.conf, and the role's "Os specific vars" task (tasks/facts.yml,
// include_vars with_first_found) loads vars/<distribution>-<version>.yml and
// the like, where Ubuntu 18 to 24 and Fedora set systemd-resolved's
// /run/systemd/resolve/resolv.conf. The include_vars file is found as
// ansible-core finds it and its value outranks the inventory's (include_vars
// is precedence 18 of 22, above host_vars and below set_fact).
import { isMap, isSeq, type Node } from 'yaml';
import type { KubesprayNode } from '../kubespray/report.js';
import type { VarDefinition } from '../kubespray/checkout.js';
import { lineOf, topLevelVars } from '../kubespray/checkout.js';
import type { Task } from '../kubespray/tasks.js';
import { roleTasks } from './role-tasks.js';
import type { VarContext } from '../kubespray/vars.js';
import { runStatus, taskContext } from '../kubespray/who-fixes.js';
import type { Known } from './checker.js';
import { known, notKnown } from './checker.js';

export const KUBELET_RESOLV_VAR = 'kube_resolv_conf';
const ROLE = 'kubernetes/node';

/** kube_resolv_conf's value for this node and where it was set (file:line). */
export type KubeletResolvConf = { path: string; where: string };

/** The raw task mapping written at `line` of a task file (blocks searched too). */
function taskAt(items: unknown[], line: number, at: (n: Node) => number): Record<string, unknown> | null {
  for (const item of items) {
    if (!isMap(item)) continue;
    if (at(item as Node) === line) return item.toJSON() as Record<string, unknown>;
    for (const section of ['block', 'rescue', 'always']) {
      const inner = item.get(section, true);
      const found = isSeq(inner) ? taskAt(inner.items, line, at) : null;
      if (found) return found;
    }
  }
  return null;
}

/**
 * ansible-core's first_found terms (plugins/lookup/first_found.py): a string
 * or a mapping's `files` (a list, or a string split on `,` and `;`), each
 * templated, then looked for on include_vars' search path (subdir `vars`:
 * DataLoader.path_dwim_relative_stack from the role's tasks dir, then the
 * playbook's dir). The first that exists; null when none does.
 */
async function firstFound(node: KubesprayNode, terms: unknown, ctx: VarContext): Promise<Known<string | null>> {
  const names: string[] = [];
  const split = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? v.split(/[,;]/) : []);
  for (const term of Array.isArray(terms) ? terms : [terms]) {
    if (term && typeof term === 'object' && !Array.isArray(term)) {
      const t = term as Record<string, unknown>;
      if (t.paths !== undefined) return notKnown('a first_found term with paths: is not modelled');
      names.push(...split(t.files));
    } else names.push(...split(term));
  }
  for (const raw of names) {
    const r = ctx.template(raw.trim());
    if (!r.ok) return notKnown(`${raw}: ${r.reason}`);
    const fn = String(r.value);
    for (const dir of [`roles/${ROLE}/vars`, `roles/${ROLE}/tasks`, `roles/${ROLE}`, 'playbooks/vars', 'playbooks']) {
      if (await node.checkout.exists(`${dir}/${fn}`)) return known(`${dir}/${fn}`);
    }
  }
  return known(null);
}

/** The include_vars with_first_found tasks of the role that run on this node, each with the file it loads. */
async function includedVars(node: KubesprayNode, ctx: VarContext, tasks: Task[]): Promise<Known<VarDefinition[]>> {
  const out: VarDefinition[] = [];
  for (const t of tasks.filter((t) => t.module === 'include_vars')) {
    const y = await node.checkout.yaml(t.ref.file);
    const raw = y && isSeq(y.doc.contents) ? taskAt(y.doc.contents.items, t.ref.line, (n) => lineOf(y, n)) : null;
    const where = `${t.ref.file}:${t.ref.line} ${t.ref.name}`;
    if (!raw || raw.with_first_found === undefined) return notKnown(`${where}: an include_vars without with_first_found is not modelled`);
    const s = runStatus(t.conditions, taskContext(ctx, t));
    if (s.runs === 'no') continue;
    if (s.runs !== 'yes') return notKnown(`whether ${where} runs: ${s.runs === 'unknown' ? s.reason : s.on}`);
    const f = await firstFound(node, raw.with_first_found, taskContext(ctx, t));
    if (!f.known) return notKnown(`${where}: ${f.reason}`);
    const file = f.value === null ? null : await node.checkout.yaml(f.value);
    if (file) out.push(...topLevelVars(file));
  }
  return known(out);
}

/** kube_resolv_conf for this node: an include_vars file's over the role's variables. */
export async function kubeletResolvConf(node: KubesprayNode): Promise<Known<KubeletResolvConf>> {
  const role = await roleTasks(node, ROLE);
  if (!role.known) return role;
  const { ctx, walked } = role.value;
  const inc = await includedVars(node, ctx, walked.tasks).catch((e: Error) => notKnown<VarDefinition[]>(e.message));
  if (!inc.known) return inc;
  const fromFile = inc.value.filter((d) => d.name === KUBELET_RESOLV_VAR).pop();
  const def = fromFile ?? ctx.get(KUBELET_RESOLV_VAR);
  if (!def) return notKnown(`${KUBELET_RESOLV_VAR} is not defined for ${ROLE}`);
  if ('runtime' in def) return notKnown(`${KUBELET_RESOLV_VAR} is set at run time (${def.file}:${def.line})`);
  const r = ctx.template(def.value);
  const where = `${def.file}:${def.line} ${KUBELET_RESOLV_VAR}`;
  if (!r.ok) return notKnown(`${where}: ${r.reason}`);
  return typeof r.value === 'string' ? known({ path: r.value, where }) : notKnown(`${where} is ${JSON.stringify(r.value)}, not a path`);
}
