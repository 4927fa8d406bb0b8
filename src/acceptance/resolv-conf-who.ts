// Who keeps CoreDNS from forwarding to itself when /etc/resolv.conf has only
// loopback nameservers, evaluated from the checkout for this node:
//   - kubespray, when it points kubelet at another file (kube_resolv_conf,
//     kubelet-resolv-conf.ts) whose addresses are not loopback:
//     systemd-resolved's /run/systemd/resolve/resolv.conf on Ubuntu and Fedora;
//   - unknown, when kubespray rewrites the host's DNS itself
//     (roles/kubernetes/preinstall: 0060-resolvconf.yml puts its
//     `nameserverentries` into /etc/resolv.conf when neither systemd-resolved
//     nor NetworkManager is active, 0063-networkmanager-dns.yml gives
//     NetworkManager its servers, 0100-dhclient-hooks.yml makes dhclient
//     supersede them): those servers are computed at run time from the
//     cluster's DNS addresses and the host's own, and what CoreDNS makes of
//     them is not judged here; also when upstream_dns_servers is set, which
//     kubespray's Corefile forwards to instead of /etc/resolv.conf (not
//     evaluated);
//   - the operator otherwise: kubelet keeps /etc/resolv.conf as it is (with
//     systemd-resolved active kubespray only writes its drop-in,
//     0061-systemd-resolved.yml, and the stub stays 127.0.0.53).
// The preinstall tasks' conditions read two registers,
// `systemctl is-active systemd-resolved` and `... NetworkManager.service`:
// they are given the exit code that command returns on this host (0 when
// ActiveState is active, 3 otherwise), observed live.
import type { KubesprayNode } from '../kubespray/report.js';
import type { Task } from '../kubespray/tasks.js';
import { walkRole } from '../kubespray/tasks.js';
import { shlexSplit } from '../lex/shlex.js';
import type { VarDefinition } from '../kubespray/checkout.js';
import { runStatus, taskContext } from '../kubespray/who-fixes.js';
import type { Known, ResolvConfFacts } from './checker.js';
import { DNS_SERVICES } from './checker.js';
import { RESOLVED_UPSTREAM } from './facts.js';
import { kubeletResolvConf } from './kubelet-resolv-conf.js';
import { onlyLoopback } from './resolv-conf.js';

const ROLE = 'kubernetes/preinstall';
const TASKS_DIR = `roles/${ROLE}/tasks`;
/** The preinstall task files that change the host's nameservers (0061 changes only systemd-resolved's upstreams, not its stub). */
export const DNS_REWRITES = ['0060-resolvconf.yml', '0063-networkmanager-dns.yml', '0100-dhclient-hooks.yml'];
const APPS_ROLE = 'kubernetes-apps/ansible';

export type ResolvConfWho = { who: 'kubespray' | 'operator' | 'unknown'; says: string; evidence: string[] };

const at = (t: Task) => `${t.ref.file}:${t.ref.line} ${t.ref.name}`;

/**
 * The service a `systemctl is-active [--quiet] UNIT` command task asks about
 * (a unit without a suffix is a .service); its words as the command module
 * splits them (shlex.split). Null for any other task, or a templated one.
 */
function isActiveUnit(t: Task): string | null {
  if (t.module !== 'command' || typeof t.args._raw_params !== 'string' || t.args._raw_params.includes('{{')) return null;
  const split = shlexSplit(t.args._raw_params);
  if (split.error !== null) return null;
  const words = split.tokens.filter((w) => w !== '--quiet');
  if (words.length !== 3 || words[0] !== 'systemctl' || words[1] !== 'is-active') return null;
  return words[2]!.includes('.') ? words[2]! : `${words[2]}.service`;
}

/** The registers of kubespray's is-active tasks, as this host would answer them; unknown when a state is not known. */
function registers(tasks: Task[], active: NonNullable<ResolvConfFacts['beside']>['active']): Known<VarDefinition[]> {
  const out: VarDefinition[] = [];
  for (const t of tasks) {
    const unit = isActiveUnit(t);
    if (unit === null || t.register === undefined) continue;
    const state = (DNS_SERVICES as readonly string[]).includes(unit) ? active[unit as (typeof DNS_SERVICES)[number]] : null;
    if (state === null) continue;
    if (!state.known) return state;
    out.push({ name: t.register, value: { rc: state.value ? 0 : 3, stdout: state.value ? 'active' : 'inactive' }, file: t.ref.file, line: t.ref.line });
  }
  return { known: true, value: out };
}

