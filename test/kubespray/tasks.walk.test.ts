// The task walk, set_fact, include_role, preflight asserts and legacy group
// names against ansible-core itself: each case is a small role tree in
// kubespray's layout, cut from a real release (tag and path named) and
// rewritten the way a user would, run by ansible-playbook -c local with every
// module stubbed (test/helpers/ansible-walk-oracle.ts), and walked by the
// audit. Task by task, the audit must say what Ansible did, or `unknown`:
// a task the audit says runs must have run (not in check mode) with the
// arguments the audit templated; a task it says does not run must not have.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { KubesprayCheckout } from '../../src/kubespray/checkout.js';
import { parseInventory } from '../../src/kubespray/inventory.js';
import { preflightFindings, targetVarsReader } from '../../src/kubespray/report.js';
import { planExitCode } from '../../src/reconcile/run.js';
import type { Facts } from '../../src/facts/linux.js';
import { auditWhoFixes, evaluateAuditedRoles, statusToday } from '../../src/kubespray/who-fixes.js';
import { auditMemory } from '../../src/kubespray/preflight.js';
import { applyLegacyGroups } from '../../src/kubespray/legacy-groups.js';
import { isTemplate } from '../../src/ansible/jinja.js';
import { runWalkOracle, STUBBED } from '../helpers/ansible-walk-oracle.js';
import type { OracleRecord } from '../helpers/ansible-walk-oracle.js';
import { buildTree } from '../helpers/tree.js';
import type { Tree } from '../helpers/tree.js';

const INV = [
  '[kube_control_plane]',
  'node1 ansible_connection=local',
  '',
  '[kube_node]',
  'node1',
  '',
  '[k8s_cluster:children]',
  'kube_control_plane',
  'kube_node',
  '',
].join('\n');
const FACTS = {
  memtotal_mb: 1024,
  processor_vcpus: 2,
  distribution: 'Debian',
  distribution_version: '12.5',
  distribution_major_version: '12',
  os_family: 'Debian',
  kernel: '6.1.0-18-amd64',
};
const P = 'roles/kubernetes/preinstall';
const N = 'roles/kubernetes/node';

export interface Case {
  name: string;
  /** Where the tasks were cut from. */
  source: string;
  /** Files under the checkout (ks/). */
  ks: Record<string, string>;
  /** Files beside the inventory (inv/), e.g. group_vars. */
  inv?: Record<string, string>;
  inventory?: string;
  memtotal?: number;
  /** How many stubbed tasks the audit must leave unknown (each one names file, line and keyword). */
  unknown: number;
  /** A playbook imported before the roles (legacy_groups.yml). */
  prelude?: string;
  /** The inventory host the play runs on (node1 unless given). */
  host?: string;
  /** Setup facts beside FACTS. */
  facts?: Record<string, unknown>;
}

interface Row {
  at: string;
  module: string;
  audit: string;
  ansible: 'acted' | 'not';
  argsAudit?: Record<string, unknown>;
  argsAnsible?: Record<string, unknown> | null;
  unknownReason?: string;
}

// Arguments compared as the module receives them (copy's content becomes a transferred src, so it is not among them).
const ARG_KEYS = ['name', 'value', 'state', 'masked', '_raw_params', 'dest', 'fstype', 'sysctl_file', 'path'];

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});

async function compare(c: Case): Promise<{ rows: Row[]; oracle: OracleRecord[]; exitCode: number; audit: () => ReturnType<typeof auditMemory> }> {
  const tree: Tree = { 'inv/hosts.ini': c.inventory ?? INV };
  for (const [p, t] of Object.entries(c.ks)) tree[`ks/${p}`] = t;
  for (const [p, t] of Object.entries(c.inv ?? {})) tree[`inv/${p}`] = t;
  const roles = ['kubernetes/preinstall', 'kubernetes/node'].filter((r) => `roles/${r}/tasks/main.yml` in c.ks);
  const facts = { ...FACTS, ...c.facts, memtotal_mb: c.memtotal ?? FACTS.memtotal_mb };
  const hostName = c.host ?? 'node1';
  const oracle = await runWalkOracle(tree, { roles, inventory: 'inv/hosts.ini', host: hostName, facts, prelude: c.prelude });
  expect(oracle.exitCode === 0 || oracle.exitCode === 2, oracle.stdout).toBe(true);

  const root = await mkdtemp(path.join(tmpdir(), 'ks-walk-ours-'));
  roots.push(root);
  buildTree(root, tree);
  const host = new Host({ root });
  const ck = new KubesprayCheckout(host, '/ks');
  const inventory = parseInventory(await readFile(path.join(root, 'inv/hosts.ini'), 'latin1'), '/inv/hosts.ini');
  if (c.prelude) await applyLegacyGroups(ck, inventory);
  const opts = { facts, host: { inventory, inventoryDir: '/inv', host: hostName }, reader: targetVarsReader(host) };
  const { evaluated } = await evaluateAuditedRoles(ck, opts, roles);
  const rows: Row[] = [];
  for (const e of evaluated) {
    if (!STUBBED.includes(e.task.module)) continue;
    const at = `${e.task.ref.file}:${e.task.ref.line}`;
    const recs = oracle.records.filter((r) => r.file === e.task.ref.file && r.line === e.task.ref.line);
    const acted = recs.find((r) => r.status === 'ok' && r.check_mode === false);
    // Today's run, as ansible-playbook runs it: a failing assert ends the host before the task.
    const today = statusToday(e);
    const row: Row = { at, module: e.task.module, audit: today.runs, ansible: acted ? 'acted' : 'not' };
    if (today.runs === 'unknown') row.unknownReason = today.reason;
    if (today.runs === 'yes' && acted && !e.loop) {
      row.argsAudit = Object.fromEntries(ARG_KEYS.filter((k) => k in e.args && !isTemplate(e.args[k])).map((k) => [k, e.args[k]]));
      row.argsAnsible = Object.fromEntries(Object.keys(row.argsAudit).map((k) => [k, acted.args?.[k]]));
    }
    rows.push(row);
  }
  return { rows, oracle: oracle.records, exitCode: oracle.exitCode, audit: () => auditMemory(ck, opts) };
}

/** The audit agrees with Ansible on every stubbed task, or says unknown (exactly `c.unknown` times). */
export async function expectAgreement(c: Case, compared?: Awaited<ReturnType<typeof compare>>): Promise<Row[]> {
  const { rows } = compared ?? (await compare(c));
  const wrong = rows.filter((r) => (r.audit === 'yes' && r.ansible !== 'acted') || (r.audit === 'no' && r.ansible !== 'not'));
  expect(wrong, JSON.stringify(rows, null, 1)).toEqual([]);
  for (const r of rows) if (r.argsAudit) expect(r.argsAudit, r.at).toEqual(r.argsAnsible);
  const unknown = rows.filter((r) => r.audit === 'unknown' || r.audit === 'at run time');
  expect(unknown.length, JSON.stringify(rows, null, 1)).toBe(c.unknown);
  if (process.env.WALK_ORACLE_ROWS) console.log(c.name, JSON.stringify(rows.map((r) => [r.at, r.module, r.audit, r.ansible, r.argsAudit])));
  return rows;
}

// ---- real tasks the cases rewrite -----------------------------------------------

// v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml (systemd_service written short: the oracle stubs short names).
const SWAPOFF = `- name: Remove swapfile from /etc/fstab
  ansible.posix.mount:
    name: "{{ item }}"
    fstype: swap
    state: absent
  loop:
    - swap
    - none

- name: Mask swap.target (persist swapoff)
  systemd_service:
    name: swap.target
    masked: true

- name: Disable swap
  command: /sbin/swapoff -a
`;
// v2.25.0 roles/kubernetes/node/tasks/main.yml:82-93
const BR_NETFILTER = `- name: Enable br_netfilter module
  community.general.modprobe:
    name: br_netfilter
    state: present

- name: Persist br_netfilter module
  copy:
    dest: /etc/modules-load.d/kubespray-br_netfilter.conf
    content: br_netfilter
    mode: "0644"
`;
// v2.25.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml:72-78
const IP_FORWARD = `- name: Enable ip forwarding
  ansible.posix.sysctl:
    sysctl_file: "{{ sysctl_file_path }}"
    name: net.ipv4.ip_forward
    value: "1"
    state: present
    reload: yes
`;
const indent = (s: string, n: number) =>
  s
    .split('\n')
    .map((l) => (l ? ' '.repeat(n) + l : l))
    .join('\n');
