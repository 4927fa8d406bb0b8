// The keyword tables of the task walk, against ansible-core itself (the
// python ansible runs under): every keyword it accepts is classified, the
// include and loop_control keyword sets are its own, and a variable name is
// what ansible.utils.vars.isidentifier accepts.
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { HARMLESS_LOOP_CONTROL, isVariableName, KEYWORD_CLASSES, LOOP_CONTROL_KEYWORDS, VALID_INCLUDE_KEYWORDS } from '../../src/ansible/keywords.js';
import { ansiblePython } from '../helpers/ansible-python.js';

async function python(code: string, input = ''): Promise<unknown> {
  return JSON.parse((await execa(ansiblePython(), ['-c', code], { input })).stdout);
}

describe('keyword tables against ansible-core', () => {
  it('every keyword ansible-core accepts on a task, block or handler is classified modelled, harmless or unknown', async () => {
    const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-task-args.py')], { input: '[]' });
    const keywords = (JSON.parse(r.stdout) as { keywords: string[] }).keywords;
    // async_val is the attribute behind `async`, loop_with the one behind with_*: never written as keys.
    const written = [...keywords.filter((k) => k !== 'async_val' && k !== 'loop_with'), 'block', 'rescue', 'always'];
    expect(written.filter((k) => !(k in KEYWORD_CLASSES))).toEqual([]);
  });

  it('loop_control may hold exactly the keys ansible-core gives a LoopControl, and break_when (ansible-core 2.18)', async () => {
    const r = await execa(ansiblePython(), [
      '-c',
      'import json; from ansible.playbook.loop_control import LoopControl; print(json.dumps(sorted(LoopControl.fattributes)))',
    ]);
    const theirs = JSON.parse(r.stdout) as string[];
    expect([...LOOP_CONTROL_KEYWORDS].filter((k) => k !== 'break_when').sort()).toEqual(theirs.filter((k) => k !== 'break_when').sort());
    expect(LOOP_CONTROL_KEYWORDS.has('break_when')).toBe(true);
  });

  it('include_tasks and include_role accept the keywords of TaskInclude.VALID_INCLUDE_KEYWORDS', async () => {
    const theirs = (await python(
      'import json; from ansible.playbook.task_include import TaskInclude; print(json.dumps(sorted(TaskInclude.VALID_INCLUDE_KEYWORDS)))',
    )) as string[];
    expect([...VALID_INCLUDE_KEYWORDS].sort()).toEqual(theirs);
  });

  it('the harmless loop_control keys are all loop_control keys, and every class is one of the three', () => {
    for (const k of HARMLESS_LOOP_CONTROL) expect(LOOP_CONTROL_KEYWORDS.has(k), k).toBe(true);
    expect(new Set(Object.values(KEYWORD_CLASSES).map((c) => c.class))).toEqual(new Set(['modelled', 'harmless', 'unknown']));
  });
});

describe('isVariableName against ansible.utils.vars.isidentifier', () => {
  const NAMES = [
    'a',
    '_',
    'kube_network_plugin',
    'x1',
    '1x',
    'a-b',
    'a.b',
    '',
    'True',
    'None',
    'lambda',
    'async',
    'match',
    'print',
    'é',
    'aé',
    'ａ',
    'a b',
    'class_',
    '__init__',
  ];
  it('agrees on every name', async () => {
    const theirs = (await python(
      'import json, sys\nfrom ansible.utils.vars import isidentifier\nprint(json.dumps([isidentifier(n) for n in json.load(sys.stdin)]))',
      JSON.stringify(NAMES),
    )) as boolean[];
    expect(NAMES.map((n) => isVariableName(n))).toEqual(theirs);
  });
});
