// How an assert is judged and explained: the values a person is shown beside
// a false item, and the reasons an assert is left unjudged, each naming its
// file and line (counted in the fixtures: the first task starts on line 1).
import { describe, expect, it } from 'vitest';
import { evaluateAssert } from '../../src/kubespray/who-fixes.js';
import { walkRole } from '../../src/kubespray/tasks.js';
import type { Task } from '../../src/kubespray/tasks.js';
import { VarContext } from '../../src/kubespray/vars.js';
import { PM, checkout } from '../helpers/kubespray-fixture.js';

async function assertTask(text: string): Promise<Task> {
  const r = await walkRole(await checkout({ [PM]: text }), 'kubernetes/preinstall');
  return r.tasks.find((t) => t.module === 'assert')!;
}

const vars = (v: Record<string, unknown>) => new VarContext(Object.entries(v).map(([name, value]) => ({ name, value, file: 'vars.yml', line: 1 })));

describe('the values shown beside a false assert', () => {
  it('each variable and each lookup of one by a constant key, once, with its value; dictionaries and the constants True, False and None are not shown', async () => {
    const t = await assertTask(
      [
        '- name: Memory',
        '  assert:',
        "    that: ansible_facts['memtotal_mb'] >= minimal and flag == False and big | length > 5 and ansible_facts.memtotal_mb > 0 and nothing == None and spare[0] == True",
        '',
      ].join('\n'),
    );
    const v = evaluateAssert(t, vars({ ansible_facts: { memtotal_mb: 512 }, minimal: 1024, flag: true, big: { a: 1 }, nothing: null, spare: [3] }), true);
    expect(v.result).toBe('fail');
    expect(v.failed!.values).toEqual(['ansible_facts["memtotal_mb"] = 512', 'minimal = 1024', 'flag = true', 'nothing = null', 'spare[0] = 3']);
    expect(v.failed!.msg).toBe('Assertion failed');
    // Not a memory comparison (the report hides an unjudged memory assert, which its memory verdict says instead).
    expect(v.memory).toBe(false);
  });

  it('a lookup by a variable key, or of something that is not a variable, shows the variables and constant lookups inside it; a negation shows its variable', async () => {
    const t = await assertTask("- name: Ports\n  assert:\n    that: not swap_on and ports[idx] == 6443 and cfg.ports[slot] == 6443 and node.name[0] == 'c'\n");
    const v = evaluateAssert(t, vars({ swap_on: true, ports: [10250, 6443], idx: 1, cfg: { ports: [6443] }, slot: 0, node: { name: 'cp1' } }), true);
    expect(v.result).toBe('fail');
    // Not ports["idx"] = undefined: the key is idx's value, not the text idx.
    expect(v.failed!.values).toEqual(['swap_on = true', 'idx = 1', 'slot = 0', 'node["name"] = "cp1"']);
  });

  it('an item YAML reads as a boolean is shown as Ansible writes it back', async () => {
    const t = await assertTask('- name: Literal\n  assert:\n    that:\n      - 1 == 1\n      - false\n');
    const v = evaluateAssert(t, vars({}), true);
    expect(v.that).toEqual(['1 == 1', 'false']);
    expect(v.failed!.that).toBe('false');
  });
});

describe('an assert left unjudged says why, naming its line', () => {
  it('a loop that is a template evaluated per item; one that cannot be evaluated, or is not a list, is the reason', async () => {
    const looped = (loop: string) => assertTask(`- name: Each\n  assert:\n    that: item > 0\n  loop: "${loop}"\n`);
    expect(evaluateAssert(await looped('{{ counts }}'), vars({ counts: [1, 2] }), true).result).toBe('pass');
    expect(evaluateAssert(await looped('{{ counts }}'), vars({ counts: [1, 0] }), true).result).toBe('fail');
    expect(evaluateAssert(await looped('{{ counts }}'), vars({}), true).reason).toBe(`${PM}:1 loop "{{ counts }}": 'counts' is undefined`);
    expect(evaluateAssert(await looped('{{ counts }}'), vars({ counts: 3 }), true).reason).toBe(`${PM}:1 loop "{{ counts }}": not a list`);
  });

  it('an item that cannot be evaluated is named with the reason, and with no facts gathered the reason says so', async () => {
    const t = await assertTask('- name: Items\n  assert:\n    that:\n      - 1 == 1\n      - missing > 0\n');
    expect(evaluateAssert(t, vars({}), true)).toMatchObject({ result: 'unknown', reason: `${PM}:1 missing > 0: 'missing' is undefined (comparison)` });
    expect(evaluateAssert(t, vars({}), false)).toMatchObject({
      result: 'unknown',
      reason: `${PM}:1 missing > 0: 'missing' is undefined (comparison) (no facts gathered)`,
    });
    // Every item is read, the last one included: all true passes.
    expect(evaluateAssert(t, vars({ missing: 1 }), true).result).toBe('pass');
  });

  it('a when that cannot be evaluated leaves it unjudged, naming the condition', async () => {
    const t = await assertTask('- name: Guarded\n  assert:\n    that: 1 == 2\n  when: gate\n');
    expect(evaluateAssert(t, vars({}), true)).toMatchObject({
      result: 'unknown',
      reason: `whether it runs cannot be evaluated: ${PM}:4 gate: 'gate' is undefined`,
    });
    expect(evaluateAssert(t, vars({ gate: false }), true).result).toBe('skipped');
  });
});
