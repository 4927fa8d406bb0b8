// The task walk (src/kubespray/tasks.ts) against Ansible itself where Ansible
// has an answer: which key of a task is the module and what its arguments are
// comes from ansible-core's ModuleArgsParser, and the keywords a task may carry
// from ansible-core's own Task attributes (test/helpers/ansible-task-args.py).
// The rest (includes, blocks, loops) is Ansible's documented behaviour, written
// out by hand over small trees in kubespray's layout.
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalModule, expandItem, walkRole } from '../../src/kubespray/tasks.js';
import { ansiblePython } from '../helpers/ansible-python.js';
import { P, checkout } from '../helpers/kubespray-fixture.js';

const ROLE = 'kubernetes/preinstall';

/** Walks a preinstall role whose tasks/main.yml is this list of tasks (JSON is YAML). */
async function walkTasks(tasks: unknown[]) {
  return walkRole(await checkout({ [`${P}/tasks/main.yml`]: JSON.stringify(tasks) }), ROLE);
}

type Parsed = { module: string; args: Record<string, unknown> } | { error: string };
async function ansibleParse(tasks: unknown[]): Promise<{ keywords: string[]; parsed: Parsed[]; blocks: boolean[] }> {
  const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-task-args.py')], { input: JSON.stringify(tasks) });
  return JSON.parse(r.stdout) as { keywords: string[]; parsed: Parsed[]; blocks: boolean[] };
}

// The cases, all sent to ansible-core in one run (beforeAll).
// loop_control takes a mapping: ansible-core's Task refuses any other value (tasks.scope.test.ts).
const value = (k: string): unknown => (k === 'args' || k === 'vars' || k === 'loop_control' ? {} : k === 'loop' ? ['a'] : 'x');
const LOOPS = ['with_dict', 'with_fileglob', 'with_nested', 'with_items'].map((k) => ({
  [k]: ['a'],
  'ansible.posix.sysctl': { name: 'net.ipv4.ip_forward', value: '1' },
}));
const ACTIONS = [
  { name: 'a', action: 'ansible.builtin.command /sbin/swapoff -a' },
  { name: 'b', local_action: 'ansible.builtin.shell fuser -k 10250/tcp' },
  { name: 'c', action: { module: 'ansible.posix.sysctl', name: 'net.ipv4.ip_forward', value: '1' } },
  { name: 'd', local_action: { module: 'ansible.posix.sysctl', name: 'net.ipv4.ip_forward' }, args: { value: '1', name: 'other' } },
  { name: 'e', 'ansible.posix.sysctl': { name: 'net.ipv4.ip_forward' }, args: { value: '1' } },
];
const NO_MODULE = [{ name: 'nothing', become: true }];
// Ansible reads a mapping with rescue: or always: and no block: as a block (and refuses one whose
// rescue holds tasks: tasks.scope.test.ts); it is no module call either way.
const BLOCKISH = [
  { name: 'r', rescue: [{ name: 'never', command: 'swapoff -a' }] },
  { name: 'a', always: [] },
];

