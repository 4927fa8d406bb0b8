// What surrounds a task in the walk: the conditions, tags, check_mode,
// ignore_errors, meta ends, include apply and block sections it inherits, each
// named by the file and line it is written on (counted in the fixtures here);
// and the task mappings ansible-core refuses as it loads them, compared with
// ansible-core's own loaders (test/helpers/ansible-task-load.py).
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { BLOCK_KEYWORDS } from '../../src/ansible/keywords.js';
import { walkRole } from '../../src/kubespray/tasks.js';
import type { Condition, Task } from '../../src/kubespray/tasks.js';
import { ansiblePython } from '../helpers/ansible-python.js';
import { PM, audit, checkout } from '../helpers/kubespray-fixture.js';

const ROLE = 'kubernetes/preinstall';

async function walk(main: string, extra: Record<string, string> = {}) {
  return walkRole(await checkout({ [PM]: main, ...extra }), ROLE);
}

function task(tasks: Task[], name: string): Task {
  const t = tasks.find((x) => x.ref.name === name);
  if (!t) throw new Error(`no task named ${name} in ${JSON.stringify(tasks.map((x) => x.ref.name))}`);
  return t;
}

/** A condition without its gate (meta ends carry the conditions before them there). */
const shown = (c: Condition) => {
  const { gate: _gate, ...rest } = c;
  return rest;
};

interface Loaded {
  refused: string | null;
  args: Record<string, unknown> | null;
  vars: Record<string, unknown> | null;
}
async function ansibleLoad(tasks: unknown[]): Promise<{ loaded: Loaded[]; block_keywords: string[] }> {
  const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-task-load.py')], { input: JSON.stringify(tasks) });
  return JSON.parse(r.stdout) as { loaded: Loaded[]; block_keywords: string[] };
}

