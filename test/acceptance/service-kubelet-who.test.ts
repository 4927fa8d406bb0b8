// Who makes kubeadm's Service-Kubelet check pass: kubespray, when its
// kubernetes/node role writes /etc/systemd/system/kubelet.service and enables
// kubelet on this node, and no earlier directory of systemd's unit search
// path (systemd.unit(5): /etc/systemd/system.control, /run/systemd/transient,
// ...) holds a kubelet.service that would be loaded instead. Fixture
// checkouts in kubespray's layout, written by hand.
import { describe, expect, it } from 'vitest';
import type { KubeletServiceFacts } from '../../src/acceptance/checker.js';
import { serviceKubeletWhoFixes } from '../../src/acceptance/service-kubelet-who.js';
import { fixtureNode } from '../helpers/kubespray-fixture.js';

const MAIN = 'roles/kubernetes/node/tasks/main.yml';
const KUBELET = 'roles/kubernetes/node/tasks/kubelet.yml';
const DEFAULTS = 'roles/kubernetes/node/defaults/main.yml';
const WRITE = '- name: Write kubelet systemd init file\n  template:\n    src: "kubelet.service.j2"\n    dest: "/etc/systemd/system/kubelet.service"\n';
const ENABLE = (when = '') => `- name: Enable kubelet\n  service:\n    name: kubelet\n    enabled: yes\n    state: started\n${when}`;
const role = (kubelet: string, defaults = 'kube_log_level: 2\n') => ({
  [MAIN]: '---\n- name: Install kubelet\n  import_tasks: kubelet.yml\n',
  [KUBELET]: `---\n${kubelet}`,
  [DEFAULTS]: defaults,
});
const unit = (entry: string | null): KubeletServiceFacts => ({ state: entry ? 'disabled' : 'absent', entry, how: '' });
const EVIDENCE = [`${KUBELET}:2 Write kubelet systemd init file`, `${KUBELET}:7 Enable kubelet`];

describe('serviceKubeletWhoFixes', () => {
  it('both tasks run: kubespray, quietly, whether the host has no unit or one in /lib that /etc shadows', async () => {
    const node = await fixtureNode(role(`${WRITE}\n${ENABLE()}`));
    const kubespray = {
      who: 'kubespray',
      quiet: true,
      says: 'kubespray writes /etc/systemd/system/kubelet.service and enables it before kubeadm runs',
      evidence: EVIDENCE,
    };
    expect(await serviceKubeletWhoFixes(node, unit(null))).toEqual(kubespray);
    expect(await serviceKubeletWhoFixes(node, unit('/lib/systemd/system/kubelet.service'))).toEqual(kubespray);
    expect(await serviceKubeletWhoFixes(node, unit('/etc/systemd/system/kubelet.service'))).toEqual(kubespray);
  });
  it('a kubelet.service earlier in the search path than /etc/systemd/system: unknown, naming it', async () => {
    const node = await fixtureNode(role(`${WRITE}\n${ENABLE()}`));
    for (const dir of ['/etc/systemd/system.control', '/run/systemd/transient']) {
      const r = await serviceKubeletWhoFixes(node, unit(`${dir}/kubelet.service`));
      expect(r, dir).toEqual({
        who: 'unknown',
        says: `whether kubespray writes and enables kubelet.service cannot be evaluated: ${dir}/kubelet.service comes before /etc/systemd/system/kubelet.service in systemd's search path, so kubespray's file would not be the one loaded`,
        evidence: EVIDENCE,
      });
    }
  });
  it('the enable task does not run on this node (its when: is false): the operator enables it', async () => {
    const node = await fixtureNode(role(`${WRITE}\n${ENABLE('  when: kubelet_enabled_here\n')}`, 'kubelet_enabled_here: false\n'));
    expect(await serviceKubeletWhoFixes(node, unit(null))).toEqual({
      who: 'operator',
      says: `kubespray does not run ${KUBELET}:7 Enable kubelet on this node: enable kubelet.service`,
      evidence: EVIDENCE,
    });
  });
  it('no task writing the unit, or none enabling kubelet (enabled: no): unknown, saying which is missing', async () => {
    expect((await serviceKubeletWhoFixes(await fixtureNode(role(ENABLE())), unit(null))).says).toBe(
      'whether kubespray writes and enables kubelet.service cannot be evaluated: roles/kubernetes/node has no task writing /etc/systemd/system/kubelet.service',
    );
    const disabled = ENABLE().replace('enabled: yes', 'enabled: no');
    expect((await serviceKubeletWhoFixes(await fixtureNode(role(`${WRITE}\n${disabled}`)), unit(null))).says).toBe(
      'whether kubespray writes and enables kubelet.service cannot be evaluated: roles/kubernetes/node has no task enabling kubelet (service: enabled: true)',
    );
  });
});
