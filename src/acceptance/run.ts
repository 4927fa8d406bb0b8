// kubeadm's preflight answered before the install: every checker judged on
// the facts, and each problem made one finding by kubeadm's check name
// (Finding.check) with who fixes it. A kubeadm error kubespray does not make
// true (nor ignores through kubeadm_ignore_preflight_errors) stops the
// install: an error (`stops`, plan exit 1); a kubeadm warning stays a
// warning; what cannot be evaluated is unknown. A host that passes gets no line.
import type { TargetHost } from '../host.js';
import type { Finding } from '../findings.js';
import type { KubesprayNode, KubesprayReport } from '../kubespray/report.js';
import type { AcceptanceFacts, Checker, CheckResult, Known, KubesprayValues } from './checker.js';
import { known, notKnown } from './checker.js';
import { evictionThresholds, type EvictionThresholds } from './eviction.js';
import { acceptanceFacts } from './facts.js';
import { CHECKERS } from './index.js';
import { whoInstalls } from './packages.js';
import { playEnvironmentOf } from '../kubespray/vars.js';
import { timeSyncWhoFixes } from './time-sync-who.js';
import { serviceKubeletWhoFixes } from './service-kubelet-who.js';
import { resolvConfWhoFixes } from './resolv-conf-who.js';
import { runtimeCollisionWhoFixes } from './runtime-collision-who.js';
import { networkManagerWhoFixes } from './network-manager-who.js';
import { forwardWhoFixes, inputWhoFixes } from './forward-who.js';
import { operatorFix } from './iptables-forward.js';
import { ipv6Judged, ipv6StackOf } from './ip-stack.js';

const KUBERNETES = 'kubernetes/kubernetes';
/** kubespray's variable for kubeadm's --ignore-preflight-errors (roles/kubernetes/kubeadm_common/defaults/main.yml). */
const IGNORE_VAR = 'kubeadm_ignore_preflight_errors';
/** The role that runs kubeadm: init on the control plane, join on the other nodes. */
const KUBEADM_ROLE = { 'control-plane': 'kubernetes/control-plane', 'every node': 'kubernetes/kubeadm' } as const;
/** The role that writes kubelet's config (its eviction thresholds), and containerd's (its storage directory). */
const NODE_ROLE = 'kubernetes/node';
const CONTAINERD_ROLE = 'container-engine/containerd';

/**
 * `quiet`: kubespray makes the check pass before kubeadm runs on every
 * install (it writes kubelet.service), so there is nothing to say on this
 * host.
 */
type WhoFixes = { who: 'kubespray' | 'operator' | 'unknown'; quiet?: true; says: string; evidence: string[] };

/** A variable's value for this node, templated; not known with the reason (a checkout or inventory file that does not parse, too). */
async function nodeVar(node: KubesprayNode, role: string, name: string): Promise<Known<unknown>> {
  const ctx = await node.vars(role).catch((e: Error) => e);
  if (ctx instanceof Error) return notKnown(`the variables of ${role} cannot be read: ${ctx.message}`);
  const def = ctx.get(name);
  if (!def) return notKnown(`${name} is not defined for ${role}`);
  if ('runtime' in def) return notKnown(`${name} is set at run time (${def.file}:${def.line})`);
  const r = ctx.template(def.value);
  return r.ok ? known(r.value) : notKnown(`${name} (${def.file}:${def.line}): ${r.reason}`);
}

/** Whether kubespray passes this check's name (or "all") in --ignore-preflight-errors; kubeadm compares them lowercased. */
async function ignoredByKubespray(node: KubesprayNode, c: Checker): Promise<Known<boolean>> {
  const v = await nodeVar(node, KUBEADM_ROLE[c.runsOn], IGNORE_VAR);
  if (!v.known) return v;
  if (!Array.isArray(v.value)) return notKnown(`${IGNORE_VAR} is not a list: ${JSON.stringify(v.value)}`);
  const names = v.value.map((x) => String(x).toLowerCase());
  return known(names.includes('all') || names.includes(c.name.toLowerCase()));
}