// Mappings users write by mistake, each refused by ansible-core while it loads the play.
const REFUSED: Record<string, unknown>[] = [
  { name: 'tags left empty', command: 'x', tags: null },
  { name: 'a number as tags', command: 'x', tags: 5 },
  { name: 'loop_control as a string', command: 'x', loop: [1], loop_control: 'label' },
  { name: 'loop_control left empty', command: 'x', loop: [1], loop_control: null },
  { name: 'include with a rescue', include_tasks: 'x.yml', rescue: [{ command: 'y' }] },
  { name: 'block with a module', block: [{ command: 'y' }], command: 'x' },
  { name: 'rescue with a loop', rescue: [{ command: 'y' }], loop: [1] },
  { name: 'rescue alone', rescue: [{ command: 'y' }] },
  { name: 'always after an empty block', block: [], always: [{ command: 'y' }] },
  { name: 'rescue left empty', block: [{ command: 'x' }], rescue: null },
  { name: 'block as a string', block: 'x' },
  { name: 'apply as a string', include_tasks: { file: 'x.yml', apply: 'x' } },
  { name: 'apply left empty', include_role: { name: 'r', apply: null } },
  { name: 'apply on an import', import_tasks: 'x.yml', args: { apply: { tags: ['a'] } } },
  { name: 'apply on import_role', import_role: { name: 'r', apply: { tags: ['a'] } } },
  { name: 'check_mode on include_role', include_role: { name: 'r' }, check_mode: true },
  { name: 'become on include_tasks', include_tasks: 'x.yml', become: true },
  { name: 'until left empty on include_tasks', include_tasks: 'x.yml', until: null },
  { name: 'an unbalanced quote', sysctl: "name='net.ipv4.ip_forward value=1" },
  { name: 'action left empty', action: null },
  { name: 'local_action left empty', local_action: null },
  { name: 'local_action as a number', local_action: 5 },
  { name: 'no module at all', become: true },
  { name: 'vars as a string on include_tasks', include_tasks: 'x.yml', vars: 's' },
  { name: 'vars as a number on import_role', import_role: { name: 'r' }, vars: 7 },
  { name: 'vars as a string on include_role', include_role: { name: 'r' }, vars: 's' },
  { name: 'vars mixing a mapping and a number', command: 'x', vars: [{ a: 1 }, 2] },
  { name: 'vars as a list of numbers on a block', block: [{ command: 'y' }], vars: [1] },
  { name: 'a variable named True', command: 'x', vars: { True: 1 } },
  { name: 'a variable name with a dash', command: 'x', vars: [{ ok: 1 }, { 'a-b': 1 }] },
  { name: 'an option include_tasks does not take', include_tasks: { file: 'x.yml', bogus: 1 } },
  { name: 'an option import_tasks does not take, as key=value', import_tasks: 'x.yml bogus=1' },
  { name: 'an option include_role does not take, fully qualified', 'ansible.builtin.include_role': { name: 'r', bogus: 1 } },
  { name: 'public on import_role', import_role: { name: 'r', public: true } },
  { name: 'include_role without a name', include_role: { tasks_from: 'x' } },
  { name: 'include_role with a free-form role', include_role: 'r' },
  { name: 'include_tasks without a file', include_tasks: { apply: { tags: ['a'] } } },
  { name: 'import_tasks with an empty file', import_tasks: { file: '' } },
  { name: 'a loop and then with_items', command: 'x', loop: [1], with_items: [2] },
  { name: 'with_items and then with_dict', command: 'x', with_items: [2], with_dict: {} },
  { name: 'action beside local_action', action: 'command x', local_action: 'command y' },
  { name: 'a key loop_control does not take', command: 'x', loop: [1], loop_control: { loop_var: 'a', bogus: 1 } },
  { name: 'args as bare words', command: 'x', args: 'chdir=/' },
  { name: 'args as a list', command: 'x', args: [1] },
];
// Their near neighbours, which ansible-core loads.
const LOADED: Record<string, unknown>[] = [
  { name: 'tags as a comma list', command: 'x', tags: 'a, never' },
  { name: 'tags as a list', command: 'x', tags: ['a', 'never'] },
  { name: 'loop_control mapping', command: 'x', loop: [1], loop_control: { loop_var: 'pkg', label: 'x' } },
  { name: 'vars left empty', command: 'x', vars: null },
  { name: 'include with apply', include_tasks: { file: 'x.yml', apply: { tags: ['a'], when: 'w' } } },
  { name: 'include_role with its keywords', include_role: { name: 'r' }, when: 'w', vars: { a: 1 }, tags: ['t'], loop: [1], ignore_errors: true },
  { name: 'import_tasks with become', import_tasks: 'x.yml', become: true },
  { name: 'block with its keywords', block: [{ command: 'y' }], rescue: [{ command: 'z' }], when: 'w', become: true, tags: 't' },
  { name: 'an empty rescue', block: [{ command: 'y' }], rescue: [] },
  { name: 'an empty always without block', always: [] },
  {
    name: 'vars as a list of mappings',
    command: 'x',
    vars: [
      { a: 1, c: 0 },
      { a: 2, b: 3 },
    ],
  },
  { name: 'block vars as a list', block: [{ command: 'y' }], vars: [{ a: 1 }] },
  { name: 'a variable named match (not a Python keyword)', command: 'x', vars: { _ok9: 1, match: 2 } },
  { name: 'with_items and then a loop (the with_items wins at run time)', command: 'x', with_items: [2], loop: [1] },
  { name: 'a null loop and then with_items', command: 'x', loop: null, with_items: [2] },
  { name: 'include_tasks file= as key=value', include_tasks: 'file=x.yml' },
  {
    name: 'include_role by role and every option it takes',
    include_role: {
      role: 'r',
      tasks_from: 't',
      vars_from: 'v',
      defaults_from: 'd',
      handlers_from: 'h',
      apply: { tags: ['a'] },
      public: true,
      allow_duplicates: true,
      rolespec_validate: false,
    },
  },
  { name: 'import_role with the options it takes', import_role: { name: 'r', tasks_from: 't', allow_duplicates: true, rolespec_validate: false } },
  {
    name: 'every key loop_control takes in ansible-core 2.14',
    command: 'x',
    loop: [1],
    loop_control: { loop_var: 'a', index_var: 'i', label: 'l', pause: 1, extended: true, extended_allitems: false },
  },
  { name: 'args from a template', command: 'x', args: '{{ extra }}' },
  { name: 'args from a comment template', command: 'x', args: '{# none #}' },
  { name: 'args left empty', command: 'x', args: '' },
  { name: 'internal attributes written as keys', command: 'x', async_val: 5, loop_with: 'items' },
  { name: 'meta with trailing blanks', meta: 'end_host  ' },
  { name: 'meta with a leading space', meta: ' end_play' },
];

