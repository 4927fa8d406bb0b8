// What kubespray does about a container runtime already on the host,
// evaluated from its roles/container-engine for this node: the roles
// playbooks/cluster.yml runs for container_manager containerd (the
// container-engine meta role's validate-container-engine, then containerd's
// dependencies containerd-common, runc, crictl, nerdctl, then containerd),
// walked with the node's variables (src/kubespray/who-fixes.ts
// evaluateAuditedRoles). For each collision:
//   - config.toml: the template or copy task whose dest is
//     /etc/containerd/config.toml ("Containerd | Copy containerd config
//     file"), run on this node: kubespray writes the file anew;
//   - a Debian package: a `package`/`apt` task with state absent naming it
//     (per loop item): kubespray removes it. Its removal of a package this one
//     depends on (runc, for Debian's containerd) is not taken for its removal:
//     what apt does with the dependants is not judged (unknown). No task
//     naming it: the operator's.
// Conditions read at run time stay unknown, naming the task; kubespray's stat
// of /run/ostree-booted (is_ostree) is given what this host has there.
import type { KubesprayNode } from '../kubespray/report.js';
import { evaluateAuditedRoles, type EvaluatedTask, type RunStatus } from '../kubespray/who-fixes.js';
import { roleDependencies } from '../kubespray/vars.js';
import type { Known, RuntimeCollisionFacts } from './checker.js';
import { known, notKnown } from './checker.js';
import { CONTAINERD_CONFIG } from './runtime-facts.js';

const CONTAINERD_ROLE = 'container-engine/containerd';
const VALIDATE_ROLE = 'container-engine/validate-container-engine';

export type RuntimeCollisionWho = { who: 'kubespray' | 'operator' | 'unknown'; says: string; evidence: string[] };
type ItemWho = { who: RuntimeCollisionWho['who']; says: string; evidence?: string };

const at = (e: EvaluatedTask) => `${e.task.ref.file}:${e.task.ref.line} ${e.task.ref.name}`;
const why = (s: RunStatus) =>
  s.runs === 'unknown' ? `whether it runs cannot be evaluated: ${s.reason}` : s.runs === 'at run time' ? `whether it runs is decided at run time: ${s.on}` : '';

/** A variable of the containerd role for this node, templated. */
async function containerdVar(node: KubesprayNode, name: string): Promise<Known<{ value: unknown; where: string }>> {
  const ctx = await node.vars(CONTAINERD_ROLE).catch((e: Error) => e);
  if (ctx instanceof Error) return notKnown(`the variables of ${CONTAINERD_ROLE} cannot be read: ${ctx.message}`);
  const def = ctx.get(name);
  if (!def) return notKnown(`${name} is not defined for ${CONTAINERD_ROLE}`);
  if ('runtime' in def) return notKnown(`${name} is set at run time (${def.file}:${def.line})`);
  const r = ctx.template(def.value);
  return r.ok ? known({ value: r.value, where: `${def.file}:${def.line} ${name}` }) : notKnown(`${name} (${def.file}:${def.line}): ${r.reason}`);
}

/** The package names a removal task's name argument gives, item by item; null when one cannot be evaluated. */
function removedNames(e: EvaluatedTask): string[] | null {
  const out: string[] = [];
  for (const item of e.loop ?? [undefined]) {
    const ctx = item === undefined ? e.ctx : e.ctx.child([{ name: e.task.loopVar, value: item, file: e.task.ref.file, line: e.task.ref.line }]);
    let v: unknown = e.args.name;
    // A loop item may itself be a template ("{{ docker_packages_list }}"): templated until it is a value.
    for (let i = 0; i < 3 && (typeof v === 'string' ? v.includes('{{') : false); i++) {
      const r = ctx.template(v);
      if (!r.ok) return null;
      v = r.value;
    }
    const names = (Array.isArray(v) ? v : [v]).flat();
    if (!names.every((n) => typeof n === 'string')) return null;
    out.push(...names.flatMap((n) => String(n).split(',')).map((n) => n.trim()));
  }
  return out;
}

const isRemoval = (e: EvaluatedTask) => ['package', 'apt', 'dnf', 'yum'].includes(e.task.module) && e.args.state === 'absent';

