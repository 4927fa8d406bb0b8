// One of kubespray's roles as a check's who-fixes reads it for this node: the variables its tasks see, and its
// tasks walked with each include's file name templated in them; not known with why.
import type { KubesprayNode } from '../kubespray/report.js';
import type { VarContext } from '../kubespray/vars.js';
import { walkRole, type RoleTasks } from '../kubespray/tasks.js';
import type { Known } from './checker.js';
import { known, notKnown } from './checker.js';

export async function roleTasks(node: KubesprayNode, role: string): Promise<Known<{ ctx: VarContext; walked: RoleTasks }>> {
  const ctx = await node.vars(role).catch((e: Error) => e);
  if (ctx instanceof Error) return notKnown(`the variables of ${role} cannot be read: ${ctx.message}`);
  const walked = await walkRole(node.checkout, role, (value) => {
    const t = ctx.template(value);
    return t.ok && typeof t.value === 'string' ? { value: t.value } : { reason: t.ok ? 'not a file name' : t.reason };
  }).catch((e: Error) => e);
  if (walked instanceof Error) return notKnown(`${role}'s tasks cannot be read: ${walked.message}`);
  return known({ ctx, walked });
}