describe('which key is the module, compared with ansible-core', () => {
  let keywords: string[];
  let keywordTasks: Record<string, unknown>[];
  let blocks: boolean[];
  let oracle: { keywords: Parsed[]; loops: Parsed[]; actions: Parsed[]; none: Parsed[] };
  beforeAll(async () => {
    keywords = (await ansibleParse([])).keywords;
    // action/local_action name the module themselves (below); async_val and loop_with are
    // internal attributes no task file spells.
    keywordTasks = keywords
      .filter((k) => !['action', 'local_action', 'async_val', 'loop_with'].includes(k))
      .map((k) => ({ [k]: value(k), 'ansible.builtin.command': '/sbin/swapoff -a' }));
    const answer = await ansibleParse([...keywordTasks, ...LOOPS, ...ACTIONS, ...NO_MODULE, ...BLOCKISH]);
    const all = answer.parsed;
    blocks = answer.blocks.slice(-BLOCKISH.length);
    let i = 0;
    const take = (n: number) => all.slice(i, (i += n));
    oracle = { keywords: take(keywordTasks.length), loops: take(LOOPS.length), actions: take(ACTIONS.length), none: take(NO_MODULE.length) };
  }, 60_000);

  it('every keyword ansible-core knows on a task, written before the module, is not the module', async () => {
    expect(keywordTasks.length).toBeGreaterThan(35);
    const ours = (await walkTasks(keywordTasks)).tasks;
    expect(ours.map((t) => ({ module: t.rawModule, args: t.args }))).toEqual(oracle.keywords);
    expect(oracle.keywords.every((o) => 'module' in o && o.module === 'ansible.builtin.command')).toBe(true);
  });

  it('with_<lookup> loops are keywords too, whatever the lookup', async () => {
    expect((await walkTasks(LOOPS)).tasks.map((t) => ({ module: t.rawModule, args: t.args }))).toEqual(oracle.loops);
  });

  it('action: and local_action:, string and mapping, with args: under the inline arguments', async () => {
    const ours = (await walkTasks(ACTIONS)).tasks;
    expect(ours.map((t) => ({ module: t.rawModule, args: t.args }))).toEqual(oracle.actions);
    expect(ours.map((t) => t.module)).toEqual(['command', 'shell', 'sysctl', 'sysctl', 'sysctl']);
  });

  it('a task with no module at all is no module call (ansible refuses it; we list nothing)', async () => {
    expect('error' in oracle.none[0]!).toBe(true);
    const r = await walkTasks([...NO_MODULE, { name: 'map action without module', action: { name: 'x' } }]);
    expect(r.tasks).toEqual([]);
  });

  it('rescue: or always: without block: is a block to ansible-core, not a module', async () => {
    expect(blocks).toEqual([true, true]);
    expect((await walkTasks(BLOCKISH)).tasks.map((t) => t.module)).not.toContain('rescue');
    expect((await walkTasks(BLOCKISH)).tasks.map((t) => t.module)).not.toContain('always');
  });
});

describe('module names', () => {
  it('the collections whose modules Ansible routes to the builtin, posix and general ones give the short name', () => {
    expect(
      [
        'ansible.builtin.command',
        'ansible.legacy.shell',
        'ansible.posix.sysctl',
        'community.general.system.modprobe',
        'community.general.modprobe',
        'systemd',
      ].map(canonicalModule),
    ).toEqual(['command', 'shell', 'sysctl', 'modprobe', 'modprobe', 'systemd']);
    // A third-party collection keeps its full name: its "sysctl" is not ansible.posix.sysctl.
    expect(['acme.tools.sysctl', 'community.docker.modprobe', 'xansible.builtin.command'].map(canonicalModule)).toEqual([
      'acme.tools.sysctl',
      'community.docker.modprobe',
      'xansible.builtin.command',
    ]);
  });
});

