// One reconcile run: load + validate -> observe -> record before-state ->
// plan -> (apply -> observe again -> verify -> reports). Exit codes follow
// Terraform's -detailed-exitcode: plan 0 in sync, 2 pending, 1 error; apply
// 0 converged and verified, 1 otherwise.
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { Host, describeFsError } from '../host.js';
import { executeRollback, planRollback, renderRollback, rollbackDocument } from './rollback.js';
import type { CommandRunner } from '../host.js';
import { ReconcileError, RunAbortedError } from '../errors.js';
import type { DesiredState } from '../desired-state.js';
import { loadDesiredState } from './load.js';
import { assertHostInputs } from './host-checks.js';
import { makePlan, operatorChanges, planWarnings } from './plan.js';
import type { Plan } from './plan.js';
import { applyPlan } from './apply.js';
import type { ApplyResult } from './apply.js';
import { verifyConverged } from './verify.js';
import { observeBeforeState } from './before-state.js';
import type { BeforeState } from './before-state.js';
import { checkedRunsDirs, jsonText, newRunJournal, recordBeforeState, reportModes, writeReport, writeRunFile, type RunJournal } from './reports.js';
import { WriteDoor } from '../door/door.js';
import { LOCK_PATH, acquireLock } from '../door/lock.js';
import { madeDirs, missingDirs, removeMadeDirs } from '../door/lock-dirs.js';
import { describeInterrupted, findUnfinishedRuns, settleInterruptedRuns, type UnfinishedRun } from '../door/interrupted.js';
import { FORMAT_VERSION, jsonPlan, planDocument } from './plan-document.js';
import { paletteFor, renderPlan, type ColorMode, type Detail } from './plan-text.js';
import { renderApplyResult, renderApplyStart } from './apply-text.js';
import { mustDo } from './must-do.js';
import type { PlanDocument } from './plan-document.js';
import { acceptFindings, type Acceptance, type Finding } from '../findings.js';
import { CHECKERS } from '../acceptance/index.js';
import { FORMER_NODE_CHECK } from '../former-node/finding.js';
import { redactDeep } from '../redact.js';
import { hostReports, type HostReports } from './host-reports.js';
import { outlivingOperators, planPromises, planUnknowns, withdrawnByUnknown } from './promises.js';

export { TOOL_VERSION } from '../version.js';
import { TOOL_VERSION } from '../version.js';

export interface RunRequest {
  mode: 'plan' | 'apply' | 'facts';
  file: string;
  root?: string;
  json: boolean;
  /** --rollback [RUN_ID]: undo a run instead (with mode plan: preview it). */
  rollback?: { run?: string; force: boolean };
  /** -q / -v: how much of the text plan and apply's text is shown (never the JSON). */
  detail?: Detail;
  /** --color / --no-color; auto: on a terminal, unless NO_COLOR is set. */
  color?: ColorMode;
  /** --accept: check names whose findings are accepted (beside the desired state's accept list). */
  accept?: string[];
}

const paletteOf = ({ io, req }: Pick<RunContext, 'io' | 'req'>) => paletteFor(io.stdout, io.env, req.color);

/**
 * --root must name an existing directory other than /. An empty value (an
 * unset pipeline variable) or a typo must never fall through to the build
 * machine, and the tool never creates it.
 */
export function checkRoot(root: string | undefined): string | undefined {
  if (root === undefined) return undefined;
  if (root.trim() === '')
    throw new ReconcileError(
      "--root is empty (an unset variable?); give the mounted image's directory, or leave --root out for the live host; nothing was changed",
    );
  let real: string;
  try {
    real = realpathSync(root);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ReconcileError(`--root ${root}: ${code === 'ENOENT' ? 'does not exist' : describeFsError(e)}; it is never created; nothing was changed`);
  }
  if (!statSync(real).isDirectory()) throw new ReconcileError(`--root ${root} is not a directory; nothing was changed`);
  if (real === '/')
    throw new ReconcileError(`--root ${root} resolves to /, the build machine itself; leave --root out to act on the live host; nothing was changed`);
  return real;
}