const PRE_DEFAULTS = {
  [`${P}/defaults/main.yml`]:
    'sysctl_file_path: /etc/sysctl.d/99-sysctl.conf\nminimal_master_memory_mb: 1500\nminimal_node_memory_mb: 1024\nignore_assert_errors: false\n',
};

export const KEYWORD_CASES: Case[] = [
  {
    name: 'tags: [never] on the swapoff task, never+always on the mask, "never" as a string on the fstab one',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: SWAPOFF.replace('  command: /sbin/swapoff -a\n', '  command: /sbin/swapoff -a\n  tags: [never]\n')
        .replace('    masked: true\n', '    masked: true\n  tags:\n    - never\n    - always\n')
        .replace('    - none\n', '    - none\n  tags: "bootstrap,never"\n'),
    },
    unknown: 0,
  },
  {
    name: 'a templated tag that evaluates to never, and never on an import_tasks and on an include_tasks',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml, 0080-system-configurations.yml; roles/kubernetes/node/tasks/main.yml',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/defaults/main.yml`]: PRE_DEFAULTS[`${P}/defaults/main.yml`]! + 'swap_tag: never\n',
      [`${P}/tasks/main.yml`]: `- import_tasks: 0010-swapoff.yml\n  tags: never\n- include_tasks: 0080-system-configurations.yml\n  tags: [never]\n- name: Disable swap again\n  command: /sbin/swapoff -a\n  tags: "{{ swap_tag }}"\n`,
      [`${P}/tasks/0010-swapoff.yml`]: SWAPOFF,
      [`${P}/tasks/0080-system-configurations.yml`]: IP_FORWARD,
      [`${N}/tasks/main.yml`]: BR_NETFILTER,
    },
    unknown: 0,
  },
  {
    name: 'meta: end_host after the swap tasks when the host is a control plane node; a false end_play before them',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml, 0080-system-configurations.yml',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- name: Not yet\n  meta: end_play\n  when: ansible_distribution == "Ubuntu"\n${SWAPOFF}\n- name: Control plane nodes stop here\n  meta: end_host\n  when: inventory_hostname in groups['kube_control_plane']\n${IP_FORWARD}`,
    },
    unknown: 0,
  },
  {
    name: 'meta: end_batch inside an included file ends the role for the host; end_host under a block whose when is false does not',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml, 0080-system-configurations.yml',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- block:\n    - meta: end_host\n  when: ansible_memtotal_mb < 512\n- include_tasks: stop.yml\n${IP_FORWARD}`,
      [`${P}/tasks/stop.yml`]: `${SWAPOFF}\n- meta: end_batch\n`,
    },
    unknown: 0,
  },
  {
    name: 'meta: end_host whose when reads a registered result: what follows is decided at run time',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml (stat of /etc/fstab registered as fstab_file)',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- name: Check if /etc/fstab exists\n  stat:\n    path: /etc/fstab\n  register: fstab_file\n- meta: end_host\n  when: not fstab_file.stat.exists\n${SWAPOFF}`,
    },
    // The three swap tasks; stat itself runs.
    unknown: 3,
  },
  {
    name: 'check_mode: true on a task, on a block and on import_tasks; check_mode: false and an include apply: check_mode',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml, 0080-system-configurations.yml; roles/kubernetes/node/tasks/main.yml',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- block:\n${indent(SWAPOFF, 4)}  check_mode: true\n- import_tasks: sysctl.yml\n  check_mode: yes\n- name: Disable swap for real\n  command: /sbin/swapoff -a\n  check_mode: false\n`,
      [`${P}/tasks/sysctl.yml`]: IP_FORWARD,
      [`${N}/tasks/main.yml`]: `- include_tasks:\n    file: br.yml\n    apply:\n      check_mode: true\n- name: Persist again\n  copy:\n    dest: /etc/modules-load.d/k8s.conf\n    content: br_netfilter\n  check_mode: "{{ 1 == 2 }}"\n`,
      [`${N}/tasks/br.yml`]: BR_NETFILTER,
    },
    unknown: 0,
  },
  {
    name: 'keywords the audit does not model: delegate_to, run_once, module_defaults on a block, connection on import_tasks',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml, 0080-system-configurations.yml; roles/kubernetes/node/tasks/main.yml',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `${SWAPOFF.replace('  command: /sbin/swapoff -a\n', '  command: /sbin/swapoff -a\n  delegate_to: node2\n').replace('    masked: true\n', '    masked: true\n  run_once: true\n')}- block:\n${indent(IP_FORWARD, 4)}  module_defaults:\n    ansible.posix.sysctl:\n      sysctl_set: true\n`,
      [`${N}/tasks/main.yml`]: `- import_tasks: br.yml\n  connection: local\n`,
      [`${N}/tasks/br.yml`]: BR_NETFILTER,
    },
    // Two hosts: which one run_once picks depends on the play's hosts and --limit.
    inventory: INV.replace('node1\n\n[k8s_cluster', 'node1\nnode2 ansible_connection=local\n\n[k8s_cluster'),
    // swapoff (delegate_to), mask (run_once), ip_forward (module_defaults), modprobe and copy (connection).
    unknown: 5,
  },
  {
    name: 'run_once on an inventory of one host runs on that host (on a task and a block); delegate_to the host itself runs it there',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml, 0080-system-configurations.yml',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- block:\n${indent(SWAPOFF, 4)}  run_once: true\n${IP_FORWARD}  run_once: yes\n  delegate_to: "{{ groups['kube_control_plane'][0] }}"\n`,
    },
    unknown: 0,
  },
];

