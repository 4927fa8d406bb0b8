// Undoing one applied run from its journal, planned: the run's records read backwards into steps, each
// checked against what is there now (a file changed after the run is a conflict, not overwritten; a backup
// that is not what the run kept is refused). The door wrote the journal and keeps the backups, so reading
// them back is the door's too; runtime records are undone through the RuntimeUndoer the engine gives.
import path from 'node:path';
import type { Host } from '../host.js';
import { ReconcileError } from '../errors.js';
import { bytesOf } from '../bytes.js';
import { sha256, type WriteDoor } from './door.js';
import {
  actionsOf,
  readRunJournal,
  type JournalAction,
  type JournalRecord,
  type LinkDelta,
  type PriorEntry,
  type RuntimeStep,
  type RunsDirs,
} from './journal.js';
import { RUN_ID } from './journal-check.js';
import { readOwnFile } from './own-file.js';
import { entryThere, sameEntry } from './move-aside.js';
import { LOCK_PATH } from './lock.js';

export interface UndoStep {
  /** One line: what will be put back. */
  summary: string;
  /** Set when the entry changed since the run: not undone without --force. */
  conflict?: string;
  /** Set when it cannot be undone safely (a backup that is not what the run kept...): --force does not override it. */
  refused?: string;
  act?: (door: WriteDoor) => Promise<void>;
  /**
   * When it runs: every file and link first (in reverse), then the one
   * daemon-reload, then runtime steps that need both (swapon, unit start),
   * then, once this rollback's own lock is gone, the directories the run
   * made for its lock. Absent: a file or link step.
   */
  phase?: UndoPhase;
}

export type UndoPhase = 'files' | 'reload' | 'runtime' | 'unlocked';
const PHASES: readonly UndoPhase[] = ['files', 'reload', 'runtime', 'unlocked'];

/** Steps by phase, each phase keeping the order it was planned in. Pure. */
export function undoOrder(steps: UndoStep[]): UndoStep[] {
  return PHASES.flatMap((phase) => steps.filter((s) => (s.phase ?? 'files') === phase));
}

export interface RollbackPlan {
  run: string;
  runDir: string;
  steps: UndoStep[];
  /** What will not be undone, and why. */
  notes: string[];
  alreadyBy: string | null;
  /**
   * The run's journal does not end with the run's own end record: it was
   * killed, or the journal was cut. What it did after `last` is unknown.
   */
  incomplete: { why: string; last: string } | null;
}

/** The marker a finished rollback leaves in the run's directory: the run is not undone twice. */
export const MARKER = 'rolled-back.json';
/** A backup is a host file the run replaced; nothing the door backs up comes near this. */
const MAX_BACKUP_BYTES = 256 * 1024 * 1024;

interface RunInfo {
  /**
   * The sha256 each backup must have: the door copies a file once per run,
   * before its first change, so a backup holds the first prior content the
   * journal records under that name (a file written twice keeps the original).
   */
  kept: Map<string, string>;
  id: string;
  /** Target path of runs/<id>, resolved inside the root. */
  dir: string;
  journal: string;
  records: JournalRecord[];
  torn: boolean;
  end: 'ok' | 'failed' | 'interrupted' | null;
}

async function readRun(host: Host, dirs: RunsDirs, id: string): Promise<RunInfo | null> {
  const r = await readRunJournal(host, dirs, id);
  if (r.kind === 'missing') return null;
  if (r.kind === 'other') throw new ReconcileError(`cannot roll back run ${id}: ${r.target} is ${r.what}; it was not opened; nothing was changed`);
  const { records, torn, end } = r.journal;
  const kept = new Map<string, string>();
  for (const x of records) {
    if (
      (x.kind === 'write' || x.kind === 'link' || x.kind === 'remove' || x.kind === 'later') &&
      x.prior.entry === 'file' &&
      x.prior.backup !== null &&
      !kept.has(x.prior.backup)
    )
      kept.set(x.prior.backup, x.prior.sha256);
  }
  return { id, dir: path.posix.join(dirs.runsDir, id), journal: r.target, records, torn, end, kept };
}

