// The walk's answered registers (AuditOptions.registers): a register the
// caller has read on the host (kubespray's stat of /run/ostree-booted) is a
// value, so the set_fact built from it (is_ostree) and the conditions that
// read it are evaluated; without an answer it stays a run-time value, as
// ansible-playbook alone knows it. The tasks are kubespray's own
// (v2.24.0 roles/container-engine/runc/tasks/main.yml:2-19, abridged).
import { describe, expect, it } from 'vitest';
import { evaluateAuditedRoles, type EvaluatedTask } from '../../src/kubespray/who-fixes.js';
import { checkout } from '../helpers/kubespray-fixture.js';

const RUNC =
  '---\n- name: Runc | check if fedora coreos\n  stat:\n    path: /run/ostree-booted\n  register: ostree\n\n' +
  '- name: Runc | set is_ostree\n  set_fact:\n    is_ostree: "{{ ostree.stat.exists }}"\n\n' +
  '- name: Runc | Uninstall runc package managed by package manager\n  package:\n    name: runc\n    state: absent\n  when:\n    - not is_ostree\n';

describe('registers the caller answers', () => {
  const removal = async (registers?: (e: EvaluatedTask) => unknown) => {
    const ck = await checkout({ 'roles/container-engine/runc/tasks/main.yml': RUNC });
    const { evaluated } = await evaluateAuditedRoles(ck, { registers }, ['container-engine/runc']);
    return evaluated.find((e) => e.task.module === 'package')!.status;
  };
  const stat = (exists: boolean) => (e: EvaluatedTask) => (e.task.module === 'stat' && e.args.path === '/run/ostree-booted' ? { stat: { exists } } : undefined);

  it('no answer: the stat is a run-time value, and so is the condition built on it', async () => {
    expect((await removal()).runs).toBe('at run time');
  });
  it('answered: /run/ostree-booted absent, the task runs; present, it does not (its own when)', async () => {
    expect(await removal(stat(false))).toEqual({ runs: 'yes' });
    expect(await removal(stat(true))).toMatchObject({ runs: 'no', because: { expr: 'not is_ostree' } });
  });
  it('an answer for another task leaves this register a run-time value', async () => {
    expect((await removal((e) => (e.task.module === 'command' ? { rc: 0 } : undefined))).runs).toBe('at run time');
  });
});
