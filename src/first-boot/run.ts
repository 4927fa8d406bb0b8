// `reconcile --first-boot`: what the first-boot unit runs, live, once. It
// waits for candidate services, then runs --apply (first_boot: apply) or
// --plan (verify), and records the outcome in first-boot.json. On success it
// writes the stamp and removes its own .wants link through the write door,
// in the same run as the apply, so `--rollback` of that run re-arms it. On
// failure it leaves both: the unit fails, stays enabled, and says why.
import path from 'node:path';
import type { Host } from '../host.js';
import type { DesiredState } from '../desired-state.js';
import { ReconcileError } from '../errors.js';
import { utf8Bytes, displayText } from '../bytes.js';
import { WriteDoor } from '../door/door.js';
import { acquireLock } from '../door/lock.js';
import { newRunJournal, reportModes, writeReport } from '../reconcile/reports.js';
import { FIRST_BOOT_REPORT, FIRST_BOOT_UNIT, STAMP, WANTS_LINK } from '../resources/first-boot/unit.js';
import { waitForCandidates } from './wait.js';
import type { FirstBootWait } from '../resources/types.js';
import { TOOL_VERSION } from '../version.js';
import { applyRun, openRun, planRun, type Io, type RunRequest } from '../reconcile/run.js';

export interface FirstBootOutcome {
  format_version: '1.0';
  unit: string;
  mode: DesiredState['first_boot'];
  started: string;
  finished: string;
  seconds: number;
  waited: FirstBootWait[];
  /** converged | in sync (verify) | failed | pending (verify found work) */
  result: 'converged' | 'in sync' | 'failed' | 'pending';
  /** Exit code of the apply or plan. */
  exit: number;
  /** The run directory holding the journal and result.json. */
  run: string | null;
  /** Why it failed, one line each, from the run's result.json. */
  failures: string[];
}

export interface FirstBootDeps {
  /** The engine's apply, with a hook that runs inside its write door before the run ends. */
  apply(finish: (door: WriteDoor, code: number) => Promise<number>): Promise<number>;
  plan(): Promise<number>;
  /** The tool's version, for the journal. */
  tool: string;
  now?: () => Date;
}

async function failuresOf(host: Host, runDir: string): Promise<string[]> {
  const text = await host.readBytes(path.posix.join(runDir, 'result.json'));
  if (text === null) return [`no result.json in ${runDir}: the run stopped before it finished (see the journal)`];
  try {
    const doc = JSON.parse(displayText(text)) as { failures?: Array<{ resource: string; message: string }>; operator_required?: number };
    const lines = (doc.failures ?? []).map((f) => `${f.resource}: ${f.message}`);
    if (doc.operator_required) lines.push(`${doc.operator_required} change(s) need an operator (see the plan in the journal)`);
    return lines;
  } catch (e) {
    return [`${runDir}/result.json is not JSON: ${(e as Error).message}`];
  }
}

/** Success: stamp and self-disable, journaled. Always: the outcome report. */
async function record(door: WriteDoor, desired: DesiredState, outcome: FirstBootOutcome, progress: (m: string) => void): Promise<void> {
  await writeReport(door, desired.reports_dir, FIRST_BOOT_REPORT, outcome);
  const ok = outcome.result === 'converged' || outcome.result === 'in sync';
  if (!ok) return;
  await door.writeFile({ path: STAMP, content: utf8Bytes(`${outcome.finished} ${outcome.run ?? ''}\n`), mode: 0o644 });
  if (await door.remove(WANTS_LINK)) progress(`first boot: disabled ${FIRST_BOOT_UNIT} (removed ${WANTS_LINK})`);
}

export async function runFirstBoot(host: Host, desired: DesiredState, progress: (m: string) => void, deps: FirstBootDeps): Promise<number> {
  if (!host.live) throw new ReconcileError('--first-boot runs on the booted host, not with --root; nothing was changed');
  if (desired.first_boot === 'off') {
    progress(`first boot: first_boot is off in ${desired.source}; nothing to do`);
    return 0;
  }
  const now = deps.now ?? (() => new Date());
  const started = now();
  progress(`first boot (${desired.first_boot}): started`);
  const waited = await waitForCandidates(host, desired, progress);
  const outcome = (exit: number, result: FirstBootOutcome['result'], run: string | null, failures: string[]): FirstBootOutcome => {
    const finished = now();
    return {
      format_version: '1.0',
      unit: FIRST_BOOT_UNIT,
      mode: desired.first_boot,
      started: started.toISOString(),
      finished: finished.toISOString(),
      seconds: Math.round((finished.getTime() - started.getTime()) / 100) / 10,
      waited,
      result,
      exit,
      run,
      failures,
    };
  };
  let code: number;
  if (desired.first_boot === 'apply') {
    code = await deps.apply(async (door, applied) => {
      const o = outcome(applied, applied === 0 ? 'converged' : 'failed', door.runDir, applied === 0 ? [] : await failuresOf(host, door.runDir));
      try {
        await record(door, desired, o, progress);
      } catch (e) {
        progress(`first boot: error: ${(e as Error).message}`);
        return 1;
      }
      for (const f of o.failures) progress(`first boot: failed: ${f}`);
      return applied;
    });
  } else {
    const planned = await deps.plan();
    // verify changes nothing but its own record, in a run of its own.
    const lock = await acquireLock(host, 'apply', progress);
    try {
      const journal = newRunJournal(desired.reports_dir);
      const door = await WriteDoor.open(host, {
        runDir: journal.dir,
        runId: journal.id,
        mode: 'apply',
        tool: deps.tool,
        reports: reportModes(desired.reports_mode),
      });
      const failures =
        planned === 0
          ? []
          : [
              planned === 2
                ? 'the plan has pending changes or operator action (see its output above in the journal)'
                : 'the plan failed (see the error above in the journal)',
            ];
      const o = outcome(planned, planned === 0 ? 'in sync' : planned === 2 ? 'pending' : 'failed', door.runDir, failures);
      try {
        await record(door, desired, o, progress);
        await door.end(planned === 0 ? 'ok' : 'failed');
      } catch (e) {
        await door.end('failed', (e as Error).message).catch(() => undefined);
        throw e;
      }
      for (const f of failures) progress(`first boot: failed: ${f}`);
    } finally {
      await lock.release();
    }
    code = planned === 0 ? 0 : 1;
  }
  progress(`first boot (${desired.first_boot}): ${code === 0 ? 'done' : 'FAILED'}; details in ${path.posix.join(desired.reports_dir, FIRST_BOOT_REPORT)}`);
  return code;
}

/** `reconcile --first-boot`: opens the run as any other, then the first boot takes the engine's apply or plan. */
export async function firstBootRun(req: RunRequest, io: Io): Promise<number> {
  const run = await openRun(req, io);
  return runFirstBoot(run.host, run.desired, run.progress, {
    apply: (record) => applyRun({ ...run, req: { ...req, mode: 'apply' } }, record),
    plan: () => planRun({ ...run, req: { ...req, mode: 'plan' } }),
    tool: TOOL_VERSION,
  });
}