function isEdit(a: JournalAction): boolean {
  return !(a.record.kind === 'write' && a.record.report);
}

/** The run to roll back: the one named, or the newest apply that changed something. */
async function pickRun(host: Host, runsDir: string, dirs: RunsDirs, id: string | undefined): Promise<RunInfo> {
  if (id !== undefined) {
    if (!RUN_ID.test(id)) throw new ReconcileError(`${id} is not a run id (see ${runsDir})`);
    const r = await readRun(host, dirs, id);
    if (!r) throw new ReconcileError(`no run ${id} in ${runsDir}`);
    const begin = r.records[0];
    if (begin?.kind === 'begin' && begin.mode === 'rollback')
      throw new ReconcileError(`run ${id} is itself a rollback; roll back the run it undid by applying again`);
    return r;
  }
  const names = ((await host.readDir(dirs.runsDir)) ?? [])
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
    .reverse();
  for (const n of names) {
    const r = await readRun(host, dirs, n);
    const begin = r?.records[0];
    if (!r || begin?.kind !== 'begin' || begin.mode !== 'apply') continue;
    if (actionsOf(r.records).some(isEdit)) return r;
  }
  throw new ReconcileError(`no applied run with changes to roll back in ${runsDir}`);
}

type Current = { entry: 'absent' } | { entry: 'file'; sha256: string } | { entry: 'symlink'; link: string } | { entry: 'dir' };

async function currentEntry(host: Host, p: string): Promise<Current> {
  const st = await host.lstat(p);
  if (st === null) return { entry: 'absent' };
  if (st.isSymbolicLink()) return { entry: 'symlink', link: (await host.readLink(p)) ?? '' };
  if (st.isDirectory()) return { entry: 'dir' };
  return { entry: 'file', sha256: sha256((await host.readBytes(p)) ?? '') };
}

function sameAsPrior(cur: Current, prior: PriorEntry): boolean {
  if (cur.entry !== prior.entry) return false;
  if (cur.entry === 'file' && prior.entry === 'file') return cur.sha256 === prior.sha256;
  if (cur.entry === 'symlink' && prior.entry === 'symlink') return cur.link === prior.link;
  return true;
}

function priorAsCurrent(p: PriorEntry): Current {
  return p.entry === 'file' ? { entry: 'file', sha256: p.sha256 } : p.entry === 'symlink' ? { entry: 'symlink', link: p.link } : { entry: 'absent' };
}

function describeCurrent(c: Current): string {
  return c.entry === 'absent'
    ? 'is gone'
    : c.entry === 'symlink'
      ? `is now a link to ${c.link}`
      : c.entry === 'dir'
        ? 'is now a directory'
        : 'has other content';
}

type Restore = { act: (door: WriteDoor) => Promise<void> } | { note: string } | { refused: string };

/**
 * The backup of `p` as the run kept it: a regular file in the run's own
 * backup/ (no link on the way, the file itself opened without following a
 * link) whose sha256 is the one the journal recorded. Otherwise why not.
 */
async function verifiedBackup(
  host: Host,
  run: RunInfo,
  p: string,
  prior: Extract<PriorEntry, { entry: 'file' }> & { backup: string },
): Promise<{ bytes: Buffer } | string> {
  const from = path.posix.join(run.dir, prior.backup);
  const loc = await host.locate(from, { follow: false });
  if (loc.target !== from) return `the backup ${from} is reached through a symbolic link (it resolves to ${loc.target}); ${p} was not restored`;
  const f = await readOwnFile(loc.abs, MAX_BACKUP_BYTES);
  if (f.kind === 'missing') return `the backup ${from} is missing; ${p} was not restored`;
  if (f.kind === 'other') return `the backup ${from} is ${f.what}, not the regular file the run kept; ${p} was not restored`;
  const got = sha256(f.bytes);
  const want = run.kept.get(prior.backup) ?? prior.sha256;
  if (got !== want) return `the backup ${from} is not what the run kept (sha256 ${got}, the journal recorded ${want}); ${p} was not restored`;
  return { bytes: f.bytes };
}