describe('task keywords, compared with ansible-playbook', () => {
  it('check_mode on an include_tasks: ansible-playbook refuses the play, and the audit refuses the include in the same words and keeps no verdict', async () => {
    const tree: Tree = {
      'inv/hosts.ini': INV,
      [`ks/${P}/defaults/main.yml`]: PRE_DEFAULTS[`${P}/defaults/main.yml`]!,
      [`ks/${P}/tasks/main.yml`]: '- include_tasks: 0010-swapoff.yml\n  check_mode: true\n',
      [`ks/${P}/tasks/0010-swapoff.yml`]: SWAPOFF,
    };
    const refusal = "'check_mode' is not a valid attribute for a TaskInclude";
    const oracle = await runWalkOracle(tree, { roles: ['kubernetes/preinstall'], inventory: 'inv/hosts.ini', host: 'node1', facts: FACTS });
    expect(oracle.stdout).toContain(refusal);
    expect(oracle.records).toEqual([]);
    const root = await mkdtemp(path.join(tmpdir(), 'ks-walk-ours-'));
    roots.push(root);
    buildTree(root, tree);
    const ck = new KubesprayCheckout(new Host({ root }), '/ks');
    const opts = { facts: FACTS, host: { inventory: parseInventory(INV, '/inv/hosts.ini'), inventoryDir: '/inv', host: 'node1' } };
    const { evaluated, issues } = await evaluateAuditedRoles(ck, opts, ['kubernetes/preinstall']);
    // Nothing ran, so the audit may claim no task runs; the include (line 1) is named with ansible-core's words.
    expect(evaluated).toEqual([]);
    expect(issues).toEqual([
      { ref: { file: `${P}/tasks/main.yml`, line: 1, name: '' }, message: `ansible-core refuses this task: ${refusal}`, unfollowed: true, refused: true },
    ]);
    const who = await auditWhoFixes(ck, opts);
    for (const problem of ['swap', 'br_netfilter', 'ip_forward', 'port_10250'] as const) {
      expect(who[problem].who, problem).toBe('unknown');
      expect(who[problem].reason, problem).toBe(`${P}/tasks/main.yml:1 "": ansible-core refuses this task: ${refusal}; ansible-playbook stops there`);
    }
  }, 120_000);
  it('an include whose apply ansible-core cannot load as a Block: ansible-playbook stops at the include with none of its tasks run, and the audit keeps no verdict', async () => {
    const cases: [string, string][] = [
      ['{vars: bad}', 'Vars in a Block must be specified as a dictionary, or a list of dictionaries'],
      ["{vars: [{'1a': 1}]}", "Invalid variable name in vars specified for Block: '1a' is not a valid variable name"],
      ['{bogus: 1}', "'bogus' is not a valid attribute for a Block"],
      ['{loop_control: {}}', "'loop_control' is not a valid attribute for a Block"],
      ['{tags: 5}', 'tags must be specified as a list'],
      ['{rescue: [{debug: msg=x}]}', "'rescue' keyword cannot be used without 'block'"],
    ];
    for (const [apply, refusal] of cases) {
      const tree: Tree = {
        'inv/hosts.ini': INV,
        [`ks/${P}/defaults/main.yml`]: PRE_DEFAULTS[`${P}/defaults/main.yml`]!,
        [`ks/${P}/tasks/main.yml`]: `- include_tasks:\n    file: 0010-swapoff.yml\n    apply: ${apply}\n- name: After\n  command: /sbin/swapoff -a\n`,
        [`ks/${P}/tasks/0010-swapoff.yml`]: SWAPOFF,
      };
      const oracle = await runWalkOracle(tree, { roles: ['kubernetes/preinstall'], inventory: 'inv/hosts.ini', host: 'node1', facts: FACTS });
      expect(oracle.stdout, apply).toContain(refusal);
      // The include itself runs (for a run-time tags error it is recorded failed); nothing in it or after it does.
      expect(
        oracle.records.filter((r) => r.action !== 'fake_facts' && r.action !== 'include_tasks'),
        apply,
      ).toEqual([]);
      const root = await mkdtemp(path.join(tmpdir(), 'ks-walk-ours-'));
      roots.push(root);
      buildTree(root, tree);
      const ck = new KubesprayCheckout(new Host({ root }), '/ks');
      const opts = { facts: FACTS, host: { inventory: parseInventory(INV, '/inv/hosts.ini'), inventoryDir: '/inv', host: 'node1' } };
      const who = await auditWhoFixes(ck, opts);
      for (const problem of ['swap', 'br_netfilter', 'ip_forward', 'port_10250'] as const) {
        expect(who[problem].who, `${apply} ${problem}`).toBe('unknown');
        expect(who[problem].reason, `${apply} ${problem}`).toBe(
          `${P}/tasks/main.yml:1 "": ansible-core refuses this task: ${refusal} (in apply, loaded as a Block when the include runs); ansible-playbook stops there`,
        );
      }
    }
    // An apply ansible-core loads: its vars reach the included tasks, and swapoff runs.
    const good: Tree = {
      'inv/hosts.ini': INV,
      [`ks/${P}/defaults/main.yml`]: PRE_DEFAULTS[`${P}/defaults/main.yml`]!,
      [`ks/${P}/tasks/main.yml`]: '- include_tasks:\n    file: 0010-swapoff.yml\n    apply: {vars: [{v: 1}, {w: 2}], tags: [x]}\n',
      [`ks/${P}/tasks/0010-swapoff.yml`]: SWAPOFF,
    };
    const oracle = await runWalkOracle(good, { roles: ['kubernetes/preinstall'], inventory: 'inv/hosts.ini', host: 'node1', facts: FACTS });
    expect(oracle.records.filter((r) => r.file === `${P}/tasks/0010-swapoff.yml`).length).toBeGreaterThan(0);
    const root = await mkdtemp(path.join(tmpdir(), 'ks-walk-ours-'));
    roots.push(root);
    buildTree(root, good);
    const ck = new KubesprayCheckout(new Host({ root }), '/ks');
    const { issues } = await evaluateAuditedRoles(
      ck,
      { facts: FACTS, host: { inventory: parseInventory(INV, '/inv/hosts.ini'), inventoryDir: '/inv', host: 'node1' } },
      ['kubernetes/preinstall'],
    );
    expect(issues).toEqual([]);
  }, 240_000);

  it('an import with a loop: ansible-playbook refuses the play as it loads it, and the audit keeps no verdict; a null loop is no loop', async () => {
    const cases: [string, string][] = [
      ['- import_tasks: 0010-swapoff.yml\n  loop: [1]\n', "You cannot use loops on 'import_tasks' statements. You should use 'include_tasks' instead."],
      [
        '- ansible.builtin.import_tasks: 0010-swapoff.yml\n  with_items: [1]\n',
        "You cannot use loops on 'import_tasks' statements. You should use 'include_tasks' instead.",
      ],
      ['- import_role:\n    name: kubernetes/node\n  loop: [1]\n', "You cannot use loops on 'import_role' statements. You should use 'include_role' instead."],
    ];
    const tree = (main: string): Tree => ({
      'inv/hosts.ini': INV,
      [`ks/${P}/defaults/main.yml`]: PRE_DEFAULTS[`${P}/defaults/main.yml`]!,
      [`ks/${P}/tasks/main.yml`]: `${main}- name: After\n  command: /sbin/swapoff -a\n`,
      [`ks/${P}/tasks/0010-swapoff.yml`]: SWAPOFF,
      [`ks/${N}/tasks/main.yml`]: SWAPOFF,
    });
    const opts = { facts: FACTS, host: { inventory: parseInventory(INV, '/inv/hosts.ini'), inventoryDir: '/inv', host: 'node1' } };
    const ours = async (t: Tree) => {
      const root = await mkdtemp(path.join(tmpdir(), 'ks-walk-ours-'));
      roots.push(root);
      buildTree(root, t);
      return auditWhoFixes(new KubesprayCheckout(new Host({ root }), '/ks'), opts);
    };
    for (const [main, refusal] of cases) {
      const oracle = await runWalkOracle(tree(main), { roles: ['kubernetes/preinstall'], inventory: 'inv/hosts.ini', host: 'node1', facts: FACTS });
      expect(oracle.stdout, main).toContain(refusal);
      expect(oracle.records, main).toEqual([]);
      const who = await ours(tree(main));
      for (const problem of ['swap', 'br_netfilter', 'ip_forward', 'port_10250'] as const)
        expect(who[problem].reason, `${main} ${problem}`).toBe(
          `${P}/tasks/main.yml:1 "": ansible-core refuses this task: ${refusal}; ansible-playbook stops there`,
        );
    }
    const nullLoop = tree('- import_tasks: 0010-swapoff.yml\n  loop: null\n');
    const oracle = await runWalkOracle(nullLoop, { roles: ['kubernetes/preinstall'], inventory: 'inv/hosts.ini', host: 'node1', facts: FACTS });
    expect(oracle.records.filter((r) => r.file === `${P}/tasks/0010-swapoff.yml`).length).toBeGreaterThan(0);
    expect((await ours(nullLoop)).swap.who).toBe('kubespray');
  }, 240_000);

  for (const c of KEYWORD_CASES) it(c.name, async () => void (await expectAgreement(c)), 120_000);
});

// ---- set_fact ----------------------------------------------------------------------

