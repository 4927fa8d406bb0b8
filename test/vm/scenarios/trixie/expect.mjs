// Debian 13 (trixie): facts.json equals `ansible -m setup` in the same VM,
// as the lab shows on Debian 12, with the ansible-core of trixie (2.19,
// bundled distro 1.9.0) named in facts.json's evidence.
import { eq, need, exitOf } from '../../lib/checks.mjs';

export const guest = {
  suite: 'trixie',
  wait_ports: [],
  units: [],
  sysctl_keys: [],
  ansible: true,
};

export function checks(r) {
  const b1 = () => need(r.boot1, 'boot1 results');
  const facts = () => need(b1().preflight.facts, 'preflight/facts.json');
  const ansible = () => need(b1().ansible?.ansible_facts, 'ansible -m setup facts');
  return [
    { name: 'apply exits 0', needs: [2], check: () => eq(exitOf(b1(), 'apply1'), 0) },
    { name: 'plan after apply exits 0', needs: [2], check: () => eq(exitOf(b1(), 'plan2'), 0) },
    { name: 'facts.json equals ansible -m setup in the same VM', needs: [6], check: () => {
      const f = facts();
      const a = ansible();
      const addr = typeof f.default_ipv4 === 'object' && f.default_ipv4 !== null ? f.default_ipv4.address : f.default_ipv4;
      return eq(
        [f.memtotal_mb, f.processor_vcpus, f.distribution, f.distribution_version, f.kernel, addr],
        [a.ansible_memtotal_mb, a.ansible_processor_vcpus, a.ansible_distribution, a.ansible_distribution_version, a.ansible_kernel, a.ansible_default_ipv4?.address],
        '[memtotal_mb, processor_vcpus, distribution, distribution_version, kernel, default_ipv4]',
      );
    } },
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