describe('task mappings ansible-core refuses as it loads them', () => {
  let oracle: { loaded: Loaded[]; block_keywords: string[] };
  beforeAll(async () => {
    oracle = await ansibleLoad([...REFUSED, ...LOADED]);
  }, 60_000);

  it('ansible-core refuses each of the first list and loads each of the second', () => {
    const refused = oracle.loaded.slice(0, REFUSED.length).map((l) => l.refused);
    expect(refused.filter((r) => r === null)).toEqual([]);
    expect(oracle.loaded.slice(REFUSED.length).map((l) => l.refused)).toEqual(LOADED.map(() => null));
    // The meta test below relies on this: ModuleArgsParser drops the leading space.
    expect(oracle.loaded.at(-1)!.args).toEqual({ _raw_params: 'end_play' });
    // ...and keeps trailing blanks, which _execute_meta then compares as they are ("invalid meta action requested").
    expect(oracle.loaded.at(-2)!.args).toEqual({ _raw_params: 'end_host  ' });
  });

  it('the walk leaves each refused task out with an issue in ansible-core words, naming its file and line', async () => {
    for (const [i, t] of REFUSED.entries()) {
      const r = await walk(JSON.stringify([{ name: 'Before', command: 'b' }, t, { name: 'After', command: 'a' }], null, 1));
      // JSON.stringify with one space of indent puts the second mapping's opening brace on line 6.
      expect(
        r.issues.map((x) => ({ ...x, message: '' })),
        String(t.name),
      ).toEqual([{ ref: { file: PM, line: 6, name: t.name }, message: '', unfollowed: true, refused: true }]);
      // ansible-core's words; where it goes on with a Python repr of the value, the walk stops before it.
      const words = r.issues[0]!.message.replace(/^ansible-core refuses this task: /, '');
      expect(words.length, String(t.name)).toBeGreaterThan(20);
      const theirs = oracle.loaded[i]!.refused!;
      expect(theirs.startsWith(words), `${String(t.name)}: ${words}`).toBe(true);
      // ...up to the end of one of its sentences, not part way through a word.
      expect(['', '.', ':'], `${String(t.name)}: ${words} | ${theirs}`).toContain(theirs.slice(words.length, words.length + 1));
      expect(
        r.tasks.map((x) => x.ref.name),
        String(t.name),
      ).toEqual(['Before', 'After']);
    }
  });

  it('the walk refuses none of their neighbours', async () => {
    for (const t of LOADED) {
      const r = await walk(JSON.stringify([t]), {
        [`${PM.replace('main.yml', 'x.yml')}`]: '- name: Included\n  command: i\n',
        'roles/r/tasks/main.yml': '- command: r\n',
      });
      expect(
        r.issues.filter((i) => i.refused),
        String(t.name),
      ).toEqual([]);
    }
  });

  it('vars written as a list of mappings are merged in order (later names win), as ansible-core loads them', async () => {
    for (const name of ['vars as a list of mappings', 'block vars as a list', 'a variable named match (not a Python keyword)']) {
      const i = REFUSED.length + LOADED.findIndex((t) => t.name === name);
      const r = await walk(JSON.stringify([LOADED[i - REFUSED.length]]));
      const t = r.tasks[0]!;
      expect(Object.assign({}, ...t.vars), name).toEqual(oracle.loaded[i]!.vars);
    }
  });

  it('every Python keyword is refused as a variable name, as ansible-core refuses it', async () => {
    const kw = await execa(ansiblePython(), ['-c', 'import json, keyword; print(json.dumps(keyword.kwlist))']);
    const keywords = JSON.parse(kw.stdout) as string[];
    expect(keywords).toContain('None');
    for (const k of keywords) {
      const r = await walk(JSON.stringify([{ name: 'Named', command: 'x', vars: { [k]: 1 } }]));
      expect(
        r.issues.map((i) => i.message),
        k,
      ).toEqual([`ansible-core refuses this task: Invalid variable name in vars specified for Task: '${k}' is not a valid variable name`]);
    }
  });

  it("an include's apply is loaded as a Block when the include runs: what the Block refuses, the include is refused for", async () => {
    // ansible-playbook's words for each, run live in tasks.walk.test.ts (it stops at the include).
    const refused: [unknown, string][] = [
      ['bad', 'Vars in a Block must be specified as a dictionary, or a list of dictionaries'],
      [{ vars: [{ '1a': 1 }] }, "Invalid variable name in vars specified for Block: '1a' is not a valid variable name"],
      [{ bogus: 1 }, "'bogus' is not a valid attribute for a Block"],
      [{ tags: 5 }, 'tags must be specified as a list'],
      [{ rescue: [{ debug: 'msg=x' }] }, "'rescue' keyword cannot be used without 'block'"],
    ];
    for (const [apply, words] of refused) {
      const a = typeof apply === 'string' ? { vars: apply } : apply;
      const r = await walk(JSON.stringify([{ include_tasks: { file: 'x.yml', apply: a } }]));
      expect(
        r.issues.map((i) => [i.message, i.refused]),
        JSON.stringify(a),
      ).toEqual([[`ansible-core refuses this task: ${words} (in apply, loaded as a Block when the include runs)`, true]]);
    }
    for (const apply of [{}, { vars: [{ v: 1 }, { w: 2 }], tags: ['x'], ignore_errors: true, when: 'a' }, { vars: null }]) {
      const r = await walk(JSON.stringify([{ include_tasks: { file: 'x.yml', apply } }]));
      expect(
        r.issues.filter((i) => i.refused),
        JSON.stringify(apply),
      ).toEqual([]);
    }
  });

  it('a second key that is no keyword (another module, or a misspelt keyword) is refused, naming both; ansible-core refuses each', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ command: 'x', shell: 'y' }, 'command', 'shell'],
      [{ action: 'command x', shell: 'y' }, 'command', 'shell'],
      [{ local_action: { module: 'command', _raw_params: 'x' }, shell: 'y' }, 'command', 'shell'],
      [{ whne: 'false', command: 'x' }, 'whne', 'command'],
      [{ command: 'x', whne: 'false' }, 'command', 'whne'],
      [{ whne: 1, tag: 2 }, 'whne', 'tag'],
    ];
    const theirs = await ansibleLoad(cases.map(([t]) => t));
    for (const [i, [t, a, b]] of cases.entries()) {
      expect(theirs.loaded[i]!.refused, JSON.stringify(t)).not.toBeNull();
      const r = await walk(JSON.stringify([t]));
      expect(
        r.issues.map((x) => x.message),
        JSON.stringify(t),
      ).toEqual([
        `ansible-core refuses this task: ${a} and ${b} are no task keywords and only one can be the module: ansible-core refuses the task ("conflicting action statements" when both are modules, "not a valid attribute for a Task" when one is misspelt)`,
      ]);
    }
    // The two words quoted are ansible-core's.
    expect(theirs.loaded[0]!.refused).toBe('conflicting action statements: command, shell');
    expect(theirs.loaded[4]!.refused).toBe("'whne' is not a valid attribute for a Task");
  });

  it('several options an include does not take are all named, as ansible-core names them (in its own set order)', async () => {
    const cases = [{ import_tasks: { file: 'x.yml', b1: 1, b2: 2 } }, { include_role: { name: 'r', b1: 1, b2: 2 } }];
    const theirs = await ansibleLoad(cases);
    for (const [i, t] of cases.entries()) {
      const r = await walk(JSON.stringify([t]));
      const ours = r.issues.map((x) => x.message.replace(/^ansible-core refuses this task: /, ''));
      const module = Object.keys(t)[0]!;
      expect(ours, module).toEqual([`Invalid options for ${module}: b1,b2`]);
      const [head, names] = theirs.loaded[i]!.refused!.split(': ');
      expect([head, names!.split(',').sort()], module).toEqual([`Invalid options for ${module}`, ['b1', 'b2']]);
    }
  });

  it('a block may hold exactly the keys ansible-core gives a Block', () => {
    expect([...BLOCK_KEYWORDS].sort()).toEqual(oracle.block_keywords);
  });

  it('a task ansible-core refuses leaves every verdict unknown, naming it, where without it kubespray fixes swap', async () => {
    const swap = '- name: Swap off\n  command: /sbin/swapoff -a\n- name: Mask swap\n  systemd_service:\n    name: swap.target\n    masked: true\n';
    expect((await audit(swap)).swap.who).toBe('kubespray');
    const w = await audit(`${swap}- name: Tagged wrong\n  command: x\n  tags: 5\n`);
    for (const p of ['swap', 'br_netfilter', 'ip_forward', 'port_10250'] as const) {
      expect(w[p].who, p).toBe('unknown');
      // The fixture writes "---" on line 1 before these tasks: the refused one starts on line 8.
      expect(w[p].reason, p).toBe(`${PM}:8 "Tagged wrong": ansible-core refuses this task: tags must be specified as a list; ansible-playbook stops there`);
    }
    expect(w.warnings.filter((x) => x.line === 8 && x.file === PM).map((x) => x.message)).toEqual(
      ['swap', 'br_netfilter', 'ip_forward', 'port_10250'].map((p) => `${p}: ansible-core refuses this task: tags must be specified as a list`),
    );
  });
});