/** Puts `prior` back at `p` (after whatever is there now is removed). */
async function restorer(host: Host, run: RunInfo, p: string, prior: PriorEntry): Promise<Restore> {
  if (prior.entry === 'absent') return { act: async (door) => void (await door.remove(p)) };
  if (prior.entry === 'symlink') return { act: async (door) => void (await door.symlink(p, prior.link)) };
  if (prior.backup === null) return { note: `its content was not kept (a swap file's pages are never backed up)` };
  const kept = { ...prior, backup: prior.backup };
  const first = await verifiedBackup(host, run, p, kept);
  if (typeof first === 'string') return { refused: first };
  return {
    act: async (door) => {
      // Read again when it is used: what was checked at plan time is not trusted to have stayed.
      const now = await verifiedBackup(host, run, p, kept);
      if (typeof now === 'string') throw new ReconcileError(now);
      if ((await host.lstat(p))?.isSymbolicLink()) await door.remove(p);
      await door.writeFile({ path: p, content: bytesOf(now.bytes), restore: { mode: prior.mode, uid: prior.uid, gid: prior.gid } });
    },
  };
}

/** A step for `p` whose restore is `r`; a note when nothing can be restored. */
function restoreStep(r: Restore, summary: string, conflict?: string): UndoStep | { note: string } {
  if ('note' in r) return r;
  const c = conflict ? { conflict } : {};
  if ('refused' in r) return { summary, refused: r.refused, ...c };
  return { summary, act: r.act, ...c };
}

/**
 * The journal records resolved target paths. When `p` no longer resolves to
 * itself (a directory on the way became a link), acting on it would change
 * another file: refused.
 */
async function movedAway(host: Host, p: string): Promise<string | null> {
  const loc = await host.locate(p, { follow: false });
  return loc.target === p ? null : `${p} now resolves to ${loc.target} (a directory on the way is a symbolic link); not undone`;
}

function describeRecord(r: JournalRecord | undefined): string {
  if (r === undefined) return 'no record';
  if ('path' in r) return `record ${r.seq} (${r.kind} ${r.path})`;
  if (r.kind === 'runtime') return `record ${r.seq} (${r.action.step})`;
  return `record ${r.seq} (${r.kind})`;
}

function incompleteness(run: RunInfo): RollbackPlan['incomplete'] {
  if (run.end === 'ok' || run.end === 'failed') return null;
  const why =
    run.end === 'interrupted'
      ? 'the run was interrupted (a later run found it unfinished)'
      : `it has no end record${run.torn ? ' and its last line is torn' : ''}`;
  return { why, last: describeRecord(run.records.at(-1)) };
}

/** The link changes a disable or mask recorded, undone: each link it made removed, each it removed made again. */
export function linkSteps(delta: LinkDelta | undefined, what: string): UndoStep[] {
  if (!delta)
    return [
      { summary: `${what}: systemctl's link changes were not recorded (the run stopped there)`, conflict: `re-enable the units by hand with systemctl enable` },
    ];
  const steps: UndoStep[] = [];
  for (const a of delta.added)
    steps.push({ summary: `remove ${a.path} (-> ${a.link}), made by ${what}`, act: async (door) => void (await door.remove(a.path)) });
  for (const r of delta.removed)
    steps.push({ summary: `re-create ${r.path} -> ${r.link}, removed by ${what}`, act: async (door) => void (await door.symlink(r.path, r.link)) });
  return steps;
}