describe('conditions, keywords and loops of a task', () => {
  it('when as a string, a boolean, a list or null; register, failed_when and changed_when as written', async () => {
    const r = await walkTasks([
      { name: 's', command: 'true', when: 'a', register: 'out', failed_when: 'out.rc > 1', changed_when: false },
      { name: 'b', command: 'true', when: false },
      { name: 'l', command: 'true', when: ['x', 'y'] },
      { name: 'n', command: 'true', when: null, register: 7 },
    ]);
    expect(r.tasks.map((t) => [t.when, t.conditions.map((c) => [c.expr, c.line, c.level]), t.register, t.failedWhen, t.changedWhen])).toEqual([
      [['a'], [['a', 1, 'task']], 'out', 'out.rc > 1', false],
      [['false'], [[false, 1, 'task']], undefined, undefined, undefined],
      [
        ['x', 'y'],
        [
          ['x', 1, 'task'],
          ['y', 1, 'task'],
        ],
        undefined,
        undefined,
        undefined,
      ],
      [[], [], undefined, undefined, undefined],
    ]);
  });

  it('a literal loop is taken from loop, with_items or with_list; anything else stays raw', async () => {
    const r = await walkTasks([
      { name: 'loop', command: 'x', loop: [1, 2] },
      { name: 'items', command: 'x', with_items: ['a'] },
      { name: 'list', command: 'x', with_list: ['b'] },
      { name: 'templated', command: 'x', with_items: '{{ mods }}' },
      { name: 'none', command: 'x' },
    ]);
    expect(r.tasks.map((t) => [t.ref.name, t.loop, t.loopRaw])).toEqual([
      ['loop', [1, 2], undefined],
      ['items', ['a'], undefined],
      ['list', ['b'], undefined],
      ['templated', null, '{{ mods }}'],
      ['none', null, undefined],
    ]);
  });

  it('vars of enclosing blocks and of the task reach it, innermost last; vars as a list of mappings are layers in order', async () => {
    // A list of anything else ansible-core refuses (tasks.scope.test.ts).
    const r = await walkTasks([
      { name: 'outer', vars: { a: 1 }, block: [{ name: 'inner', vars: { b: 2 }, block: [{ name: 't', command: 'x', vars: { c: 3 } }] }] },
      { name: 'listed', command: 'x', vars: [{ d: 4 }, { d: 5, e: 6 }] },
      { name: 'empty', command: 'x', vars: null },
    ]);
    expect(r.tasks.map((t) => [t.ref.name, t.vars])).toEqual([
      ['t', [{ a: 1 }, { b: 2 }, { c: 3 }]],
      ['listed', [{ d: 4 }, { d: 5, e: 6 }]],
      ['empty', []],
    ]);
  });

  it('a rescue section runs only when its block fails: it carries that as a condition naming the block, never as a when', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: [
        '---',
        '- name: Try',
        '  block:',
        '    - name: A',
        '      command: a',
        '  rescue:',
        '    - name: R',
        '      command: r',
        '',
      ].join('\n'),
    });
    const r = await walkRole(ck, ROLE);
    const rescue = r.tasks.find((t) => t.ref.name === 'R')!;
    expect(rescue.when).toEqual([]);
    expect(rescue.conditions).toEqual([
      { expr: `a task of the block at ${P}/tasks/main.yml:2 failed`, file: `${P}/tasks/main.yml`, line: 7, level: 'block', rescue: true },
    ]);
    expect(r.tasks.find((t) => t.ref.name === 'A')!.conditions).toEqual([]);
  });

  it('only mappings in a task list are tasks, and a task file that is not a list holds none', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: '---\n- just a string\n- name: Real\n  command: x\n- name: Other\n  import_tasks: map.yml\n',
      [`${P}/tasks/map.yml`]: '---\nname: not a list\ncommand: x\n',
    });
    const r = await walkRole(ck, ROLE);
    expect(r.tasks.map((t) => t.ref.name)).toEqual(['Real']);
    expect(r.files).toEqual([`${P}/tasks/main.yml`, `${P}/tasks/map.yml`]);
    expect(r.issues).toEqual([]);
  });

  it('a task named with something that is not a string has no name', async () => {
    const r = await walkTasks([{ name: 5, command: 'x' }]);
    expect(r.tasks.map((t) => t.ref)).toEqual([{ file: `${P}/tasks/main.yml`, line: 1, name: '' }]);
  });
});