describe('where each condition a task inherits was written', () => {
  const BLOCK = [
    '- name: Block', //                1
    '  when: outer', //                2
    '  tags: [b]', //                  3
    '  block:', //                     4
    '    - name: Inner', //            5
    '      command: x', //             6
    '      when: inner', //            7
    '      tags: t1, t2', //           8
    '      check_mode: false', //      9
    '      ignore_errors: true', //    10
    '  rescue:', //                    11
    '    - name: Fix', //              12
    '      command: y', //             13
    '  always:', //                    14
    '    - name: Last', //             15
    '      command: z', //             16
    '- name: Alone', //                17
    '  command: w', //                 18
    '- name: Careful', //              19
    '  check_mode: true', //           20
    '  ignore_errors: true', //        21
    '  block:', //                     22
    '    - name: Held', //             23
    '      command: h', //             24
    '',
  ].join('\n');

  it("a task's tags, when, check_mode and ignore_errors, and its block's, each with its line and level", async () => {
    const { tasks } = await walk(BLOCK);
    const inner = task(tasks, 'Inner');
    expect(inner.conditions).toEqual([
      // Ansible extends a task's tags with its block's; the condition names the task's own tags line.
      { expr: ['b', 't1', 't2'], file: PM, line: 8, level: 'task', keyword: 'tags' },
      { expr: 'outer', file: PM, line: 2, level: 'block' },
      { expr: 'inner', file: PM, line: 7, level: 'task' },
    ]);
    expect(inner.checkMode).toEqual({ expr: false, file: PM, line: 9, level: 'task', keyword: 'check_mode' });
    expect(inner.ignoreErrors).toEqual({ expr: true, file: PM, line: 10, level: 'task', keyword: 'ignore_errors' });
    const held = task(tasks, 'Held');
    expect(held.checkMode).toEqual({ expr: true, file: PM, line: 20, level: 'block', keyword: 'check_mode' });
    expect(held.ignoreErrors).toEqual({ expr: true, file: PM, line: 21, level: 'block', keyword: 'ignore_errors' });
    const alone = task(tasks, 'Alone');
    expect([alone.conditions, alone.checkMode, alone.ignoreErrors]).toEqual([[], null, null]);
  });

  it('only the block section of a block with rescue or always is guarded by it; a block without them guards nothing', async () => {
    const { tasks } = await walk(BLOCK);
    expect(tasks.map((t) => [t.ref.name, t.guarded ?? null])).toEqual([
      ['Inner', { file: PM, line: 1, name: 'Block' }],
      ['Fix', null],
      ['Last', null],
      ['Alone', null],
      ['Held', null],
    ]);
    // The rescue section runs only when the block fails, written where the section starts.
    expect(task(tasks, 'Fix').conditions).toContainEqual({ expr: `a task of the block at ${PM}:1 failed`, file: PM, line: 12, level: 'block', rescue: true });
    expect(task(tasks, 'Last').conditions).toEqual([
      { expr: ['b'], file: PM, line: 3, level: 'task', keyword: 'tags' },
      { expr: 'outer', file: PM, line: 2, level: 'block' },
    ]);
  });

  it('the when of an import and of an include has their level', async () => {
    const { tasks } = await walk('- import_tasks: x.yml\n  when: imported\n- include_tasks: y.yml\n  when: included\n', {
      [PM.replace('main.yml', 'x.yml')]: '- name: X\n  command: x\n',
      [PM.replace('main.yml', 'y.yml')]: '- name: Y\n  command: y\n',
    });
    expect(task(tasks, 'X').conditions).toEqual([{ expr: 'imported', file: PM, line: 2, level: 'import' }]);
    expect(task(tasks, 'Y').conditions).toEqual([{ expr: 'included', file: PM, line: 4, level: 'include' }]);
  });

  it("an import's ignore_errors reaches its tasks; an include's is about the include only", async () => {
    const { tasks } = await walk('- import_tasks: x.yml\n  ignore_errors: true\n- include_tasks: y.yml\n  ignore_errors: true\n', {
      [PM.replace('main.yml', 'x.yml')]: '- name: X\n  command: x\n',
      [PM.replace('main.yml', 'y.yml')]: '- name: Y\n  command: y\n',
    });
    expect(task(tasks, 'X').ignoreErrors).toEqual({ expr: true, file: PM, line: 2, level: 'import', keyword: 'ignore_errors' });
    expect(task(tasks, 'Y').ignoreErrors).toBeNull();
  });

  it('a keyword the audit does not model is a condition naming it, its value and why; harmless loop_control keys are not', async () => {
    const { tasks } = await walk(
      [
        '- name: Elsewhere', //            1
        '  command: x', //                 2
        '  delegate_to: other', //         3
        '- name: Looped', //               4
        '  command: "{{ pkg }}"', //       5
        '  loop: [a]', //                  6
        '  loop_control:', //              7
        '    loop_var: pkg', //            8
        '    label: "{{ pkg }}"', //       9
        '    break_when: pkg == "a"', //   10
        '- name: Plain', //                11
        '  command: "{{ item }}"', //      12
        '  loop: [a]', //                  13
        '',
      ].join('\n'),
    );
    expect(task(tasks, 'Elsewhere').conditions).toEqual([
      {
        expr: 'delegate_to: "other"',
        value: 'other',
        file: PM,
        line: 3,
        level: 'task',
        keyword: 'delegate_to',
        unmodelled: 'delegate_to is not modelled: the module runs on another host',
      },
    ]);
    // break_when (newer ansible-core) stops the loop early: which items run is not modelled. As for
    // every keyword, the line is where its value starts (the loop_control mapping, line 8).
    const looped = task(tasks, 'Looped');
    expect(looped.conditions).toEqual([
      { expr: 'loop_control.break_when', file: PM, line: 8, level: 'task', keyword: 'loop_control', unmodelled: 'loop_control.break_when is not modelled' },
    ]);
    expect([looped.loopVar, task(tasks, 'Plain').loopVar]).toEqual(['pkg', 'item']);
  });
});