export const SET_FACT_CASES: Case[] = [
  {
    name: 'set_fact of "no", "False" and "{{ \'yes\' }}" gives booleans: a when on them skips or runs as Ansible does',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0020-set_facts.yml (set_fact) and 0010-swapoff.yml',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- name: Decide swap handling\n  set_fact:\n    swap_off_now: "no"\n    swap_mask: "False"\n    swap_fstab: "{{ 'yes' }}"\n${SWAPOFF.replace('  command: /sbin/swapoff -a\n', '  command: /sbin/swapoff -a\n  when: swap_off_now\n').replace('    masked: true\n', '    masked: true\n  when: swap_mask\n').replace('    - none\n', '    - none\n  when: swap_fstab\n')}`,
    },
    unknown: 0,
  },
  {
    name: "set_fact outranks the task's own vars afterwards: sysctl_file_path from set_fact, not from vars:",
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml:72-78',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- set_fact:\n    sysctl_file_path: /etc/sysctl.d/99-kubernetes.conf\n${IP_FORWARD}  vars:\n    sysctl_file_path: /etc/sysctl.conf\n- block:\n    - name: Disable swap\n      command: "/sbin/swapoff {{ swap_args }}"\n  vars:\n    swap_args: --all\n- set_fact:\n    swap_args: -a\n- name: Disable swap again\n  command: "/sbin/swapoff {{ swap_args }}"\n  vars:\n    swap_args: --all\n`,
    },
    unknown: 0,
  },
  {
    name: "a fact set in preinstall's play outranks node's task vars in the next play",
    source: 'v2.25.0 roles/kubernetes/node/tasks/main.yml:82-93',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- set_fact:\n    br_module: br_netfilter\n    persist_br: "true"\n`,
      [`${N}/tasks/main.yml`]: `- name: Enable br_netfilter module\n  community.general.modprobe:\n    name: "{{ br_module }}"\n    state: present\n  vars:\n    br_module: nf_conntrack\n- name: Persist br_netfilter module\n  copy:\n    dest: /etc/modules-load.d/kubespray-br_netfilter.conf\n    content: br_netfilter\n  when: persist_br is sameas true\n`,
    },
    unknown: 0,
  },
];

describe('set_fact, compared with ansible-playbook', () => {
  for (const c of SET_FACT_CASES) it(c.name, async () => void (await expectAgreement(c)), 120_000);
});

// ---- include_role / import_role -----------------------------------------------------------

const HELPER = 'roles/sysctl_helper';
export const ROLE_CASES: Case[] = [
  {
    name: "include_role tasks_from: the included role's own defaults, not the including role's",
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml:72-78, moved into a role of its own',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- include_role:\n    name: sysctl_helper\n    tasks_from: forward\n${IP_FORWARD.replace('Enable ip forwarding', 'Enable ip forwarding in preinstall')}`,
      [`${HELPER}/defaults/main.yml`]: 'sysctl_file_path: /etc/sysctl.d/50-helper.conf\n',
      [`${HELPER}/tasks/forward.yml`]: IP_FORWARD,
      [`${HELPER}/tasks/main.yml`]: '- debug: msg=unused\n',
    },
    unknown: 0,
  },
  {
    name: "import_role vars_from: the role's vars file beats its defaults and the including role's defaults",
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml:72-78 and 0010-swapoff.yml',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- import_role:\n    name: sysctl_helper\n    vars_from: custom.yml\n`,
      [`${HELPER}/defaults/main.yml`]: 'sysctl_file_path: /etc/sysctl.d/50-helper.conf\nswapoff_cmd: /bin/false\n',
      [`${HELPER}/vars/custom.yml`]: 'sysctl_file_path: /etc/sysctl.d/60-custom.conf\n',
      [`${HELPER}/vars/main.yml`]: 'swapoff_cmd: /sbin/swapoff -a\n',
      [`${HELPER}/tasks/main.yml`]: `${IP_FORWARD}- name: Disable swap\n  command: "{{ swapoff_cmd }}"\n`,
    },
    unknown: 0,
  },
  {
    name: "include_role defaults_from: the including role's vars/main outrank the included role's defaults; role_name is the included role",
    source: 'v2.25.0 roles/kubernetes/node/tasks/main.yml:82-93, moved into a role of its own',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: '- debug: msg=nothing\n',
      [`${N}/vars/main.yml`]: 'modules_load_dir: /etc/modules-load.d\n',
      [`${N}/tasks/main.yml`]: `- include_role:\n    name: br_helper\n    defaults_from: alt\n`,
      ['roles/br_helper/defaults/alt.yml']: 'modules_load_dir: /usr/lib/modules-load.d\nbr_name: br_netfilter\n',
      ['roles/br_helper/defaults/main.yml']: 'br_name: nf_conntrack\n',
      ['roles/br_helper/tasks/main.yml']: `- name: Enable br_netfilter module\n  community.general.modprobe:\n    name: "{{ br_name }}"\n    state: present\n- name: Persist br_netfilter module\n  copy:\n    dest: "{{ modules_load_dir }}/{{ role_name }}.conf"\n    content: br_netfilter\n`,
    },
    unknown: 0,
  },
];

// v2.23.0 playbooks/cluster.yml:20-29, the play that runs preinstall (the same roles in v2.20 .. master).
const PREINSTALL_PLAY = `- name: Prepare for etcd install
  hosts: k8s_cluster:etcd
  gather_facts: False
  roles:
    - { role: kubespray_defaults }
    - { role: kubernetes/preinstall, tags: preinstall }
    - { role: "container-engine", tags: "container-engine", when: deploy_container_engine }
    - { role: download, tags: download, when: "not skip_downloads" }
`;
ROLE_CASES.push({
  name: 'vars: on include_role and include_tasks are include params (over set_fact, also one set inside); on import_role they are task vars (under it)',
  source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml:72-78, moved into a role of its own and into a task file',
  ks: {
    ...PRE_DEFAULTS,
    [`${P}/tasks/main.yml`]: [
      '- set_fact:\n    sysctl_file_path: /etc/sysctl.d/10-set-fact.conf',
      '- include_role:\n    name: sysctl_helper\n  vars:\n    sysctl_file_path: /etc/sysctl.d/20-include-role.conf',
      '- import_role:\n    name: sysctl_helper\n    tasks_from: again\n  vars:\n    sysctl_file_path: /etc/sysctl.d/30-import-role.conf',
      '- include_tasks: forward.yml\n  vars:\n    sysctl_file_path: /etc/sysctl.d/40-include-tasks.conf',
      '',
    ].join('\n'),
    [`${P}/tasks/forward.yml`]: IP_FORWARD,
    [`${HELPER}/tasks/main.yml`]: `${IP_FORWARD}- set_fact:\n    sysctl_file_path: /etc/sysctl.d/50-inner-set-fact.conf\n${IP_FORWARD.replace('Enable ip forwarding', 'Enable ip forwarding after set_fact')}`,
    [`${HELPER}/tasks/again.yml`]: IP_FORWARD.replace('Enable ip forwarding', 'Enable ip forwarding imported'),
  },
  unknown: 0,
});
ROLE_CASES.push({
  name: 'vars: on the old include: (removed in ansible-core 2.16) are include params as on include_tasks: they outrank an earlier set_fact',
  source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml:72-78, moved into a task file',
  ks: {
    ...PRE_DEFAULTS,
    [`${P}/tasks/main.yml`]: [
      '- set_fact:\n    sysctl_file_path: /etc/sysctl.d/10-set-fact.conf',
      '- include: forward.yml\n  vars:\n    sysctl_file_path: /etc/sysctl.d/60-include.conf',
      '',
    ].join('\n'),
    [`${P}/tasks/forward.yml`]: IP_FORWARD,
  },
  unknown: 0,
});
ROLE_CASES.push({
  name: "the other roles of the play (container-engine with its dependency, download): their defaults are seen, the running role's own win",
  source:
    'v2.23.0 playbooks/cluster.yml:20-29; roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:287-293 (containerd_version, download_localhost), 0080-system-configurations.yml',
  ks: {
    ...PRE_DEFAULTS,
    'playbooks/cluster.yml': PREINSTALL_PLAY,
    'roles/kubespray_defaults/defaults/main.yml': 'deploy_container_engine: true\nskip_downloads: false\ncontainer_manager: containerd\n',
    'roles/kubespray_defaults/tasks/main.yml': '- debug: msg=defaults\n',
    [`${P}/tasks/main.yml`]: `${IP_FORWARD}- name: Pin containerd\n  command: "echo {{ containerd_version }} {{ download_dir }}"\n  when: not download_localhost\n- name: Never with download_run_once\n  command: /bin/false\n  when: download_run_once\n`,
    'roles/container-engine/meta/main.yml': 'dependencies:\n  - role: container-engine/containerd\n    when: container_manager == "containerd"\n',
    'roles/container-engine/tasks/main.yml': '- debug: msg=engine\n',
    'roles/container-engine/containerd/defaults/main.yml': 'containerd_version: 1.6.21\ndownload_dir: /tmp/containerd\n',
    'roles/container-engine/containerd/tasks/main.yml': '- debug: msg=containerd\n',
    'roles/download/defaults/main.yml':
      'download_localhost: false\ndownload_run_once: false\ndownload_dir: /tmp/releases\nsysctl_file_path: /etc/sysctl.d/70-download.conf\n',
    'roles/download/tasks/main.yml': '- debug: msg=download\n',
  },
  unknown: 0,
});

