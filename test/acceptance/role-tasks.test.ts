// A kubespray role's variables and its tasks walked once, for the acceptance
// checks' who-fixes: the walk follows import_tasks with names templated by
// the role's own variables; a name that cannot be templated, or a role whose
// tasks cannot be read, is said, not dropped. Fixture checkouts by hand.
import { describe, expect, it } from 'vitest';
import { roleTasks } from '../../src/acceptance/role-tasks.js';
import { fixtureNode } from '../helpers/kubespray-fixture.js';

const ROLE = 'kubernetes/node';
const MAIN = 'roles/kubernetes/node/tasks/main.yml';

describe('roleTasks', () => {
  it("an import_tasks whose file name is one of the role's variables is followed, the variables kept beside the tasks", async () => {
    const node = await fixtureNode({
      'roles/kubernetes/node/defaults/main.yml': 'kubelet_tasks: kubelet.yml\n',
      [MAIN]: '---\n- name: Kubelet\n  import_tasks: "{{ kubelet_tasks }}"\n',
      'roles/kubernetes/node/tasks/kubelet.yml': '---\n- name: Enable kubelet\n  service:\n    name: kubelet\n    enabled: yes\n',
    });
    const r = await roleTasks(node, ROLE);
    expect(r.known).toBe(true);
    if (!r.known) return;
    expect(r.value.ctx.get('kubelet_tasks')).toMatchObject({ value: 'kubelet.yml', line: 1 });
    expect(r.value.walked.tasks.map((t) => [t.ref.file, t.ref.line, t.ref.name, t.module])).toContainEqual([
      'roles/kubernetes/node/tasks/kubelet.yml',
      2,
      'Enable kubelet',
      'service',
    ]);
  });
  it('a tasks file that is missing, or an import whose name cannot be templated: known, with the issue the walk says', async () => {
    const none = await roleTasks(await fixtureNode({ 'roles/other/tasks/main.yml': '---\n[]\n' }), ROLE);
    expect(none.known && none.value.walked.issues.map((x) => [x.message, x.unfollowed])).toEqual([[`task file ${MAIN} does not exist`, true]]);
    const undef = await roleTasks(await fixtureNode({ [MAIN]: '---\n- name: x\n  import_tasks: "{{ nope }}"\n' }), ROLE);
    expect(undef.known && undef.value.walked.issues.map((x) => [x.ref.line, x.message])).toEqual([
      [2, "import_tasks {{ nope }} cannot be evaluated ('nope' is undefined); not followed"],
    ]);
  });
  it('variables that cannot be read: not known, naming the role and the error', async () => {
    const node = await fixtureNode({ [MAIN]: '---\n[]\n' });
    const failing = { ...node, vars: () => Promise.reject(new Error('inventory/lab/group_vars/all.yml:3: bad indentation')) };
    expect(await roleTasks(failing, ROLE)).toEqual({
      known: false,
      reason: 'the variables of kubernetes/node cannot be read: inventory/lab/group_vars/all.yml:3: bad indentation',
    });
  });
});
