// IptablesForwardDrop: the check on facts that fail and pass it (the readers
// have their own suites: iptables-save, nft-conf, nft-json, forward-facts).
import { describe, expect, it } from 'vitest';
import { type ForwardFacts } from '../../src/acceptance/forward-facts.js';
import { iptablesForwardDropCheck, operatorFix } from '../../src/acceptance/iptables-forward.js';
import { known, notKnown, type AcceptanceFacts } from '../../src/acceptance/checker.js';

describe('the check', () => {
  const facts = (forward: ForwardFacts | null): AcceptanceFacts =>
    ({ forward: forward === null ? notKnown('the unit files cannot be read') : known(forward) }) as AcceptanceFacts;
  const ufw = { what: 'ufw', where: '/etc/ufw/ufw.conf:5 ENABLED=yes, /etc/default/ufw:12 DEFAULT_FORWARD_POLICY="DROP", ufw.service starts at boot' };
  const docker = { what: 'iptables (nf_tables)', where: '/usr/sbin/iptables-save -t filter, line 4: :FORWARD DROP' };

  it('passes with nothing dropping, now or at boot', () => {
    expect(iptablesForwardDropCheck.check(facts({ now: known([]), atBoot: [], docker: null }))).toEqual({ warnings: [], errors: [] });
    expect(iptablesForwardDropCheck.check(facts({ now: 'offline', atBoot: [], docker: '/lib/systemd/system/docker.service' }))).toEqual({
      warnings: [],
      errors: [],
    });
  });

  it('warns naming each source, now and at boot, and what the CNI answers for iptables', () => {
    const r = iptablesForwardDropCheck.check(facts({ now: known([docker]), atBoot: [ufw], docker: '/lib/systemd/system/docker.service' }));
    expect(r).toMatchObject({ errors: [] });
    const w = 'warnings' in r ? r.warnings.join('\n') : '';
    expect(w).toContain(`now (${docker.what}: ${docker.where})`);
    expect(w).toContain(`at the next boot (ufw: ${ufw.where})`);
    expect(w).toContain("calico, flannel and cilium accept their own pod traffic in iptables' FORWARD");
    expect(w).toContain('/lib/systemd/system/docker.service starts at boot');
  });

  it("an nftables chain of its own table: the CNI's iptables accepts do not pass it", () => {
    const r = iptablesForwardDropCheck.check(
      facts({ now: 'offline', atBoot: [{ what: 'nftables', where: '/etc/nftables.conf:14 ...', ownTable: true }], docker: null }),
    );
    expect('warnings' in r && r.warnings[0]).toContain('an nftables base chain of its own table drops whatever it does not accept');
  });

  it('an unreadable file is unknown; a live ruleset that cannot be listed, with nothing at boot, is skipped', () => {
    expect(iptablesForwardDropCheck.check({ forward: { known: false, reason: '/etc/nftables.conf:2: include', unreadable: true } } as AcceptanceFacts)).toEqual(
      {
        unknown: '/etc/nftables.conf:2: include',
      },
    );
    expect(iptablesForwardDropCheck.check(facts({ now: notKnown('iptables-save failed (exit 1)'), atBoot: [], docker: null }))).toEqual({
      skipped: 'iptables-save failed (exit 1)',
    });
    expect(iptablesForwardDropCheck.check(facts(null))).toEqual({ skipped: 'the unit files cannot be read' });
  });

  it("the operator's fix names each source's own file", () => {
    expect(operatorFix([docker], [ufw])).toBe('run iptables -P FORWARD ACCEPT; set DEFAULT_FORWARD_POLICY="ACCEPT" in /etc/default/ufw and run ufw reload');
  });
});