describe('include_role and import_role, compared with ansible-playbook', () => {
  for (const c of ROLE_CASES) it(c.name, async () => void (await expectAgreement(c)), 120_000);
});

// ---- legacy group names ---------------------------------------------------------------

// v2.20.0 legacy_groups.yml, the three plays that matter here (kube-master, kube-node, k8s-cluster).
const LEGACY = `---
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
  tags: always
  tasks:
    - name: add nodes to kube_node group
      group_by:
        key: 'kube_node'

- name: Add k8s-cluster nodes to k8s_cluster
  hosts: k8s-cluster
  gather_facts: false
  tags: always
  tasks:
    - name: add nodes to k8s_cluster group
      group_by:
        key: 'k8s_cluster'
`;
const LEGACY_INV = [
  '[kube-master]',
  'node1 ansible_connection=local',
  '',
  '[kube-node]',
  'node2 ansible_connection=local',
  '',
  '[k8s-cluster:children]',
  'kube-master',
  'kube-node',
  '',
].join('\n');
// v2.20.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml style conditions on the new names.
const ON_CONTROL_PLANE = `  when: inventory_hostname in groups['kube_control_plane']\n`;

export const LEGACY_CASES: Case[] = [
  {
    name: 'an old inventory (kube-master): the control plane task runs, because legacy_groups.yml adds the host to kube_control_plane',
    source: 'v2.20.0 legacy_groups.yml; v2.20.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml (ip_forward)',
    ks: { ...PRE_DEFAULTS, 'legacy_groups.yml': LEGACY, [`${P}/tasks/main.yml`]: IP_FORWARD + ON_CONTROL_PLANE },
    inventory: LEGACY_INV,
    prelude: 'legacy_groups.yml',
    unknown: 0,
  },
  {
    name: 'group_vars/kube_control_plane.yml applies to a kube-master host once group_by has run',
    source: 'v2.20.0 legacy_groups.yml; 0080-system-configurations.yml',
    ks: { ...PRE_DEFAULTS, 'legacy_groups.yml': LEGACY, [`${P}/tasks/main.yml`]: IP_FORWARD },
    inv: { 'group_vars/kube_control_plane.yml': 'sysctl_file_path: /etc/sysctl.d/70-control-plane.conf\n' },
    inventory: LEGACY_INV,
    prelude: 'legacy_groups.yml',
    unknown: 0,
  },
  {
    name: "'k8s_cluster' in group_names holds and 'kube_node' in group_names does not for a kube-master host",
    source: 'v2.20.0 legacy_groups.yml; v2.20.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml',
    ks: {
      ...PRE_DEFAULTS,
      'legacy_groups.yml': LEGACY,
      [`${P}/tasks/main.yml`]: SWAPOFF.replace(
        '  command: /sbin/swapoff -a\n',
        '  command: /sbin/swapoff -a\n  when: "\'k8s_cluster\' in group_names"\n',
      ).replace('    masked: true\n', '    masked: true\n  when: "\'kube_node\' in group_names"\n'),
    },
    inventory: LEGACY_INV,
    prelude: 'legacy_groups.yml',
    unknown: 0,
  },
];

describe('legacy group names, compared with ansible-playbook', () => {
  for (const c of LEGACY_CASES) it(c.name, async () => void (await expectAgreement(c)), 120_000);
});

// ---- preflight asserts -------------------------------------------------------------------

/** Every assert of the preinstall role: the audit's pass/fail/skipped (and message) is Ansible's, or unknown (exactly c.unknown). */
async function expectAssertAgreement(c: Case): Promise<{ at: string; audit: string; ansible: string }[]> {
  const tree: Tree = { 'inv/hosts.ini': c.inventory ?? INV };
  for (const [p, t] of Object.entries(c.ks)) tree[`ks/${p}`] = t;
  for (const [p, t] of Object.entries(c.inv ?? {})) tree[`inv/${p}`] = t;
  const facts = { ...FACTS, service_mgr: 'systemd', memtotal_mb: c.memtotal ?? FACTS.memtotal_mb };
  const oracle = await runWalkOracle(tree, { roles: ['kubernetes/preinstall'], inventory: 'inv/hosts.ini', host: 'node1', facts });
  const root = await mkdtemp(path.join(tmpdir(), 'ks-walk-ours-'));
  roots.push(root);
  buildTree(root, tree);
  const host = new Host({ root });
  const ck = new KubesprayCheckout(host, '/ks');
  const inventory = parseInventory(c.inventory ?? INV, '/inv/hosts.ini');
  const audit = await auditMemory(ck, { facts, host: { inventory, inventoryDir: '/inv', host: 'node1' }, reader: targetVarsReader(host) });
  const rows = audit.asserts.map((a) => {
    const recs = oracle.records.filter((r) => r.file === a.ref.file && r.line === a.ref.line);
    const failed = recs.find((r) => r.status === 'failed');
    const ansible = failed ? `fail: ${String(failed.msg)}` : recs.some((r) => r.status === 'ok') ? 'pass' : 'skipped';
    const ours = a.result === 'fail' ? `fail: ${a.failed!.msg}` : a.result;
    return { at: `${a.ref.file}:${a.ref.line}`, audit: ours, ansible, reason: a.reason };
  });
  expect(rows.length).toBeGreaterThan(0);
  expect(
    rows.filter((r) => r.audit !== 'unknown' && r.audit !== r.ansible),
    JSON.stringify(rows, null, 1),
  ).toEqual([]);
  expect(rows.filter((r) => r.audit === 'unknown').length, JSON.stringify(rows, null, 1)).toBe(c.unknown);
  return rows;
}

// v2.25.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:20-40, 66-78 (ignore_errors added so every assert runs).
const VERIFY = `- name: Stop if non systemd OS type
  assert:
    that: ansible_service_mgr == "systemd"
  when: not ignore_assert_errors
  ignore_errors: true

- name: Stop if the os does not support
  assert:
    that: (allow_unsupported_distribution_setup | default(false)) or ansible_distribution in supported_os_distributions
    msg: "{{ ansible_distribution }} is not a known OS"
  when: not ignore_assert_errors
  ignore_errors: true

- name: Stop if unknown network plugin
  assert:
    that: kube_network_plugin in ['calico', 'flannel', 'weave', 'cloud', 'cilium', 'cni', 'kube-ovn', 'kube-router', 'macvlan', 'custom_cni']
    msg: "{{ kube_network_plugin }} is not supported"
  when:
    - kube_network_plugin is defined
    - not ignore_assert_errors
  ignore_errors: true

- name: Stop if memory is too small for masters
  assert:
    that: ansible_memtotal_mb >= minimal_master_memory_mb
  when:
    - not ignore_assert_errors
    - inventory_hostname in groups['kube_control_plane']
  ignore_errors: true

- name: Stop if memory is too small for nodes
  assert:
    that: ansible_memtotal_mb >= minimal_node_memory_mb
  when:
    - not ignore_assert_errors
    - inventory_hostname in groups['kube_node']
  ignore_errors: true

- name: Stop if even number of etcd hosts
  assert:
    that: groups.etcd | length is not divisibleby 2
  when:
    - not ignore_assert_errors
    - inventory_hostname in groups.get('etcd',[])
  ignore_errors: true
`;
const VERIFY_DEFAULTS = PRE_DEFAULTS[`${P}/defaults/main.yml`]! + 'supported_os_distributions:\n  - Debian\n  - Ubuntu\nkube_network_plugin: calico\n';