describe('include apply', () => {
  const X = PM.replace('main.yml', 'x.yml');
  it("apply's when, vars, tags, check_mode, ignore_errors and unmodelled keywords reach every included task, at the apply line", async () => {
    const { tasks } = await walk(
      [
        '- name: Inc', //                  1
        '  include_tasks:', //             2
        '    file: x.yml', //              3
        '    apply:', //                   4
        '      when: applied', //          5
        '      vars: { a: 1 }', //         6
        '      tags: [x]', //              7
        '      check_mode: true', //       8
        '      ignore_errors: true', //    9
        '      delegate_to: elsewhere', // 10
        '',
      ].join('\n'),
      { [X]: '- name: Got\n  command: g\n  vars: { b: 2 }\n' },
    );
    const got = task(tasks, 'Got');
    // The apply mapping's value starts on line 5: that is where each applied keyword is named.
    expect(got.conditions).toEqual([
      { expr: ['x'], file: PM, line: 5, level: 'task', keyword: 'tags' },
      {
        expr: 'delegate_to: "elsewhere"',
        value: 'elsewhere',
        file: PM,
        line: 5,
        level: 'block',
        keyword: 'delegate_to',
        unmodelled: 'delegate_to is not modelled: the module runs on another host',
      },
      { expr: 'applied', file: PM, line: 5, level: 'block' },
    ]);
    expect(got.vars).toEqual([{ a: 1 }, { b: 2 }]);
    expect(got.checkMode).toEqual({ expr: true, file: PM, line: 5, level: 'block', keyword: 'check_mode' });
    expect(got.ignoreErrors).toEqual({ expr: true, file: PM, line: 5, level: 'block', keyword: 'ignore_errors' });
  });

  it('apply under args: is read too; apply vars left empty add none; an include in a guarded block keeps the guard', async () => {
    const { tasks } = await walk(
      [
        '- name: Guard', //                1
        '  block:', //                     2
        '    - name: Inc', //              3
        '      include_tasks: x.yml', //   4
        '      args:', //                  5
        '        apply:', //               6
        '          vars:', //              7
        '          when: w', //            8
        '  rescue:', //                    9
        '    - command: r', //             10
        '',
      ].join('\n'),
      { [X]: '- name: Got\n  command: g\n' },
    );
    const got = task(tasks, 'Got');
    expect(got.vars).toEqual([]);
    expect(got.conditions).toEqual([{ expr: 'w', file: PM, line: 7, level: 'block' }]);
    expect(got.guarded).toEqual({ file: PM, line: 1, name: 'Guard' });
  });
});

