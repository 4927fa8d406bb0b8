// One small tree in kubespray's layout per form the audit met in kubespray
// v2.20.0 .. master (see the table in docs/kubespray-audit.md): each fact name in the
// memory assert, each group-membership form, `when: false` on a task, a block
// and an import, defaults in three roles, group_vars over a default, a YAML
// inventory, a unit found by a registered result, and templates that cannot
// be evaluated (unknown, loudly, and --plan exits 2). The expectations are
// the arithmetic and Ansible's documented behaviour, written out by hand.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { cannedRunner } from '../helpers/canned-runner.js';
import { main } from '../../src/cli.js';
import type { Io } from '../../src/reconcile/run.js';
import { KubesprayCheckout } from '../../src/kubespray/checkout.js';
import { parseInventory } from '../../src/kubespray/inventory.js';
import { auditMemory } from '../../src/kubespray/preflight.js';
import { kubesprayReport, targetVarsReader } from '../../src/kubespray/report.js';
import { auditWhoFixes, formatEvidence, whoFixesJson } from '../../src/kubespray/who-fixes.js';
import type { DesiredState } from '../../src/desired-state.js';
import { buildTree } from '../helpers/tree.js';
import type { Tree } from '../helpers/tree.js';

const KS = '/opt/ks/kubespray';
const INV_DIR = '/root/ks/inventory/lab';
const P = 'roles/kubernetes/preinstall';
const N = 'roles/kubernetes/node';

const INI = '[kube_control_plane]\nnode1\n\n[kube_node]\nworker1\n\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n';

function verify(that: string, when: string[]): string {
  return [
    '---',
    '- name: Stop if memory is too small for control plane nodes',
    '  assert:',
    `    that: ${that}`,
    '  when:',
    ...when.map((w) => `    - ${w}`),
    '',
  ].join('\n');
}

