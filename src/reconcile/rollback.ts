// reconcile --rollback [RUN_ID]: undo one applied run from its journal, in
// reverse order, through the same write door. A file changed after the run
// is never overwritten without --force. Runtime state is put back only on a
// live host for a live run; loaded modules stay loaded. The door reads its
// journal and plans the undo (door/rollback-plan.ts); the engine gives it the
// runtime undo (runtime-undo.ts) and renders the plan and its outcome here.
import type { Host } from '../host.js';
import { planRollback as planFromJournal, type RollbackPlan } from '../door/rollback-plan.js';
import type { RollbackOutcome } from '../door/rollback-run.js';
import { checkedRunsDirs, runsDirOf } from './reports.js';
import { terminalSafe } from '../untrusted-text.js';
import { redactString } from '../redact.js';
import { FORMAT_VERSION } from './plan-document.js';
import { SystemdRuntimeUndo } from './runtime-undo.js';

export { undoOrder, type RollbackPlan, type UndoPhase, type UndoStep } from '../door/rollback-plan.js';
export { executeRollback, type RollbackOutcome } from '../door/rollback-run.js';

/** The rollback of run `id` (or the newest apply that changed something) under `reportsDir`. */
export async function planRollback(host: Host, reportsDir: string, id: string | undefined): Promise<RollbackPlan> {
  const dirs = await checkedRunsDirs(host, reportsDir);
  return planFromJournal(host, dirs, runsDirOf(reportsDir), id, new SystemdRuntimeUndo());
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The --rollback document (--json): the plan, and what was done when it ran. */
export function rollbackDocument(plan: RollbackPlan, outcome: RollbackOutcome | null, rollbackRun: string | null, preview: boolean): unknown {
  return {
    format_version: FORMAT_VERSION,
    mode: preview ? 'rollback-plan' : 'rollback',
    run: plan.run,
    already_rolled_back_by: plan.alreadyBy,
    incomplete: plan.incomplete,
    steps: plan.steps.map((s) => ({ summary: s.summary, ...(s.conflict ? { conflict: s.conflict } : {}), ...(s.refused ? { refused: s.refused } : {}) })),
    notes: plan.notes,
    done: outcome?.done ?? [],
    failed: outcome?.failed ?? [],
    journal: rollbackRun,
  };
}

/**
 * The --rollback text. `<` a step it can undo, `!` one it cannot (and why);
 * an incomplete journal says where it ends and that nothing after is known.
 */
export function renderRollback(plan: RollbackPlan, outcome: RollbackOutcome | null, o: { preview: boolean; force: boolean }): string {
  const lines: string[] = [];
  const inc = plan.incomplete;
  const tail = inc ? `  ! anything run ${plan.run} did after ${inc.last}: not in its journal, so it cannot be undone` : null;
  if (plan.alreadyBy) lines.push(`run ${plan.run} was already rolled back by ${plan.alreadyBy}; nothing to do`);
  else if (outcome === null) {
    const conflicts = plan.steps.filter((s) => s.conflict && !s.refused).length;
    const refused = plan.steps.filter((s) => s.refused).length;
    const undoable = plan.steps.filter((s) => !s.refused && s.act && (!s.conflict || o.force)).length;
    const refusedRun = !o.preview;
    lines.push(`${refusedRun ? 'rollback refused' : 'rollback plan'} for run ${plan.run}: ${plural(plan.steps.length, 'step')}`);
    if (inc) lines.push(`the journal of run ${plan.run} is incomplete: ${inc.why}; it ends at ${inc.last}`);
    for (const s of plan.steps)
      lines.push(s.refused ? `  ! ${s.summary}: ${s.refused}` : `  < ${s.summary}${s.conflict ? `  [changed since: ${s.conflict}]` : ''}`);
    if (tail) lines.push(tail);
    if (refused > 0) lines.push(`${plural(refused, 'step')} cannot be undone (marked !); --force does not override that`);
    if (conflicts > 0 && !o.force) lines.push(`${plural(conflicts, 'file')} changed after the run; nothing was changed; rerun with --force to overwrite them`);
    if (inc && !o.force)
      lines.push(
        `the journal is incomplete: a rollback would undo only the ${plural(undoable, 'step')} marked <; nothing was changed; rerun with --force to undo them`,
      );
    else if (refused > 0 && refusedRun) lines.push(`nothing was changed; rerun with --force to undo the other ${plural(undoable, 'step')}`);
  } else {
    lines.push(`rolled back run ${plan.run}${inc ? ` as far as its incomplete journal goes (${inc.why})` : ''}:`);
    for (const d of outcome.done) lines.push(`  < ${d}`);
    for (const f of outcome.failed) lines.push(`  ! ${f.step}: ${f.message}`);
    if (tail) lines.push(tail);
  }
  for (const n of plan.notes) lines.push(`  note: ${n}`);
  // Summaries, conflicts and notes quote the host's paths and unit names: data on the screen, never control.
  return lines.map((l) => terminalSafe(redactString(l))).join('\n') + '\n';
}
