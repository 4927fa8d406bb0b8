// The reports directory: before.json (first observation, kept forever),
// ports.json, facts.json, who-fixes.json, and a journal entry per run.
import path from 'node:path';
import type { Host } from '../host.js';
import type { BeforeState } from './before-state.js';

export interface RunJournal {
  /** e.g. /root/ks/preflight/runs/20261129T205300123Z-4242 */
  dir: string;
  id: string;
}

export function newRunJournal(reportsDir: string, now: Date = new Date(), pid: number = process.pid): RunJournal {
  const id = `${now.toISOString().replace(/[-:.]/g, '')}-${pid}`;
  return { id, dir: path.posix.join(reportsDir, 'runs', id) };
}

export function backupDirOf(journal: RunJournal): string {
  return path.posix.join(journal.dir, 'backup');
}

export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/**
 * Writes before.json unless it already exists (the first observation is the
 * truth), and always the run's own copy in the journal. Returns whether the
 * top-level before.json was written now.
 */
export async function recordBeforeState(host: Host, reportsDir: string, journal: RunJournal, state: BeforeState): Promise<boolean> {
  await host.writeFile(path.posix.join(journal.dir, 'before.json'), jsonText(state));
  const top = path.posix.join(reportsDir, 'before.json');
  if (await host.exists(top)) return false;
  await host.writeFile(top, jsonText(state));
  return true;
}

/** Writes a report; returns its path, or null when it already held exactly this (no rewrite, no backup). */
export async function writeReport(host: Host, reportsDir: string, name: string, value: unknown): Promise<string | null> {
  const target = path.posix.join(reportsDir, name);
  const text = jsonText(value);
  if ((await host.readFile(target)) === text) return null;
  await host.writeFile(target, text);
  return target;
}

export async function writeJournalFile(host: Host, journal: RunJournal, name: string, value: unknown): Promise<void> {
  await host.writeFile(path.posix.join(journal.dir, name), typeof value === 'string' ? value : jsonText(value));
}