describe('includes', () => {
  it('include_tasks with file: and import_tasks with a free-form name; the include conditions reach the tasks', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]:
        '- name: Inc\n  ansible.builtin.include_tasks:\n    file: a.yml\n  when: one\n- name: Imp\n  ansible.builtin.import_tasks: b.yml\n  when: two\n',
      [`${P}/tasks/a.yml`]: '- name: A\n  command: a\n',
      [`${P}/tasks/b.yml`]: '- name: B\n  command: b\n',
    });
    const r = await walkRole(ck, ROLE);
    expect(r.tasks.map((t) => [t.ref.name, t.conditions.map((c) => [c.expr, c.level, c.line])])).toEqual([
      ['A', [['one', 'include', 4]]],
      ['B', [['two', 'import', 7]]],
    ]);
  });

  it('a missing main.yml, a missing include and a broken YAML file are each reported, the last two naming the include', async () => {
    const empty = await walkRole(await checkout({ 'roles/other/tasks/main.yml': '[]\n' }), ROLE);
    expect(empty.issues).toEqual([
      { ref: { file: `${P}/tasks/main.yml`, line: 0, name: '' }, message: `task file ${P}/tasks/main.yml does not exist`, unfollowed: true },
    ]);
    expect(empty.files).toEqual([]);
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: '- name: Gone\n  include_tasks: sub/none.yml\n- name: Broken\n  import_tasks: bad.yml\n- name: After\n  command: x\n',
      [`${P}/tasks/bad.yml`]: '- name: [unclosed\n',
    });
    const r = await walkRole(ck, ROLE);
    expect(r.issues.map((i) => [i.ref.name, i.ref.line, i.unfollowed])).toEqual([
      ['Gone', 1, true],
      ['Broken', 3, true],
    ]);
    expect(r.issues[0]!.message).toBe(`task file ${P}/tasks/sub/none.yml does not exist`);
    expect(r.issues[1]!.message).toContain(`${P}/tasks/bad.yml`);
    expect(r.tasks.map((t) => t.ref.name)).toEqual(['After']);
  });

  it('an include loop names the include that closes it and goes on with the next task', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: '- name: To a\n  import_tasks: a.yml\n- name: Last\n  command: z\n',
      [`${P}/tasks/a.yml`]: '- name: A\n  command: a\n- name: Back\n  include_tasks: main.yml\n',
    });
    const r = await walkRole(ck, ROLE);
    expect(r.issues).toEqual([
      { ref: { file: `${P}/tasks/a.yml`, line: 3, name: 'Back' }, message: `include loop through ${P}/tasks/main.yml; not followed again` },
    ]);
    expect(r.tasks.map((t) => t.ref.name)).toEqual(['A', 'Last']);
  });

  it('the same file included twice, not in a loop, is walked twice (Ansible runs it twice)', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: '- name: One\n  include_tasks: a.yml\n- name: Two\n  include_tasks: a.yml\n',
      [`${P}/tasks/a.yml`]: '- name: A\n  command: a\n',
    });
    const r = await walkRole(ck, ROLE);
    expect(r.tasks.map((t) => t.ref.name)).toEqual(['A', 'A']);
    expect(r.issues).toEqual([]);
  });

  it('a templated include goes through the templater; its reason is reported, and without a templater it is not followed', async () => {
    const files = {
      [`${P}/tasks/main.yml`]: '- name: By OS\n  include_tasks: "{{ os_file }}"\n  when: c1\n- name: Plain\n  include_tasks: plain.yml\n',
      [`${P}/tasks/debian.yml`]: '- name: Debian\n  command: d\n',
      [`${P}/tasks/plain.yml`]: '- name: Plainly\n  command: p\n',
    };
    const seen: [string, unknown[]][] = [];
    const ok = await walkRole(await checkout(files), ROLE, (value, conds) => {
      seen.push([value, conds.map((c) => c.expr)]);
      return { value: ' debian.yml ' };
    });
    expect(ok.tasks.map((t) => t.ref.name)).toEqual(['Debian', 'Plainly']);
    // The plain file name needs no templating.
    expect(seen).toEqual([['{{ os_file }}', ['c1']]]);
    const refused = await walkRole(await checkout(files), ROLE, () => ({ reason: 'os_file is undefined' }));
    expect(refused.issues).toEqual([
      {
        ref: { file: `${P}/tasks/main.yml`, line: 1, name: 'By OS' },
        message: 'include_tasks {{ os_file }} cannot be evaluated (os_file is undefined); not followed',
        unfollowed: true,
      },
    ]);
    expect(refused.tasks.map((t) => t.ref.name)).toEqual(['Plainly']);
    const none = await walkRole(await checkout(files), ROLE);
    expect(none.issues).toEqual([
      {
        ref: { file: `${P}/tasks/main.yml`, line: 1, name: 'By OS' },
        message: 'include_tasks with a templated file ({{ os_file }}); not followed',
        unfollowed: true,
      },
    ]);
    // A templater that still gives a template back does not make it followable.
    const still = await walkRole(await checkout(files), ROLE, () => ({ value: '{{ other }}' }));
    expect(still.issues.map((i) => i.message)).toEqual(['include_tasks with a templated file ({{ os_file }}); not followed']);
  });

  it('an include without a file name: ansible-core refuses it as it loads it (tasks.scope.test.ts asks it), so the walk does', async () => {
    const r = await walkTasks([{ name: 'No file', include_tasks: { apply: { tags: ['x'] } } }]);
    expect(r.issues).toEqual([
      {
        ref: { file: `${P}/tasks/main.yml`, line: 1, name: 'No file' },
        message: 'ansible-core refuses this task: No file specified for include_tasks',
        unfollowed: true,
        refused: true,
      },
    ]);
  });

  it('include_role with a templated tasks_from is not followed; the tasks after it keep the including role', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]:
        '- name: R\n  include_role:\n    name: r1\n    tasks_from: "{{ which }}"\n- name: Other\n  import_role:\n    name: r2\n- name: Mine\n  command: m\n',
      'roles/r2/tasks/main.yml': '- name: In r2\n  command: x\n',
    });
    const r = await walkRole(ck, ROLE);
    expect(r.issues).toEqual([
      { ref: { file: `${P}/tasks/main.yml`, line: 1, name: 'R' }, message: 'include_role of a templated role (r1); not followed', unfollowed: true },
    ]);
    expect(r.tasks.map((t) => [t.ref.name, t.role])).toEqual([
      ['In r2', 'r2'],
      ['Mine', ROLE],
    ]);
  });
});

