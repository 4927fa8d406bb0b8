// Variable precedence against ansible-core itself: one tree in kubespray's
// layout (kubespray_defaults in every play, role defaults, role vars, a
// meta dependency, inventory file vars, group_vars/host_vars next to the
// inventory and next to the playbook), asked of ansible-playbook with a
// debug task in each role, and of the audit's VarContext for the same role.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { KubesprayCheckout } from '../../src/kubespray/checkout.js';
import { parseInventory } from '../../src/kubespray/inventory.js';
import { targetVarsReader } from '../../src/kubespray/report.js';
import { buildVarContext } from '../../src/kubespray/vars.js';
import { buildTree } from '../helpers/tree.js';

const VARS = [
  'v_role',
  'v_node',
  'v_all_gv',
  'v_grp',
  'v_host',
  'v_pbdir',
  'v_rolevars',
  'v_dep',
  'v_tmpl',
  'v_ini_int',
  'v_ini_str',
  'v_yaml_int',
  'v_only_shared',
  'v_child_ini',
  'v_case',
];
const dump = `{{ {${VARS.map((v) => `'${v}': ${v} | default('UNDEFINED')`).join(', ')}} | to_json }}`;
const debugTask = `---\n- name: Dump\n  ansible.builtin.debug:\n    msg: "${dump}"\n`;

const tree = {
  'ks/cluster.yml': [
    '---',
    '- hosts: k8s_cluster',
    '  gather_facts: false',
    '  roles:',
    '    - { role: kubespray_defaults }',
    '    - { role: kubernetes/preinstall }',
    '- hosts: k8s_cluster',
    '  gather_facts: false',
    '  roles:',
    '    - { role: kubespray_defaults }',
    '    - { role: kubernetes/node }',
    '',
  ].join('\n'),
  'ks/roles/kubespray_defaults/defaults/main/main.yml': [
    'v_role: shared',
    'v_node: shared',
    'v_all_gv: shared',
    'v_grp: shared',
    'v_host: shared',
    'v_pbdir: shared',
    'v_rolevars: shared',
    'v_dep: shared',
    'v_tmpl: "{{ v_role }}-templated"',
    'v_only_shared: 42',
    '',
  ].join('\n'),
  'ks/roles/kubespray_defaults/tasks/main.yml': '---\n- name: Nothing\n  ansible.builtin.meta: noop\n',
  'ks/roles/adduser/defaults/main.yml': 'v_dep: dependency\nv_role: dependency\n',
  'ks/roles/adduser/tasks/main.yml': '---\n- name: Nothing\n  ansible.builtin.meta: noop\n',
  'ks/roles/kubernetes/preinstall/meta/main.yml': '---\ndependencies:\n  - role: adduser\n',
  'ks/roles/kubernetes/preinstall/defaults/main.yml': 'v_role: preinstall\nv_rolevars: preinstall-default\n',
  'ks/roles/kubernetes/preinstall/vars/main.yml': 'v_rolevars: preinstall-vars\n',
  'ks/roles/kubernetes/preinstall/tasks/main.yml': debugTask,
  'ks/roles/kubernetes/node/defaults/main.yml': 'v_node: node\n',
  'ks/roles/kubernetes/node/tasks/main.yml': debugTask,
  'ks/group_vars/all.yml': 'v_pbdir: playbook-dir\n',
  'inv/lab/inventory.ini': [
    '[all:vars]',
    'v_grp=ini-all',
    'v_ini_int=1024',
    'v_ini_str="quoted"',
    '',
    '[kube_control_plane]',
    'node[1:2] ansible_connection=local v_host=ini-host',
    '',
    '[kube_control_plane:vars]',
    'v_child_ini=ini-child',
    '',
    '[k8s_cluster:children]',
    'kube_control_plane',
    '',
    // Two groups at one depth whose names sort differently by code point ('Z' < 'a', as Python sorts) and by locale.
    '[Zeta]',
    'node1',
    '',
    '[alpha]',
    'node1',
    '',
  ].join('\n'),
  // The same inventory as hosts.yaml, with its own copy of the vars dirs.
  'inv/yaml/hosts.yaml': [
    'all:',
    '  vars:',
    '    v_grp: ini-all',
    '    v_ini_int: 1024',
    '    v_ini_str: quoted',
    '  children:',
    '    k8s_cluster:',
    '      children:',
    '        kube_control_plane:',
    '          vars:',
    '            v_child_ini: ini-child',
    '          hosts:',
    '            node[1:2]:',
    '              ansible_connection: local',
    '              v_host: ini-host',
    '    Zeta:',
    '      hosts:',
    '        node1:',
    '    alpha:',
    '      hosts:',
    '        node1:',
    '',
  ].join('\n'),
};
for (const dir of ['inv/lab', 'inv/yaml']) {
  Object.assign(tree, {
    [`${dir}/group_vars/all/main.yml`]: 'v_all_gv: inventory-all\nv_grp: inventory-all\nv_pbdir: inventory-dir\nv_yaml_int: 7\nv_child_ini: gv-all\n',
    [`${dir}/group_vars/kube_control_plane.yml`]: 'v_grp: inventory-kube_control_plane\n',
    [`${dir}/host_vars/node1.yml`]: 'v_host: host_vars\n',
    [`${dir}/group_vars/Zeta.yml`]: 'v_case: Zeta\n',
    [`${dir}/group_vars/alpha.yml`]: 'v_case: alpha\n',
  });
}
const INVENTORIES = { ini: '/inv/lab/inventory.ini', yaml: '/inv/yaml/hosts.yaml' } as const;
type Kind = keyof typeof INVENTORIES;