export interface Io {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** For tests: replaces execa. */
  runner?: CommandRunner;
  /** For tests: whether the caller counts as root. */
  isRoot?: () => boolean;
  /** The program's name as invoked (cli-options.ts programName), for its messages; `reconcile` when not given. */
  program?: string;
}

/** One run: what each of its steps needs, made once by openRun. */
export interface RunContext {
  req: RunRequest;
  io: Io;
  host: Host;
  desired: DesiredState;
  progress: (m: string) => void;
}

/**
 * The desired state loaded and checked against the host, and the right to
 * write: everything a run needs before it reads anything for a plan.
 */
export async function openRun(req: RunRequest, io: Io): Promise<RunContext> {
  const root = checkRoot(req.root);
  const desired = await loadDesiredState(req.file);
  const host = new Host({ root, runner: io.runner });
  const isRoot = io.isRoot ?? (() => host.isRoot());
  // Desired-state problems only the host reveals: found before anything is read for the plan or written.
  // A rollback replays a journal and needs none of them.
  if (!req.rollback) await assertHostInputs(host, desired);
  const writes = req.mode === 'apply';
  if (writes && host.live && !isRoot()) {
    throw new ReconcileError(
      `--${req.rollback ? 'rollback' : 'apply'} on the live host needs root (it runs swapoff, modprobe, systemctl and writes /etc); nothing was changed. Run it with sudo, or use --plan.`,
    );
  }
  return { req, io, host, desired, progress: (m: string) => io.stderr.write(`${io.program ?? 'reconcile'}: ${m}\n`) };
}

export async function runReconcile(req: RunRequest, io: Io): Promise<number> {
  const run = await openRun(req, io);
  if (req.rollback) return runRollback(run, req.rollback);
  if (req.mode === 'facts') return runFacts(run);
  return req.mode === 'plan' ? planRun(run) : applyRun(run);
}