/** kubespray's answer for one Debian package. */
function packageWho(p: RuntimeCollisionFacts['packages'][number], evaluated: EvaluatedTask[]): ItemWho {
  const removals = evaluated.filter((e) => isRemoval(e) && e.status.runs !== 'no');
  const unsure: string[] = [];
  const dependency: string[] = [];
  for (const e of removals) {
    const names = removedNames(e);
    const when = e.status.runs === 'yes' ? '' : ` (${why(e.status)})`;
    if (names === null) unsure.push(`${at(e)}${when}: its package names cannot be evaluated`);
    else if (names.includes(p.name)) {
      if (e.status.runs === 'yes') return { who: 'kubespray', says: `kubespray removes Debian's ${p.name} (${at(e)})`, evidence: at(e) };
      unsure.push(`${at(e)} removes it (${why(e.status)})`);
    } else if (e.status.runs === 'yes' && names.some((n) => p.depends.includes(n)))
      dependency.push(
        `${at(e)} removes ${names.filter((n) => p.depends.includes(n)).join(', ')}, which ${p.name} depends on (whether apt takes ${p.name} with it is not judged)`,
      );
  }
  const maybe = [...unsure, ...dependency];
  if (maybe.length > 0)
    return {
      who: 'unknown',
      says: `whether kubespray removes Debian's ${p.name} cannot be evaluated: ${maybe.join('; ')}; purging it (apt purge ${p.name}) before the install settles it`,
    };
  return {
    who: 'operator',
    says: `no task of kubespray's container-engine roles removes Debian's ${p.name} on this node: purge it (apt purge ${p.name}) before the install`,
  };
}

/** kubespray's answer for a config.toml with SystemdCgroup = false. */
function configWho(evaluated: EvaluatedTask[]): ItemWho {
  const writes = evaluated.filter((e) => ['template', 'copy'].includes(e.task.module) && e.args.dest === CONTAINERD_CONFIG);
  const runs = writes.find((e) => e.status.runs === 'yes');
  if (runs) return { who: 'kubespray', says: `kubespray writes ${CONTAINERD_CONFIG} anew from its template (${at(runs)})`, evidence: at(runs) };
  const maybe = writes.find((e) => e.status.runs !== 'no');
  if (maybe) return { who: 'unknown', says: `whether kubespray writes ${CONTAINERD_CONFIG} cannot be evaluated: ${at(maybe)} (${why(maybe.status)})` };
  const unresolved = evaluated.find((e) => e.task.module === 'template' && e.unresolved.some((u) => u.arg === 'dest') && e.status.runs !== 'no');
  if (unresolved)
    return { who: 'unknown', says: `whether kubespray writes ${CONTAINERD_CONFIG} cannot be evaluated: ${at(unresolved)}'s dest cannot be evaluated` };
  return {
    who: 'operator',
    says: `no task of kubespray's containerd roles writes ${CONTAINERD_CONFIG} on this node: set SystemdCgroup = true there or remove it`,
  };
}

/** The roles cluster.yml runs for containerd, in order, as far as the checkout has them. */
async function containerdRoles(node: KubesprayNode): Promise<string[]> {
  const ck = node.checkout;
  const deps = await roleDependencies(ck, CONTAINERD_ROLE);
  return [...((await ck.exists(`roles/${VALIDATE_ROLE}`)) ? [VALIDATE_ROLE] : []), ...deps, CONTAINERD_ROLE];
}

export async function runtimeCollisionWhoFixes(node: KubesprayNode, facts: RuntimeCollisionFacts): Promise<RuntimeCollisionWho> {
  const unknown = (why: string, evidence: string[] = []): RuntimeCollisionWho => ({
    who: 'unknown',
    says: `what kubespray does about it cannot be evaluated: ${why}`,
    evidence,
  });
  const manager = await containerdVar(node, 'container_manager');
  if (!manager.known) return unknown(manager.reason);
  if (manager.value.value !== 'containerd')
    return unknown(`container_manager is ${JSON.stringify(manager.value.value)} (${manager.value.where}): only kubespray's containerd is evaluated here`, [
      manager.value.where,
    ]);
  const deploy = await containerdVar(node, 'deploy_container_engine');
  if (!deploy.known) return unknown(deploy.reason);
  if (deploy.value.value !== true)
    return {
      who: 'operator',
      says: `kubespray installs no container engine on this node (deploy_container_engine is ${JSON.stringify(deploy.value.value)}, ${deploy.value.where})`,
      evidence: [deploy.value.where],
    };
  if (!(await node.checkout.exists(`roles/${CONTAINERD_ROLE}`))) return unknown(`the checkout has no roles/${CONTAINERD_ROLE}`);
  const registers = (e: EvaluatedTask) =>
    e.task.module === 'stat' && typeof e.args.path === 'string' && e.args.path in facts.exists ? { stat: { exists: facts.exists[e.args.path] } } : undefined;
  const walked = await evaluateAuditedRoles(node.checkout, { ...node.audit, registers }, await containerdRoles(node)).catch((e: Error) => e);
  if (walked instanceof Error) return unknown(`kubespray's container-engine roles cannot be read: ${walked.message}`);
  const items = [...facts.packages.map((p) => packageWho(p, walked.evaluated)), ...(facts.systemdCgroupFalse !== null ? [configWho(walked.evaluated)] : [])];
  const who = items.some((i) => i.who === 'unknown') ? 'unknown' : items.some((i) => i.who === 'operator') ? 'operator' : 'kubespray';
  return { who, says: items.map((i) => i.says).join('; '), evidence: [manager.value.where, ...items.flatMap((i) => (i.evidence ? [i.evidence] : []))] };
}
