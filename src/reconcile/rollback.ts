// reconcile --rollback [RUN_ID]: undo one applied run from its journal, in
// reverse order, through the same write door. A file changed after the run
// is never overwritten without --force. Runtime state is put back only on a
// live host for a live run; loaded modules stay loaded.
import path from 'node:path';
import type { Host } from '../host.js';
import { ReconcileError } from '../errors.js';
import { WriteDoor, sha256 } from '../door/door.js';
import { actionsOf, parseJournal, type JournalAction, type JournalRecord, type LinkDelta, type PriorEntry, type UserOf } from '../door/journal.js';
import { SYSTEM_SYSTEMCTL, systemctlArgv, type Systemctl } from '../systemd/systemctl-show.js';
import { busSystemctl, parsePasswdAccounts, userSystemctl } from '../ports/user-manager.js';
import { runsDirOf, jsonText } from './reports.js';
import { utf8Bytes } from '../bytes.js';

export interface UndoStep {
  /** One line: what will be put back. */
  summary: string;
  /** Set when the entry changed since the run: not undone without --force. */
  conflict?: string;
  act?: (door: WriteDoor) => Promise<void>;
  /**
   * When it runs: every file and link first (in reverse), then the one
   * daemon-reload, then runtime steps that need both (swapon, unit start).
   * Absent: a file or link step.
   */
  phase?: UndoPhase;
}

export type UndoPhase = 'files' | 'reload' | 'runtime';
const PHASES: readonly UndoPhase[] = ['files', 'reload', 'runtime'];

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
}

const MARKER = 'rolled-back.json';

interface RunInfo {
  id: string;
  dir: string;
  records: JournalRecord[];
}

async function readRun(host: Host, runsDir: string, id: string): Promise<RunInfo | null> {
  const dir = path.posix.join(runsDir, id);
  const text = await host.readFile(path.posix.join(dir, 'journal'));
  if (text === null) return null;
  let records: JournalRecord[];
  try {
    records = parseJournal(text).records;
  } catch (e) {
    throw new ReconcileError(`cannot read the journal of run ${id} (${path.posix.join(dir, 'journal')}): ${(e as Error).message}`);
  }
  return { id, dir, records };
}

function isEdit(a: JournalAction): boolean {
  return !(a.record.kind === 'write' && a.record.report);
}

