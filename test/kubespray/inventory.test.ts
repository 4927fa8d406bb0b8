import { describe, expect, it } from 'vitest';
import { expandHostPattern, groupNames, parseIniInventory } from '../../src/kubespray/inventory.js';
import { shlexSplit } from '../../src/lex/shlex.js';

const INVENTORY = `# lab inventory
lonely ansible_host=10.0.0.9

[kube_control_plane]
node1 ansible_connection=local ip=192.0.2.10   # inline comment
; a semicolon comment

[etcd:children]
kube_control_plane

[kube_node]
node1
worker[01:03] ansible_user="deploy user"

[k8s_cluster:children]
kube_control_plane
kube_node

[k8s_cluster:vars]
kube_network_plugin=calico
ansible_python_interpreter="/usr/bin/python3"

[calico_rr]
`;

describe('INI inventory', () => {
  it('parses groups, :children, :vars and host variables', () => {
    const inv = parseIniInventory(INVENTORY);
    expect([...inv.hosts.keys()]).toEqual(['lonely', 'node1', 'worker01', 'worker02', 'worker03']);
    expect(inv.hosts.get('node1')!.vars).toEqual({ ansible_connection: 'local', ip: '192.0.2.10' });
    expect(inv.hosts.get('worker02')!.vars).toEqual({ ansible_user: 'deploy user' });
    expect(inv.groups.get('etcd')!.children).toEqual(['kube_control_plane']);
    expect(inv.groups.get('k8s_cluster')!.children).toEqual(['kube_control_plane', 'kube_node']);
    expect(inv.groups.get('k8s_cluster')!.vars).toEqual({ kube_network_plugin: 'calico', ansible_python_interpreter: '/usr/bin/python3' });
    expect(inv.groups.get('calico_rr')!.hosts).toEqual([]);
    expect(inv.groups.get('ungrouped')!.hosts).toEqual(['lonely']);
  });

  it('computes group_names through :children', () => {
    const inv = parseIniInventory(INVENTORY);
    expect(groupNames(inv, 'node1')).toEqual(['etcd', 'k8s_cluster', 'kube_control_plane', 'kube_node']);
    expect(groupNames(inv, 'worker03')).toEqual(['k8s_cluster', 'kube_node']);
    // checked against ansible-core 2.14: `ansible -i inv lonely -m debug -a var=group_names`
    expect(groupNames(inv, 'lonely')).toEqual(['ungrouped']);
    expect(groupNames(inv, 'absent')).toEqual([]);
  });

  it('nested children reach the host from two levels up', () => {
    const inv = parseIniInventory('[a]\nh1\n[b:children]\na\n[c:children]\nb\n');
    expect(groupNames(inv, 'h1')).toEqual(['a', 'b', 'c']);
  });

  it('rejects malformed lines with file:line', () => {
    expect(() => parseIniInventory('[g]\nh1 novalue\n', 'inv.ini')).toThrow(/inv\.ini:2: expected key=value/);
    expect(() => parseIniInventory('[g:weird]\nh1\n', 'inv.ini')).toThrow(/inv\.ini:1: .*unknown type: weird/);
    expect(() => parseIniInventory('[g:vars]\njustakey\n', 'inv.ini')).toThrow(/inv\.ini:2:/);
  });

  it('expands host ranges and splits like shlex', () => {
    expect(expandHostPattern('web[01:03]')).toEqual(['web01', 'web02', 'web03']);
    expect(expandHostPattern('db-[a:c]')).toEqual(['db-a', 'db-b', 'db-c']);
    expect(expandHostPattern('n[1:5:2]')).toEqual(['n1', 'n3', 'n5']);
    expect(shlexSplit(`h a="x y" b='z' # c=d`, { comments: true }).tokens).toEqual(['h', 'a=x y', 'b=z']);
  });
});
