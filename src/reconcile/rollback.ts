// reconcile --rollback [RUN_ID]: undo one applied run from its journal, in
// reverse order, through the same write door. A file changed after the run
// is never overwritten without --force. Runtime state is put back only on a
// live host for a live run; loaded modules stay loaded.
import path from 'node:path';
import type { Host } from '../host.js';
import { ReconcileError } from '../errors.js';
import { WriteDoor, sha256 } from '../door/door.js';
import { actionsOf, readRunJournal, type JournalAction, type JournalRecord, type LinkDelta, type PriorEntry, type UserOf } from '../door/journal.js';
import { RUN_ID } from '../door/journal-check.js';
import { readOwnFile } from '../door/own-file.js';
import { LOCK_PATH } from '../door/lock.js';
import { checkedRunsDirs, runsDirOf, jsonText, type RunsDirs } from './reports.js';
import { bytesOf, utf8Bytes } from '../bytes.js';
import { terminalSafe } from '../untrusted-text.js';
import { redactString } from '../redact.js';
import { FORMAT_VERSION } from './plan-document.js';
import { SYSTEM_SYSTEMCTL, systemctlArgv, type Systemctl } from '../systemd/systemctl-show.js';
import { busSystemctl, parsePasswdAccounts, userSystemctl } from '../ports/user-manager.js';

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

const MARKER = 'rolled-back.json';
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
    if ((x.kind === 'write' || x.kind === 'link' || x.kind === 'remove') && x.prior.entry === 'file' && x.prior.backup !== null && !kept.has(x.prior.backup))
      kept.set(x.prior.backup, x.prior.sha256);
  }
  return { id, dir: path.posix.join(dirs.runsDir, id), journal: r.target, records, torn, end, kept };
}

function isEdit(a: JournalAction): boolean {
  return !(a.record.kind === 'write' && a.record.report);
}