/** The run to roll back: the one named, or the newest apply that changed something. */
async function pickRun(host: Host, reportsDir: string, id: string | undefined): Promise<RunInfo> {
  const runsDir = runsDirOf(reportsDir);
  if (id !== undefined) {
    if (!/^[A-Za-z0-9-]+$/.test(id)) throw new ReconcileError(`${id} is not a run id (see ${runsDir})`);
    const r = await readRun(host, runsDir, id);
    if (!r) throw new ReconcileError(`no run ${id} in ${runsDir}`);
    const begin = r.records[0];
    if (begin?.kind === 'begin' && begin.mode === 'rollback') throw new ReconcileError(`run ${id} is itself a rollback; roll back the run it undid by applying again`);
    return r;
  }
  const names = ((await host.readDir(runsDir)) ?? []).filter((e) => e.isDirectory()).map((e) => e.name).sort().reverse();
  for (const n of names) {
    const r = await readRun(host, runsDir, n);
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
  return c.entry === 'absent' ? 'is gone' : c.entry === 'symlink' ? `is now a link to ${c.link}` : c.entry === 'dir' ? 'is now a directory' : 'has other content';
}

/** Puts `prior` back at `p` (after whatever is there now is removed). */
function restorer(host: Host, run: RunInfo, p: string, prior: PriorEntry): ((door: WriteDoor) => Promise<void>) | string {
  if (prior.entry === 'absent') return async (door) => void (await door.remove(p));
  if (prior.entry === 'symlink') return async (door) => void (await door.symlink(p, prior.link));
  if (prior.backup === null) return `its content was not kept (a swap file's pages are never backed up)`;
  const from = path.posix.join(run.dir, prior.backup);
  return async (door) => {
    const bytes = await host.readBytes(from);
    if (bytes === null) throw new ReconcileError(`the backup ${from} of ${p} is missing`);
    if ((await host.lstat(p))?.isSymbolicLink()) await door.remove(p);
    await door.writeFile({ path: p, content: bytes, restore: { mode: prior.mode, uid: prior.uid, gid: prior.gid } });
  };
}

function linkSteps(delta: LinkDelta | undefined, what: string): UndoStep[] {
  if (!delta) return [{ summary: `${what}: systemctl's link changes were not recorded (the run stopped there)`, conflict: `re-enable the units by hand with systemctl enable` }];
  const steps: UndoStep[] = [];
  for (const a of delta.added) steps.push({ summary: `remove ${a.path} (-> ${a.link}), made by ${what}`, act: async (door) => void (await door.remove(a.path)) });
  for (const r of delta.removed) steps.push({ summary: `re-create ${r.path} -> ${r.link}, removed by ${what}`, act: async (door) => void (await door.symlink(r.path, r.link)) });
  return steps;
}

export async function planRollback(host: Host, reportsDir: string, id: string | undefined): Promise<RollbackPlan> {
  const run = await pickRun(host, reportsDir, id);
  const begin = run.records[0];
  const marker = await host.readFile(path.posix.join(run.dir, MARKER));
  if (marker !== null) {
    let by = 'an earlier rollback';
    try {
      by = `run ${String((JSON.parse(marker) as { by?: string }).by)}`;
    } catch {
      // keep the generic wording
    }
    return { run: run.id, runDir: run.dir, steps: [], notes: [], alreadyBy: by };
  }
  const runtimeOk = begin?.kind === 'begin' && begin.live && host.live;
  const steps: UndoStep[] = [];
  const notes: string[] = [];
  let unitLinksChanged = false;
  // A file written twice in one run (two resources commenting out lines of one script): the
  // earlier write is judged against what undoing the later one leaves there, not the file now.
  const leftByLater = new Map<string, Current>();
  const userReloads = new Map<string, UserOf>(); // users whose unit links the run changed: their managers reload
  for (const a of actionsOf(run.records).reverse()) {
    if (a.outcome === 'failed' || !isEdit(a)) continue;
    const r = a.record;
    switch (r.kind) {
      case 'write': {
        const cur = leftByLater.get(r.path) ?? (await currentEntry(host, r.path));
        if (r.prior.entry === 'file') leftByLater.set(r.path, { entry: 'file', sha256: r.prior.sha256 });
        else leftByLater.delete(r.path);
        if (cur.entry === 'file' && cur.sha256 === r.sha256) {
          const act = restorer(host, run, r.path, r.prior);
          if (typeof act === 'string') notes.push(`${r.path}: ${act}`);
          else steps.push({ summary: r.prior.entry === 'absent' ? `remove ${r.path}, which the run created` : `restore ${r.path}`, act });
        } else if (!sameAsPrior(cur, r.prior)) {
          const act = restorer(host, run, r.path, r.prior);
          steps.push({ summary: `restore ${r.path}`, conflict: `${r.path} ${describeCurrent(cur)} since run ${run.id} wrote it`, ...(typeof act === 'string' ? {} : { act }) });
        }
        break;
      }
      case 'link':
      case 'remove': {
        const cur = await currentEntry(host, r.path);
        const asLeft: Current = r.kind === 'link' ? { entry: 'symlink', link: r.link } : { entry: 'absent' };
        const untouched = JSON.stringify(cur) === JSON.stringify(asLeft);
        if (!untouched && sameAsPrior(cur, r.prior)) break; // never happened, or already put back
        const act = restorer(host, run, r.path, r.prior);
        const summary = r.prior.entry === 'absent' ? `remove ${r.path}, which the run created` : r.prior.entry === 'symlink' ? `re-create ${r.path} -> ${r.prior.link}` : `restore ${r.path}`;
        if (r.path.startsWith('/etc/systemd/')) unitLinksChanged = true;
        if (typeof act === 'string') notes.push(`${r.path}: ${act}`);
        else steps.push({ summary, act, ...(untouched ? {} : { conflict: `${r.path} ${describeCurrent(cur)} since run ${run.id} changed it` }) });
        break;
      }
      case 'mkdir':
        steps.push({ summary: `remove the directory ${r.path} if the run left it empty`, act: async (door) => void (await door.removeEmptyDir(r.path)) });
        break;
      case 'rmdir':
        if ((await host.lstat(r.path)) === null) steps.push({ summary: `re-create the directory ${r.path}`, act: (door) => door.makeDir(r.path, r) });
        break;
      case 'runtime': {
        const s = r.action;
        if (!runtimeOk) {
          if (s.step !== 'daemon-reload') notes.push(`${s.step} ${'units' in s ? s.units.join(' ') : 'device' in s ? s.device : 'module' in s ? s.module : 'key' in s ? s.key : ''}: runtime state is put back only on the live host the run changed; offline only files and links are restored`);
          break;
        }
        if (s.step === 'sysctl') {
          const before = s.before;
          if (before === null) notes.push(`${s.key}: its value before the run is unknown`);
          else steps.push({ summary: `set ${s.key} back to ${before}`, act: (door) => door.runtime({ step: 'sysctl', key: s.key, path: s.path, before: null, value: before }, () => host.writeKernel(s.path, before)) });
        } else if (s.step === 'swapoff') {
          steps.push({ summary: `swapon ${s.device}`, phase: 'runtime', act: (door) => door.runtime({ step: 'swapon', device: s.device }, async () => void (await host.runChecked('swapon', [s.device]))) });
        } else if (s.step === 'modprobe') {
          notes.push(`module ${s.module} stays loaded: unloading it (br_netfilter above all) can cut the host's networking`);
        } else if (s.step === 'unit-stop') {
          const via = await managerOf(host, s);
          const of = s.user ? ` (${s.user}'s manager)` : '';
          if (typeof via === 'string') steps.push({ summary: `start ${s.units.join(' ')}${of}`, phase: 'runtime', conflict: via });
          else steps.push({ summary: `start ${s.units.join(' ')}${of}`, phase: 'runtime', act: (door) => door.runtime({ step: 'unit-start', units: s.units, ...userOf(s) }, async () => void (await host.runChecked(...systemctlArgv(via, ['start', ...s.units])))) });
        } else if (s.step === 'daemon-reload') {
          // The run reloaded after changing unit files through the door (a mask over an admin's unit file): so does the undo.
          if (s.user) userReloads.set(s.user, userOf(s));
          else unitLinksChanged = true;
        } else if (s.step === 'unit-disable' || s.step === 'unit-mask') {
          if (s.user) userReloads.set(s.user, userOf(s));
          else unitLinksChanged = true;
          steps.push(...linkSteps(a.result, `systemctl ${s.step === 'unit-mask' ? 'mask' : 'disable'} ${s.units.join(' ')}`));
        }
        break;
      }
    }
  }
  if (runtimeOk && unitLinksChanged) {
    steps.push({ summary: 'systemctl daemon-reload', phase: 'reload', act: (door) => door.runtime({ step: 'daemon-reload' }, async () => void (await host.runChecked('systemctl', ['daemon-reload']))) });
  }
  for (const [user, who] of runtimeOk ? userReloads : []) {
    const via = await managerOf(host, who);
    if (typeof via === 'string') steps.push({ summary: `daemon-reload of ${user}'s manager`, phase: 'reload', conflict: via });
    else steps.push({ summary: `${systemctlArgv(via, ['daemon-reload']).flat().join(' ')}`, phase: 'reload', act: (door) => door.runtime({ step: 'daemon-reload', ...who }, async () => void (await host.runChecked(...systemctlArgv(via, ['daemon-reload'])))) });
  }
  // Files and links first (in reverse), then reload, swapon and unit starts.
  return { run: run.id, runDir: run.dir, steps: undoOrder(steps), notes, alreadyBy: null };
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
  if (!a || a.uid !== s.uid || a.gid !== s.gid) return `the run reached ${s.user}'s manager as UID ${String(s.uid)}:${String(s.gid)}, which /etc/passwd no longer says ${s.user} is; do it by hand as that user`;
  return userSystemctl({ ...a, route: 'private' });
}

export interface RollbackOutcome {
  done: string[];
  failed: Array<{ step: string; message: string }>;
}

export async function executeRollback(door: WriteDoor, plan: RollbackPlan): Promise<RollbackOutcome> {
  const out: RollbackOutcome = { done: [], failed: [] };
  for (const s of plan.steps) {
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
    await door.writeFile({ path: path.posix.join(plan.runDir, MARKER), content: utf8Bytes(jsonText({ by: door.runId, at: new Date().toISOString() })), report: true });
  }
  return out;
}