/** Whether kubespray rewrites the host's nameservers on this node: the first task that does, or why that is not known. */
async function dnsRewrite(node: KubesprayNode, facts: ResolvConfFacts): Promise<{ task: Task | null; reason?: string }> {
  const ctx = await node.vars(ROLE).catch((e: Error) => e);
  if (ctx instanceof Error) return { task: null, reason: `the variables of ${ROLE} cannot be read: ${ctx.message}` };
  const walked = await walkRole(node.checkout, ROLE, (value) => {
    const t = ctx.template(value);
    return t.ok && typeof t.value === 'string' ? { value: t.value } : { reason: t.ok ? 'not a file name' : t.reason };
  }).catch((e: Error) => e);
  if (walked instanceof Error) return { task: null, reason: `${ROLE}'s tasks cannot be read: ${walked.message}` };
  const rewrites = walked.tasks.filter((t) => DNS_REWRITES.some((f) => t.ref.file === `${TASKS_DIR}/${f}`));
  if (rewrites.length === 0) return { task: null, reason: `${TASKS_DIR} has none of kubespray's DNS tasks (${DNS_REWRITES.join(', ')})` };
  const regs = facts.beside ? registers(walked.tasks, facts.beside.active) : { known: false as const, reason: 'the DNS services were not read' };
  if (!regs.known) return { task: null, reason: regs.reason };
  const base = ctx.child(regs.value);
  for (const t of rewrites) {
    const s = runStatus(t.conditions, taskContext(base, t));
    if (s.runs === 'yes') return { task: t };
    if (s.runs !== 'no') return { task: null, reason: `whether ${at(t)} runs: ${s.runs === 'unknown' ? s.reason : s.on}` };
  }
  return { task: null };
}

/** upstream_dns_servers as kubespray's apps role sees it, when it is a non-empty list (where it is set); null otherwise. */
async function upstreamServers(node: KubesprayNode): Promise<string | null> {
  const ctx = await node.vars(APPS_ROLE).catch(() => null);
  const def = ctx?.get('upstream_dns_servers');
  if (!ctx || !def || 'runtime' in def) return null;
  const r = ctx.template(def.value);
  return r.ok && Array.isArray(r.value) && r.value.length > 0 ? `${def.file}:${def.line} upstream_dns_servers` : null;
}

export async function resolvConfWhoFixes(node: KubesprayNode, facts: ResolvConfFacts): Promise<ResolvConfWho> {
  const unknown = (why: string, evidence: string[] = []): ResolvConfWho => ({
    who: 'unknown',
    says: `whether CoreDNS gets a nameserver other than itself cannot be evaluated: ${why}`,
    evidence,
  });
  const upstream = await upstreamServers(node);
  if (upstream !== null) return unknown(`upstream_dns_servers is set (${upstream}): kubespray's Corefile forwards there, not evaluated here`, [upstream]);
  const k = await kubeletResolvConf(node);
  if (!k.known) return unknown(k.reason);
  if (k.value.path !== facts.path) return otherFile(k.value, facts, unknown);
  const rewrite = await dnsRewrite(node, facts);
  if (rewrite.reason !== undefined) return unknown(rewrite.reason, [k.value.where]);
  if (rewrite.task !== null)
    return unknown(`kubespray rewrites the host's nameservers (${at(rewrite.task)}) with servers computed at run time, not judged here`, [
      k.value.where,
      at(rewrite.task),
    ]);
  return {
    who: 'operator',
    says: `kubespray hands pods ${facts.path} (${k.value.where}) and leaves its nameservers: set kube_resolv_conf to a file with the upstream servers (${RESOLVED_UPSTREAM} with systemd-resolved) in the inventory, or give the host a real nameserver`,
    evidence: [k.value.where],
  };
}

/** kubelet is given another file than /etc/resolv.conf: kubespray's fix when it has a real nameserver. */
function otherFile(k: { path: string; where: string }, facts: ResolvConfFacts, unknown: (why: string, e?: string[]) => ResolvConfWho): ResolvConfWho {
  if (k.path !== RESOLVED_UPSTREAM || !facts.beside) return unknown(`kubelet is given ${k.path} (${k.where}), which is not read here`, [k.where]);
  const up = facts.beside.upstream;
  if (!up.known) return unknown(up.reason, [k.where]);
  if (up.value === null)
    return unknown(`kubelet is given ${k.path} (${k.where}), which does not exist here (systemd-resolved writes it while it runs)`, [k.where]);
  if (up.value.addresses.length === 0 || onlyLoopback(up.value.addresses)) {
    const has = up.value.addresses.length === 0 ? 'no nameserver' : `only loopback nameservers (${up.value.addresses.join(', ')})`;
    return {
      who: 'operator',
      says: `kubespray hands pods ${k.path} (${k.where}), and it has ${has}: give systemd-resolved real upstream servers`,
      evidence: [k.where],
    };
  }
  return {
    who: 'kubespray',
    says: `kubespray hands pods ${k.path} instead (${k.where}): systemd-resolved's upstream servers ${up.value.addresses.join(', ')}`,
    evidence: [k.where],
  };
}