describe('loop items in a value', () => {
  it('"{{ item }}", "{{ item.key }}" and "{{ item[\'key\'] }}" take each item; other values are themselves', () => {
    const loop = [{ name: 'overlay' }, { name: 'br_netfilter' }, 'plain'];
    expect(expandItem('{{ item }}', ['a', 'b'])).toEqual(['a', 'b']);
    expect(expandItem(' {{item.name}} ', loop)).toEqual(['overlay', 'br_netfilter', undefined]);
    expect(expandItem('{{ item["name"] }}', loop)).toEqual(['overlay', 'br_netfilter', undefined]);
    expect(expandItem("{{ item['name'] }}", [null])).toEqual([undefined]);
    expect(expandItem('{{ item }}', null)).toEqual(['{{ item }}']);
    expect(expandItem('{{ items }}', ['a'])).toEqual(['{{ items }}']);
    expect(expandItem('x {{ item }}', ['a'])).toEqual(['x {{ item }}']);
    expect(expandItem('{{ item }} x', ['a'])).toEqual(['{{ item }} x']);
    expect(expandItem('{{ item.1x }}', ['a'])).toEqual(['{{ item.1x }}']);
    expect(expandItem(3, ['a'])).toEqual([3]);
  });
});

describe('anchors, aliases and merge keys across the tasks of a file, as ansible-core loads them', () => {
  async function ansibleYaml(text: string): Promise<unknown> {
    const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-language.py')], { input: JSON.stringify([{ op: 'yaml', text }]) });
    const [answer] = JSON.parse(r.stdout) as { ok: boolean; value?: unknown; error?: string }[];
    expect(answer!.ok, answer!.error).toBe(true);
    return answer!.value;
  }

  it('a later task merges (<<: *fwd) or aliases (*fwd) a mapping anchored in an earlier one: the module gets what Ansible loads', async () => {
    const text = [
      '- name: A',
      '  ansible.posix.sysctl: &fwd',
      '    name: net.ipv4.ip_forward',
      '    value: "1"',
      '- name: B',
      '  ansible.posix.sysctl:',
      '    <<: *fwd',
      '    value: "0"',
      '    sysctl_file: /etc/sysctl.d/x.conf',
      '- name: C',
      '  ansible.posix.sysctl: *fwd',
      '',
    ].join('\n');
    const loaded = (await ansibleYaml(text)) as Record<string, unknown>[];
    const r = await walkRole(await checkout({ [`${P}/tasks/main.yml`]: text }), ROLE);
    expect(r.issues).toEqual([]);
    expect(r.tasks.map((t) => t.args)).toEqual(loaded.map((t) => t['ansible.posix.sysctl']));
    // Written out: the merge gives B the anchored keys under its own value.
    expect(r.tasks[1]!.args).toEqual({ name: 'net.ipv4.ip_forward', value: '0', sysctl_file: '/etc/sysctl.d/x.conf' });
  });

  it('a merge of a list, which ansible-core refuses to load, leaves that task unread with a refusal naming its line', async () => {
    const text = '- name: A\n  command: x\n  tags: &l [a, b]\n- name: B\n  ansible.posix.sysctl:\n    <<: *l\n    name: n\n';
    const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-language.py')], { input: JSON.stringify([{ op: 'yaml', text }]) });
    expect((JSON.parse(r.stdout) as { ok: boolean }[])[0]!.ok).toBe(false);
    const walked = await walkRole(await checkout({ [`${P}/tasks/main.yml`]: text }), ROLE);
    expect(walked.tasks.map((t) => t.ref.name)).toEqual(['A']);
    expect(walked.issues.map((i) => [i.ref.line, i.unfollowed, i.refused, i.message.startsWith('the task cannot be read: ')])).toEqual([[4, true, true, true]]);
  });

  it("kubespray v2.25.0's bootstrap-os merges one with_first_found item into another task's: the walk reads both tasks", async () => {
    // v2.25.0 roles/bootstrap-os/tasks/main.yml:13-32, the block's two tasks.
    const text = [
      '- name: Include distro specifics vars and tasks',
      '  block:',
      '  - name: Include vars',
      '    include_vars: "{{ item }}"',
      '    tags:',
      '    - facts',
      '    with_first_found:',
      '    - &search',
      '      files:',
      '      - "{{ os_release_dict[\'ID\'] }}.yml"',
      '      paths:',
      '      - vars/',
      '      skip: True',
      '  - name: Include tasks',
      '    include_tasks: "{{ included_tasks_file }}"',
      '    with_first_found:',
      '    - <<: *search',
      '      paths: []',
      '    loop_control:',
      '      loop_var: included_tasks_file',
      '',
    ].join('\n');
    const loaded = (await ansibleYaml(text)) as { block: Record<string, unknown>[] }[];
    expect(loaded[0]!.block[1]!.with_first_found).toEqual([{ files: ["{{ os_release_dict['ID'] }}.yml"], paths: [], skip: true }]);
    const r = await walkRole(await checkout({ [`${P}/tasks/main.yml`]: text }), ROLE);
    expect(r.tasks.map((t) => [t.ref.line, t.module, t.args])).toEqual([[3, 'include_vars', { _raw_params: '{{ item }}' }]]);
    expect(r.issues).toEqual([
      {
        ref: { file: `${P}/tasks/main.yml`, line: 14, name: 'Include tasks' },
        message: 'include_tasks with a templated file ({{ included_tasks_file }}); not followed',
        unfollowed: true,
      },
    ]);
  });
});