let root: string;
const ansible: Record<Kind, Record<string, Record<string, unknown>>> = { ini: {}, yaml: {} };

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'ks-oracle-'));
  buildTree(root, tree);
  for (const kind of Object.keys(INVENTORIES) as Kind[]) await askAnsible(kind);
}, 120_000);

async function askAnsible(kind: Kind): Promise<void> {
  const r = await execa('ansible-playbook', ['-i', path.join(root, INVENTORIES[kind]), '--limit', 'node1', path.join(root, 'ks/cluster.yml')], {
    env: { ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_NOCOLOR: '1', ANSIBLE_LOCALHOST_WARNING: 'false', ANSIBLE_HOME: path.join(root, '.ansible') },
    reject: false,
  });
  expect(r.exitCode, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout) as { plays: { tasks: { task: { name: string; path?: string }; hosts: Record<string, { msg: unknown }> }[] }[] };
  for (const play of out.plays) {
    for (const t of play.tasks) {
      if (!t.task.name.endsWith(': Dump')) continue;
      const role = t.task.path?.includes('/preinstall/') ? 'kubernetes/preinstall' : 'kubernetes/node';
      const msg = t.hosts.node1!.msg;
      ansible[kind][role] = typeof msg === 'string' ? (JSON.parse(msg) as Record<string, unknown>) : (msg as Record<string, unknown>);
    }
  }
}

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function ours(kind: Kind, role: string): Promise<Record<string, unknown>> {
  const host = new Host({ root });
  const ck = new KubesprayCheckout(host, '/ks');
  const invFile = INVENTORIES[kind];
  const inventory = parseInventory(await readFile(path.join(root, invFile), 'latin1'), invFile);
  const ctx = await buildVarContext({
    ck,
    role,
    host: { inventory, inventoryDir: path.posix.dirname(invFile), host: 'node1' },
    reader: targetVarsReader(host),
  });
  const out: Record<string, unknown> = {};
  for (const v of VARS) {
    const r = ctx.template(`{{ ${v} | default('UNDEFINED') }}`);
    out[v] = r.ok ? r.value : `ERROR ${r.reason}`;
  }
  return out;
}

describe('variable precedence, compared with ansible-playbook', () => {
  it('ansible answered for both roles and both inventory formats', () => {
    for (const kind of Object.keys(INVENTORIES) as Kind[]) {
      expect(Object.keys(ansible[kind]).sort()).toEqual(['kubernetes/node', 'kubernetes/preinstall']);
      // The layers the tree is built to tell apart really differ in ansible's answer.
      expect(ansible[kind]['kubernetes/preinstall']!.v_role).not.toBe(ansible[kind]['kubernetes/node']!.v_role);
    }
  });

  for (const kind of Object.keys(INVENTORIES) as Kind[]) {
    for (const role of ['kubernetes/preinstall', 'kubernetes/node']) {
      it(`${kind} inventory: a task of ${role} sees what ansible-core shows it`, async () => {
        expect(await ours(kind, role)).toEqual(ansible[kind][role]);
      });
    }
  }
});
