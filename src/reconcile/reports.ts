// The reports directory: before.json (first observation, kept forever),
// ports.json, facts.json, who-fixes.json, and a directory per run
// (runs/<id>: journal, backup/, before.json, plan.json, result.json).
// The documents are named here once: the Ansible role fetches exactly these
// names back to the controller and no name a host offers
// (contrib/ansible/collection/roles/reconcile/tasks/fetch.yml; test/ansible-fetch.test.ts holds the lists equal).
import path from 'node:path';
import { PRIVATE_REPORTS, type ReportModes, type WriteDoor } from '../door/door.js';
import type { ReportsMode } from '../desired-state.js';
import type { TargetFs } from '../host.js';
import { ReconcileError } from '../errors.js';
import { reportsDirProblem } from '../grammar.js';
import { utf8Bytes } from '../bytes.js';
import { redactDeep } from '../redact.js';
import type { BeforeState } from './before-state.js';

/** Every document the tool writes at the top of its reports directory. */
export const REPORT_DOCUMENTS = ['before.json', 'facts.json', 'first-boot.json', 'ports.json', 'who-fixes.json'] as const;
/** Every document the tool writes into a run's directory (beside its journal and backup/, which stay on the host). */
export const RUN_DOCUMENTS = ['before.json', 'plan.json', 'result.json'] as const;
export type RunDocument = (typeof RUN_DOCUMENTS)[number];

export function isReportDocument(name: string): name is (typeof REPORT_DOCUMENTS)[number] {
  return (REPORT_DOCUMENTS as readonly string[]).includes(name);
}

export interface RunJournal {
  /** e.g. /root/ks/preflight/runs/20261129T205300123Z-4242 */
  dir: string;
  id: string;
}

export function newRunJournal(reportsDir: string, now: Date = new Date(), pid: number = process.pid): RunJournal {
  const id = `${now.toISOString().replace(/[-:.]/g, '')}-${pid}`;
  return { id, dir: path.posix.join(reportsDir, 'runs', id) };
}

/** desired-state's reports_mode as the door's modes: the file mode, and a directory's with search where read is (0640: 0750). */
export function reportModes(mode: ReportsMode | undefined): ReportModes {
  if (mode === undefined) return PRIVATE_REPORTS;
  const file = parseInt(mode, 8);
  return { file, dir: file | ((file & 0o444) >> 2) };
}

export function runsDirOf(reportsDir: string): string {
  return path.posix.join(reportsDir, 'runs');
}

import type { RunsDirs } from '../door/journal.js';
export type { RunsDirs };

/**
 * The runs directory holds every run's journal and backups, which a later
 * rollback trusts only this far: it must be a directory (or not exist yet),
 * never a link, and neither it nor the reports directory may resolve among
 * the system's own files (the rule reports_dir itself obeys). Nothing is
 * created here.
 */
export async function checkedRunsDirs(host: TargetFs, reportsDir: string): Promise<RunsDirs> {
  const runs = runsDirOf(reportsDir);
  const resolvedReports = await host.realTarget(reportsDir);
  const reportsProblem = reportsDirProblem(resolvedReports);
  if (reportsProblem)
    throw new ReconcileError(
      `reports_dir ${reportsDir} resolves to ${resolvedReports} inside the root (a directory on the way is a symbolic link), and reports_dir ${reportsProblem}; nothing was changed`,
    );
  const runsDir = path.posix.join(resolvedReports, 'runs');
  const st = await host.lstat(runsDir);
  if (st?.isSymbolicLink()) {
    throw new ReconcileError(
      `${runs} is a symbolic link to ${(await host.readLink(runsDir)) ?? '?'}; the runs directory holds the journals and backups rollback trusts, so it must be a directory the tool made, not a link; nothing was changed`,
    );
  }
  if (st && !st.isDirectory()) throw new ReconcileError(`${runs} is not a directory; nothing was changed`);
  return { reportsDir: resolvedReports, runsDir };
}

export function backupDirOf(journal: RunJournal): string {
  return path.posix.join(journal.dir, 'backup');
}

export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/**
 * Writes before.json unless it already exists (the first observation is the
 * truth), and always the run's own copy. Returns whether the top-level
 * before.json was written now.
 */
export async function recordBeforeState(door: WriteDoor, reportsDir: string, state: BeforeState): Promise<boolean> {
  await door.writeRunFile('before.json', utf8Bytes(jsonText(state)));
  const top = path.posix.join(reportsDir, 'before.json');
  if (await door.host.exists(top)) return false;
  await door.writeFile({ path: top, content: utf8Bytes(jsonText(state)), report: true });
  return true;
}

/**
 * Writes a report; returns its path, or null when it already held exactly this (no rewrite, no backup).
 * Only a name of REPORT_DOCUMENTS: a report by any other name would never reach the controller.
 */
export async function writeReport(door: WriteDoor, reportsDir: string, name: string, value: unknown): Promise<string | null> {
  if (!isReportDocument(name)) throw new ReconcileError(`${name} is not one of the report documents (${REPORT_DOCUMENTS.join(', ')}); it was not written`);
  const target = path.posix.join(reportsDir, name);
  // As every document: a credential in any string of a report is redacted (redact.ts); names and fields stay.
  return (await door.writeFile({ path: target, content: utf8Bytes(jsonText(redactDeep(value))), report: true })) ? target : null;
}

export async function writeRunFile(door: WriteDoor, name: RunDocument, value: unknown): Promise<void> {
  await door.writeRunFile(name, utf8Bytes(typeof value === 'string' ? value : jsonText(value)));
}