/**
 * Reads run `id`'s journal (or the newest apply's) backwards into undo steps: the door's own records (files,
 * links, directories) here, each runtime record through `runtime`, which knows the managers that ran it.
 * `dirs` are the reports and runs directories resolved inside the root; `runsDirLabel` names the runs
 * directory in messages as the user wrote it.
 */
export async function planRollback(host: Host, dirs: RunsDirs, runsDirLabel: string, id: string | undefined, runtime: RuntimeUndoer): Promise<RollbackPlan> {
  const run = await pickRun(host, runsDirLabel, dirs, id);
  const begin = run.records[0];
  const incomplete = incompleteness(run);
  const alreadyBy = await earlierRollback(host, run);
  if (alreadyBy !== null) return { run: run.id, runDir: run.dir, steps: [], notes: [], alreadyBy, incomplete };
  // The directory the lock lives in, and those above it: a run that made them
  // made them for its lock, which this rollback holds until its last step.
  const lockDir = await host.realTarget(path.posix.dirname(LOCK_PATH));
  const u: UndoState = {
    host,
    run,
    forLock: (p) => lockDir === p || lockDir.startsWith(p + '/'),
    runtimeOk: begin?.kind === 'begin' && begin.live && host.live,
    steps: [],
    notes: [],
    unitLinksChanged: false,
    leftByLater: new Map(),
  };
  for (const a of actionsOf(run.records).reverse()) {
    if (a.outcome === 'failed' || !isEdit(a)) continue;
    const r = a.record;
    if (r.kind === 'write') await undoWrite(u, r);
    else if (r.kind === 'link' || r.kind === 'remove') await undoLinkOrRemove(u, r);
    else if (r.kind === 'mkdir' || r.kind === 'rmdir') await undoDir(u, r);
    else if (r.kind === 'aside') await undoAside(u, r, a.outcome);
    else if (r.kind === 'later') await undoLater(u, r);
    else if (r.kind === 'runtime') await runtime.undo(u, r.action, a.result);
  }
  await runtime.finish(u);
  // Files and links first (in reverse), then reload, swapon and unit starts.
  return { run: run.id, runDir: run.dir, steps: undoOrder(u.steps), notes: u.notes, alreadyBy: null, incomplete };
}

/** What a runtime record's undo may read and add to: the steps and notes so far, and whether unit links changed. */
export interface UndoSink {
  host: Host;
  /** Runtime state is put back only on the live host a live run changed. */
  runtimeOk: boolean;
  steps: UndoStep[];
  notes: string[];
  /** Set when undone links or files are under /etc/systemd: the manager reloads once, after the files. */
  unitLinksChanged: boolean;
}

/**
 * The undo of runtime records (sysctl, swapoff, unit stops, disables and masks), which needs the service
 * managers the run asked: the engine gives one per rollback (src/reconcile/runtime-undo.ts).
 */
export interface RuntimeUndoer {
  /** Adds the steps or notes that undo one journaled runtime step; `result` is its recorded link changes. */
  undo(u: UndoSink, action: RuntimeStep, result: LinkDelta | undefined): Promise<void>;
  /** After every record: the daemon-reloads the undone unit links need. */
  finish(u: UndoSink): Promise<void>;
}

/** What planning one run's undo collects as it reads the journal backwards. */
interface UndoState extends UndoSink {
  run: RunInfo;
  /** A directory the run made for its lock: removed only once this rollback's own lock is gone. */
  forLock: (p: string) => boolean;
  /**
   * A file written twice in one run (two resources commenting out lines of one script), or removed
   * and then journaled as written later (the boot watch's stamp): the earlier record is judged
   * against what undoing the later one leaves there, not the file now.
   */
  leftByLater: Map<string, Current>;
}

type RecordOf<K extends JournalRecord['kind']> = Extract<JournalRecord, { kind: K }>;

