// Who leaves the CNI's interfaces unmanaged when NetworkManager runs: the
// preinstall role's copies into /etc/NetworkManager/conf.d, run only when its
// `systemctl is-active NetworkManager.service` register says rc 0 (systemctl(1):
// 0 active, 3 inactive), each rendered for this node and merged beside the
// host's files as NetworkManager.conf(5) merges them. Fixture checkouts
// written by hand in kubespray's layout.
import { describe, expect, it } from 'vitest';
import { known, notKnown } from '../../src/acceptance/checker.js';
import type { NetworkManagerFacts } from '../../src/acceptance/nm-facts.js';
import { OPERATOR_FILE, UNMANAGED_TASKS, networkManagerWhoFixes } from '../../src/acceptance/network-manager-who.js';
import { fixtureNode } from '../helpers/kubespray-fixture.js';

const P = 'roles/kubernetes/preinstall';
const MAIN = [
  '---',
  '- name: Is NetworkManager running',
  '  command: systemctl is-active --quiet NetworkManager.service',
  '  register: nm_check',
  '  failed_when: false',
  '',
  '- name: Unmanaged devices',
  '  import_tasks: 0062-networkmanager-unmanaged-devices.yml',
  '  when: nm_check.rc == 0',
  '',
].join('\n');
const UNMANAGED = [
  '---',
  '- name: Calico interfaces',
  '  copy:',
  '    content: |',
  '      [keyfile]',
  '      unmanaged-devices+=interface-name:cali*;interface-name:tunl*;interface-name:vxlan.calico',
  '    dest: "{{ nm_conf_dir }}/calico.conf"',
  '  when: kube_network_plugin == "calico"',
  '',
  '- name: Node-local interfaces',
  '  copy:',
  '    content: |',
  '      [keyfile]',
  '      unmanaged-devices+=interface-name:kube-ipvs0',
  '    dest: /etc/NetworkManager/conf.d/k8s.conf',
  '',
].join('\n');
const checkoutFor = (plugin: string) => ({
  [`${P}/defaults/main.yml`]: `kube_network_plugin: ${plugin}\nnm_conf_dir: /etc/NetworkManager/conf.d\n`,
  [`${P}/tasks/main.yml`]: MAIN,
  [UNMANAGED_TASKS]: UNMANAGED,
});
const nm = (active: NetworkManagerFacts['active']): NetworkManagerFacts => ({
  runs: { yes: true, how: 'starts at boot' },
  active,
  main: null,
  dirs: {},
  vethRule: { state: 'absent', file: '' },
});
const CALICO_TASK = `${UNMANAGED_TASKS}:2 Calico interfaces`;
const K8S_TASK = `${UNMANAGED_TASKS}:10 Node-local interfaces`;

describe('networkManagerWhoFixes', () => {
  it("calico with NetworkManager active: kubespray's calico.conf leaves every calico pattern alone", async () => {
    expect(await networkManagerWhoFixes(await fixtureNode(checkoutFor('calico')), nm(known(true)), 'calico')).toEqual({
      who: 'kubespray',
      says: `kubespray writes /etc/NetworkManager/conf.d/calico.conf, /etc/NetworkManager/conf.d/k8s.conf (${CALICO_TASK}; ${K8S_TASK}), after which NetworkManager leaves cali*, tunl*, vxlan.calico alone`,
      evidence: [CALICO_TASK, K8S_TASK],
    });
  });
  it('flannel: only k8s.conf is written, so the operator adds a file for cni0 and flannel.1', async () => {
    expect(await networkManagerWhoFixes(await fixtureNode(checkoutFor('flannel')), nm(known(true)), 'flannel')).toEqual({
      who: 'operator',
      says: `kubespray writes only /etc/NetworkManager/conf.d/k8s.conf, and NetworkManager would still manage cni0, flannel.1: add ${OPERATOR_FILE} with "[keyfile]" and "unmanaged-devices+=interface-name:cni0;interface-name:flannel.1", then nmcli general reload`,
      evidence: [K8S_TASK],
    });
  });
  it('NetworkManager not active when kubespray checks (rc 3): no file is written, the operator adds one', async () => {
    const r = await networkManagerWhoFixes(await fixtureNode(checkoutFor('calico')), nm(known(false)), 'calico');
    expect(r).toMatchObject({
      who: 'operator',
      says: expect.stringMatching(/^kubespray writes no unmanaged-devices file here, and NetworkManager would still manage cali\*, tunl\*, vxlan\.calico: /),
      evidence: [],
    });
  });
  it('unknown: whether NetworkManager is active not known (offline), a plugin whose interfaces are not known', async () => {
    const offline = await networkManagerWhoFixes(await fixtureNode(checkoutFor('calico')), nm(notKnown("offline: the booted host's")), 'calico');
    expect(offline).toEqual({
      who: 'unknown',
      says: "whether kubespray leaves the CNI's interfaces unmanaged cannot be evaluated: offline: the booted host's",
      evidence: [],
    });
    expect((await networkManagerWhoFixes(await fixtureNode(checkoutFor('weave')), nm(known(true)), 'weave')).says).toBe(
      "whether kubespray leaves the CNI's interfaces unmanaged cannot be evaluated: kube_network_plugin weave's interfaces are not known here",
    );
  });
});