describe('meta', () => {
  it('end_host, end_play and end_role end what follows under their own conditions; clear_facts and a mapping are not modelled; flush_handlers ends nothing', async () => {
    const { tasks } = await walk(
      [
        '- name: Stop workers', //         1
        '  meta: end_host', //             2
        '  when: not_cp', //               3
        '- name: Flush', //                4
        '  meta: flush_handlers', //       5
        '- name: Clear', //                6
        '  meta: clear_facts', //          7
        '- name: Odd', //                  8
        '  meta: { x: 1 }', //             9
        '- name: Spaced', //               10
        '  meta: " end_play"', //          11
        '- name: After', //                12
        '  command: a', //                 13
        '',
      ].join('\n'),
    );
    const after = task(tasks, 'After');
    expect(after.conditions.map(shown)).toEqual([
      { expr: `meta: end_host at ${PM}:1 ran`, file: PM, line: 1, level: 'task', keyword: 'meta' },
      {
        expr: `meta: clear_facts at ${PM}:6 ran`,
        file: PM,
        line: 6,
        level: 'task',
        keyword: 'meta',
        unmodelled: 'meta: clear_facts is not modelled; what runs after it is unknown',
      },
      {
        expr: `meta:  at ${PM}:8 ran`,
        file: PM,
        line: 8,
        level: 'task',
        keyword: 'meta',
        unmodelled: 'meta: {"x":1} is not modelled; what runs after it is unknown',
      },
      // ansible-core's ModuleArgsParser gives " end_play" as end_play (checked in the first describe).
      { expr: `meta: end_play at ${PM}:10 ran`, file: PM, line: 10, level: 'task', keyword: 'meta' },
    ]);
    // Each end carries the conditions it ran under: end_host its when.
    expect(after.conditions[0]!.gate).toEqual([{ expr: 'not_cp', file: PM, line: 3, level: 'task' }]);
  });

  it('a meta action with blanks after it is none ansible-core knows: what follows is unknown, and the action is shown quoted', async () => {
    const { tasks } = await walk('- name: Stop\n  meta: "end_host  "\n- name: After\n  command: a\n');
    expect(task(tasks, 'After').conditions.map(shown)).toEqual([
      {
        expr: `meta: end_host   at ${PM}:1 ran`,
        file: PM,
        line: 1,
        level: 'task',
        keyword: 'meta',
        unmodelled: 'meta: "end_host  " is not modelled; what runs after it is unknown',
      },
    ]);
  });

  it("end_role ends the rest of its own role only: an included role's end_role does not reach the including role", async () => {
    const { tasks } = await walk(
      [
        '- name: Into r2', //              1
        '  include_role:', //              2
        '    name: r2', //                 3
        '- name: Mine', //                 4
        '  command: m', //                 5
        '- name: End mine', //             6
        '  meta: end_role', //             7
        '- name: After end', //            8
        '  command: n', //                 9
        '',
      ].join('\n'),
      { 'roles/r2/tasks/main.yml': '- name: r2 ends\n  meta: end_role\n- name: r2 after\n  command: r\n' },
    );
    const metas = (name: string) =>
      task(tasks, name)
        .conditions.filter((c) => c.keyword === 'meta')
        .map((c) => c.expr);
    expect(metas('r2 after')).toEqual(['meta: end_role at roles/r2/tasks/main.yml:1 ran']);
    expect(metas('Mine')).toEqual([]);
    expect(metas('After end')).toEqual([`meta: end_role at ${PM}:6 ran`]);
  });
});

