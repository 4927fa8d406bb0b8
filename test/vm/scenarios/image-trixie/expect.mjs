// The image scenario on Debian 13 (trixie), whose own nodejs is 20: the same
// faults, the same bake with the default desired state, the same two boots
// and checks (scenarios/image/expect.mjs). Boot 1 also compares the facts
// with `ansible -m setup` in the same VM, with the ansible-core of trixie
// (2.19, bundled distro 1.9.0): it reads /etc/debian_version, so
// distribution_version is "13.x", not "13". (This was the `trixie` scenario,
// a two-boot flow of its own on the same base; folded in here it costs one
// `--facts` run and ansible instead of a whole VM.)
import { imageScenario } from '../image/expect.mjs';
import { need, bootsOf, factsEqualAnsible } from '../../lib/checks.mjs';

const s = imageScenario('trixie');
export const guest = { ...s.guest, ansible: true };
export const hostApply = s.hostApply;
export const checks = (r) => [...s.checks(r), ...factChecks(r)];

function factChecks(r) {
  const { b1 } = bootsOf(r);
  const doc = () => JSON.parse(need(b1().stdout('facts'), 'reconcile --facts --json output'));
  const facts = () => need(doc().facts, 'facts in reconcile --facts --json');
  const ansible = () => need(b1().ansible?.ansible_facts, 'ansible -m setup facts');
  return [
    { name: 'boot 1: --facts equals ansible -m setup in the same VM', needs: [6], check: () => factsEqualAnsible(facts(), ansible()) },
    { name: 'boot 1: distribution_version has the point release (13.x), as ansible-core 2.19 reports it', needs: [6], check: () => {
      const v = facts().distribution_version;
      return /^13\.\d+$/.test(v) ? { ok: true, detail: v } : `distribution_version ${v}`;
    } },
    // The version comes from the installed package's release.py when the model covers the install, else from running the command.
    { name: "boot 1: the facts' evidence names the ansible-core that ansible --version reports and the distro modelled", needs: [6], check: () => {
      const ev = facts().evidence ?? [];
      const ok = /^ansible-core 2\.\d+\.\d+ \(from (ansible --version|\/\S+\/ansible\/release\.py, the version ansible --version prints)\)$/.test(ev[0] ?? '') && /^distribution_version by distro \d/.test(ev[1] ?? '');
      return { ok, detail: JSON.stringify(ev) };
    } },
  ];
}
