// auditMemory finds kubespray's memory asserts in the preinstall role (the
// memtotal_mb fact under any of its names compared with a minimum), names
// the minimum and the group from `when`, and evaluates them for this host.
// Expectations are worked by hand from the YAML below: memtotal_mb 1024
// against minimums of 1500 and 900. Whether a whole assert passes as Ansible
// says is compared with ansible-playbook in tasks.walk.test.ts.
import { describe, expect, it } from 'vitest';
import { auditMemory, PREINSTALL_ROLE } from '../../src/kubespray/preflight.js';
import { parseInventory } from '../../src/kubespray/inventory.js';
import { checkout, P, PM } from '../helpers/kubespray-fixture.js';

const DEFAULTS = `${P}/defaults/main.yml`;
const INV = '[kube_control_plane]\nnode1\n\n[kube_node]\nnode1\nnode2\n';

const TASKS = `---
- name: Control plane needs memory
  assert:
    that: ansible_memtotal_mb | int >= minimal_master_memory_mb
  when: inventory_hostname in groups['kube_control_plane']
- name: Workers need memory
  assert:
    that:
      - ansible_service_mgr == "systemd"
      - minimal_node_memory_mb <= ansible_facts['memtotal_mb']
  when: "'kube_node' in group_names"
- name: A literal minimum
  assert:
    that: ansible_memtotal_mb >= 512
- name: Not a memory assert
  assert:
    that: ansible_os_family == "Debian"
`;

async function audited(
  facts: Record<string, unknown> | undefined,
  host = 'node1',
  tasks = TASKS,
  defaults = 'minimal_master_memory_mb: 1500\nminimal_node_memory_mb: 900\n',
) {
  const ck = await checkout({ [PM]: tasks, [DEFAULTS]: defaults });
  return auditMemory(ck, facts ? { facts, host: { inventory: parseInventory(INV, '/inv/hosts.ini'), inventoryDir: '/inv', host } } : {});
}

describe('auditMemory', () => {
  it('is about the preinstall role', () => {
    expect(PREINSTALL_ROLE).toBe('kubernetes/preinstall');
  });

  it('finds each comparison with memtotal_mb, in either direction and through a filter, with its minimum and group', async () => {
    const a = await audited({ memtotal_mb: 2048, service_mgr: 'systemd', os_family: 'Debian' });
    expect(a.verdicts.map((v) => [v.assert.ref.line, v.assert.fact, v.assert.variable, v.assert.minimum, v.assert.group, v.status.runs, v.passes])).toEqual([
      [2, 'ansible_memtotal_mb', 'minimal_master_memory_mb', 1500, 'kube_control_plane', 'yes', true],
      [6, "ansible_facts['memtotal_mb']", 'minimal_node_memory_mb', 900, 'kube_node', 'yes', true],
      [12, 'ansible_memtotal_mb', '512', 512, null, 'yes', true],
    ]);
    expect(a.verdicts[1]!.assert.that).toBe("minimal_node_memory_mb <= ansible_facts['memtotal_mb']");
    expect(a.minimalMasterMemoryMb).toEqual({ value: 1500, file: DEFAULTS, line: 1 });
    expect(a.files).toContain(PM);
  });

  it('1024 MB fails the control plane minimum of 1500, and the host stops there: the later asserts are not reached', async () => {
    const a = await audited({ memtotal_mb: 1024, service_mgr: 'systemd', os_family: 'Debian' });
    expect(a.verdicts.map((v) => [v.assert.ref.line, v.status.runs, v.passes])).toEqual([
      [2, 'yes', false],
      [6, 'no', null],
      [12, 'no', null],
    ]);
  });

  it('every assert of the role is listed, and marked memory or not', async () => {
    const a = await audited({ memtotal_mb: 1024, service_mgr: 'systemd', os_family: 'Debian' });
    expect(a.asserts.map((x) => [x.ref.line, x.memory])).toEqual([
      [2, true],
      [6, true],
      [12, true],
      [15, false],
    ]);
  });

  it('an assert whose group does not hold this host does not run, and has no verdict', async () => {
    const a = await audited({ memtotal_mb: 1024, service_mgr: 'systemd', os_family: 'Debian' }, 'node2');
    // node2 is not in kube_control_plane: the failing 1500 minimum does not apply to it, and the worker minimum of 900 passes.
    const cp = a.verdicts.find((v) => v.assert.ref.line === 2)!;
    expect(cp.status.runs).toBe('no');
    expect(cp.passes).toBeNull();
    expect(a.verdicts.find((v) => v.assert.ref.line === 6)!.passes).toBe(true);
  });

  it('without facts the memory asserts are found but not judged, saying why', async () => {
    const a = await audited(undefined, 'node1', TASKS.split('- name: Workers')[0]!);
    expect(a.verdicts).toHaveLength(1);
    expect(a.verdicts[0]!.passes).toBeNull();
    // Without an inventory the group test cannot be decided, so it may or may not run; either way it is not judged.
    expect(a.verdicts[0]!.status.runs).not.toBe('no');
  });

  it('a minimum that is not a number, or cannot be evaluated, is null with the reason', async () => {
    const tasks = `---
- name: Memory
  assert:
    that: ansible_memtotal_mb >= minimal_master_memory_mb
- name: Undefined minimum
  assert:
    that: ansible_memtotal_mb >= nobody_set_this
`;
    const a = await audited({ memtotal_mb: 1024 }, 'node1', tasks, 'minimal_master_memory_mb: lots\n');
    expect(a.verdicts.map((v) => [v.assert.minimum, v.assert.minimumReason])).toEqual([
      [null, 'minimal_master_memory_mb is "lots", not a number'],
      [null, expect.stringContaining('nobody_set_this')],
    ]);
    expect(a.minimalMasterMemoryMb).toBeNull();
    expect(a.minimalReason).toBe('minimal_master_memory_mb is "lots", not a number');
  });

  it('a set_fact before the assert changes the minimum it reads', async () => {
    const tasks = `---
- name: Raise the minimum
  set_fact:
    minimal_master_memory_mb: 2048
- name: Memory
  assert:
    that: ansible_memtotal_mb >= minimal_master_memory_mb
`;
    const a = await audited({ memtotal_mb: 1800 }, 'node1', tasks);
    expect(a.verdicts.map((v) => [v.assert.minimum, v.passes])).toEqual([[2048, false]]);
  });

  it('after a failing assert the later ones are not reached', async () => {
    const tasks = `---
- name: Fails first
  assert:
    that: ansible_os_family == "RedHat"
- name: Memory
  assert:
    that: ansible_memtotal_mb >= 512
`;
    const a = await audited({ memtotal_mb: 1024, os_family: 'Debian' }, 'node1', tasks);
    expect(a.asserts.map((x) => x.result)).toEqual(['fail', 'skipped']);
    expect(a.asserts[1]!.reason).toMatch(/^not reached: /);
    expect(a.verdicts[0]!.status.runs).toBe('no');
    expect(a.verdicts[0]!.passes).toBeNull();
  });
});
