// Who keeps CoreDNS from forwarding to itself when /etc/resolv.conf has only
// loopback nameservers, evaluated from the checkout for this node. First
// where kubespray's CoreDNS forwards: its Corefile template
// (roles/kubernetes-apps/ansible/templates/coredns-config.yml.j2) rendered
// with the node's variables forwards to upstream_dns_servers when they are
// set (then the loop is kubespray's to avoid, unless they are loopback too),
// else to /etc/resolv.conf, the file kubelet hands its pod. Then that file:
//   - kubespray, when it points kubelet at another file (kube_resolv_conf,
//     kubelet-resolv-conf.ts) whose addresses are not loopback:
//     systemd-resolved's /run/systemd/resolve/resolv.conf on Ubuntu and Fedora;
//   - unknown, when kubespray rewrites the host's nameservers itself
//     (roles/kubernetes/preinstall: 0060-resolvconf.yml puts its
//     `nameserverentries` into /etc/resolv.conf when neither systemd-resolved
//     nor NetworkManager is active, 0063-networkmanager-dns.yml gives
//     NetworkManager its servers, 0100-dhclient-hooks.yml makes dhclient
//     supersede them): those servers are computed at run time from the
//     cluster's DNS addresses and the host's own, and what CoreDNS makes of
//     them is not judged here;
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
import { nameserverAddress, onlyLoopback } from './resolv-conf.js';
import { rootForward, targetAddress } from './corefile.js';
import { known, notKnown } from './checker.js';
import { parseDocument } from 'yaml';

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
export function isActiveUnit(t: Task): string | null {
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

/** kubespray's Corefile template, rendered for this node (the ConfigMap kubernetes-apps/ansible lays down). */
export const COREFILE_TEMPLATE = `roles/${APPS_ROLE}/templates/coredns-config.yml.j2`;

/**
 * Where kubespray's CoreDNS forwards what it does not serve: the template
 * rendered with this node's variables of roles/kubernetes-apps/ansible, its
 * ConfigMap's data.Corefile read (corefile.ts) for the root zone's forward.
 */
async function corefileForward(node: KubesprayNode): Promise<Known<{ to: string[]; where: string }>> {
  const ctx = await node.vars(APPS_ROLE).catch((e: Error) => e);
  if (ctx instanceof Error) return notKnown(`the variables of ${APPS_ROLE} cannot be read: ${ctx.message}`);
  const text = await node.checkout.readText(COREFILE_TEMPLATE).catch(() => null);
  if (text === null) return notKnown(`the checkout has no ${COREFILE_TEMPLATE}`);
  const r = ctx.template(text);
  if (!r.ok) return notKnown(`${COREFILE_TEMPLATE} cannot be rendered for this node: ${r.reason}`);
  const map = parseDocument(String(r.value)).toJS() as { data?: { Corefile?: unknown } } | null;
  const corefile = map?.data?.Corefile;
  if (typeof corefile !== 'string') return notKnown(`${COREFILE_TEMPLATE} renders no data.Corefile`);
  const fwd = rootForward(corefile);
  if (!fwd.known) return notKnown(`${COREFILE_TEMPLATE}'s Corefile, as rendered for this node: ${fwd.reason}`);
  if (fwd.value === null) return notKnown(`${COREFILE_TEMPLATE}'s Corefile has no forward for the zone "."`);
  return known({
    to: fwd.value.to,
    where: `${COREFILE_TEMPLATE} rendered for this node: Corefile line ${fwd.value.line}, forward . ${fwd.value.to.join(' ')}`,
  });
}

/** CoreDNS forwards to addresses of its own (upstream_dns_servers), not to a resolv.conf: who that leaves the loop to. */
function forwardsToAddresses(to: string[], where: string, unknown: (why: string, e?: string[]) => ResolvConfWho): ResolvConfWho {
  const addresses = to.map(targetAddress).map((a) => (a === null ? null : nameserverAddress(a)));
  if (addresses.some((a) => a === null)) return unknown(`kubespray's CoreDNS forwards to ${to.join(' ')} (${where}), which is not read here`, [where]);
  if (onlyLoopback(addresses as string[]))
    return {
      who: 'operator',
      says: `kubespray's CoreDNS forwards to loopback addresses only (${where}): set upstream_dns_servers to real servers`,
      evidence: [where],
    };
  return { who: 'kubespray', says: `kubespray's CoreDNS forwards to ${to.join(', ')}, not to /etc/resolv.conf (${where})`, evidence: [where] };
}

export async function resolvConfWhoFixes(node: KubesprayNode, facts: ResolvConfFacts): Promise<ResolvConfWho> {
  const unknown = (why: string, evidence: string[] = []): ResolvConfWho => ({
    who: 'unknown',
    says: `whether CoreDNS gets a nameserver other than itself cannot be evaluated: ${why}`,
    evidence,
  });
  const fwd = await corefileForward(node);
  if (!fwd.known) return unknown(fwd.reason);
  const files = fwd.value.to.filter((t) => t.startsWith('/'));
  if (files.length === 0) return forwardsToAddresses(fwd.value.to, fwd.value.where, unknown);
  // CoreDNS reads that file in its pod: with dnsPolicy Default, what kubelet's resolvConf names.
  if (files.length !== fwd.value.to.length || files[0] !== facts.path)
    return unknown(`kubespray's CoreDNS forwards to ${fwd.value.to.join(' ')} (${fwd.value.where}), which is not read here`, [fwd.value.where]);
  const k = await kubeletResolvConf(node);
  if (!k.known) return unknown(k.reason);
  if (k.value.path !== facts.path) {
    const other = otherFile(k.value, facts, unknown);
    return { ...other, evidence: [fwd.value.where, ...other.evidence] };
  }
  const rewrite = await dnsRewrite(node, facts);
  if (rewrite.reason !== undefined) return unknown(rewrite.reason, [k.value.where]);
  if (rewrite.task !== null)
    return unknown(`kubespray rewrites the host's nameservers (${at(rewrite.task)}) with servers computed at run time, not judged here`, [
      fwd.value.where,
      k.value.where,
      at(rewrite.task),
    ]);
  return {
    who: 'operator',
    says: `kubespray hands pods ${facts.path} (${k.value.where}) and leaves its nameservers: set kube_resolv_conf to a file with the upstream servers (${RESOLVED_UPSTREAM} with systemd-resolved) in the inventory, or give the host a real nameserver`,
    evidence: [fwd.value.where, k.value.where],
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