export const ASSERT_CASES: Case[] = [
  {
    name: 'the memory assert written as not (ansible_facts.memtotal_mb < minimal_master_memory_mb) fails for 1024 MB; the node one passes',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:66-78',
    ks: {
      [`${P}/defaults/main.yml`]: VERIFY_DEFAULTS,
      [`${P}/tasks/main.yml`]: VERIFY.replace(
        'that: ansible_memtotal_mb >= minimal_master_memory_mb',
        'that: not (ansible_facts.memtotal_mb < minimal_master_memory_mb)',
      ),
    },
    unknown: 0,
  },
  {
    name: 'an unsupported distribution and an unknown network plugin fail with their templated msg; the etcd assert is skipped',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:20-40',
    ks: {
      [`${P}/defaults/main.yml`]: VERIFY_DEFAULTS.replace('  - Debian\n', '').replace('kube_network_plugin: calico', 'kube_network_plugin: flannel2'),
      [`${P}/tasks/main.yml`]: VERIFY,
    },
    memtotal: 4096,
    unknown: 0,
  },
  {
    name: 'a that list whose second item fails (fail_msg), a looped assert, and group_vars that lower the minimum',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:2-9, 66-71',
    ks: {
      [`${P}/defaults/main.yml`]: VERIFY_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- name: Stop if either kube_control_plane or kube_node group is empty
  assert:
    that: "groups.get( item )"
  with_items:
    - kube_control_plane
    - kube_node
  when: not ignore_assert_errors
  ignore_errors: true
- name: Two checks
  assert:
    that:
      - ansible_memtotal_mb >= minimal_master_memory_mb
      - ansible_distribution_major_version | int >= 13
    fail_msg: "Debian {{ ansible_distribution_major_version }} is too old"
  ignore_errors: true
`,
    },
    inv: { 'group_vars/all.yml': 'minimal_master_memory_mb: 1000\n' },
    unknown: 0,
  },
];

describe('preflight asserts, compared with ansible-playbook', () => {
  for (const c of ASSERT_CASES) {
    it(
      c.name,
      async () => {
        const rows = await expectAssertAgreement(c);
        // Each case has an assert Ansible fails on, and the audit says so.
        expect(rows.some((r) => r.ansible.startsWith('fail') && r.audit === r.ansible)).toBe(true);
      },
      120_000,
    );
  }
});

// ---- YAML 1.1 ----------------------------------------------------------------------------

export const YAML11_CASES: Case[] = [
  {
    name: 'group_vars kubelet_fail_swap_on: no and ignore_assert_errors: No (YAML 1.1 booleans) skip the imports they guard',
    source:
      'v2.31.0 roles/kubernetes/preinstall/tasks/main.yml:2-6 (import of 0010-swapoff.yml when kubelet_fail_swap_on), 0010-swapoff.yml, 0080-system-configurations.yml',
    ks: {
      [`${P}/defaults/main.yml`]: PRE_DEFAULTS[`${P}/defaults/main.yml`]! + 'kubelet_fail_swap_on: true\ndns_late: false\n',
      [`${P}/tasks/main.yml`]:
        '- name: Disable swap\n  import_tasks: 0010-swapoff.yml\n  when:\n    - not dns_late\n    - kubelet_fail_swap_on\n- import_tasks: 0080-system-configurations.yml\n  when: not ignore_assert_errors\n',
      [`${P}/tasks/0010-swapoff.yml`]: SWAPOFF,
      [`${P}/tasks/0080-system-configurations.yml`]: IP_FORWARD,
    },
    inv: { 'group_vars/all.yml': 'kubelet_fail_swap_on: no\nignore_assert_errors: No\n' },
    unknown: 0,
  },
  {
    name: 'when: yes, when: off and masked: yes written as YAML 1.1 booleans in the tasks themselves',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml, 0080-system-configurations.yml:72-78',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]:
        SWAPOFF.replace('    masked: true\n', '    masked: yes\n').replace('  command: /sbin/swapoff -a\n', '  command: /sbin/swapoff -a\n  when: yes\n') +
        IP_FORWARD +
        '  when: off\n',
    },
    unknown: 0,
  },
  {
    name: 'an INI inventory var swap_now=no is the string "no" (true), host_vars persist_br: off is false, a quoted "no" in group_vars is a string',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml; roles/kubernetes/node/tasks/main.yml:82-93',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: SWAPOFF.replace('  command: /sbin/swapoff -a\n', '  command: /sbin/swapoff -a\n  when: swap_now\n').replace(
        '    masked: true\n',
        '    masked: true\n  when: mask_swap\n',
      ),
      [`${N}/tasks/main.yml`]: BR_NETFILTER.replace('    state: present\n', '    state: present\n  when: persist_br\n'),
    },
    inventory: INV.replace('node1 ansible_connection=local', 'node1 ansible_connection=local swap_now=no'),
    inv: { 'host_vars/node1.yml': 'persist_br: off\n', 'group_vars/kube_node.yml': 'mask_swap: "no"\n' },
    unknown: 0,
  },
];

describe('YAML 1.1 in roles and inventories, compared with ansible-playbook', () => {
  for (const c of YAML11_CASES) it(c.name, async () => void (await expectAgreement(c)), 120_000);
});

// ---- more task keywords ----------------------------------------------------------------------

export const MORE_KEYWORD_CASES: Case[] = [
  {
    name: 'tags: never on a block (an inner task tagged always still runs), on include_role and on import_role (always inside runs)',
    source:
      'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml, 0080-system-configurations.yml; roles/kubernetes/node/tasks/main.yml:82-93 moved into roles of their own',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- block:\n${indent(SWAPOFF.replace('  command: /sbin/swapoff -a\n', '  command: /sbin/swapoff -a\n  tags: always\n'), 4)}  tags: never\n- include_role:\n    name: sysctl_helper\n  tags: never\n- import_role:\n    name: br_helper\n  tags: [never]\n`,
      [`${HELPER}/tasks/main.yml`]: IP_FORWARD,
      ['roles/br_helper/tasks/main.yml']: BR_NETFILTER.replace('    state: present\n', '    state: present\n  tags: [always]\n'),
    },
    unknown: 0,
  },
  {
    name: 'check_mode from a group_vars value (yes) templated on a block; check_mode: no inside it; a templated false on a task',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml, 0080-system-configurations.yml:72-78',
    ks: {
      [`${P}/defaults/main.yml`]: PRE_DEFAULTS[`${P}/defaults/main.yml`]! + 'dry_run: false\n',
      [`${P}/tasks/main.yml`]: `- block:\n${indent(SWAPOFF.replace('  command: /sbin/swapoff -a\n', '  command: /sbin/swapoff -a\n  check_mode: no\n'), 4)}  check_mode: "{{ dry_run }}"\n${IP_FORWARD}  check_mode: "{{ not dry_run }}"\n`,
    },
    inv: { 'group_vars/all.yml': 'dry_run: yes\n' },
    unknown: 0,
  },
  {
    name: 'check_mode: true on import_role, apply: check_mode on include_role; the task after them runs for real',
    source:
      'v2.25.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml:72-78, roles/kubernetes/node/tasks/main.yml:82-93 moved into roles of their own',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- import_role:\n    name: sysctl_helper\n  check_mode: true\n- include_role:\n    name: br_helper\n    apply:\n      check_mode: yes\n- name: Disable swap\n  command: /sbin/swapoff -a\n`,
      [`${HELPER}/tasks/main.yml`]: IP_FORWARD,
      ['roles/br_helper/tasks/main.yml']: BR_NETFILTER,
    },
    unknown: 0,
  },
];

describe('more task keywords (tags, check_mode on blocks and roles), compared with ansible-playbook', () => {
  for (const c of MORE_KEYWORD_CASES) it(c.name, async () => void (await expectAgreement(c)), 120_000);
});

// ---- free-form key=value ---------------------------------------------------------------------

export const KV_CASES: Case[] = [
  {
    name: 'sysctl, modprobe and command in free form: the arguments parse_kv gives the module',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml:72-78, 0010-swapoff.yml; roles/kubernetes/node/tasks/main.yml:82-86',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]:
        '- name: Enable ip forwarding\n  ansible.posix.sysctl: sysctl_file="{{ sysctl_file_path }}" name=net.ipv4.ip_forward value=1 state=present reload=yes\n- name: Disable swap\n  command: /sbin/swapoff -a removes=/etc/fstab\n',
      [`${N}/tasks/main.yml`]: '- name: Enable br_netfilter module\n  community.general.modprobe: name=br_netfilter state=present\n',
    },
    unknown: 0,
  },
  {
    name: 'action: with a free-form module line, systemd_service masked=yes (a string to the module), copy dest=... content=...',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0010-swapoff.yml, 0080-system-configurations.yml:72-78; roles/kubernetes/node/tasks/main.yml:88-93',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]:
        '- name: Enable ip forwarding\n  action: sysctl name=net.ipv4.ip_forward value=1 sysctl_file={{ sysctl_file_path }}\n- name: Mask swap.target\n  systemd_service: name=swap.target masked=yes\n',
      [`${N}/tasks/main.yml`]:
        '- name: Persist br_netfilter module\n  copy: dest=/etc/modules-load.d/kubespray-br_netfilter.conf content=br_netfilter mode=0644\n',
    },
    unknown: 0,
  },
  {
    name: 'quoted values, a template with a space and a default filter, and args: beside a free-form line',
    source: 'v2.25.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml:72-78; roles/kubernetes/node/tasks/main.yml:82-86',
    ks: {
      [`${P}/defaults/main.yml`]: PRE_DEFAULTS[`${P}/defaults/main.yml`]! + 'sysctl_dir: /etc/sysctl.d\nsysctl_base: 90-kubespray.conf\n',
      [`${P}/tasks/main.yml`]: `- name: Enable ip forwarding\n  ansible.posix.sysctl: name="net.ipv4.ip_forward" value='1' sysctl_file="{{ sysctl_dir }}/{{ sysctl_base }}"\n- name: Disable swap\n  command: /sbin/swapoff -a\n  args:\n    removes: /etc/fstab\n`,
      [`${N}/tasks/main.yml`]: `- name: Enable br_netfilter module\n  community.general.modprobe: name={{ br_module | default("br_netfilter") }} state="present"\n`,
    },
    unknown: 0,
  },
];

describe('free-form key=value arguments, compared with ansible-playbook', () => {
  for (const c of KV_CASES) it(c.name, async () => void (await expectAgreement(c)), 120_000);
});

// ---- Jinja2 string literals --------------------------------------------------------------------

export const LITERAL_CASES: Case[] = [
  {
    name: 'sysctl_file_path from a regex_replace back-reference (\\1/60-\\2): the file Ansible writes to',
    source:
      'v2.25.0 roles/kubernetes/preinstall/tasks/0080-system-configurations.yml:72-78 with a variant of roles/kubespray-defaults/defaults/main/download.yml:133',
    ks: {
      [`${P}/defaults/main.yml`]:
        "sysctl_file_path: \"{{ '/etc/sysctl.d/99-sysctl.conf' | regex_replace('^(/etc/sysctl.d)/99-(.*)$', '\\\\1/60-\\\\2') }}\"\nminimal_master_memory_mb: 1500\nignore_assert_errors: false\n",
      [`${P}/tasks/main.yml`]: IP_FORWARD,
    },
    unknown: 0,
  },
  {
    name: 'kube_major_version as v2.25.0 computes it (v\\1.\\2) in a file name; a \\t inside {{ }} is kept',
    source: 'v2.25.0 roles/kubespray-defaults/defaults/main/download.yml:133; roles/kubernetes/node/tasks/main.yml:88-93',
    ks: {
      [`${N}/defaults/main.yml`]:
        "kube_version: v1.29.5\nkube_major_version: \"{{ kube_version | regex_replace('^v([0-9])+\\\\.([0-9]+)\\\\.[0-9]+', 'v\\\\1.\\\\2') }}\"\n",
      [`${N}/tasks/main.yml`]: `- name: Persist br_netfilter module\n  copy:\n    dest: "/etc/modules-load.d/kubespray-{{ kube_major_version }}.conf"\n    content: br_netfilter\n- name: Echo\n  command: "echo {{ 'a\\\\tb' }}"\n`,
    },
    unknown: 0,
  },
  {
    name: "a '\\\\.' regex in a module name; a '\\\\t' in a when (a Jinja2 block decodes it: 3 characters)",
    source: 'v2.25.0 roles/kubernetes/node/tasks/main.yml:82-86; roles/kubernetes/preinstall/tasks/0090-etchosts.yml:52 (a [ \\\\t]+ literal in a block)',
    ks: {
      ...PRE_DEFAULTS,
      [`${P}/tasks/main.yml`]: `${IP_FORWARD}  when: "('a\\\\tb' | length) == 3"\n- name: Disable swap\n  command: /sbin/swapoff -a\n  when: "('a\\\\tb' | length) == 4"\n`,
      [`${N}/tasks/main.yml`]: `- name: Enable br_netfilter module\n  community.general.modprobe:\n    name: "{{ 'br.netfilter' | regex_replace('\\\\.', '_') }}"\n    state: present\n`,
    },
    unknown: 0,
  },
];

describe('Jinja2 string literals in real tasks, compared with ansible-playbook', () => {
  for (const c of LITERAL_CASES) it(c.name, async () => void (await expectAgreement(c)), 120_000);
});

// ---- filters and tests --------------------------------------------------------------------------

export const FILTER_CASES: Case[] = [
  {
    name: 'version on the kernel release, split, match and default in when',
    source: 'v2.31.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:66 (kernel version); v2.25.0 0010-swapoff.yml, node/tasks/main.yml:82-86',
    ks: {
      [`${P}/defaults/main.yml`]: PRE_DEFAULTS[`${P}/defaults/main.yml`]! + 'kube_modules: overlay,br_netfilter\n',
      [`${P}/tasks/main.yml`]: `${IP_FORWARD}  when: ansible_kernel.split('-')[0] is version('4.9.17', '>=')\n- name: Disable swap\n  command: /sbin/swapoff -a\n  when: (kube_network_plugin | default('calico')) is match('cal')\n- name: Disable swap on old kernels\n  command: /sbin/swapoff -a -v\n  when: ansible_kernel is version('6.2', '>=')\n- name: Enable br_netfilter module\n  community.general.modprobe:\n    name: br_netfilter\n    state: present\n  when: "'br_netfilter' in (kube_modules | split(','))"\n`,
    },
    unknown: 0,
  },
  {
    name: 'ansible.utils ipaddr (IPv4 and IPv6 service subnets) and ipwrap in arguments',
    source: 'master roles/kubespray_defaults/defaults/main/main.yml:156, 304 (skydns_server, kube_apiserver_ip); v2.25.0 0080-system-configurations.yml:72-78',
    ks: {
      [`${P}/defaults/main.yml`]:
        PRE_DEFAULTS[`${P}/defaults/main.yml`]! +
        "kube_service_subnets: fd85:ee78:d8a6:8607::1000/116,10.233.0.0/18\nkube_apiserver_ip: \"{{ kube_service_subnets.split(',') | last | ansible.utils.ipaddr('net') | ansible.utils.ipaddr(1) | ansible.utils.ipaddr('address') }}\"\nskydns_server: \"{{ kube_service_subnets.split(',') | first | ansible.utils.ipaddr('net') | ansible.utils.ipaddr(3) | ansible.utils.ipaddr('address') }}\"\n",
      [`${P}/tasks/main.yml`]: `${IP_FORWARD}  when: kube_apiserver_ip == '10.233.0.1'\n- name: Record the DNS server\n  command: "echo {{ skydns_server | ansible.utils.ipwrap }}"\n- name: Never for a v4 DNS server\n  command: /bin/false\n  when: skydns_server | ansible.utils.ipaddr('10.0.0.0/8')\n`,
    },
    unknown: 0,
  },
  {
    name: 'divisibleby, dict2items, combine, b64decode, union, sameas and defined in conditions and arguments',
    source:
      'v2.25.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:80-85 (divisibleby), 0080-system-configurations.yml; roles/kubernetes/node/tasks/main.yml:82-86',
    ks: {
      [`${P}/defaults/main.yml`]: PRE_DEFAULTS[`${P}/defaults/main.yml`]! + 'sysctl_settings:\n  net.ipv4.ip_forward: 1\n',
      [`${P}/tasks/main.yml`]: `${IP_FORWARD}  when: "(sysctl_settings | combine({'vm.overcommit_memory': 1}) | dict2items | length) == 2"\n- name: Disable swap\n  command: "/sbin/swapoff {{ ['-a'] | union(['-v', '-a']) | join(' ') }}"\n  when: groups['kube_control_plane'] | length is not divisibleby 2\n- name: Never\n  command: /bin/false\n  when: (undefined_thing is defined) or (1 is sameas true)\n`,
      [`${N}/tasks/main.yml`]: `- name: Enable br_netfilter module\n  community.general.modprobe:\n    name: "{{ 'YnJfbmV0ZmlsdGVy' | b64decode }}"\n    state: present\n`,
    },
    unknown: 0,
  },
];

describe('filters and tests in real tasks, compared with ansible-playbook', () => {
  for (const c of FILTER_CASES) it(c.name, async () => void (await expectAgreement(c)), 120_000);
});

// ---- a failing preflight stops the host ---------------------------------------------------------

// v2.31.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:16-36, 78-82 as kubespray runs them (no ignore_errors).
const VERIFY_231 = `- name: Stop if non systemd OS type
  assert:
    that: ansible_service_mgr == "systemd"
  when: not ignore_assert_errors

- name: Stop if the os does not support
  assert:
    that: (allow_unsupported_distribution_setup | default(false)) or ansible_distribution in supported_os_distributions
    msg: "{{ ansible_distribution }} is not a known OS"
  when: not ignore_assert_errors

- name: Stop if memory is too small for control plane nodes
  assert:
    that: ansible_memtotal_mb >= minimal_master_memory_mb
  when:
    - not ignore_assert_errors
    - ('kube_control_plane' in group_names)

- name: Stop if memory is too small for nodes
  assert:
    that: ansible_memtotal_mb >= minimal_node_memory_mb
  when:
    - not ignore_assert_errors
    - ('kube_node' in group_names)

- name: Stop if bad hostname
  assert:
    that: inventory_hostname is match("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
    msg: "Hostname must consist of lower case alphanumeric characters, '.' or '-', and must start and end with an alphanumeric character"
  when: not ignore_assert_errors
`;
// v2.31.0 roles/kubernetes/preinstall/tasks/main.yml:1-18 (swapoff before the checks, system configurations after).
const MAIN_231 = `- name: Disable swap
  import_tasks: 0010-swapoff.yml
  when:
    - not dns_late
    - kubelet_fail_swap_on

- name: Check settings
  import_tasks: 0040-verify-settings.yml
  when:
    - not dns_late
  tags:
    - asserts

- name: System configurations
  import_tasks: 0080-system-configurations.yml
`;
const STOP_TREE = {
  [`${P}/defaults/main.yml`]: VERIFY_DEFAULTS + 'dns_late: false\nkubelet_fail_swap_on: true\n',
  [`${P}/tasks/main.yml`]: MAIN_231,
  [`${P}/tasks/0010-swapoff.yml`]: SWAPOFF,
  [`${P}/tasks/0040-verify-settings.yml`]: VERIFY_231,
  [`${P}/tasks/0080-system-configurations.yml`]: IP_FORWARD,
};
const SYSTEMD = { service_mgr: 'systemd' };

export const STOP_CASES: (Case & { stops: string | null })[] = [
  {
    name: '1024 MB on a control plane node: ansible-playbook fails the host at the memory assert (what follows does not run); --plan exits 1',
    source: 'v2.31.0 roles/kubernetes/preinstall/tasks/main.yml:1-18, 0040-verify-settings.yml:16-36',
    ks: STOP_TREE,
    facts: SYSTEMD,
    memtotal: 1024,
    unknown: 0,
    stops: `${P}/tasks/0040-verify-settings.yml:12`,
  },
  {
    name: 'a host named Node_1: the hostname assert fails with its msg; --plan exits 1',
    source: 'v2.31.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:78-82',
    ks: STOP_TREE,
    facts: SYSTEMD,
    memtotal: 4096,
    inventory: INV.replace(/node1/g, 'Node_1'),
    host: 'Node_1',
    unknown: 0,
    stops: `${P}/tasks/0040-verify-settings.yml:26`,
  },
  {
    name: '4096 MB and a good name: every assert passes, ansible-playbook goes on to ip_forward; nothing stops',
    source: 'v2.31.0 roles/kubernetes/preinstall/tasks/main.yml:1-18, 0040-verify-settings.yml',
    ks: STOP_TREE,
    facts: SYSTEMD,
    memtotal: 4096,
    unknown: 0,
    stops: null,
  },
  {
    name: 'ignore_assert_errors: yes in group_vars (YAML 1.1): 1024 MB and a bad name stop nothing',
    source: 'v2.31.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml; roles/kubespray_defaults ignore_assert_errors',
    ks: STOP_TREE,
    facts: SYSTEMD,
    memtotal: 1024,
    inventory: INV.replace(/node1/g, 'Node_1'),
    host: 'Node_1',
    inv: { 'group_vars/all.yml': 'ignore_assert_errors: yes\n' },
    unknown: 0,
    stops: null,
  },
];

describe('a failing preflight stops the host, compared with ansible-playbook', () => {
  for (const c of STOP_CASES) {
    it(
      c.name,
      async () => {
        const compared = await compare(c);
        // Task by task (swap before the checks, ip_forward after) as Ansible ran them.
        await expectAgreement(c, compared);
        const failed = compared.oracle.find((r) => r.status === 'failed');
        expect(failed ? `${failed.file}:${failed.line}` : null, compared.oracle.map((r) => `${r.file}:${r.line} ${r.status}`).join('\n')).toBe(c.stops);
        expect(compared.exitCode).toBe(c.stops ? 2 : 0);
        const memory = await compared.audit();
        const first = memory.asserts.find((a) => a.result === 'fail' || a.result === 'unknown');
        expect(first ? `${first.ref.file}:${first.ref.line} ${first.result}` : null).toBe(c.stops ? `${c.stops} fail` : null);
        if (first) expect(first.failed!.msg).toBe(failed!.msg ?? 'Assertion failed');
        const facts: Facts = {
          memtotal_mb: c.memtotal!,
          processor_vcpus: 2,
          distribution: 'Debian',
          distribution_version: '12.5',
          kernel: FACTS.kernel,
          default_ipv4: null,
        };
        const findings = preflightFindings(memory, c.host ?? 'node1', facts);
        expect(planExitCode(0, 0, findings)).toBe(c.stops ? 1 : 0);
      },
      120_000,
    );
  }
});

describe('a failing assert inside a block with rescue, compared with ansible-playbook', () => {
  const c: Case = {
    name: 'the rescue section takes the failure: what follows the block is unknown to the audit (ansible-playbook runs it)',
    source: 'v2.31.0 roles/kubernetes/preinstall/tasks/0040-verify-settings.yml:12-17 in a block with rescue; 0080-system-configurations.yml',
    ks: {
      [`${P}/defaults/main.yml`]: VERIFY_DEFAULTS,
      [`${P}/tasks/main.yml`]: `- block:\n${indent(VERIFY_231.split('\n\n')[2]!, 4)}\n  rescue:\n    - debug: msg=rescued\n${IP_FORWARD}`,
    },
    memtotal: 1024,
    // ip_forward: the audit does not model rescue/always and says so.
    unknown: 1,
  };
  it(
    c.name,
    async () => {
      const compared = await compare(c);
      const rows = await expectAgreement(c, compared);
      expect(compared.oracle.some((r) => r.status === 'failed')).toBe(true);
      expect(rows.find((r) => r.module === 'sysctl')).toMatchObject({ audit: 'unknown', ansible: 'acted' });
      expect(rows.find((r) => r.module === 'sysctl')!.unknownReason).toContain('has rescue or always sections');
    },
    120_000,
  );
});