/** Who makes a failing check pass before kubeadm runs: kubespray (it installs the program, or its own assert stops first) or the operator. */
async function whoFixes(c: Checker, node: KubesprayNode, r: KubesprayReport, facts: AcceptanceFacts): Promise<WhoFixes> {
  if (c.name.startsWith('FileExisting-')) {
    // Host and checkout files are untrusted: one that does not parse makes the answer unknown, never the plan fail.
    const w = await whoInstalls(c.name.slice('FileExisting-'.length), node, r.hostFacts).catch((e: Error) => ({ by: 'unknown' as const, reason: e.message }));
    if (w.by === 'kubespray') return { who: 'kubespray', says: `kubespray installs ${w.package} before kubeadm runs`, evidence: [w.evidence] };
    if (w.by === 'unknown') return { who: 'unknown', says: `whether kubespray installs it cannot be evaluated: ${w.reason}`, evidence: [] };
    return { who: 'operator', says: `kubespray does not install ${w.package} (${w.reason}): install it`, evidence: [w.evidence] };
  }
  if (c.name === 'TimeSync') return timeSyncWhoFixes(node);
  if (c.name === 'Service-Kubelet' && facts.kubeletService.known) return serviceKubeletWhoFixes(node, facts.kubeletService.value);
  if (c.name === 'ResolvConfLoop' && facts.resolvConf.known) return resolvConfWhoFixes(node, facts.resolvConf.value);
  if (c.name === 'ContainerRuntimeCollision' && facts.runtimeCollision.known) return runtimeCollisionWhoFixes(node, facts.runtimeCollision.value);
  if (c.name === 'NetworkManagerCNI' && facts.networkManager.known && facts.networkPlugin.known)
    return networkManagerWhoFixes(node, facts.networkManager.value, facts.networkPlugin.value);
  if (c.name === 'IptablesForwardDrop' && facts.forward.known) {
    const f = facts.forward.value;
    const v6 = f.ipv6?.known && ipv6Judged(facts.ipv6Stack) !== null ? f.ipv6.value : { now: 'offline' as const, atBoot: [] };
    const plugin = facts.networkPlugin.known ? facts.networkPlugin.value : null;
    // The writers by name: ufw's IPv6 drop is ufw's too.
    const w = await forwardWhoFixes(node, plugin, [...new Set([...f.atBoot, ...v6.atBoot].map((d) => d.what.replace(' (IPv6)', '')))]);
    const nowOf = (n: typeof f.now) => (n !== 'offline' && n.known ? n.value : []);
    const fixed = w.who === 'operator' ? { ...w, says: `${w.says}: ${operatorFix([...nowOf(f.now), ...nowOf(v6.now)], [...f.atBoot, ...v6.atBoot])}` } : w;
    return { ...fixed, evidence: [...fixed.evidence, ...ipv6Evidence(facts)] };
  }
  if (c.name === 'ControlPlanePortsFirewalled') {
    const w = await inputWhoFixes(node, facts.networkPlugin.known ? facts.networkPlugin.value : null);
    return { ...w, evidence: [...w.evidence, ...ipv6Evidence(facts)] };
  }
  if (c.name === 'FreeSpace')
    return { who: 'operator', says: 'free space on that file system, or grow it, before the install: kubespray frees none', evidence: [] };
  if (c.name === 'Mem' && node.memoryStops)
    return { who: 'kubespray', says: "kubespray's own memory assert stops first (the error above): kubeadm never runs", evidence: [] };
  return { who: 'operator', says: 'the operator must fix it (kubespray does not change it)', evidence: [] };
}

/** The evidence line of a firewall check whose IPv6 half is not judged: the inventory asks for IPv4 only. */
function ipv6Evidence(facts: AcceptanceFacts): string[] {
  const s = facts.ipv6Stack;
  return s.known && !s.value.asked ? [`IPv6 (the ip6 tables) not judged: ${s.value.why}`] : [];
}

