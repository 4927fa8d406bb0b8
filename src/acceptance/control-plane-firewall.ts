// ControlPlanePortsFirewalled: not a kubeadm check (its Firewalld check only
// asks whether firewalld runs), what breaks when the nodes first talk: a
// firewall whose INPUT drops a new connection from another node to the API
// server, etcd, kubelet, the controller manager or the scheduler. Each port
// is evaluated as the kernel would (firewall-eval.ts) in each ruleset now and
// at the next boot (firewall-facts.ts); a port a ruleset cannot be judged for
// is unknown, naming the rule's file and line. IPv6 connections (the ip6
// tables) are judged as IptablesForwardDrop judges them: when the inventory
// asks for IPv6, or cannot be told to (ip-stack.ts).
import type { AcceptanceFacts, Checker, CheckOutcome } from './checker.js';
import { notJudged, pass } from './checker.js';
import type { FirewallFacts, PortVerdict } from './firewall-facts.js';
import { ipv6Judged, withIpv6 } from './ip-stack.js';

const at = (v: PortVerdict) => (v.verdict.line !== null && v.verdict.line !== 0 ? `${v.file}:${v.verdict.line}` : v.file);

/** "6443, 2379 (ufw at boot: /etc/default/ufw:7 ...)", grouped by source and where it decides. */
function listed(vs: PortVerdict[], why: (v: PortVerdict) => string): string {
  const groups = new Map<string, number[]>();
  for (const v of vs) {
    const k = `${v.source}: ${why(v)}`;
    groups.set(k, [...(groups.get(k) ?? []), v.port]);
  }
  return [...groups].map(([k, ports]) => `${ports.join(', ')} ${k}`).join('; ');
}

function judge(f: AcceptanceFacts): CheckOutcome {
  if (!f.firewall.known) return notJudged(f.firewall);
  const v4 = judgeFamily(f.firewall.value, '');
  const v6 = f.firewall.value.ipv6;
  const judged = ipv6Judged(f.ipv6Stack);
  if (v6 === undefined || judged === null) return v4;
  return withIpv6(v4, v6.known ? judgeFamily(v6.value, 'IPv6 ') : notJudged(v6), judged);
}

/** One IP family's rulesets; `family` names it in the line ('' for IPv4, whose wording predates IPv6). */
function judgeFamily({ now, atBoot }: Omit<FirewallFacts, 'ipv6'>, family: '' | 'IPv6 '): CheckOutcome {
  if (now !== 'offline' && !now.known && now.unreadable) return { unknown: now.reason };
  const all = [...(now !== 'offline' && now.known ? now.value : []), ...atBoot];
  const dropped = all.filter((v) => v.verdict.verdict === 'drop');
  const unknown = all.filter((v) => v.verdict.verdict === 'unknown');
  const drops = dropped.length > 0 ? `dropped: ${listed(dropped, (v) => `dropped at ${at(v)}`)}` : '';
  if (unknown.length > 0)
    return {
      unknown: `new ${family}connections from another node to the control-plane ports cannot be judged: ${listed(unknown, (v) => `${at(v)}: ${'reason' in v.verdict ? v.verdict.reason : ''}`)}${drops ? `; ${drops}` : ''}`,
    };
  if (dropped.length === 0) return now !== 'offline' && !now.known && atBoot.length === 0 ? { skipped: now.reason } : pass();
  return {
    warnings: [
      `a firewall drops new ${family}connections from the other nodes to the control-plane ports: ${drops}; allow them (TCP) from the nodes' addresses`,
    ],
    errors: [],
  };
}

export const controlPlanePortsFirewalledCheck: Checker = {
  name: 'ControlPlanePortsFirewalled',
  runsOn: 'every node',
  breaksLater: 'the other nodes cannot reach the API server, etcd or kubelet: joins time out, etcd members do not form a cluster',
  source: "Kubernetes' Ports and Protocols (6443, 2379-2380, 10250, 10257, 10259); ufw-init's chains (/lib/ufw/ufw-init-functions); nft(8) base chains",
  check: judge,
};