/** --facts: facts.json as kubespray would judge this host, and the findings about it; nothing planned. */
async function runFacts({ host, desired, req, io, progress }: RunContext): Promise<number> {
  const extra = withAcceptances({ req, desired, progress }, await hostReports(host, desired, progress, null));
  const facts = (extra.reports['facts.json'] as Record<string, unknown> | undefined) ?? null;
  if (req.json) {
    io.stdout.write(jsonText(redactDeep({ format_version: FORMAT_VERSION, mode: 'facts', facts, findings: extra.findings })));
  } else {
    const lines = facts ? Object.entries(facts).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`) : ['no facts gathered'];
    for (const f of extra.findings) lines.push(`${f.accepted ? `accepted [${f.check}]` : f.level}: ${f.message}${f.accepted ? ` (${f.accepted_note})` : ''}`);
    io.stdout.write(lines.join('\n') + '\n');
  }
  return facts && !extra.findings.some((f) => f.level === 'error') ? 0 : 1;
}

/** The providers' warnings join the findings, first: they are about the host itself. */
function withPlanWarnings(plan: Plan, extra: HostReports): HostReports {
  return { ...extra, findings: [...planWarnings(plan), ...extra.findings] };
}

/** The names accepted for this run: --accept's, then the desired state's accept list, each entry by its file:line. */
export function acceptances(req: Pick<RunRequest, 'accept'>, desired: DesiredState): Acceptance[] {
  const listed = (desired.accept ?? []).map((name, i) => {
    const at = desired.where?.(['accept', String(i)]);
    return { name, by: at ? `${at.file}:${at.line}` : desired.source };
  });
  return [...(req.accept ?? []).map((name) => ({ name, by: '--accept' })), ...listed];
}

/** The checkers' names (src/acceptance: kubeadm's, and ours such as TimeSync; FileExisting-PROGRAM told as one) and the tool's own (FormerNode). */
const KUBEADM_CHECKS = CHECKERS.map((c) => c.name);
const KNOWN_CHECKS = [...KUBEADM_CHECKS.filter((n) => !n.startsWith('FileExisting-')), FORMER_NODE_CHECK];

/** Every finding an accepted name names marked accepted, and a warning for a name that accepts nothing. */
function withAcceptances({ req, desired, progress }: Pick<RunContext, 'req' | 'desired' | 'progress'>, extra: HostReports): HostReports {
  const accepts = acceptances(req, desired);
  if (accepts.length === 0) return extra;
  const findings = acceptFindings(extra.findings, accepts, KNOWN_CHECKS, KUBEADM_CHECKS);
  // A name that accepts nothing is also said on stderr: -q and --json show no warning line on stdout's first screen.
  for (const f of findings.slice(extra.findings.length)) progress(`warning: ${f.message}`);
  return { ...extra, findings };
}

/** Every unfinished run's journal read and checked before this run writes anything; entries not ours are named. */
async function unfinishedRuns(host: Host, desired: DesiredState, progress: (m: string) => void): Promise<UnfinishedRun[]> {
  const seen = await findUnfinishedRuns(host, await checkedRunsDirs(host, desired.reports_dir));
  for (const s of seen.skipped) progress(s);
  return seen.unfinished;
}

async function runRollback({ host, desired, req, io, progress }: RunContext, rb: { run?: string; force: boolean }): Promise<number> {
  const preview = req.mode === 'plan';
  const lockDirs = preview ? [] : await missingDirs(host, path.posix.dirname(LOCK_PATH));
  const lock = preview ? null : await acquireLock(host, 'rollback', progress);
  let held = lock !== null;
  let journaled = false; // once this run's journal records the lock's directories, they are removed through it
  const unlock = async () => {
    if (!held) return;
    held = false;
    await lock?.release();
  };
  try {
    const plan = await planRollback(host, desired.reports_dir, rb.run);
    const refused = plan.steps.some((s) => s.refused);
    const blocked = (plan.steps.some((s) => s.conflict) || plan.incomplete !== null) && !rb.force;
    const report = (outcome: { done: string[]; failed: Array<{ step: string; message: string }> } | null, rollbackRun: string | null) => {
      if (req.json) io.stdout.write(jsonText(redactDeep(rollbackDocument(plan, outcome, rollbackRun, preview))));
      else io.stdout.write(renderRollback(plan, outcome, { preview, force: rb.force }));
    };
    if (plan.alreadyBy || preview || blocked || (refused && !rb.force)) {
      report(null, null);
      if (plan.alreadyBy) return 0;
      if (blocked || refused) return 1;
      return plan.steps.length > 0 ? 2 : 0;
    }
    // Every other journal is checked before this run's own exists: an invalid one stops it with nothing changed.
    const unfinished = await unfinishedRuns(host, desired, progress);
    const journal = newRunJournal(desired.reports_dir);
    const door = await WriteDoor.open(host, {
      runDir: journal.dir,
      runId: journal.id,
      mode: 'rollback',
      rollbackOf: plan.run,
      tool: TOOL_VERSION,
      reports: reportModes(desired.reports_mode),
    });
    let outcome;
    try {
      const made = await madeDirs(host, lockDirs);
      await door.noteMadeDirs(made);
      journaled = true;
      for (const i of await settleInterruptedRuns(host, unfinished, journal.id, progress)) progress(describeInterrupted(i, io.program));
      outcome = await executeRollback(door, plan, unlock);
      // What this rollback's own lock made goes with it, once the lock is gone.
      if (made.length > 0) {
        await unlock();
        for (const d of [...made].reverse()) await door.removeEmptyDir(d.path);
      }
    } finally {
      await door.end(outcome && outcome.failed.length === 0 ? 'ok' : 'failed').catch(() => undefined);
    }
    report(outcome, journal.dir);
    return outcome.failed.length === 0 ? 0 : 1;
  } finally {
    await unlock();
    if (!journaled) await removeMadeDirs(host, await madeDirs(host, lockDirs));
  }
}

/** What a run observed before anything changed, in the plan document it prints and stores. */
interface Observed {
  plan: Plan;
  before: BeforeState | null;
  extra: HostReports;
  doc: PlanDocument;
}

async function observeForPlan({ host, desired, req, progress }: RunContext): Promise<Observed> {
  const plan = await makePlan(host, desired);
  const before = host.live ? await observeBeforeState(host, plan) : null;
  const extra = withAcceptances({ req, desired, progress }, withPlanWarnings(plan, await hostReports(host, desired, progress, plan)));
  return {
    plan,
    before,
    extra,
    doc: planDocument(plan, { mode: req.mode === 'apply' ? 'apply' : 'plan', before, findings: extra.findings, reports: extra.reports }),
  };
}

/** --plan: the plan document, as JSON or as text; nothing written. */
export async function planRun(run: RunContext): Promise<number> {
  const { doc, extra } = await observeForPlan(run);
  if (run.req.json) run.io.stdout.write(JSON.stringify(doc, null, 2) + '\n');
  else run.io.stdout.write(renderPlan(doc, paletteOf(run), run.req.detail, run.io.program));
  return planExitCode(doc.pending_changes, doc.operator_required, extra.findings);
}

/**
 * --plan's exit code: 1 when kubespray's own preflight will stop on this host
 * (nothing this tool changes makes the install go through), 2 for pending
 * changes, operator action or a kubespray verdict that could not be judged
 * and is not accepted, else 0.
 */
export function planExitCode(pending: number, operator: number, findings: Finding[]): number {
  // An accepted finding kubespray stops on still stops it: accepting it here tells kubespray nothing.
  if (findings.some((f) => f.stops)) return 1;
  return pending > 0 || operator > 0 || findings.some((f) => f.unknown && !f.accepted) ? 2 : 0;
}

/** An apply inside its write door: the run, what it observed before anything changed, and its journal. */
interface DoorRun extends RunContext, Observed {
  door: WriteDoor;
  journal: RunJournal;
  unfinished: UnfinishedRun[];
}

/**
 * --apply. `record`: runs inside the run's door after apply and verify (the
 * first boot's own record) and returns the final exit code.
 */
export async function applyRun(run: RunContext, record?: (door: WriteDoor, code: number) => Promise<number>): Promise<number> {
  const { host, desired, progress } = run;
  const lockDirs = await missingDirs(host, path.posix.dirname(LOCK_PATH));
  const lock = await acquireLock(host, 'apply', progress);
  let journaled = false;
  let unfinished: UnfinishedRun[] = [];
  try {
    // Everything is observed before the run directory exists: a host file the
    // tool cannot read or judge, or an earlier run's journal that is not what
    // the door writes, stops the run with nothing written at all.
    unfinished = await unfinishedRuns(host, desired, progress);
    const observed = await observeForPlan({ ...run, req: { ...run.req, mode: 'apply' } });
    const journal = newRunJournal(desired.reports_dir);
    const door = await WriteDoor.open(host, {
      runDir: journal.dir,
      runId: journal.id,
      mode: 'apply',
      tool: TOOL_VERSION,
      reports: reportModes(desired.reports_mode),
    });
    try {
      // The lock's directory, when this run made it, is the run's to undo.
      await door.noteMadeDirs(await madeDirs(host, lockDirs));
      journaled = true;
      let code = await applyWithDoor({ ...run, ...observed, door, journal, unfinished });
      if (record) code = await record(door, code);
      await door.end(code === 0 ? 'ok' : 'failed');
      return code;
    } catch (e) {
      // The first boot's record says it failed even when the apply stopped half-way.
      if (record) await record(door, 1).catch(() => undefined);
      await door.end('failed', (e as Error).message).catch(() => undefined);
      throw e;
    }
  } finally {
    await lock.release();
    // Stopped before its journal existed: nothing records the lock's directories, so they go now.
    if (!journaled) await removeMadeDirs(host, await madeDirs(host, lockDirs));
    // A killed run's lock directories, journaled by it, go once no lock is in them (rmdir: only when empty).
    await removeMadeDirs(
      host,
      unfinished.flatMap((u) => u.lockDirs.map((d) => ({ path: d }))),
    );
  }
}

async function applyWithDoor(run: DoorRun): Promise<number> {
  const { host, door, journal, desired, req, io, progress, before, plan, doc } = run;
  for (const i of await settleInterruptedRuns(host, run.unfinished, journal.id, progress)) progress(describeInterrupted(i, run.io.program));
  const written: string[] = [];
  // The first observation is the truth: recorded before anything changes.
  if (before && (await recordBeforeState(door, desired.reports_dir, before))) written.push(`${desired.reports_dir}/before.json`);
  await writeRunFile(door, 'plan.json', doc);
  if (!req.json) io.stdout.write(renderApplyStart(doc, paletteOf(run), req.detail));

  const result = await applyPlan(host, plan, { progress, door });
  try {
    return await finishApply(run, result, written);
  } catch (e) {
    // What was applied and what failed is always told, even when nothing more can be written.
    throw new RunAbortedError((e as Error).message, result.applied, result.failures);
  }
}

async function finishApply(run: DoorRun, result: ApplyResult, writtenBefore: string[]): Promise<number> {
  const { host, door, journal, desired, req, io, progress, plan, before, extra } = run;
  const written: string[] = [...writtenBefore];
  for (const [name, value] of Object.entries({ ...result.reports, ...extra.reports })) {
    try {
      const at = await writeReport(door, desired.reports_dir, name, value);
      if (at) written.push(at);
    } catch (e) {
      result.failures.push({ resource: 'reports', message: (e as Error).message });
    }
  }

  progress('observing again to verify');
  const after = await makePlan(host, desired);
  const verify = verifyConverged(after);
  // An operator line or unknown that outlives apply (what showed it is gone, the cause is not) keeps its withdrawals.
  const carriedOperators = outlivingOperators(plan).filter(({ change }) => !operatorChanges(after).some((o) => o.change.id === change.id));
  const operator = operatorChanges(after).length + carriedOperators.length;
  // A promise an unknown takes back is not a converged host: the next boot is not known to keep it.
  // What apply failed to do is no promise either, whatever the host shows now (a unit whose disable never ran is not
  // running when apply looks again, and starts at the next boot).
  const promisesAfter = planPromises(
    after,
    planUnknowns(plan).filter((u) => u.outlivesApply),
    carriedOperators,
    result.failures,
  );
  const withdrawn = withdrawnByUnknown(promisesAfter);
  const ok = result.failures.length === 0 && verify.length === 0 && operator === 0 && withdrawn.length === 0;
  // As every plan document: a credential in any string of it redacted (redact.ts).
  const doc = redactDeep({
    ...planDocument(plan, { mode: 'apply', before, findings: extra.findings, operator }),
    applied: result.applied,
    failures: [...result.failures, ...verify.map((v) => ({ resource: v.resource, message: v.message }))],
    after: jsonPlan(after),
    promises_after: promisesAfter,
    verified: ok,
    reports_written: written,
    backups: door.backups(),
    journal: journal.dir,
  });
  try {
    await writeRunFile(door, 'result.json', doc);
  } catch (e) {
    progress(`warning: ${(e as Error).message}; the result below is the only record of this run besides its journal`);
  }
  if (req.json) io.stdout.write(JSON.stringify(doc, null, 2) + '\n');
  else
    io.stdout.write(
      renderApplyResult(result, verify, operator, paletteOf(run), written, withdrawn, {
        mustDo: mustDo(run.doc),
        detail: req.detail,
        findings: run.doc.findings,
      }),
    );
  return ok ? 0 : 1;
}

export type { ApplyResult };
