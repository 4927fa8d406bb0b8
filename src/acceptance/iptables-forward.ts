// IptablesForwardDrop: not a kubeadm check, what breaks at the first pod on
// another node. Pod-to-pod traffic between nodes is forwarded by the node's
// kernel; a filter FORWARD hook that drops by default drops every packet no
// rule accepts. Docker sets iptables' FORWARD policy to DROP when it turns
// net.ipv4.ip_forward on itself (moby's setupIPForwarding; not when it is
// already 1); ufw's default DEFAULT_FORWARD_POLICY is "DROP"; a saved
// rules.v4 or an nftables.conf can say so too. Judged now (the live
// ruleset) and at the next boot (the writers that start then:
// forward-facts.ts). What answers it in part: calico (3.16 and later appends
// an ACCEPT for its pod traffic at the end of iptables' FORWARD), flannel and
// cilium accept their own pod traffic there; kube-proxy's KUBE-FORWARD
// accepts only masqueraded and established traffic. None of them passes an
// nftables base chain of another table: each base chain on the hook
// decides, and a drop in one is final. IPv6 (the ip6 tables) is judged when
// the inventory asks for it (ipv6_stack, ip-stack.ts) and, when that cannot
// be told, an IPv6 drop is a warning naming the variable; an inventory
// without IPv6 leaves it not judged (run.ts says so in the evidence).
import type { AcceptanceFacts, Checker, CheckOutcome } from './checker.js';
import { notJudged, pass } from './checker.js';
import { ipv6Judged, withIpv6 } from './ip-stack.js';
import type { ForwardDrop, ForwardFacts } from './forward-facts.js';

const list = (d: ForwardDrop[]) => d.map((x) => `${x.what}: ${x.where}`).join('; ');

/** What the operator does for each source of the drop. */
export function operatorFix(now: ForwardDrop[], atBoot: ForwardDrop[]): string {
  const steps = new Set<string>();
  for (const d of [...now, ...atBoot]) {
    if (d.what === 'ufw (IPv6)') steps.add('set IPV6=yes and DEFAULT_FORWARD_POLICY="ACCEPT" in /etc/default/ufw and run ufw reload');
    else if (d.what === 'ufw') steps.add('set DEFAULT_FORWARD_POLICY="ACCEPT" in /etc/default/ufw and run ufw reload');
    else if (d.what === 'iptables-persistent') steps.add('change ":FORWARD DROP" to ":FORWARD ACCEPT" in /etc/iptables/rules.v4');
    else if (d.what === 'ip6tables-persistent') steps.add('change ":FORWARD DROP" to ":FORWARD ACCEPT" in /etc/iptables/rules.v6');
    else if (d.what.startsWith('ip6tables')) steps.add('run ip6tables -P FORWARD ACCEPT');
    else if (d.what === 'nftables' && atBoot.includes(d))
      steps.add("set that chain's policy to accept in /etc/nftables.conf (or accept the pod and service ranges in it)");
    else if (d.what === 'nftables') steps.add("set that chain's policy to accept (nft list ruleset shows which)");
    else steps.add('run iptables -P FORWARD ACCEPT');
  }
  return [...steps].join('; ');
}

/** The IPv4 verdict (unchanged by IPv6), then the IPv6 one when it is judged. */
function judge(f: AcceptanceFacts): CheckOutcome {
  if (!f.forward.known) return notJudged(f.forward);
  const v4 = judgeFamily(f.forward.value, 'IPv4', f.forward.value.docker);
  const v6 = f.forward.value.ipv6;
  const judged = ipv6Judged(f.ipv6Stack);
  if (v6 === undefined || judged === null) return v4;
  if (!v6.known) return withIpv6(v4, notJudged(v6), judged);
  return withIpv6(v4, judgeFamily(v6.value, 'IPv6', null), judged);
}

function judgeFamily(facts: Omit<ForwardFacts, 'docker' | 'ipv6'>, family: 'IPv4' | 'IPv6', docker: string | null): CheckOutcome {
  const { now, atBoot } = facts;
  if (now !== 'offline' && !now.known && now.unreadable) return { unknown: now.reason };
  const nowDrops = now !== 'offline' && now.known ? now.value : [];
  if (nowDrops.length === 0 && atBoot.length === 0) return now !== 'offline' && !now.known ? { skipped: now.reason } : pass();
  const when = [...(nowDrops.length > 0 ? [`now (${list(nowDrops)})`] : []), ...(atBoot.length > 0 ? [`at the next boot (${list(atBoot)})`] : [])].join(
    ' and ',
  );
  const own = [...nowDrops, ...atBoot].some((d) => d.ownTable);
  const answered = own
    ? 'an nftables base chain of its own table drops whatever it does not accept, whatever the CNI accepts in iptables'
    : `calico, flannel and cilium accept their own pod traffic in ${family === 'IPv4' ? 'iptables' : 'ip6tables'}' FORWARD; kube-proxy accepts only masqueraded and established traffic, so anything else forwarded is dropped`;
  const dockerNote = docker !== null ? `; ${docker} starts at boot: dockerd sets the policy to DROP whenever it turns net.ipv4.ip_forward on itself` : '';
  return {
    warnings: [`the filter FORWARD hook drops forwarded ${family} packets by default ${when}: ${answered}${dockerNote}`],
    errors: [],
  };
}

export const iptablesForwardDropCheck: Checker = {
  name: 'IptablesForwardDrop',
  runsOn: 'every node',
  breaksLater: 'pod traffic between nodes is forwarded through the filter FORWARD hook, whose DROP policy drops what no rule accepts',
  source:
    "moby libnetwork setupIPForwarding (FORWARD DROP when dockerd enables ip_forward); ufw's /etc/default/ufw DEFAULT_FORWARD_POLICY; nft(8) base chain policy",
  check: judge,
};