/** A marker from an earlier rollback of this run: who did it; null when there is none. */
async function earlierRollback(host: Host, run: RunInfo): Promise<string | null> {
  const markerAt = path.posix.join(run.dir, MARKER);
  const marker = await readOwnFile((await host.locate(markerAt, { follow: false })).abs, 64 * 1024);
  if (marker.kind === 'other')
    throw new ReconcileError(
      `cannot roll back run ${run.id}: ${markerAt} is ${marker.what}, not the marker a rollback writes; it was not opened; nothing was changed`,
    );
  if (marker.kind !== 'file') return null;
  try {
    const named = (JSON.parse(marker.bytes.toString('utf8')) as { by?: unknown }).by;
    if (typeof named === 'string' && RUN_ID.test(named)) return `run ${named}`;
  } catch {
    // keep the generic wording
  }
  return 'an earlier rollback';
}

async function undoWrite(u: UndoState, r: RecordOf<'write'>): Promise<void> {
  const { host, run } = u;
  const moved = await movedAway(host, r.path);
  if (moved) {
    u.steps.push({ summary: `restore ${r.path}`, refused: moved });
    return;
  }
  const cur = u.leftByLater.get(r.path) ?? (await currentEntry(host, r.path));
  if (r.prior.entry === 'file') u.leftByLater.set(r.path, { entry: 'file', sha256: r.prior.sha256 });
  else u.leftByLater.delete(r.path);
  const summary = r.prior.entry === 'absent' ? `remove ${r.path}, which the run created` : `restore ${r.path}`;
  if (cur.entry === 'file' && cur.sha256 === r.sha256) {
    const step = restoreStep(await restorer(host, run, r.path, r.prior), summary);
    if ('note' in step) u.notes.push(`${r.path}: ${step.note}`);
    else u.steps.push(step);
  } else if (!sameAsPrior(cur, r.prior)) {
    const conflict = `${r.path} ${describeCurrent(cur)} since run ${run.id} wrote it`;
    const step = restoreStep(await restorer(host, run, r.path, r.prior), `restore ${r.path}`, conflict);
    u.steps.push('note' in step ? { summary: `restore ${r.path}`, conflict } : step);
  }
}

async function undoLinkOrRemove(u: UndoState, r: RecordOf<'link'> | RecordOf<'remove'>): Promise<void> {
  const { host, run } = u;
  const summary =
    r.prior.entry === 'absent'
      ? `remove ${r.path}, which the run created`
      : r.prior.entry === 'symlink'
        ? `re-create ${r.path} -> ${r.prior.link}`
        : `restore ${r.path}`;
  const moved = await movedAway(host, r.path);
  if (moved) {
    u.steps.push({ summary, refused: moved });
    return;
  }
  const cur = u.leftByLater.get(r.path) ?? (await currentEntry(host, r.path));
  const asLeft: Current = r.kind === 'link' ? { entry: 'symlink', link: r.link } : { entry: 'absent' };
  const untouched = JSON.stringify(cur) === JSON.stringify(asLeft);
  if (!untouched && sameAsPrior(cur, r.prior)) return; // never happened, or already put back
  if (r.path.startsWith('/etc/systemd/')) u.unitLinksChanged = true;
  const step = restoreStep(
    await restorer(host, run, r.path, r.prior),
    summary,
    untouched ? undefined : `${r.path} ${describeCurrent(cur)} since run ${run.id} changed it`,
  );
  if ('note' in step) u.notes.push(`${r.path}: ${step.note}`);
  else u.steps.push(step);
}

async function undoDir(u: UndoState, r: RecordOf<'mkdir'> | RecordOf<'rmdir'>): Promise<void> {
  const moved = await movedAway(u.host, r.path);
  if (r.kind === 'mkdir') {
    const summary = `remove the directory ${r.path} if the run left it empty`;
    if (moved) u.steps.push({ summary, refused: moved });
    else u.steps.push({ summary, act: async (door) => void (await door.removeEmptyDir(r.path)), ...(u.forLock(r.path) ? { phase: 'unlocked' as const } : {}) });
    return;
  }
  if (moved) u.steps.push({ summary: `re-create the directory ${r.path}`, refused: moved });
  else if ((await u.host.lstat(r.path)) === null) u.steps.push({ summary: `re-create the directory ${r.path}`, act: (door) => door.makeDir(r.path, r) });
}

