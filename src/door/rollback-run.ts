// Running a planned rollback through the door, step by step, and marking the run rolled back when every
// step went through.
import path from 'node:path';
import { utf8Bytes } from '../bytes.js';
import type { WriteDoor } from './door.js';
import { MARKER, type RollbackPlan } from './rollback-plan.js';

export interface RollbackOutcome {
  done: string[];
  failed: Array<{ step: string; message: string }>;
}

/**
 * Runs the plan's steps; `unlock` releases this rollback's lock before the
 * steps that remove the directories the undone run made for its own lock.
 */
export async function executeRollback(door: WriteDoor, plan: RollbackPlan, unlock?: () => Promise<void>): Promise<RollbackOutcome> {
  const out: RollbackOutcome = { done: [], failed: [] };
  let locked = true;
  for (const s of plan.steps) {
    if (s.phase === 'unlocked' && locked) {
      locked = false;
      await unlock?.();
    }
    if (s.refused) {
      out.failed.push({ step: s.summary, message: s.refused });
      continue;
    }
    if (!s.act) {
      out.failed.push({ step: s.summary, message: s.conflict ?? 'nothing to restore it from' });
      continue;
    }
    try {
      await s.act(door);
      out.done.push(s.summary);
    } catch (e) {
      out.failed.push({ step: s.summary, message: (e as Error).message });
    }
  }
  if (out.failed.length === 0) {
    await door.writeFile({
      path: path.posix.join(plan.runDir, MARKER),
      content: utf8Bytes(JSON.stringify({ by: door.runId, at: new Date().toISOString() }, null, 2) + '\n'),
      report: true,
    });
  }
  return out;
}