function kubeadmLines(c: Checker, res: CheckResult): string {
  // A check of ours is never quoted as kubeadm's: the install goes through, and it says what breaks afterwards.
  const cmd =
    c.breaksLater !== undefined
      ? `not a kubeadm check, the install goes on (${c.breaksLater})`
      : c.runsOn === 'control-plane'
        ? 'kubeadm init (and join --control-plane) preflight'
        : 'kubeadm init and join preflight';
  const lines = [...res.errors.map((e) => `[ERROR ${c.name}]: ${e}`), ...res.warnings.map((w) => `[WARNING ${c.name}]: ${w}`)];
  return `${cmd}: ${lines.join('; ')}`;
}

/** A failing check whose who-fixes is not evaluated (no checkout, no facts): it goes into the one "not judged" line. */
interface NotJudged {
  name: string;
  fails: string;
  why: string;
}

/** Why who fixes a failing check is not evaluated here; null when it is. */
function notEvaluated(c: Checker, r: KubesprayReport, controlPlane: Known<boolean>): string | null {
  if (!r.node) return 'who fixes it is not evaluated: no readable kubespray checkout in desired-state';
  if (c.runsOn === 'control-plane' && !controlPlane.known)
    return `kubeadm checks it on a control-plane node only, and this node's groups are not known: ${controlPlane.reason}`;
  // Offline (an image) the facts kubespray's conditions read are the booted host's: judged at its first plan.
  if (!r.hostFacts) return "who fixes it is not evaluated: the host's facts are not gathered (offline they are the running host's)";
  return null;
}

/** One check's problems as one finding, given who fixes them. */
async function checkFinding(
  c: Checker,
  res: CheckResult,
  r: KubesprayReport,
  controlPlane: Known<boolean>,
  facts: AcceptanceFacts,
): Promise<Finding | NotJudged | null> {
  const base = { check: c.name, evidence: [c.breaksLater !== undefined ? c.source : `${KUBERNETES} ${c.source}`] };
  const says = kubeadmLines(c, res);
  const why = notEvaluated(c, r, controlPlane);
  // A program's check says it in its name: "missing" is enough in the grouped line.
  if (why !== null) return { name: c.name, fails: c.name.startsWith('FileExisting-') ? 'missing' : [...res.errors, ...res.warnings].join('; '), why };
  const node = r.node!;
  const w = await whoFixes(c, node, r, facts);
  if (w.quiet) return null;
  const evidence = [...base.evidence, ...w.evidence];
  if (w.who === 'kubespray') return { ...base, evidence, level: 'info', message: `${says}; ${w.says}` };
  if (w.who === 'unknown') return { ...base, evidence, level: 'warning', unknown: true, message: `${says}; ${w.says}` };
  if (res.errors.length === 0) return { ...base, evidence, level: 'warning', message: `${says}; ${w.says}` };
  const ignored = await ignoredByKubespray(node, c);
  if (!ignored.known)
    return {
      ...base,
      evidence,
      level: 'warning',
      unknown: true,
      message: `${says}; ${w.says}; whether kubespray ignores it cannot be evaluated: ${ignored.reason}`,
    };
  if (ignored.value)
    return {
      ...base,
      evidence,
      level: 'warning',
      message: `${says}; kubespray passes it in --ignore-preflight-errors (${IGNORE_VAR}), so kubeadm goes on with it`,
    };
  return { ...base, evidence, level: 'error', stops: true, message: `${says}; kubespray's install stops there: ${w.says}` };
}

/** kube_version as kubespray's kubeadm role sees it, for the checks kubeadm runs only on some versions. */
async function kubeVersion(node: KubesprayNode | undefined): Promise<Known<string>> {
  if (!node) return notKnown('no readable kubespray checkout in desired-state');
  const v = await nodeVar(node, KUBEADM_ROLE['every node'], 'kube_version');
  if (!v.known) return v;
  return typeof v.value === 'string' ? known(v.value) : notKnown(`kube_version is ${JSON.stringify(v.value)}`);
}

/** An expression templated with this node's variables of `role` (what a kubespray template would render); not known with the reason. */
async function nodeExpression(node: KubesprayNode, role: string, expr: string): Promise<Known<unknown>> {
  const ctx = await node.vars(role).catch((e: Error) => e);
  if (ctx instanceof Error) return notKnown(`the variables of ${role} cannot be read: ${ctx.message}`);
  const r = ctx.template(expr);
  return r.ok ? known(r.value) : notKnown(`${expr}: ${r.reason}`);
}

