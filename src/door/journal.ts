// The write-ahead journal of one run: runs/<id>/journal, one JSON record per
// line, each fsynced before the action it describes. It holds what a
// rollback needs to undo every action, and what the next run needs to clean
// up after a run that was killed.
import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Host } from '../host.js';
import { checkJournal, type CheckedJournal } from './journal-check.js';
import { openOwnFile, readCapped } from './own-file.js';

// The records' shapes live in journal-records.ts, which the checker reads too.
import type { JournalEntry, JournalRecord, LinkDelta } from './journal-records.js';
export type { JournalEntry, JournalRecord, LinkDelta, PriorEntry, RuntimeStep, UserOf } from './journal-records.js';

/**
 * Tests only: RECONCILE_TEST_SIGNAL_AFTER_RECORD=SIGKILL:N sends the process
 * that signal right after journal record N is on disk (kill at every step;
 * SIGSTOP holds a run mid-way for the lock test).
 */
const FAILPOINT = /^(SIGKILL|SIGSTOP):(\d+)$/.exec(process.env.RECONCILE_TEST_SIGNAL_AFTER_RECORD ?? '');

export class Journal {
  private seq = 0;
  private constructor(private readonly fh: FileHandle) {}

  static async create(abs: string): Promise<Journal> {
    return new Journal(await fs.open(abs, 'wx', 0o600));
  }

  /** Appends records to an existing journal (an interrupted run marked as such), opened by openOwnFile. */
  static reopen(fh: FileHandle, lastSeq: number): Journal {
    const j = new Journal(fh);
    j.seq = lastSeq;
    return j;
  }

  async append(entry: JournalEntry): Promise<number> {
    const seq = ++this.seq;
    const rec = { seq, at: new Date().toISOString(), ...entry };
    await this.fh.write(JSON.stringify(rec) + '\n');
    await this.fh.sync();
    if (FAILPOINT && seq === Number(FAILPOINT[2])) process.kill(process.pid, FAILPOINT[1] as NodeJS.Signals);
    return seq;
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

export interface ParsedJournal {
  records: JournalRecord[];
  /** A last line cut short (the process died mid-append); it is ignored. */
  torn: boolean;
}

/** Pure: a journal's text. Complete lines only; a torn last line is reported, not fatal. */
export function parseJournal(text: string): ParsedJournal {
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  const records: JournalRecord[] = [];
  for (const [i, l] of lines.entries()) {
    if (l === '') continue;
    try {
      records.push(JSON.parse(l) as JournalRecord);
    } catch {
      throw new Error(`journal line ${i + 1} is not a JSON record`);
    }
  }
  return { records, torn: last !== '' };
}

/** The actions of a journal with their outcome, in the order they were taken. */
export interface JournalAction {
  record: Exclude<JournalRecord, { kind: 'begin' | 'done' | 'failed' | 'end' }>;
  outcome: 'done' | 'failed' | 'unknown';
  result?: LinkDelta;
}

export function actionsOf(records: JournalRecord[]): JournalAction[] {
  const out = new Map<number, JournalAction>();
  for (const r of records) {
    if (r.kind === 'begin' || r.kind === 'end') continue;
    if (r.kind === 'done' || r.kind === 'failed') {
      const a = out.get(r.of);
      if (a) {
        a.outcome = r.kind;
        if (r.kind === 'done' && r.result) a.result = r.result;
      }
      continue;
    }
    out.set(r.seq, { record: r, outcome: 'unknown' });
  }
  return [...out.values()];
}

/** A journal is a few hundred bytes a step; anything near this is not one the door wrote. */
export const MAX_JOURNAL_BYTES = 64 * 1024 * 1024;

export type RunJournalRead =
  /** `complete`: bytes up to the last newline (a torn last line lies beyond). */
  | { kind: 'journal'; target: string; journal: CheckedJournal; complete: number }
  | { kind: 'missing' }
  /** runs/<id> or its journal is not what a run leaves (a link, a fifo, a device...): never opened or followed. */
  | { kind: 'other'; target: string; what: string };

/** The reports and runs directories as they resolve inside the root (reconcile/reports.ts checks them). */
export interface RunsDirs {
  reportsDir: string;
  runsDir: string;
}

/**
 * Reads and checks runs/<id>/journal. `runsDir` and `reportsDir` are target
 * paths already resolved inside the root (reports.ts checkedRunsDir).
 */
export async function readRunJournal(host: Host, dirs: RunsDirs, id: string): Promise<RunJournalRead> {
  const dir = path.posix.join(dirs.runsDir, id);
  const st = await host.lstat(dir);
  if (st === null) return { kind: 'missing' };
  if (st.isSymbolicLink()) return { kind: 'other', target: dir, what: `a symbolic link to ${(await host.readLink(dir)) ?? '?'}, not a run directory` };
  if (!st.isDirectory()) return { kind: 'other', target: dir, what: 'not a run directory' };
  const target = path.posix.join(dir, 'journal');
  const f = await openOwnFile((await host.locate(target, { follow: false })).abs);
  if (f.kind === 'missing') return f;
  if (f.kind === 'other') return { kind: 'other', target, what: f.what };
  let bytes: Buffer | null;
  try {
    bytes = await readCapped(f.fh, MAX_JOURNAL_BYTES);
  } finally {
    await f.fh.close();
  }
  if (bytes === null) return { kind: 'other', target, what: `larger than ${MAX_JOURNAL_BYTES} bytes` };
  return {
    kind: 'journal',
    target,
    journal: checkJournal(bytes.toString('utf8'), { file: target, runId: id, ...dirs }),
    complete: bytes.lastIndexOf(0x0a) + 1,
  };
}
