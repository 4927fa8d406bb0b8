// src/ansible/jinja.ts against ansible-core's own Conditional and Templar
// (test/helpers/ansible-conditional.py, run with the Python ansible runs on):
// kubespray's conditions from v2.20.0..master plus the Jinja2 semantics they
// lean on. Ansible's error is our "unknown"; every other answer must match.
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCondition } from '../../src/ansible/jinja.js';
import { ansiblePython } from '../helpers/ansible-python.js';

const FACTS = { memtotal_mb: 1978, distribution: 'Debian', distribution_version: '12.11', os_family: 'Debian' };
const VARS: Record<string, unknown> = {
  ansible_facts: FACTS,
  ansible_memtotal_mb: 1978,
  ansible_distribution: 'Debian',
  minimal_master_memory_mb: 1500,
  minimal_node_memory_mb: 4096,
  ignore_assert_errors: false,
  inventory_hostname: 'node1',
  group_names: ['etcd', 'k8s_cluster', 'kube_control_plane'],
  groups: { all: ['node1', 'worker1'], kube_control_plane: ['node1'], kube_node: ['worker1'], etcd: ['node1'], k8s_cluster: ['node1', 'worker1'] },
  ipv4_stack: 'yes',
  ipv6_stack: 'False',
  kube_version: 'v1.31.4',
  supported_os_distributions: ['Debian', 'Ubuntu'],
  modinfo_br_netfilter: { rc: 0, stdout: '' },
  fstab_file: { stat: { exists: true } },
  s: 'abc',
  n: '10',
  lst: ['alpha', 'beta', 'gamma'],
  d: { k: 1 },
  none_var: null,
  dns_late: false,
};

const CASES = [
  "ansible_facts['memtotal_mb'] >= minimal_master_memory_mb",
  'ansible_memtotal_mb >= minimal_master_memory_mb',
  'ansible_facts.memtotal_mb >= minimal_node_memory_mb',
  'not ignore_assert_errors',
  "('kube_control_plane' in group_names)",
  "('kube_node' in group_names)",
  "inventory_hostname in groups['kube_control_plane']",
  "inventory_hostname in groups['kube_node']",
  "inventory_hostname in groups.get('etcd',[])",
  "inventory_hostname in groups.get('calico_rr',[])",
  "inventory_hostname in groups['calico_rr']",
  'groups.etcd|length is not divisibleby 2',
  'ipv4_stack | bool',
  'ipv6_stack | bool',
  'kubelet_fail_swap_on | default(True)',
  "(allow_unsupported_distribution_setup | default(false)) or ansible_facts['distribution'] in supported_os_distributions",
  'modinfo_br_netfilter.rc == 0',
  'modinfo_br_netfilter.rc not in [0, 1]',
  'fstab_file.stat.exists',
  "kube_version is version('v1.30.0', '>=')",
  "kube_version is version('v1.32.0', '>=')",
  "ansible_facts.distribution_version is version('12', '>=')",
  'not dns_late',
  'undefined_thing',
  'not undefined_thing',
  'undefined_thing is defined',
  'undefined_thing is not defined',
  'd.k is defined',
  'd.missing is defined',
  "d['missing'] | default('x') == 'x'",
  'undefined_thing or true',
  'true or undefined_thing',
  'none_var is none',
  'none_var is not none',
  "none_var | default('z', true) == 'z'",
  "'1' == 1",
  '1 == 1.0',
  'true == 1',
  '[1, 2] == [1, 2]',
  '1 < 2 < 3',
  '3 > 2 > 1',
  "'abc' < 'abd'",
  "s.startswith('ab')",
  "s.split('b') == ['a', 'c']",
  'n | int > 5',
  'n > 5',
  's | length == 3',
  "lst | select('match', '^a') | list | length == 1",
  "lst | map('upper') | list == ['ALPHA', 'BETA', 'GAMMA']",
  "'b' in s",
  "'k' in d",
  "s ~ 'd' == 'abcd'",
  '10 // 3 == 3 and 10 % 3 == 1 and 2 ** 3 == 8',
  's is string and 5 is number',
  'True and not False',
  'yes',
  false,
  'false',
];

type Answer = { ok: true; value: boolean } | { ok: false; error: string };
let ansible: Answer[];

beforeAll(async () => {
  const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-conditional.py')], {
    input: JSON.stringify(CASES.map((expr) => ({ expr, vars: VARS }))),
  });
  ansible = JSON.parse(r.stdout) as Answer[];
}, 60_000);

describe('conditions, compared with ansible-core', () => {
  it('ansible answered every case, with both outcomes and errors among them', () => {
    expect(ansible).toHaveLength(CASES.length);
    expect(new Set(ansible.map((a) => (a.ok ? String(a.value) : 'error')))).toEqual(new Set(['true', 'false', 'error']));
  });
  CASES.forEach((expr, i) => {
    it(String(expr), () => {
      const ours = evaluateCondition(expr, (name) => (Object.hasOwn(VARS, name) ? { value: VARS[name] } : undefined));
      const a = ansible[i]!;
      expect(ours.ok ? { ok: true, value: ours.value } : { ok: false }).toEqual(a.ok ? { ok: true, value: a.value } : { ok: false });
    });
  });
});
