// Debian 13 (trixie): facts.json equals `ansible -m setup` in the same VM,
// as the lab shows on Debian 12, with the ansible-core of trixie (2.19,
// bundled distro 1.9.0) named in facts.json's evidence.
import { eq, need, exitOf, bootsOf, factsEqualAnsible } from '../../lib/checks.mjs';

export const guest = {
  suite: 'trixie',
  wait_ports: [],
  units: [],
  sysctl_keys: [],
  ansible: true,
};

export function checks(r) {
  const { b1 } = bootsOf(r);
  const facts = () => need(b1().preflight.facts, 'preflight/facts.json');
  const ansible = () => need(b1().ansible?.ansible_facts, 'ansible -m setup facts');
  return [
    { name: 'apply exits 0', needs: [2], check: () => eq(exitOf(b1(), 'apply1'), 0) },
    { name: 'plan after apply exits 0', needs: [2], check: () => eq(exitOf(b1(), 'plan2'), 0) },
    { name: 'facts.json equals ansible -m setup in the same VM', needs: [6], check: () => factsEqualAnsible(facts(), ansible()) },
    { name: 'distribution_version has the point release (13.x), as ansible-core 2.19 reports it', needs: [6], check: () => {
      const v = facts().distribution_version;
      return /^13\.\d+$/.test(v) ? { ok: true, detail: v } : `distribution_version ${v}`;
    } },
    // The version comes from the installed package's release.py when the model covers the install, else from running the command.
    { name: "facts.json's evidence names the ansible-core that ansible --version reports and the distro modelled", needs: [6], check: () => {
      const ev = facts().evidence ?? [];
      const ok = /^ansible-core 2\.\d+\.\d+ \(from (ansible --version|\/\S+\/ansible\/release\.py, the version ansible --version prints)\)$/.test(ev[0] ?? '') && /^distribution_version by distro \d/.test(ev[1] ?? '');
      return { ok, detail: JSON.stringify(ev) };
    } },
  ];
}
