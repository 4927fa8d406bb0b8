// IptablesForwardDrop and ControlPlanePortsFirewalled with their IPv6 half:
// judged when the inventory asks for IPv6, warned naming the variable when
// that cannot be told, not judged for an IPv4-only inventory; the IPv4
// verdicts as before.
import { describe, expect, it } from 'vitest';
import { iptablesForwardDropCheck, operatorFix } from '../../src/acceptance/iptables-forward.js';
import { controlPlanePortsFirewalledCheck } from '../../src/acceptance/control-plane-firewall.js';
import { known, notKnown, unreadable } from '../../src/acceptance/checker.js';
import type { PortVerdict } from '../../src/acceptance/firewall-facts.js';
import { passingFacts } from '../helpers/acceptance-facts.js';

const ASKED = known({ asked: true, why: 'ipv6_stack is true for this node (inventory/group_vars/all.yml:2)' });
const NOT_ASKED = known({ asked: false, why: 'ipv6_stack is false for this node (roles/kubespray_defaults/defaults/main/main.yml:281)' });
const UNTOLD = notKnown<never>('ipv6_stack (inventory/group_vars/all.yml:2) cannot be evaluated: undefined variable x');
const DROP6 = { what: 'ip6tables (nf_tables)', where: '/usr/sbin/ip6tables-save -t filter, line 4: :FORWARD DROP' };
const forward6 = (drops = [DROP6]) => known({ now: known([]), atBoot: [], docker: null, ipv6: known({ now: known(drops), atBoot: [] }) });

describe('IptablesForwardDrop, IPv6', () => {
  it('asked: an ip6tables FORWARD DROP is a warning saying IPv6 and why it is judged', () => {
    const r = iptablesForwardDropCheck.check(passingFacts({ forward: forward6(), ipv6Stack: ASKED }));
    expect('warnings' in r && r.warnings).toEqual([
      `the filter FORWARD hook drops forwarded IPv6 packets by default now (${DROP6.what}: ${DROP6.where}): calico, flannel and cilium accept their own pod traffic in ip6tables' FORWARD; kube-proxy accepts only masqueraded and established traffic, so anything else forwarded is dropped (ipv6_stack is true for this node (inventory/group_vars/all.yml:2))`,
    ]);
  });

  it('not asked: no line; cannot be told: a warning naming the variable and its file:line', () => {
    expect(iptablesForwardDropCheck.check(passingFacts({ forward: forward6(), ipv6Stack: NOT_ASKED }))).toEqual({ warnings: [], errors: [] });
    const r = iptablesForwardDropCheck.check(passingFacts({ forward: forward6(), ipv6Stack: UNTOLD }));
    expect('warnings' in r && r.warnings.join()).toContain(
      'whether the inventory asks for IPv6 cannot be told: ipv6_stack (inventory/group_vars/all.yml:2) cannot be evaluated',
    );
  });

  it('an IPv6 source that cannot be read is unknown when IPv6 is judged, nothing when it is not', () => {
    const bad = known({ now: known([]), atBoot: [], docker: null, ipv6: unreadable<never>('/etc/iptables/rules.v6:3: not a command') });
    expect(iptablesForwardDropCheck.check(passingFacts({ forward: bad, ipv6Stack: ASKED }))).toEqual({
      unknown: 'IPv6: /etc/iptables/rules.v6:3: not a command',
    });
    expect(iptablesForwardDropCheck.check(passingFacts({ forward: bad, ipv6Stack: NOT_ASKED }))).toEqual({ warnings: [], errors: [] });
  });

  it("a stock host (nothing dropping in either family) gets no line; the fix names ip6tables' own", () => {
    expect(iptablesForwardDropCheck.check(passingFacts({ forward: forward6([]), ipv6Stack: ASKED }))).toEqual({ warnings: [], errors: [] });
    expect(operatorFix([DROP6], [])).toBe('run ip6tables -P FORWARD ACCEPT');
    const persistent = { what: 'ip6tables-persistent', where: '/etc/iptables/rules.v6:4 :FORWARD DROP' };
    expect(operatorFix([], [{ what: 'ufw (IPv6)', where: '/etc/default/ufw:7 IPV6=no' }, persistent])).toBe(
      'set IPV6=yes and DEFAULT_FORWARD_POLICY="ACCEPT" in /etc/default/ufw and run ufw reload; change ":FORWARD DROP" to ":FORWARD ACCEPT" in /etc/iptables/rules.v6',
    );
  });
});

describe('ControlPlanePortsFirewalled, IPv6', () => {
  const drop = (port: number): PortVerdict => ({
    source: 'now (ip6tables)',
    port,
    verdict: { verdict: 'drop', line: 3 },
    file: 'the output of /usr/sbin/ip6tables-save -t filter',
  });
  const firewall = known({ now: known([]), atBoot: [], ipv6: known({ now: known([drop(6443), drop(2379)]), atBoot: [] }) });

  it('asked: the IPv6 drops are a warning naming the ruleset and line; not asked: no line', () => {
    const r = controlPlanePortsFirewalledCheck.check(passingFacts({ firewall, ipv6Stack: ASKED }));
    expect('warnings' in r && r.warnings).toEqual([
      "a firewall drops new IPv6 connections from the other nodes to the control-plane ports: dropped: 6443, 2379 now (ip6tables): dropped at the output of /usr/sbin/ip6tables-save -t filter:3; allow them (TCP) from the nodes' addresses (ipv6_stack is true for this node (inventory/group_vars/all.yml:2))",
    ]);
    expect(controlPlanePortsFirewalledCheck.check(passingFacts({ firewall, ipv6Stack: NOT_ASKED }))).toEqual({ warnings: [], errors: [] });
  });
});