/** The run to roll back: the one named, or the newest apply that changed something. */
async function pickRun(host: Host, reportsDir: string, dirs: RunsDirs, id: string | undefined): Promise<RunInfo> {
  const runsDir = runsDirOf(reportsDir);
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

function linkSteps(delta: LinkDelta | undefined, what: string): UndoStep[] {
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

export async function planRollback(host: Host, reportsDir: string, id: string | undefined): Promise<RollbackPlan> {
  const dirs = await checkedRunsDirs(host, reportsDir);
  const run = await pickRun(host, reportsDir, dirs, id);
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
    userReloads: new Map(),
  };
  for (const a of actionsOf(run.records).reverse()) {
    if (a.outcome === 'failed' || !isEdit(a)) continue;
    const r = a.record;
    if (r.kind === 'write') await undoWrite(u, r);
    else if (r.kind === 'link' || r.kind === 'remove') await undoLinkOrRemove(u, r);
    else if (r.kind === 'mkdir' || r.kind === 'rmdir') await undoDir(u, r);
    else if (r.kind === 'runtime') await undoRuntime(u, r.action, a.result);
  }
  await reloadSteps(u);
  // Files and links first (in reverse), then reload, swapon and unit starts.
  return { run: run.id, runDir: run.dir, steps: undoOrder(u.steps), notes: u.notes, alreadyBy: null, incomplete };
}

/** What planning one run's undo collects as it reads the journal backwards. */
interface UndoState {
  host: Host;
  run: RunInfo;
  /** A directory the run made for its lock: removed only once this rollback's own lock is gone. */
  forLock: (p: string) => boolean;
  /** Runtime state is put back only on the live host a live run changed. */
  runtimeOk: boolean;
  steps: UndoStep[];
  notes: string[];
  unitLinksChanged: boolean;
  /**
   * A file written twice in one run (two resources commenting out lines of one script): the
   * earlier write is judged against what undoing the later one leaves there, not the file now.
   */
  leftByLater: Map<string, Current>;
  /** Users whose unit links the run changed: their managers reload. */
  userReloads: Map<string, UserOf>;
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
  const cur = await currentEntry(host, r.path);
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

async function undoRuntime(u: UndoState, s: RecordOf<'runtime'>['action'], result: LinkDelta | undefined): Promise<void> {
  const { host } = u;
  if (!u.runtimeOk) {
    if (s.step !== 'daemon-reload')
      u.notes.push(
        `${s.step} ${'units' in s ? s.units.join(' ') : 'device' in s ? s.device : 'module' in s ? s.module : 'key' in s ? s.key : ''}: runtime state is put back only on the live host the run changed; offline only files and links are restored`,
      );
    return;
  }
  if (s.step === 'sysctl') {
    const before = s.before;
    if (before === null) u.notes.push(`${s.key}: its value before the run is unknown`);
    else
      u.steps.push({
        summary: `set ${s.key} back to ${before}`,
        act: (door) => door.runtime({ step: 'sysctl', key: s.key, path: s.path, before: null, value: before }, () => host.writeKernel(s.path, before)),
      });
  } else if (s.step === 'swapoff') {
    u.steps.push({
      summary: `swapon ${s.device}`,
      phase: 'runtime',
      act: (door) => door.runtime({ step: 'swapon', device: s.device }, async () => void (await host.runChecked('swapon', [s.device]))),
    });
  } else if (s.step === 'modprobe') {
    u.notes.push(`module ${s.module} stays loaded: unloading it (br_netfilter above all) can cut the host's networking`);
  } else if (s.step === 'unit-stop') {
    const via = await managerOf(host, s);
    const summary = `start ${s.units.join(' ')}${s.user ? ` (${s.user}'s manager)` : ''}`;
    if (typeof via === 'string') u.steps.push({ summary, phase: 'runtime', conflict: via });
    else
      u.steps.push({
        summary,
        phase: 'runtime',
        act: (door) =>
          door.runtime(
            { step: 'unit-start', units: s.units, ...userOf(s) },
            async () => void (await host.runChecked(...systemctlArgv(via, ['start', ...s.units]))),
          ),
      });
  } else if (s.step === 'daemon-reload') {
    // The run reloaded after changing unit files through the door (a mask over an admin's unit file): so does the undo.
    if (s.user) u.userReloads.set(s.user, userOf(s));
    else u.unitLinksChanged = true;
  } else if (s.step === 'unit-disable' || s.step === 'unit-mask') {
    if (s.user) u.userReloads.set(s.user, userOf(s));
    else u.unitLinksChanged = true;
    u.steps.push(...linkSteps(result, `systemctl ${s.step === 'unit-mask' ? 'mask' : 'disable'} ${s.units.join(' ')}`));
  }
}

/** The daemon-reloads the undone unit links need: the system manager's, and each user's whose links changed. */
async function reloadSteps(u: UndoState): Promise<void> {
  const { host } = u;
  if (!u.runtimeOk) return;
  if (u.unitLinksChanged) {
    u.steps.push({
      summary: 'systemctl daemon-reload',
      phase: 'reload',
      act: (door) => door.runtime({ step: 'daemon-reload' }, async () => void (await host.runChecked('systemctl', ['daemon-reload']))),
    });
  }
  for (const [user, who] of u.userReloads) {
    const via = await managerOf(host, who);
    if (typeof via === 'string') u.steps.push({ summary: `daemon-reload of ${user}'s manager`, phase: 'reload', conflict: via });
    else
      u.steps.push({
        summary: `${systemctlArgv(via, ['daemon-reload']).flat().join(' ')}`,
        phase: 'reload',
        act: (door) => door.runtime({ step: 'daemon-reload', ...who }, async () => void (await host.runChecked(...systemctlArgv(via, ['daemon-reload'])))),
      });
  }
}

/** The user part of a journaled step, as it is journaled again by the undo. */
function userOf(s: UserOf): UserOf {
  return s.user ? { user: s.user, ...(s.route === 'private' ? { route: s.route, uid: s.uid, gid: s.gid } : {}) } : {};
}

/**
 * How to ask the manager a journaled step went to: the system's, the user's
 * through -M USER@, or (route 'private') as the user on the manager's own socket.
 * The journal is untrusted input: a private route is taken only for an account
 * /etc/passwd still has with that name, UID and GID; else the step is a
 * conflict naming why.
 */
async function managerOf(host: Host, s: UserOf): Promise<Systemctl | string> {
  if (!s.user) return SYSTEM_SYSTEMCTL;
  if (s.route !== 'private') return busSystemctl(s.user);
  const a = parsePasswdAccounts((await host.readFile('/etc/passwd')) ?? '').find((x) => x.name === s.user);
  if (!a || a.uid !== s.uid || a.gid !== s.gid)
    return `the run reached ${s.user}'s manager as UID ${String(s.uid)}:${String(s.gid)}, which /etc/passwd no longer says ${s.user} is; do it by hand as that user`;
  return userSystemctl({ ...a, route: 'private' });
}

export interface RollbackOutcome {
  done: string[];
  failed: Array<{ step: string; message: string }>;
}

/**
 * Runs the plan's steps; `unlock` releases this rollback's lock before the
 * steps that remove the directories the undone run made for its own lock.
 */
export async function executeRollback(door: WriteDoor, plan: RollbackPlan, unlock?: () => Promise<void>): Promise<RollbackOutcome> {
  const out: RollbackOutcome = { done: [], failed: [] };
  let locked = true;
  for (const s of plan.steps) {
    if (s.phase === 'unlocked' && locked) {
      locked = false;
      await unlock?.();
    }
    if (s.refused) {
      out.failed.push({ step: s.summary, message: s.refused });
      continue;
    }
    if (!s.act) {
      out.failed.push({ step: s.summary, message: s.conflict ?? 'nothing to restore it from' });
      continue;
    }
    try {
      await s.act(door);
      out.done.push(s.summary);
    } catch (e) {
      out.failed.push({ step: s.summary, message: (e as Error).message });
    }
  }
  if (out.failed.length === 0) {
    await door.writeFile({
      path: path.posix.join(plan.runDir, MARKER),
      content: utf8Bytes(jsonText({ by: door.runId, at: new Date().toISOString() })),
      report: true,
    });
  }
  return out;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The --rollback document (--json): the plan, and what was done when it ran. */
export function rollbackDocument(plan: RollbackPlan, outcome: RollbackOutcome | null, rollbackRun: string | null, preview: boolean): unknown {
  return {
    format_version: FORMAT_VERSION,
    mode: preview ? 'rollback-plan' : 'rollback',
    run: plan.run,
    already_rolled_back_by: plan.alreadyBy,
    incomplete: plan.incomplete,
    steps: plan.steps.map((s) => ({ summary: s.summary, ...(s.conflict ? { conflict: s.conflict } : {}), ...(s.refused ? { refused: s.refused } : {}) })),
    notes: plan.notes,
    done: outcome?.done ?? [],
    failed: outcome?.failed ?? [],
    journal: rollbackRun,
  };
}

/**
 * The --rollback text. `<` a step it can undo, `!` one it cannot (and why);
 * an incomplete journal says where it ends and that nothing after is known.
 */
export function renderRollback(plan: RollbackPlan, outcome: RollbackOutcome | null, o: { preview: boolean; force: boolean }): string {
  const lines: string[] = [];
  const inc = plan.incomplete;
  const tail = inc ? `  ! anything run ${plan.run} did after ${inc.last}: not in its journal, so it cannot be undone` : null;
  if (plan.alreadyBy) lines.push(`run ${plan.run} was already rolled back by ${plan.alreadyBy}; nothing to do`);
  else if (outcome === null) {
    const conflicts = plan.steps.filter((s) => s.conflict && !s.refused).length;
    const refused = plan.steps.filter((s) => s.refused).length;
    const undoable = plan.steps.filter((s) => !s.refused && s.act && (!s.conflict || o.force)).length;
    const refusedRun = !o.preview;
    lines.push(`${refusedRun ? 'rollback refused' : 'rollback plan'} for run ${plan.run}: ${plural(plan.steps.length, 'step')}`);
    if (inc) lines.push(`the journal of run ${plan.run} is incomplete: ${inc.why}; it ends at ${inc.last}`);
    for (const s of plan.steps)
      lines.push(s.refused ? `  ! ${s.summary}: ${s.refused}` : `  < ${s.summary}${s.conflict ? `  [changed since: ${s.conflict}]` : ''}`);
    if (tail) lines.push(tail);
    if (refused > 0) lines.push(`${plural(refused, 'step')} cannot be undone (marked !); --force does not override that`);
    if (conflicts > 0 && !o.force) lines.push(`${plural(conflicts, 'file')} changed after the run; nothing was changed; rerun with --force to overwrite them`);
    if (inc && !o.force)
      lines.push(
        `the journal is incomplete: a rollback would undo only the ${plural(undoable, 'step')} marked <; nothing was changed; rerun with --force to undo them`,
      );
    else if (refused > 0 && refusedRun) lines.push(`nothing was changed; rerun with --force to undo the other ${plural(undoable, 'step')}`);
  } else {
    lines.push(`rolled back run ${plan.run}${inc ? ` as far as its incomplete journal goes (${inc.why})` : ''}:`);
    for (const d of outcome.done) lines.push(`  < ${d}`);
    for (const f of outcome.failed) lines.push(`  ! ${f.step}: ${f.message}`);
    if (tail) lines.push(tail);
  }
  for (const n of plan.notes) lines.push(`  note: ${n}`);
  // Summaries, conflicts and notes quote the host's paths and unit names: data on the screen, never control.
  return lines.map((l) => terminalSafe(redactString(l))).join('\n') + '\n';
}
