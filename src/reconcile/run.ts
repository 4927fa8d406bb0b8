// One reconcile run: load + validate -> observe -> record before-state ->
// plan -> (apply -> observe again -> verify -> reports). Exit codes follow
// Terraform's -detailed-exitcode: plan 0 in sync, 2 pending, 1 error; apply
// 0 converged and verified, 1 otherwise.
import { Host } from '../host.js';
import type { CommandRunner } from '../host.js';
import { ReconcileError } from '../errors.js';
import type { DesiredState } from '../desired-state.js';
import { loadDesiredState } from './load.js';
import { makePlan, operatorChanges, pendingCount } from './plan.js';
import type { Plan } from './plan.js';
import { applyPlan } from './apply.js';
import type { ApplyResult } from './apply.js';
import { verifyConverged } from './verify.js';
import { observeBeforeState } from './before-state.js';
import type { BeforeState } from './before-state.js';
import { backupDirOf, newRunJournal, recordBeforeState, writeJournalFile, writeReport } from './reports.js';
import { FORMAT_VERSION, jsonPlan, paletteFor, renderApplyResult, renderPlan } from './render.js';
import type { Finding } from '../findings.js';
import { hostReports } from './host-reports.js';

export const TOOL_VERSION = '0.1.0';

export interface RunRequest {
  mode: 'plan' | 'apply';
  file: string;
  root?: string;
  json: boolean;
}

export interface Io {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** For tests: replaces execa. */
  runner?: CommandRunner;
  /** For tests: whether the caller counts as root. */
  isRoot?: () => boolean;
}

export async function runReconcile(req: RunRequest, io: Io): Promise<number> {
  const desired = await loadDesiredState(req.file);
  const host = new Host({ root: req.root, runner: io.runner });
  const isRoot = io.isRoot ?? (() => host.isRoot());
  if (req.mode === 'apply' && host.live && !isRoot()) {
    throw new ReconcileError('--apply on the live host needs root (it runs swapoff, modprobe, systemctl and writes /etc); nothing was changed. Run it with sudo, or use --plan.');
  }
  const progress = (m: string) => io.stderr.write(`reconcile: ${m}\n`);
  return req.mode === 'plan' ? runPlan(host, desired, req, io, progress) : runApply(host, desired, req, io, progress);
}

async function runPlan(host: Host, desired: DesiredState, req: RunRequest, io: Io, progress: (m: string) => void): Promise<number> {
  const before = host.live ? await observeBeforeState(host) : null;
  const plan = await makePlan(host, desired);
  const extra = await hostReports(host, desired, progress);
  const pending = pendingCount(plan);
  const operator = operatorChanges(plan).length;
  if (req.json) {
    io.stdout.write(JSON.stringify({ ...document('plan', host, plan, before, extra.findings, { pending, operator }), reports: extra.reports }, null, 2) + '\n');
  } else {
    const facts = (extra.reports['facts.json'] as Record<string, unknown> | undefined) ?? null;
    io.stdout.write(renderPlan(plan, paletteFor(io.stdout, io.env), { before, findings: extra.findings, facts }));
  }
  // A verdict the kubespray audit could not judge is not "in sync".
  const unknown = extra.findings.some((f) => f.unknown);
  return pending > 0 || operator > 0 || unknown ? 2 : 0;
}

async function runApply(host: Host, desired: DesiredState, req: RunRequest, io: Io, progress: (m: string) => void): Promise<number> {
  const journal = newRunJournal(desired.reports_dir);
  host.backupDir = backupDirOf(journal);
  const written: string[] = [];

  // The first observation is the truth: record it before anything changes.
  const before = host.live ? await observeBeforeState(host) : null;
  if (before && (await recordBeforeState(host, desired.reports_dir, journal, before))) written.push(`${desired.reports_dir}/before.json`);

  const plan = await makePlan(host, desired);
  await writeJournalFile(host, journal, 'plan.json', { resources: jsonPlan(plan) });
  const extra = await hostReports(host, desired, progress);
  if (!req.json) {
    const facts = (extra.reports['facts.json'] as Record<string, unknown> | undefined) ?? null;
    io.stdout.write(renderPlan(plan, paletteFor(io.stdout, io.env), { before, findings: extra.findings, facts }));
  }

  const result = await applyPlan(host, plan, { progress });
  for (const [name, value] of Object.entries({ ...result.reports, ...extra.reports })) {
    const at = await writeReport(host, desired.reports_dir, name, value);
    if (at) written.push(at);
  }

  progress('observing again to verify');
  const after = await makePlan(host, desired);
  const verify = verifyConverged(after);
  const operator = operatorChanges(after).length;
  const ok = result.failures.length === 0 && verify.length === 0 && operator === 0;
  const doc = {
    ...document('apply', host, plan, before, extra.findings, { pending: pendingCount(plan), operator }),
    applied: result.applied,
    failures: [...result.failures, ...verify.map((v) => ({ resource: v.resource, message: v.message }))],
    after: jsonPlan(after),
    verified: ok,
    reports_written: written,
    backups: host.backups(),
    journal: journal.dir,
  };
  await writeJournalFile(host, journal, 'result.json', doc);
  if (req.json) io.stdout.write(JSON.stringify(doc, null, 2) + '\n');
  else io.stdout.write(renderApplyResult(result, verify, operator, paletteFor(io.stdout, io.env), written));
  return ok ? 0 : 1;
}

function document(mode: 'plan' | 'apply', host: Host, plan: Plan, before: BeforeState | null, findings: Finding[], counts: { pending: number; operator: number }) {
  return {
    format_version: FORMAT_VERSION,
    tool: { name: 'k8s-host-reconcile', version: TOOL_VERSION },
    mode,
    live: host.live,
    root: host.root,
    before_state: before,
    pending_changes: counts.pending,
    operator_required: counts.operator,
    resources: jsonPlan(plan),
    findings,
  };
}

export type { ApplyResult };