describe("include_role's vars_from and defaults_from", () => {
  const R2 = { 'roles/r2/tasks/main.yml': '- name: In r2\n  command: x\n' };
  it('a literal vars_from is followed and names the vars file; without them the role reads main', async () => {
    const lit = await walk('- include_role:\n    name: r2\n    vars_from: other.yml\n', R2);
    expect(lit.issues).toEqual([]);
    expect(task(lit.tasks, 'In r2').varsRole).toEqual({ role: 'r2', defaultsFrom: 'main', varsFrom: 'other.yml' });
    const plain = await walk('- import_role:\n    name: r2\n', R2);
    expect(task(plain.tasks, 'In r2').varsRole).toEqual({ role: 'r2', defaultsFrom: 'main', varsFrom: 'main' });
  });

  it('a templated vars_from or defaults_from, or one that is not a string, is not followed', async () => {
    for (const [k, v] of [
      ['vars_from', '"{{ which }}"'],
      ['defaults_from', '"{{ which }}"'],
      ['vars_from', '5'],
    ]) {
      const r = await walk(`- name: R\n  include_role:\n    name: r2\n    ${k}: ${v}\n`, R2);
      expect(r.tasks, `${k}: ${v}`).toEqual([]);
      expect(r.issues, `${k}: ${v}`).toEqual([
        { ref: { file: PM, line: 1, name: 'R' }, message: 'include_role of a templated role (r2); not followed', unfollowed: true },
      ]);
    }
  });
});
