// The reports directory: before.json (first observation, kept forever),
// ports.json, facts.json, who-fixes.json, and a directory per run
// (runs/<id>: journal, backup/, before.json, plan.json, result.json).
import path from 'node:path';
import type { WriteDoor } from '../door/door.js';
import { utf8Bytes } from '../bytes.js';
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

export function runsDirOf(reportsDir: string): string {
  return path.posix.join(reportsDir, 'runs');
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

/** Writes a report; returns its path, or null when it already held exactly this (no rewrite, no backup). */
export async function writeReport(door: WriteDoor, reportsDir: string, name: string, value: unknown): Promise<string | null> {
  const target = path.posix.join(reportsDir, name);
  return (await door.writeFile({ path: target, content: utf8Bytes(jsonText(value)), report: true })) ? target : null;
}

export async function writeRunFile(door: WriteDoor, name: string, value: unknown): Promise<void> {
  await door.writeRunFile(name, utf8Bytes(typeof value === 'string' ? value : jsonText(value)));
}