/**
 * What kubespray gives kubeadm on this node: kube_version; the API server's
 * bind port; nodeRegistration.name as roles/kubernetes/control-plane's
 * kubeadm templates write it (`kube_override_hostname | default(inventory_hostname)`).
 */
async function kubesprayValues(node: KubesprayNode | undefined): Promise<KubesprayValues> {
  const none = notKnown<never>('no readable kubespray checkout in desired-state');
  if (!node)
    return {
      kubeVersion: none,
      apiserverPort: none,
      nodeName: none,
      eviction: none,
      imageFsDir: none,
      kubeadmPlayEnv: none,
      networkPlugin: none,
      ipv6Stack: await ipv6StackOf(node),
    };
  const port = await nodeVar(node, KUBEADM_ROLE['control-plane'], 'kube_apiserver_port');
  const name = await nodeExpression(node, KUBEADM_ROLE['every node'], '{{ kube_override_hostname | default(inventory_hostname) }}');
  return {
    kubeVersion: await kubeVersion(node),
    apiserverPort: !port.known
      ? port
      : Number.isInteger(Number(port.value))
        ? known(Number(port.value))
        : notKnown(`kube_apiserver_port is ${JSON.stringify(port.value)}`),
    nodeName: !name.known
      ? name
      : typeof name.value === 'string' && name.value !== ''
        ? known(name.value)
        : notKnown(`the node name is ${JSON.stringify(name.value)}`),
    eviction: await evictionOf(node),
    imageFsDir: await imageFsDirOf(node),
    kubeadmPlayEnv: await kubeadmPlayEnv(node),
    networkPlugin: await networkPluginOf(node),
    ipv6Stack: await ipv6StackOf(node),
  };
}

/** kube_network_plugin as roles/kubernetes/preinstall sees it on this node (0062's condition reads it there). */
async function networkPluginOf(node: KubesprayNode): Promise<Known<string>> {
  const v = await nodeVar(node, 'kubernetes/preinstall', 'kube_network_plugin');
  if (!v.known) return v;
  return typeof v.value === 'string' ? known(v.value) : notKnown(`kube_network_plugin is ${JSON.stringify(v.value)}`);
}

/** The environment kubespray's play gives kubeadm init (`proxy_disable_env` in kubespray's cluster.yml), templated for this node. */
async function kubeadmPlayEnv(node: KubesprayNode): Promise<Known<{ vars: Record<string, unknown> | null; where: string }>> {
  const role = KUBEADM_ROLE['control-plane'];
  const play = await playEnvironmentOf(node.checkout, role).catch((e: Error) => e);
  if (play instanceof Error) return notKnown(`kubespray's cluster playbook cannot be read: ${play.message}`);
  if (play === null) return notKnown(`no play of kubespray's cluster playbook runs ${role}`);
  if (play.value === undefined || play.value === null) return known({ vars: null, where: play.where });
  const ctx = await node.vars(role).catch((e: Error) => e);
  if (ctx instanceof Error) return notKnown(`the variables of ${role} cannot be read: ${ctx.message}`);
  const r = typeof play.value === 'string' ? ctx.template(play.value) : { ok: true as const, value: play.value };
  if (!r.ok) return notKnown(`the play's environment (${play.where}): ${r.reason}`);
  const v = r.value;
  if (!v || typeof v !== 'object' || Array.isArray(v)) return notKnown(`the play's environment (${play.where}) is ${JSON.stringify(v)}, not a mapping`);
  return known({ vars: v as Record<string, unknown>, where: play.where });
}

