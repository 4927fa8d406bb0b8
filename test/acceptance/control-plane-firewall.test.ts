// ControlPlanePortsFirewalled: the check on facts that fail and pass it (the
// evaluator and the reader have their own suites: firewall-eval, firewall-facts).
import { describe, expect, it } from 'vitest';
import { type FirewallFacts } from '../../src/acceptance/firewall-facts.js';
import { controlPlanePortsFirewalledCheck } from '../../src/acceptance/control-plane-firewall.js';
import { known, notKnown, type AcceptanceFacts } from '../../src/acceptance/checker.js';

describe('the check', () => {
  const facts = (f: FirewallFacts): AcceptanceFacts => ({ firewall: known(f) }) as AcceptanceFacts;
  const v = (port: number, verdict: 'accept' | 'drop', file = '/etc/default/ufw:2 DEFAULT_INPUT_POLICY') => ({
    source: 'at boot (ufw)',
    port,
    verdict: { verdict, line: null },
    file,
  });

  it('passes when every port is accepted, or nothing filters', () => {
    expect(controlPlanePortsFirewalledCheck.check(facts({ now: known([]), atBoot: [v(6443, 'accept')] }))).toEqual({ warnings: [], errors: [] });
    expect(controlPlanePortsFirewalledCheck.check(facts({ now: 'offline', atBoot: [] }))).toEqual({ warnings: [], errors: [] });
  });

  it('warns naming the dropped ports grouped by where they are dropped', () => {
    const r = controlPlanePortsFirewalledCheck.check(facts({ now: 'offline', atBoot: [v(6443, 'accept'), v(2379, 'drop'), v(10250, 'drop')] }));
    expect(r).toEqual({
      warnings: [
        "a firewall drops new connections from the other nodes to the control-plane ports: dropped: 2379, 10250 at boot (ufw): dropped at /etc/default/ufw:2 DEFAULT_INPUT_POLICY; allow them (TCP) from the nodes' addresses",
      ],
      errors: [],
    });
  });

  it('a port it cannot judge is unknown, with the rule and why', () => {
    const r = controlPlanePortsFirewalledCheck.check(
      facts({
        now: 'offline',
        atBoot: [
          { source: 'at boot (nftables)', port: 6443, verdict: { verdict: 'unknown', line: 4, reason: 'ip saddr 192.0.2.0/24' }, file: '/etc/nftables.conf' },
        ],
      }),
    );
    expect(r).toEqual({
      unknown:
        'new connections from another node to the control-plane ports cannot be judged: 6443 at boot (nftables): /etc/nftables.conf:4: ip saddr 192.0.2.0/24',
    });
  });

  it('facts not known are skipped with the reason', () => {
    expect(controlPlanePortsFirewalledCheck.check({ firewall: notKnown('the unit files cannot be read') } as AcceptanceFacts)).toEqual({
      skipped: 'the unit files cannot be read',
    });
  });
});
