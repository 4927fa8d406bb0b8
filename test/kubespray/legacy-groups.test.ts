// applyLegacyGroups: what old kubespray's legacy_groups.yml does to an
// inventory written with the old group names. Worked by hand from Ansible's
// group_by (the play's hosts join the key's group, created when new) on the
// playbook's form in v2.16 .. v2.23; anything else is reported with its line.
import { describe, expect, it } from 'vitest';
import { applyLegacyGroups, LEGACY_GROUPS_FILES } from '../../src/kubespray/legacy-groups.js';
import { parseInventory } from '../../src/kubespray/inventory.js';
import { checkout } from '../helpers/kubespray-fixture.js';

const PLAYBOOK = `---
- name: Add kube-master nodes to kube_control_plane
  hosts: kube-master
  gather_facts: false
  tags: always
  tasks:
    - name: add nodes to kube_control_plane group
      group_by:
        key: 'kube_control_plane'
- name: Add kube-node nodes to kube_node
  hosts: kube-node
  gather_facts: false
  tasks:
    - name: add nodes to kube_node group
      group_by:
        key: 'kube_node'
`;

const OLD_INV = '[kube-master]\nnode1\n\n[kube-node]\nnode2\n\n[workers:children]\nkube-node\n\n[kube-node:children]\nextra\n\n[extra]\nnode3\n';

describe('applyLegacyGroups', () => {
  it("adds the old groups' hosts, children included, to the new groups, created under all", async () => {
    const inv = parseInventory(OLD_INV, '/inv/hosts.ini');
    const r = await applyLegacyGroups(await checkout({ 'legacy_groups.yml': PLAYBOOK }), inv);
    expect(r.file).toBe('legacy_groups.yml');
    expect(r.unknown).toEqual([]);
    expect(r.added.map((a) => [a.host, a.group, a.from, a.line])).toEqual([
      ['node1', 'kube_control_plane', 'kube-master', 7],
      ['node2', 'kube_node', 'kube-node', 14],
      ['node3', 'kube_node', 'kube-node', 14],
    ]);
    expect(inv.groups.get('kube_control_plane')!.hosts).toEqual(['node1']);
    expect(inv.groups.get('all')!.children).toContain('kube_node');
    expect(inv.hosts.get('node3')!.groups).toContain('kube_node');
  });

  it('reads playbooks/legacy_groups.yml too; a release without either has none', async () => {
    expect(LEGACY_GROUPS_FILES).toEqual(['legacy_groups.yml', 'playbooks/legacy_groups.yml']);
    const inv = parseInventory(OLD_INV, '/inv/hosts.ini');
    expect((await applyLegacyGroups(await checkout({ 'playbooks/legacy_groups.yml': PLAYBOOK }), inv)).file).toBe('playbooks/legacy_groups.yml');
    expect(await applyLegacyGroups(await checkout({ 'cluster.yml': '[]\n' }), parseInventory(OLD_INV, '/inv/hosts.ini'))).toEqual({
      file: null,
      added: [],
      unknown: [],
    });
  });

  it('a templated key, a pattern of hosts or another module is reported with its line, not applied', async () => {
    const text = `---
- hosts: kube-master:kube-node
  tasks: []
- hosts: kube-master
  tasks:
    - group_by:
        key: '{{ new_name }}'
    - debug:
        msg: hi
`;
    const inv = parseInventory(OLD_INV, '/inv/hosts.ini');
    const r = await applyLegacyGroups(await checkout({ 'legacy_groups.yml': text }), inv);
    expect(r.added).toEqual([]);
    expect(r.unknown.map((u) => [u.line, u.reason.split(' (')[0]])).toEqual([
      [2, 'hosts: "kube-master:kube-node" is not a plain group name'],
      [6, 'only a group_by with a literal key is modelled'],
      [8, 'only a group_by with a literal key is modelled'],
    ]);
    expect(inv.groups.has('kube_control_plane')).toBe(false);
  });

  it('a file that is not a list of plays is one unknown at line 1', async () => {
    const r = await applyLegacyGroups(await checkout({ 'legacy_groups.yml': 'hosts: all\n' }), parseInventory(OLD_INV, '/inv/hosts.ini'));
    expect(r.unknown).toEqual([{ file: 'legacy_groups.yml', line: 1, reason: 'not a list of plays' }]);
  });
});
