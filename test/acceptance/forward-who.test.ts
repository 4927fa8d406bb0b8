// Who makes forwarded pod traffic pass a dropping FORWARD hook, and who opens
// the control-plane ports: the roles cluster.yml runs on this node, walked
// with its variables. Fixture checkouts written by hand in kubespray's layout.
import { describe, expect, it } from 'vitest';
import { forwardWhoFixes, inputWhoFixes } from '../../src/acceptance/forward-who.js';
import { NM, PM, fixtureNode } from '../helpers/kubespray-fixture.js';

const CALICO = 'roles/network_plugin/calico/tasks/main.yml';
const iptables = (name: string, args: string, when = '') => `---\n- name: ${name}\n  ansible.builtin.iptables:\n${args}${when ? `  when: ${when}\n` : ''}`;
const BARE = { [PM]: '---\n[]\n', [NM]: '---\n[]\n' };
const ACCEPT_FORWARD = iptables('Accept forwarded pod traffic', '    chain: FORWARD\n    policy: ACCEPT\n');

describe('forwardWhoFixes', () => {
  it("no iptables task in the roles: the operator's, naming the roles walked", async () => {
    const w = await forwardWhoFixes(await fixtureNode(BARE), 'calico', []);
    expect(w).toEqual({
      who: 'operator',
      says: "no task of kubespray's kubernetes/preinstall, kubernetes/node (walked for this node) sets FORWARD's policy or accepts on it: the operator must",
      evidence: [],
    });
  });

  it("the plugin's role sets FORWARD to ACCEPT: kubespray's, citing the task; the operator's when a writer sets the drop again at boot", async () => {
    const node = await fixtureNode({ ...BARE, [CALICO]: ACCEPT_FORWARD });
    const task = `${CALICO}:2 Accept forwarded pod traffic`;
    expect(await forwardWhoFixes(node, 'calico', [])).toEqual({
      who: 'kubespray',
      says: `kubespray's ${task} accepts it when cluster.yml runs`,
      evidence: [task],
    });
    const again = await forwardWhoFixes(node, 'calico', ['ufw']);
    expect(again).toMatchObject({ who: 'operator', evidence: [task] });
    expect(again.says).toContain('but ufw sets the drop again at every boot');
  });

  it("another plugin: the calico role is not walked, so its task is no one's answer", async () => {
    const node = await fixtureNode({ ...BARE, [CALICO]: ACCEPT_FORWARD });
    expect(await forwardWhoFixes(node, 'flannel', [])).toMatchObject({ who: 'operator', evidence: [] });
  });

  it('a task skipped for this node is passed over; one whose run is decided at run time is unknown, naming it', async () => {
    const skipped = await fixtureNode({ ...BARE, [PM]: iptables('Open forward', '    chain: FORWARD\n    policy: ACCEPT\n', 'false') });
    expect(await forwardWhoFixes(skipped, null, [])).toMatchObject({ who: 'operator' });
    const probe = `---\n- name: Probe\n  command: /bin/true\n  register: probe\n${ACCEPT_FORWARD.slice(4)}  when: probe.rc == 0\n`;
    const w = await forwardWhoFixes(await fixtureNode({ ...BARE, [PM]: probe }), null, []);
    expect(w).toMatchObject({ who: 'unknown', evidence: [`${PM}:5 Accept forwarded pod traffic`] });
    expect(w.says).toContain('whether it runs is decided at run time');
  });
});

describe('inputWhoFixes', () => {
  it("no firewall task: the operator's", async () => {
    expect(await inputWhoFixes(await fixtureNode(BARE), null)).toMatchObject({ who: 'operator', evidence: [] });
  });

  it('a ufw task or an iptables INPUT accept that runs here: unknown, citing it (its ports are not judged)', async () => {
    const ufw = '---\n- name: Allow the API server\n  community.general.ufw:\n    rule: allow\n    port: "6443"\n';
    const w = await inputWhoFixes(await fixtureNode({ ...BARE, [NM]: ufw }), null);
    expect(w).toEqual({
      who: 'unknown',
      says: `kubespray's ${NM}:2 Allow the API server changes the firewall: which ports it opens is not judged here`,
      evidence: [`${NM}:2 Allow the API server`],
    });
    const input = iptables('Accept kubelet', '    chain: INPUT\n    jump: ACCEPT\n    destination_port: "10250"\n');
    expect(await inputWhoFixes(await fixtureNode({ ...BARE, [PM]: input }), null)).toMatchObject({ who: 'unknown', evidence: [`${PM}:2 Accept kubelet`] });
  });
});
