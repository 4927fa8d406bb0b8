// A run killed mid-way leaves a journal without an `end` record and,
// possibly, a temp file next to the file it was replacing. The next run
// (holding the lock, so no such run is alive) says so, removes the temp
// files, and marks the journal so it is reported once.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Host } from '../host.js';
import { Journal, actionsOf, parseJournal, type JournalRecord } from './journal.js';

export interface InterruptedRun {
  id: string;
  lastRecord: JournalRecord | null;
  tempFilesRemoved: string[];
}

function describe(r: JournalRecord | null): string {
  if (r === null) return 'before its first record';
  if ('path' in r) return `record ${r.seq}: ${r.kind} ${r.path}`;
  if (r.kind === 'runtime') return `record ${r.seq}: ${r.action.step}`;
  return `record ${r.seq}: ${r.kind}`;
}

export function describeInterrupted(i: InterruptedRun): string {
  const tmp = i.tempFilesRemoved.length > 0 ? `; removed its temp file${i.tempFilesRemoved.length === 1 ? '' : 's'} ${i.tempFilesRemoved.join(', ')}` : '';
  return `run ${i.id} was interrupted after ${describe(i.lastRecord)}${tmp}; this run converges from where it stopped (reconcile --rollback ${i.id} undoes it)`;
}

export async function settleInterruptedRuns(host: Host, runsDir: string, currentRun: string): Promise<InterruptedRun[]> {
  const out: InterruptedRun[] = [];
  for (const e of (await host.readDir(runsDir)) ?? []) {
    if (!e.isDirectory() || e.name === currentRun) continue;
    const journalPath = path.posix.join(runsDir, e.name, 'journal');
    const text = await host.readFile(journalPath);
    if (text === null) continue;
    let records: JournalRecord[];
    try {
      records = parseJournal(text).records;
    } catch {
      continue; // not ours to judge; rollback reports it when asked
    }
    const last = records.at(-1) ?? null;
    if (last?.kind === 'end') continue;
    const removed: string[] = [];
    for (const a of actionsOf(records)) {
      if (a.outcome !== 'unknown' || !('tmp' in a.record)) continue;
      const loc = await host.locate(a.record.tmp, { follow: false });
      try {
        await fs.lstat(loc.abs);
        await fs.rm(loc.abs);
        removed.push(loc.target);
      } catch {
        // Renamed into place already, or never created.
      }
    }
    const journal = await Journal.reopen((await host.locate(journalPath, { follow: false })).abs, last?.seq ?? 0);
    try {
      await journal.append({ kind: 'end', status: 'interrupted', note: `found by run ${currentRun}` });
    } finally {
      await journal.close();
    }
    out.push({ id: e.name, lastRecord: last, tempFilesRemoved: removed });
  }
  return out;
}