/** kubelet's hard eviction thresholds as roles/kubernetes/node's kubelet-config template writes them for this node. */
async function evictionOf(node: KubesprayNode): Promise<Known<EvictionThresholds>> {
  const ctx = await node.vars(NODE_ROLE).catch((e: Error) => e);
  if (ctx instanceof Error) return notKnown(`the variables of ${NODE_ROLE} cannot be read: ${ctx.message}`);
  // kubelet_config_extra_args is appended to the same document: an evictionHard there is a second one.
  const extra = ctx.template('{{ (kubelet_config_extra_args | default({})).evictionHard is defined }}');
  if (!extra.ok) return notKnown(`kubelet_config_extra_args: ${extra.reason}`);
  if (extra.value === true) return notKnown('kubelet_config_extra_args sets evictionHard beside eviction_hard');
  const def = ctx.get('eviction_hard');
  if (!def) return evictionThresholds(undefined, `eviction_hard (not defined for ${NODE_ROLE})`);
  if ('runtime' in def) return notKnown(`eviction_hard is set at run time (${def.file}:${def.line})`);
  const r = ctx.template(def.value);
  return r.ok ? evictionThresholds(r.value, `${def.file}:${def.line} eviction_hard`) : notKnown(`${def.file}:${def.line} eviction_hard: ${r.reason}`);
}

/** kubelet's imagefs: containerd's storage directory for containerd (kubespray's default runtime); null for another runtime. */
async function imageFsDirOf(node: KubesprayNode): Promise<Known<string | null>> {
  const manager = await nodeVar(node, NODE_ROLE, 'container_manager');
  if (!manager.known) return manager;
  if (manager.value !== 'containerd') return known(null);
  const dir = await nodeVar(node, CONTAINERD_ROLE, 'containerd_storage_dir');
  if (!dir.known) return dir;
  return typeof dir.value === 'string' && dir.value.startsWith('/') ? known(dir.value) : notKnown(`containerd_storage_dir is ${JSON.stringify(dir.value)}`);
}

/** Whether kubeadm init's checks run here: the node is in kube_control_plane (kube-master before kubespray 2.19 renamed it). */
function controlPlaneOf(r: KubesprayReport): Known<boolean> {
  if (!r.node) return notKnown('no readable kubespray checkout in desired-state');
  if (r.node.groups === null) return notKnown("the inventory does not place this node (see the inventory's finding)");
  return known(r.node.groups.includes('kube_control_plane') || r.node.groups.includes('kube-master'));
}

/** A check a host file decides, which cannot be read: unknown (exit 2), naming the file. */
function unjudgeable(c: Checker, why: string): Finding {
  const cmd = c.breaksLater !== undefined ? 'not a kubeadm check' : 'kubeadm preflight';
  return {
    check: c.name,
    level: 'warning',
    unknown: true,
    evidence: [c.breaksLater !== undefined ? c.source : `${KUBERNETES} ${c.source}`],
    message: `${cmd}: ${c.name} cannot be judged: ${why}`,
  };
}

/** One line for every check not judged, grouped by the reason: "A (fails), B: why; C: why". */
export function notJudgedLine(items: NotJudged[]): string {
  const byWhy = new Map<string, string[]>();
  for (const i of items) byWhy.set(i.why, [...(byWhy.get(i.why) ?? []), i.fails ? `${i.name} (${i.fails})` : i.name]);
  return `kubeadm preflight checks not judged here: ${[...byWhy].map(([why, names]) => `${names.join(', ')}: ${why}`).join('; ')}`;
}

export async function acceptanceFindings(host: TargetHost, r: KubesprayReport, checkers: readonly Checker[] = CHECKERS): Promise<Finding[]> {
  const facts: AcceptanceFacts = await acceptanceFacts(host, r.hostFacts, await kubesprayValues(r.node));
  const controlPlane = controlPlaneOf(r);
  const out: Finding[] = [];
  const notJudged: NotJudged[] = [];
  for (const c of checkers) {
    // kubeadm runs its init checks only where it inits (or joins) a control plane.
    if (c.runsOn === 'control-plane' && controlPlane.known && !controlPlane.value) continue;
    const res = c.check(facts);
    if ('skipped' in res) notJudged.push({ name: c.name, fails: '', why: res.skipped });
    else if ('unknown' in res) out.push(unjudgeable(c, res.unknown));
    else if (res.errors.length > 0 || res.warnings.length > 0) {
      const f = await checkFinding(c, res, r, controlPlane, facts);
      if (f === null) continue;
      if ('why' in f) notJudged.push(f);
      else out.push(f);
    }
  }
  if (notJudged.length > 0) out.push({ level: 'info', message: notJudgedLine(notJudged) });
  return out;
}