/** A kubespray-like tree: preinstall (swap, verify, sysctl), node (br_netfilter), kubespray_defaults. */
function base(over: Tree = {}): Tree {
  return {
    [`${KS}/roles/kubespray_defaults/defaults/main/main.yml`]:
      '---\nignore_assert_errors: false\nkubelet_fail_swap_on: true\nsysctl_file_path: /etc/sysctl.d/99-sysctl.conf\n',
    [`${KS}/${P}/defaults/main.yml`]: '---\nminimal_master_memory_mb: 1500\n',
    [`${KS}/${P}/tasks/main.yml`]: [
      '---',
      '- name: Disable swap',
      '  import_tasks: 0010-swapoff.yml',
      '  when: kubelet_fail_swap_on',
      '- name: Check settings',
      '  import_tasks: 0040-verify-settings.yml',
      '- name: System configurations',
      '  import_tasks: 0080-system-configurations.yml',
      '',
    ].join('\n'),
    [`${KS}/${P}/tasks/0010-swapoff.yml`]:
      '---\n- name: Mask swap.target\n  ansible.builtin.systemd_service:\n    name: swap.target\n    masked: true\n- name: Disable swap\n  command: /sbin/swapoff -a\n',
    [`${KS}/${P}/tasks/0040-verify-settings.yml`]: verify("ansible_facts['memtotal_mb'] >= minimal_master_memory_mb", [
      'not ignore_assert_errors',
      "('kube_control_plane' in group_names)",
    ]),
    [`${KS}/${P}/tasks/0080-system-configurations.yml`]: [
      '---',
      '- name: Enable ip forwarding',
      '  ansible.posix.sysctl:',
      '    sysctl_file: "{{ sysctl_file_path }}"',
      '    name: net.ipv4.ip_forward',
      '    value: "1"',
      '    state: present',
      '',
    ].join('\n'),
    [`${KS}/${N}/tasks/main.yml`]: [
      '---',
      '- name: Enable br_netfilter module',
      '  community.general.modprobe:',
      '    name: br_netfilter',
      '    state: present',
      '- name: Persist br_netfilter module',
      '  copy:',
      '    dest: /etc/modules-load.d/kubespray-br_netfilter.conf',
      '    content: br_netfilter',
      '',
    ].join('\n'),
    [`${INV_DIR}/inventory.ini`]: INI,
    ...over,
  };
}

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function tree(files: Tree): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'ks-forms-'));
  temps.push(root);
  buildTree(root, Object.fromEntries(Object.entries(files).map(([k, v]) => [k.replace(/^\//, ''), v])));
  return root;
}

const FACTS = { memtotal_mb: 1978, processor_vcpus: 2, distribution: 'Debian', distribution_version: '12', kernel: '6.1.0-31-amd64' };

async function audit(files: Tree, node = 'node1', inventory = `${INV_DIR}/inventory.ini`) {
  const root = await tree(files);
  const host = new Host({ root });
  const ck = new KubesprayCheckout(host, KS);
  const inv = parseInventory((await host.readFile(inventory))!, inventory);
  const opts = { facts: FACTS, host: { inventory: inv, inventoryDir: path.posix.dirname(inventory), host: node }, reader: targetVarsReader(host) };
  return { memory: await auditMemory(ck, opts), who: await auditWhoFixes(ck, opts), root };
}

describe('the memory assert in each fact form', () => {
  const forms = ['ansible_memtotal_mb', "ansible_facts['memtotal_mb']", 'ansible_facts.memtotal_mb', 'ansible_facts.memtotal_mb | int'];
  for (const fact of forms) {
    it(`${fact} >= minimal_master_memory_mb: 1978 MB passes 1500, fails 4096`, async () => {
      const files = (min: number) =>
        base({
          [`${KS}/${P}/defaults/main.yml`]: `---\nminimal_master_memory_mb: ${min}\n`,
          [`${KS}/${P}/tasks/0040-verify-settings.yml`]: verify(`${fact} >= minimal_master_memory_mb`, [
            'not ignore_assert_errors',
            "('kube_control_plane' in group_names)",
          ]),
        });
      const ok = (await audit(files(1500))).memory;
      expect(ok.verdicts.map((v) => [`${v.assert.ref.file}:${v.assert.ref.line}`, v.assert.minimum, v.status.runs, v.passes])).toEqual([
        [`${P}/tasks/0040-verify-settings.yml:2`, 1500, 'yes', true],
      ]);
      const bad = (await audit(files(4096))).memory;
      expect(bad.verdicts.map((v) => [v.assert.minimum, v.passes])).toEqual([[4096, false]]);
      expect(bad.minimalMasterMemoryMb).toEqual({ value: 4096, file: `${P}/defaults/main.yml`, line: 2 });
    });
  }
});

describe('each group-membership form', () => {
  const forms = [
    "('kube_control_plane' in group_names)",
    "inventory_hostname in groups['kube_control_plane']",
    "inventory_hostname in groups.get('kube_control_plane', [])",
    'inventory_hostname in groups.kube_control_plane',
    `"'k8s_cluster' in group_names and 'kube_node' not in group_names"`,
  ];
  for (const g of forms) {
    it(`${g}: node1 (control plane) is checked, worker1 is not`, async () => {
      const files = base({ [`${KS}/${P}/tasks/0040-verify-settings.yml`]: verify("ansible_facts['memtotal_mb'] >= 4096", ['not ignore_assert_errors', g]) });
      const cp = (await audit(files, 'node1')).memory.verdicts;
      expect(cp.map((v) => [v.status.runs, v.passes])).toEqual([['yes', false]]);
      const worker = (await audit(files, 'worker1')).memory.verdicts;
      expect(worker.map((v) => [v.status.runs, v.passes])).toEqual([['no', null]]);
    });
  }

  it('a group reached through :children counts, and a missing group is unknown, not false', async () => {
    const files = base({
      [`${KS}/${P}/tasks/0040-verify-settings.yml`]: verify("ansible_facts['memtotal_mb'] >= 4096", ["inventory_hostname in groups['k8s_cluster']"]),
    });
    expect((await audit(files, 'worker1')).memory.verdicts.map((v) => v.status.runs)).toEqual(['yes']);
    const missing = base({
      [`${KS}/${P}/tasks/0040-verify-settings.yml`]: verify("ansible_facts['memtotal_mb'] >= 4096", ["inventory_hostname in groups['etcd']"]),
    });
    const v = (await audit(missing)).memory.verdicts[0]!;
    expect(v.status).toMatchObject({ runs: 'unknown', reason: "'groups['etcd']' is undefined" });
  });
});

describe('when: false', () => {
  it("on the task: ip_forward is the operator's, and the evidence says why", async () => {
    const { who } = await audit(
      base({
        [`${KS}/${P}/tasks/0080-system-configurations.yml`]:
          '---\n- name: Enable ip forwarding\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n  when: false\n',
      }),
    );
    expect(who.ip_forward.who).toBe('operator');
    expect(who.ip_forward.evidence.map(formatEvidence)).toEqual([
      `${P}/tasks/0080-system-configurations.yml:2 "Enable ip forwarding": sets net.ipv4.ip_forward = 1 (sysctl module, file /etc/sysctl.conf) (when: false); does nothing on this host: ${P}/tasks/0080-system-configurations.yml:6 when: false is false`,
    ]);
  });

  it("on a block: br_netfilter is the operator's", async () => {
    const { who } = await audit(
      base({
        [`${KS}/${N}/tasks/main.yml`]: [
          '---',
          '- name: Kernel modules',
          '  when: false',
          '  block:',
          '    - name: Enable br_netfilter module',
          '      community.general.modprobe:',
          '        name: br_netfilter',
          '    - name: Persist br_netfilter module',
          '      copy:',
          '        dest: /etc/modules-load.d/kubespray-br_netfilter.conf',
          '        content: br_netfilter',
          '',
        ].join('\n'),
      }),
    );
    expect(who.br_netfilter.who).toBe('operator');
    expect(who.br_netfilter.evidence.map((e) => [e.line, e.status.runs])).toEqual([
      [5, 'no'],
      [8, 'no'],
    ]);
  });

  it("on an import (and through a variable that is false): swap is the operator's", async () => {
    const files = base({
      [`${KS}/roles/kubespray_defaults/defaults/main/main.yml`]:
        '---\nignore_assert_errors: false\nkubelet_fail_swap_on: false\nsysctl_file_path: /etc/sysctl.d/99-sysctl.conf\n',
    });
    const { who } = await audit(files);
    expect(who.swap.who).toBe('operator');
    expect(who.swap.evidence.every((e) => e.status.runs === 'no' && e.status.because.level === 'import')).toBe(true);
    // group_vars next to the inventory turn it back on.
    const on = await audit({ ...files, [`${INV_DIR}/group_vars/all/all.yml`]: 'kubelet_fail_swap_on: true\n' });
    expect(on.who.swap.who).toBe('kubespray');
  });
});

describe('defaults in three roles, and group_vars over a default', () => {
  it("the preinstall task takes preinstall's sysctl_file_path, not kubespray_defaults' nor node's", async () => {
    const { who } = await audit(
      base({
        [`${KS}/${P}/defaults/main.yml`]: '---\nminimal_master_memory_mb: 1500\nsysctl_file_path: /etc/sysctl.d/50-preinstall.conf\n',
        [`${KS}/${N}/defaults/main.yml`]: '---\nsysctl_file_path: /etc/sysctl.d/60-node.conf\n',
      }),
    );
    expect(who.sysctl_file).toMatchObject({
      path: '/etc/sysctl.d/50-preinstall.conf',
      definedAt: [{ file: `${P}/defaults/main.yml`, line: 3, variable: 'sysctl_file_path' }],
    });
  });

  it('group_vars/kube_control_plane next to the inventory raises the minimum for node1 only', async () => {
    const files = base({ [`${INV_DIR}/group_vars/kube_control_plane.yml`]: 'minimal_master_memory_mb: 4096\n' });
    const cp = await audit(files, 'node1');
    expect(cp.memory.minimalMasterMemoryMb).toEqual({ value: 4096, file: `${INV_DIR}/group_vars/kube_control_plane.yml`, line: 1 });
    expect(cp.memory.verdicts.map((v) => v.passes)).toEqual([false]);
    const worker = await audit(files, 'worker1');
    expect(worker.memory.minimalMasterMemoryMb?.value).toBe(1500);
  });
});

const runner = cannedRunner({
  'uname -m': 'x86_64\n',
  'uname -r': '6.1.0-31-amd64\n',
  'ip -4 route get 8.8.8.8': '8.8.8.8 dev dummy0 src 192.0.2.10 uid 0\n',
});

function desired(inventory: string): DesiredState {
  return {
    source: 'desired-state.yaml',
    reports_dir: '/root/ks/preflight',
    kubespray: { dir: KS, inventory, node: 'node1' },
    facts: { source: 'native' },
    first_boot: 'apply',
    resources: [],
  };
}

const HOST_FILES: Tree = {
  '/proc/meminfo': `MemTotal:        ${1978 * 1024} kB\n`,
  '/proc/cpuinfo': 'processor\t: 0\n',
  '/etc/os-release': 'ID=debian\nVERSION_ID="12"\n',
};

describe('a YAML inventory (hosts.yaml) with children and group vars', () => {
  it('places node1 in kube_control_plane and reads the minimum from its vars: kubespray will stop', async () => {
    const hosts = [
      'all:',
      '  children:',
      '    k8s_cluster:',
      '      children:',
      '        kube_control_plane:',
      '          hosts:',
      '            node1:',
      '          vars:',
      '            minimal_master_memory_mb: 2048',
      '        kube_node:',
      '          hosts:',
      '            worker[1:2]:',
      '',
    ].join('\n');
    const root = await tree(base({ ...HOST_FILES, [`${INV_DIR}/hosts.yaml`]: hosts }));
    const r = await kubesprayReport(new Host({ root, live: true, runner }), desired(`${INV_DIR}/hosts.yaml`));
    expect(r.facts?.minimal_master_memory_mb).toBe(2048);
    expect(r.findings.filter((f) => f.level === 'error').map((f) => f.message)).toEqual([
      'kubespray will stop at "Stop if memory is too small for control plane nodes": node1 is in kube_control_plane and ansible_facts[\'memtotal_mb\'] 1978 < minimal_master_memory_mb 2048; add memory or move the node out of kube_control_plane before running kubespray',
    ]);
  });
});

describe('port 10250: data flow, never names', () => {
  const NODE_TASKS = `${KS}/${N}/tasks/main.yml`;
  it('a unit named by a result registered from a lookup of port 10250 and then stopped frees it', async () => {
    const files = base({
      [`${KS}/${N}/tasks/kubelet.yml`]: [
        '---',
        '- name: Find the owner',
        "  ansible.builtin.shell: ss -ltnpH 'sport = :10250' | sed -n 's/.*\"\\(.*\\)\".*/\\1/p'",
        '  register: holder',
        '  changed_when: false',
        '- name: Step aside',
        '  ansible.builtin.systemd:',
        '    name: "{{ holder.stdout }}.service"',
        '    state: stopped',
        '    enabled: false',
        '  when: holder.stdout | length > 0',
        '',
      ].join('\n'),
    });
    files[NODE_TASKS] = `${files[NODE_TASKS] as string}- name: Kubelet\n  import_tasks: kubelet.yml\n`;
    const { who } = await audit(files);
    expect(who.port_10250.who).toBe('kubespray');
    expect(who.port_10250.evidence.map((e) => `${e.line} ${e.status.runs}`)).toEqual(['6 at run time']);
  });

  it('a task whose name says 10250 but that stops a fixed unit frees nothing', async () => {
    const files = base();
    files[NODE_TASKS] =
      `${files[NODE_TASKS] as string}- name: Free port 10250 for kubelet\n  ansible.builtin.systemd:\n    name: some-agent\n    state: stopped\n`;
    expect((await audit(files)).who.port_10250.who).toBe('operator');
  });
});

describe('what cannot be evaluated is unknown, loudly', () => {
  it('a templated include whose variable is undefined makes the unproven verdicts unknown', async () => {
    const files = base();
    files[`${KS}/${N}/tasks/main.yml`] = `${files[`${KS}/${N}/tasks/main.yml`] as string}- name: Extra\n  include_tasks: "{{ node_extra_tasks }}.yml"\n`;
    const { who } = await audit(files);
    expect(whoFixesJson(who)).toMatchObject({ swap: 'kubespray', br_netfilter: 'kubespray', ip_forward: 'kubespray', port_10250: 'unknown' });
    expect(who.warnings).toContainEqual({
      file: `${N}/tasks/main.yml`,
      line: 10,
      expression: 'Extra',
      message: `port_10250: include_tasks {{ node_extra_tasks }}.yml cannot be evaluated ('node_extra_tasks' is undefined); not followed, and a task in it could fix it`,
    });
  });

  it('a condition reading an undefined variable makes the verdict unknown, naming file, line and expression', async () => {
    const { who } = await audit(
      base({
        [`${KS}/${P}/tasks/0080-system-configurations.yml`]:
          '---\n- name: Enable ip forwarding\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n  when: ipv4_stack | bool\n',
      }),
    );
    expect(who.ip_forward.who).toBe('unknown');
    expect(who.warnings).toContainEqual({
      file: `${P}/tasks/0080-system-configurations.yml`,
      line: 6,
      expression: 'ipv4_stack | bool',
      message: `ip_forward: whether ${P}/tasks/0080-system-configurations.yml:2 "Enable ip forwarding" runs cannot be evaluated: 'ipv4_stack' is undefined (bool)`,
    });
  });

  it('an unevaluable argument of a program that cannot free a port changes nothing; an unevaluable program does', async () => {
    const files = base();
    const node = `${KS}/${N}/tasks/main.yml`;
    files[node] = `${files[node] as string}- name: Copy resolv.conf\n  command: cp -f /etc/resolv.conf "{{ resolvconffile }}"\n`;
    expect((await audit(files)).who.port_10250.who).toBe('operator');
    files[node] = `${files[node] as string}- name: Run the configured tool\n  shell: "{{ port_tool }} 10250/tcp"\n`;
    const w = (await audit(files)).who;
    expect(w.port_10250.who).toBe('unknown');
    expect(w.warnings.map((x) => `${x.file}:${x.line} ${x.expression}`)).toEqual([`${N}/tasks/main.yml:12 {{ port_tool }} 10250/tcp`]);
  });

  it("include_role is followed into the role's tasks_from file, with its condition", async () => {
    const files = base({
      [`${KS}/roles/network_plugin/calico/tasks/check.yml`]: [
        '---',
        '- name: Get pool',
        '  command: "{{ bin_dir }}/calicoctl.sh get ipPool {{ calico_pool_name }} -o json"',
        '- name: Free the kubelet port',
        '  shell: fuser -k 10250/tcp',
        '',
      ].join('\n'),
      [`${KS}/roles/kubespray_defaults/defaults/main/main.yml`]:
        '---\nignore_assert_errors: false\nkubelet_fail_swap_on: true\nsysctl_file_path: /etc/sysctl.d/99-sysctl.conf\nbin_dir: /usr/local/bin\nkube_network_plugin: calico\n',
    });
    const node = `${KS}/${N}/tasks/main.yml`;
    files[node] =
      `${files[node] as string}- name: Run calico checks\n  include_role:\n    name: network_plugin/calico\n    tasks_from: check\n  when: kube_network_plugin == 'calico'\n`;
    const on = (await audit(files)).who;
    expect(on.port_10250.who).toBe('kubespray');
    expect(on.port_10250.evidence.map((e) => `${e.file}:${e.line}`)).toEqual(['roles/network_plugin/calico/tasks/check.yml:4']);
    expect(on.warnings).toEqual([]);
    files[node] = (files[node] as string).replace("kube_network_plugin == 'calico'", "kube_network_plugin == 'cilium'");
    expect((await audit(files)).who.port_10250.who).toBe('operator');
  });

  it('a memory minimum that cannot be evaluated is an unknown warning, not an info line', async () => {
    const root = await tree(base({ ...HOST_FILES, [`${KS}/${P}/defaults/main.yml`]: '---\nminimal_master_memory_mb: "{{ 1024 * memory_factor }}"\n' }));
    const r = await kubesprayReport(new Host({ root, live: true, runner }), desired(`${INV_DIR}/inventory.ini`));
    const unknown = r.findings.filter((f) => f.unknown).map((f) => f.message);
    expect(unknown).toContain(
      "memory preflight \"Stop if memory is too small for control plane nodes\" not checked: roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:2 ansible_facts['memtotal_mb'] >= minimal_master_memory_mb: minimal_master_memory_mb (roles/kubernetes/preinstall/defaults/main.yml:2): 'memory_factor' is undefined",
    );
    expect(r.facts).not.toHaveProperty('minimal_master_memory_mb');
  });

  it('a missing memory assert is a warning too', async () => {
    const root = await tree(base({ ...HOST_FILES, [`${KS}/${P}/tasks/0040-verify-settings.yml`]: '---\n- name: Something else\n  debug:\n    msg: hi\n' }));
    const r = await kubesprayReport(new Host({ root, live: true, runner }), desired(`${INV_DIR}/inventory.ini`));
    expect(r.findings.filter((f) => f.unknown && f.level === 'warning').map((f) => f.message)).toEqual([
      `no memory assert (memtotal_mb compared with a minimum) found in roles/kubernetes/preinstall (read: ${P}/tasks/main.yml, ${P}/tasks/0010-swapoff.yml, ${P}/tasks/0040-verify-settings.yml, ${P}/tasks/0080-system-configurations.yml): kubespray's memory preflight not checked`,
    ]);
  });

  it('--plan exits 2 while an unknown stands, 0 once it is resolved', async () => {
    const files = base({ '/etc/systemd/system/.keep': '' });
    files[`${KS}/${N}/tasks/main.yml`] = `${files[`${KS}/${N}/tasks/main.yml`] as string}- name: Extra\n  include_tasks: "{{ node_extra_tasks }}.yml"\n`;
    const root = await tree(files);
    const desiredFile = path.join(root, 'desired.yaml');
    buildTree(root, {
      'desired.yaml': `reports_dir: /root/ks/preflight\nkubespray:\n  dir: ${KS}\n  inventory: ${INV_DIR}/inventory.ini\n  node: node1\nresources: []\n`,
    });
    const io = (): { io: Io; out: () => string } => {
      let out = '';
      return {
        io: {
          stdout: { write: (s: string) => (out += s), isTTY: false },
          stderr: { write: () => true, isTTY: false },
          env: {},
          runner: async (cmd) => {
            throw new Error(`no command may run in this test, got ${cmd}`);
          },
        },
        out: () => out,
      };
    };
    const first = io();
    expect(await main(['--plan', '-f', desiredFile, '--root', root], first.io)).toBe(2);
    expect(first.out()).toContain('port_10250: unknown whether kubespray fixes it');
    expect(first.out()).toContain('No changes, but 2 kubespray findings could not be judged');
    buildTree(root, {
      [`${KS.slice(1)}/${N}/tasks/extra.yml`]: '---\n- name: Nothing here\n  debug:\n    msg: hi\n',
      [`${KS.slice(1)}/${N}/defaults/main.yml`]: 'node_extra_tasks: extra\n',
    });
    const second = io();
    expect(await main(['--plan', '-f', desiredFile, '--root', root], second.io)).toBe(0);
    expect(second.out()).not.toContain('unknown whether');
  });
});