/**
 * A move aside undone: renamed back only when the original path is absent and the set-aside entry is the one
 * the journal names (device, inode, kind); else a named refusal, and the set-aside copy stays where it is. An
 * entry still at its own path with the journal's identity was never moved (the run was killed before the
 * rename) or was put back already: nothing to do.
 */
async function undoAside(u: UndoState, r: RecordOf<'aside'>, outcome: JournalAction['outcome']): Promise<void> {
  const summary = `move ${r.to} back to ${r.path} (${r.entry === 'dir' ? `a directory of ${r.files} file${r.files === 1 ? '' : 's'}, ${r.bytes} bytes` : `a file of ${r.bytes} bytes`})`;
  const moved = (await movedAway(u.host, r.path)) ?? (await movedAway(u.host, r.to));
  if (moved) {
    u.steps.push({ summary, refused: moved });
    return;
  }
  const original = (await u.host.locate(r.path, { follow: false })).abs;
  const aside = (await u.host.locate(r.to, { follow: false })).abs;
  if (!(await entryThere(aside))) {
    if (await sameEntry(original, r)) return;
    u.steps.push({
      summary,
      refused: `${r.to} is gone${outcome === 'unknown' ? ' (the run was killed at this step)' : ''}; ${r.path} cannot be put back from it`,
    });
    return;
  }
  if (!(await sameEntry(aside, r))) {
    u.steps.push({ summary, refused: `${r.to} is not the entry run ${u.run.id} set aside (device ${r.dev}, inode ${r.ino}); it was left where it is` });
    return;
  }
  if (await entryThere(original)) {
    u.steps.push({ summary, refused: `${r.path} exists again (made since run ${u.run.id} set it aside); move it away first; ${r.to} was left where it is` });
    return;
  }
  // A unit file put back: the manager reloads before any unit starts again.
  if (r.path.startsWith('/etc/systemd/') || r.path.startsWith('/usr/local/lib/systemd/')) u.unitLinksChanged = true;
  u.steps.push({ summary, act: (door) => door.moveBack(r.path, r.to, r) });
}

/** A file a unit the run installed wrote after it (the boot watch's stamp and kept record): what was there before is put back. */
async function undoLater(u: UndoState, r: RecordOf<'later'>): Promise<void> {
  const summary = r.prior.entry === 'absent' ? `remove ${r.path}, which ${r.by} wrote after the run` : `restore ${r.path}, which ${r.by} may have rewritten`;
  const moved = await movedAway(u.host, r.path);
  if (moved) {
    u.steps.push({ summary, refused: moved });
    return;
  }
  const cur = u.leftByLater.get(r.path) ?? (await currentEntry(u.host, r.path));
  // An earlier record of this path (the old stamp's removal) is judged against what this undo leaves.
  u.leftByLater.set(r.path, priorAsCurrent(r.prior));
  if (sameAsPrior(cur, r.prior)) return; // never written, or written back as it was
  if (cur.entry === 'dir') {
    u.steps.push({ summary, refused: `${r.path} is now a directory, not the file ${r.by} writes` });
    return;
  }
  // Whatever the unit wrote is what the run set going; a link there is not what it writes, so only --force removes it.
  const conflict = cur.entry === 'symlink' ? `${r.path} ${describeCurrent(cur)}, not the file ${r.by} writes` : undefined;
  const step = restoreStep(await restorer(u.host, u.run, r.path, r.prior), summary, conflict);
  if ('note' in step) u.notes.push(`${r.path}: ${step.note}`);
  else u.steps.push(step);
}
