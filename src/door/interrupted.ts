// A run killed mid-way leaves a journal without an `end` record and,
// possibly, a temp file next to the file it was replacing. The next run
// (holding the lock, so no such run is alive) says so, removes the temp
// files, and marks the journal so it is reported once.
//
// Finding and settling are two steps: every journal is read and checked
// before the new run writes anything (an invalid record stops it with
// nothing changed), and settled only once its own journal is open.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { LOCK_PATH } from './lock.js';
import type { Host } from '../host.js';
import { Journal, actionsOf, readRunJournal, type JournalRecord } from './journal.js';
import { openOwnFile } from './own-file.js';

export interface InterruptedRun {
  id: string;
  lastRecord: JournalRecord | null;
  tempFilesRemoved: string[];
}

/** A run whose journal has no end record, read and checked: what settling it needs. */
export interface UnfinishedRun {
  id: string;
  /** Target path of its journal. */
  journal: string;
  lastRecord: JournalRecord | null;
  /** Temp names of writes and links with no outcome, each checked to be one the door makes. */
  temps: string[];
  /** Bytes of its complete lines: a torn last line is cut before the end record is added, or the two would read as one garbled line. */
  complete: number;
  torn: boolean;
  /** Directories it journaled as made for its lock (/run in an image): a killed run leaves them, the next run removes them when empty. */
  lockDirs: string[];
}

export interface RunsSeen {
  unfinished: UnfinishedRun[];
  /** One line per entry of runs/ that is not a run this tool can read (a link, a fifo...): never opened. */
  skipped: string[];
}

function describe(r: JournalRecord | null): string {
  if (r === null) return 'before its first record';
  if ('path' in r) return `record ${r.seq}: ${r.kind} ${r.path}`;
  if (r.kind === 'runtime') return `record ${r.seq}: ${r.action.step}`;
  return `record ${r.seq}: ${r.kind}`;
}

/** `program`: the name the user invoked (k8s-host-reconcile through the package's link), for the command it suggests. */
export function describeInterrupted(i: InterruptedRun, program = 'reconcile'): string {
  const tmp = i.tempFilesRemoved.length > 0 ? `; removed its temp file${i.tempFilesRemoved.length === 1 ? '' : 's'} ${i.tempFilesRemoved.join(', ')}` : '';
  return `run ${i.id} was interrupted after ${describe(i.lastRecord)}${tmp}; this run converges from where it stopped (${program} --rollback ${i.id} undoes it)`;
}

/**
 * Reads every run's journal under `runsDir` (resolved inside the root) but
 * `currentRun`'s, changing nothing. A journal record that is not what the
 * door writes throws JournalError (`file:line: message`).
 */
/** `dir` is the lock's directory or one on its way. */
function holdsLock(dir: string): boolean {
  const lockDir = path.posix.dirname(LOCK_PATH);
  return dir === lockDir || lockDir.startsWith(dir + '/');
}

export async function findUnfinishedRuns(host: Host, dirs: { runsDir: string; reportsDir: string }, currentRun?: string): Promise<RunsSeen> {
  const out: RunsSeen = { unfinished: [], skipped: [] };
  for (const e of (await host.readDir(dirs.runsDir)) ?? []) {
    if (e.name === currentRun) continue;
    const read = await readRunJournal(host, dirs, e.name);
    if (read.kind === 'missing') continue;
    if (read.kind === 'other') {
      out.skipped.push(`skipped ${read.target}: it is ${read.what}; a run leaves a directory with a regular journal file, so it was not opened`);
      continue;
    }
    const { records, end } = read.journal;
    if (end !== null) continue;
    const temps: string[] = [];
    for (const a of actionsOf(records)) if (a.outcome === 'unknown' && 'tmp' in a.record) temps.push(a.record.tmp);
    const lockDirs = records.flatMap((r) => (r.kind === 'mkdir' && holdsLock(r.path) ? [r.path] : []));
    out.unfinished.push({
      id: e.name,
      journal: read.target,
      lastRecord: records.at(-1) ?? null,
      temps,
      complete: read.complete,
      torn: read.journal.torn,
      lockDirs,
    });
  }
  return out;
}

/** Removes the unfinished runs' temp files and marks each journal interrupted. */
export async function settleInterruptedRuns(host: Host, runs: UnfinishedRun[], currentRun: string, say: (m: string) => void): Promise<InterruptedRun[]> {
  const out: InterruptedRun[] = [];
  for (const run of runs) {
    const removed: string[] = [];
    for (const tmp of run.temps) {
      const loc = await host.locate(tmp, { follow: false });
      // A directory on the way that is now a link would put the name elsewhere: not ours any more.
      if (loc.target !== tmp) continue;
      try {
        const st = await fs.lstat(loc.abs);
        if (!st.isFile() && !st.isSymbolicLink()) continue;
        await fs.unlink(loc.abs); // unlink(2) never follows a link
        removed.push(loc.target);
      } catch {
        // Renamed into place already, or never created.
      }
    }
    const f = await openOwnFile((await host.locate(run.journal, { follow: false })).abs, true);
    if (f.kind !== 'file') {
      say(`did not mark run ${run.id} interrupted: ${run.journal} is now ${f.kind === 'missing' ? 'gone' : f.what}`);
      continue;
    }
    if (f.stat.size < run.complete) {
      await f.fh.close();
      say(`did not mark run ${run.id} interrupted: ${run.journal} shrank since it was read`);
      continue;
    }
    const journal = Journal.reopen(f.fh, run.lastRecord?.seq ?? 0);
    try {
      if (run.torn) await f.fh.truncate(run.complete);
      await journal.append({ kind: 'end', status: 'interrupted', note: `found by run ${currentRun}${run.torn ? '; its torn last line was cut' : ''}` });
    } finally {
      await journal.close();
    }
    out.push({ id: run.id, lastRecord: run.lastRecord, tempFilesRemoved: removed });
  }
  return out;
}
