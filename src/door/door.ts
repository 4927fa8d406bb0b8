// The write door: the only module that changes files. Every path is resolved
// inside the root (symlinks clamped, including every directory on the way),
// every action is journaled before it happens, originals are backed up with
// owner and mode, files are replaced by temp file + fsync + rename, and a
// file that changed since it was observed is refused.
import { closeSync, constants as fsc, promises as fs, readSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Host } from '../host.js';
import { describeFsError } from '../host.js';
import { HostError } from '../errors.js';
import { bufferOf, bytesOf, type ByteString } from '../bytes.js';
import { openRegular, readRegular } from '../regular-file.js';
import { Journal, type JournalEntry, type LinkDelta, type PriorEntry, type RuntimeStep } from './journal.js';
import { asideName, type AsideIdentity } from './journal-records.js';
import { asideSource, entryThere, sameEntry } from './move-aside.js';

export interface WriteRequest {
  /** Target path. Writing through a symlink writes its target and keeps the link. */
  path: string;
  /** The content observed when the plan was made; undefined: no stale check (reports). */
  expect?: ByteString | null;
  content: ByteString;
  /** Mode of a new file (default 0644); an existing file keeps its own. */
  mode?: number;
  /** Replace a symlink at `path` by a plain file instead of writing through it. */
  replaceLink?: boolean;
  /**
   * A report in the reports directory: a rollback leaves it, and it gets the
   * door's report mode (DoorOptions.reports) even when it exists, so a
   * document written world-readable before is made private by the next run.
   */
  report?: boolean;
  /** Rollback: put back exactly this owner and mode. */
  restore?: { mode: number; uid: number; gid: number };
}

export function sha256(b: Uint8Array | ByteString): string {
  return createHash('sha256')
    .update(typeof b === 'string' ? bufferOf(b) : b)
    .digest('hex');
}

export interface DoorOptions {
  /** Target path of this run's directory, e.g. /root/ks/preflight/runs/<id>. */
  runDir: string;
  runId: string;
  mode: 'apply' | 'rollback';
  rollbackOf?: string;
  tool: string;
  /** The modes of the tool's own documents (reports) and of the directories it makes for them; default PRIVATE_REPORTS. */
  reports?: ReportModes;
}

/** Modes of the reports directory's documents and of the directories the door makes for them. */
export interface ReportModes {
  file: number;
  dir: number;
}

/** Documents 0600 in 0700 directories: a plan's files can hold what only root may read. */
export const PRIVATE_REPORTS: ReportModes = { file: 0o600, dir: 0o700 };

const isRoot = () => process.getuid?.() === 0;
/** Eight hex digits: the temp name the next run's journal check accepts (journal-check.ts). */
const tmpSuffix = () => randomBytes(4).toString('hex');

export class WriteDoor {
  private readonly backedUp = new Map<string, string>();
  private ended = false;

  private constructor(
    readonly host: Host,
    readonly runId: string,
    /** Target path of the run directory, after resolution inside the root. */
    readonly runDir: string,
    private readonly journal: Journal,
    private readonly reports: ReportModes,
  ) {}

  /** Creates the run directory and its journal, and records the run's start. */
  static async open(host: Host, o: DoorOptions): Promise<WriteDoor> {
    // The reports and runs directories, when the door makes them, get the report mode's directory mode;
    // the run directory, which holds backups of host files, is always private.
    const reports = o.reports ?? PRIVATE_REPORTS;
    const parent = await ensureDirs(host, path.posix.dirname(o.runDir), reports.dir, null);
    const dir = await ensureDirs(host, path.posix.join(parent, path.posix.basename(o.runDir)), 0o700, null);
    const abs = (await host.locate(path.posix.join(dir, 'journal'), { follow: false })).abs;
    let journal: Journal;
    try {
      journal = await Journal.create(abs);
    } catch (e) {
      throw fsError('create the run journal', path.posix.join(dir, 'journal'), e);
    }
    const door = new WriteDoor(host, o.runId, dir, journal, reports);
    await door.record({
      kind: 'begin',
      mode: o.mode,
      run: o.runId,
      pid: process.pid,
      root: host.root,
      live: host.live,
      tool: o.tool,
      ...(o.rollbackOf ? { rollback_of: o.rollbackOf } : {}),
    });
    return door;
  }

  private async record(e: JournalEntry): Promise<number> {
    try {
      return await this.journal.append(e);
    } catch (err) {
      throw fsError('append to the run journal', path.posix.join(this.runDir, 'journal'), err);
    }
  }

  private async done(seq: number, result?: LinkDelta): Promise<void> {
    this.host.forgetLinks();
    await this.record({ kind: 'done', of: seq, ...(result ? { result } : {}) });
  }

  /** The journalled step `seq` failed: links are resolved afresh and the journal says why. */
  private async failed(seq: number, error: string): Promise<void> {
    this.host.forgetLinks();
    await this.record({ kind: 'failed', of: seq, error });
  }

  /**
   * Runs the file-system change journalled as `seq`. On failure `cleanup`
   * removes what it left behind (a temporary), the journal says so and the
   * error is thrown as `verb` of `at`; on success `syncDir` is synced and the
   * step is done.
   */
  private async fsStep(
    seq: number,
    verb: string,
    at: string,
    act: () => Promise<void>,
    opts: { cleanup?: () => Promise<void>; syncDir?: string } = {},
  ): Promise<void> {
    try {
      await act();
    } catch (e) {
      await opts.cleanup?.();
      await this.failed(seq, describeFsError(e));
      throw fsError(verb, at, e);
    }
    if (opts.syncDir !== undefined) await fsyncDir(opts.syncDir);
    await this.done(seq);
  }

  /** Writes a file. Returns false when it already held exactly `content`. */
  async writeFile(req: WriteRequest): Promise<boolean> {
    // What the plan saw was read through any link, so compare the same way.
    let loc = await this.host.locate(req.path, { follow: true });
    let st = await lstatOrNull(loc.abs, loc.target);
    if (st?.isDirectory()) throw new HostError(`cannot write ${req.path}: it is a directory`, req.path);
    let current = st ? await readBytesAt(loc.abs, loc.target) : null;
    if (req.expect !== undefined && current !== req.expect) {
      throw new HostError(`${req.path} changed since the plan was made; nothing was written to it; run the plan again`, req.path);
    }
    const own = await this.host.locate(req.path, { follow: false });
    if (req.replaceLink && (await lstatOrNull(own.abs, req.path))?.isSymbolicLink()) {
      await this.remove(req.path);
      loc = own;
      st = null;
      current = null;
    }
    // A report whose mode is not the report mode is written again, with it.
    const reportMode = req.report && !req.restore ? (req.mode ?? this.reports.file) : undefined;
    const modeOk = reportMode === undefined || !st || (st.mode & 0o7777) === reportMode;
    if (current !== null && current === req.content && !req.restore && modeOk) return false;
    const dir = await ensureDirs(this.host, path.posix.dirname(loc.target), req.report ? this.reports.dir : 0o755, this);
    const at = path.posix.join(dir, path.posix.basename(loc.target));
    const abs = (await this.host.locate(at, { follow: false })).abs;
    const prior = st ? await this.priorOf(at, abs, st) : ({ entry: 'absent' } as const);
    const meta =
      req.restore ??
      (st
        ? { mode: reportMode ?? st.mode & 0o7777, uid: st.uid, gid: st.gid }
        : { mode: reportMode ?? req.mode ?? 0o644, uid: isRoot() ? 0 : process.getuid!(), gid: isRoot() ? 0 : process.getgid!() });
    const tmp = path.posix.join(dir, `.${path.posix.basename(at)}.reconcile-${this.runId}-${tmpSuffix()}`);
    const data = bufferOf(req.content);
    const seq = await this.record({ kind: 'write', path: at, prior, ...meta, sha256: sha256(data), tmp, report: req.report === true });
    const tmpAbs = path.join(path.dirname(abs), path.posix.basename(tmp));
    const fill = async () => {
      const fh = await fs.open(tmpAbs, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o600);
      try {
        await fh.writeFile(data);
        await fh.chmod(meta.mode);
        if (isRoot() || (st && (st.uid !== process.getuid?.() || st.gid !== process.getgid?.()))) await fh.chown(meta.uid, meta.gid);
        await fh.sync();
      } finally {
        await fh.close();
      }
    };
    await this.replaceWith(seq, 'write', at, abs, tmpAbs, fill);
    return true;
  }

  /** Fills the temporary `tmpAbs` beside `abs` and renames it over `abs`: the entry changes at once or not at all. */
  private async replaceWith(seq: number, verb: string, at: string, abs: string, tmpAbs: string, fill: () => Promise<void>): Promise<void> {
    const act = async () => {
      await fill();
      await fs.rename(tmpAbs, abs);
    };
    await this.fsStep(seq, verb, at, act, { cleanup: () => fs.rm(tmpAbs, { force: true }), syncDir: path.dirname(abs) });
  }

  /** Creates or replaces a symlink (unit enablement, masks). Returns false when it already pointed there. */
  async symlink(target: string, linkText: string): Promise<boolean> {
    const loc = await this.host.locate(target, { follow: false });
    const st = await lstatOrNull(loc.abs, target);
    if (st?.isDirectory()) throw new HostError(`cannot link ${target}: it is a directory`, target);
    if (st?.isSymbolicLink() && (await fs.readlink(loc.abs)) === linkText) return false;
    const dir = await ensureDirs(this.host, path.posix.dirname(loc.target), 0o755, this);
    const at = path.posix.join(dir, path.posix.basename(loc.target));
    const abs = (await this.host.locate(at, { follow: false })).abs;
    const prior = st ? await this.priorOf(at, abs, st) : ({ entry: 'absent' } as const);
    const tmp = path.posix.join(dir, `.${path.posix.basename(at)}.reconcile-${this.runId}-${tmpSuffix()}`);
    const tmpAbs = path.join(path.dirname(abs), path.posix.basename(tmp));
    const seq = await this.record({ kind: 'link', path: at, link: linkText, prior, tmp });
    await this.replaceWith(seq, 'link', at, abs, tmpAbs, () => fs.symlink(linkText, tmpAbs));
    return true;
  }

  /**
   * Removes a file or symlink (never a directory). `backup: false` is for
   * content nobody can want back (a swap file's pages), where a copy could
   * fill the disk; the journal then says it cannot be restored.
   */
  async remove(target: string, opts: { backup?: boolean } = {}): Promise<boolean> {
    const loc = await this.host.locate(target, { follow: false });
    const st = await lstatOrNull(loc.abs, target);
    if (st === null) return false;
    if (st.isDirectory()) throw new HostError(`refusing to remove ${target}: it is a directory`, target);
    const prior = await this.priorOf(loc.target, loc.abs, st, opts.backup !== false);
    const seq = await this.record({ kind: 'remove', path: loc.target, prior });
    await this.fsStep(seq, 'remove', loc.target, () => fs.rm(loc.abs), { syncDir: path.dirname(loc.abs) });
    return true;
  }

  /**
   * Journals a file that something this run installs will write later,
   * outside the door (a unit's stamp at the next boot), so that a rollback
   * puts back what is there now: removes the file when there is none, else
   * restores the copy kept here. Its missing directories are made now,
   * journaled, so they go with it. Nothing else changes.
   */
  async expectLater(target: string, by: string): Promise<void> {
    const dir = await ensureDirs(this.host, path.posix.dirname(target), 0o755, this);
    const loc = await this.host.locate(path.posix.join(dir, path.posix.basename(target)), { follow: false });
    const st = await lstatOrNull(loc.abs, loc.target);
    if (st?.isDirectory()) throw new HostError(`${target} is a directory, not the file ${by} writes`, target);
    const prior: PriorEntry = st === null ? { entry: 'absent' } : await this.priorOf(loc.target, loc.abs, st);
    await this.done(await this.record({ kind: 'later', path: loc.target, by, prior }));
  }

  /** Removes `target` when it is an empty directory (what `systemctl disable` does to a .wants dir it emptied). */
  async removeEmptyDir(target: string): Promise<boolean> {
    const loc = await this.host.locate(target, { follow: false });
    const st = await lstatOrNull(loc.abs, target);
    if (!st?.isDirectory() || (await fs.readdir(loc.abs)).length > 0) return false;
    const seq = await this.record({ kind: 'rmdir', path: loc.target, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid });
    try {
      await fs.rmdir(loc.abs);
    } catch (e) {
      await this.failed(seq, describeFsError(e));
      return false;
    }
    await fsyncDir(path.dirname(loc.abs));
    await this.done(seq);
    return true;
  }

  /**
   * Moves a file or directory tree aside, never deleting it: renamed (same file system, no link followed at any
   * level) to asideName(target, runId) beside it, measured and identified first so a rollback renames back
   * exactly that entry. Null: nothing at `target`.
   */
  async moveAside(target: string): Promise<({ to: string } & AsideIdentity) | null> {
    const src = await asideSource(this.host, target);
    if (src === null) return null;
    const to = asideName(src.target, this.runId);
    const toAbs = path.join(path.dirname(src.abs), path.posix.basename(to));
    if (await entryThere(toAbs)) throw new HostError(`refusing to move ${target} aside: ${to} already exists; nothing was moved`, target);
    const seq = await this.record({ kind: 'aside', path: src.target, to, ...src.identity });
    await this.fsStep(seq, 'move aside', src.target, () => renameChecked(src.abs, toAbs, src.identity), { syncDir: path.dirname(src.abs) });
    return { to, ...src.identity };
  }

  /**
   * Rollback of a moveAside: renames `from` back to `target` only when `target` is absent and `from` is the
   * entry the journal names (device, inode, kind). Refuses with the reason otherwise.
   */
  async moveBack(target: string, from: string, identity: AsideIdentity): Promise<void> {
    const loc = await this.host.locate(target, { follow: false });
    const src = await this.host.locate(from, { follow: false });
    if (loc.target !== target || src.target !== from)
      throw new HostError(`cannot put ${from} back at ${target}: a directory on the way is now a symbolic link; nothing was moved`, target);
    if (await entryThere(loc.abs)) throw new HostError(`cannot put ${from} back at ${target}: ${target} exists again; nothing was moved`, target);
    if (!(await sameEntry(src.abs, identity)))
      throw new HostError(
        `cannot put ${from} back at ${target}: ${from} is not the entry the run set aside (device ${identity.dev}, inode ${identity.ino}); nothing was moved`,
        from,
      );
    const { entry, bytes, files, dev, ino } = identity;
    const seq = await this.record({ kind: 'unaside', path: target, from, entry, bytes, files, dev, ino });
    await this.fsStep(seq, 'move back', target, () => fs.rename(src.abs, loc.abs), { syncDir: path.dirname(loc.abs) });
  }

  /** Creates a directory with an explicit owner and mode (rollback of an rmdir). */
  async makeDir(target: string, meta: { mode: number; uid: number; gid: number }): Promise<void> {
    const dir = await ensureDirs(this.host, path.posix.dirname(target), 0o755, this);
    const at = path.posix.join(dir, path.posix.basename(target));
    const abs = (await this.host.locate(at, { follow: false })).abs;
    if (await lstatOrNull(abs, at)) return;
    await this.journaledMkdir(at, abs, meta.mode, meta);
  }

  /**
   * A step on the running system (sysctl write, swapoff, unit stop...):
   * journaled before it runs, with what undoing it needs; `result` can add
   * what only the step itself learns (the links systemctl disable removed).
   */
  async runtime<T>(action: RuntimeStep, act: () => Promise<T>, result?: (value: T) => Promise<LinkDelta | undefined>): Promise<T> {
    const seq = await this.record({ kind: 'runtime', action });
    let value: T;
    try {
      value = await act();
    } catch (e) {
      await this.failed(seq, (e as Error).message);
      throw e;
    }
    await this.done(seq, result ? await result(value) : undefined);
    return value;
  }

  /**
   * A file of the run's own record (plan.json, result.json): not an edit of
   * the host, so not journaled. The temporary is created new (O_EXCL, never
   * through a link) and removed on every failure, ENOSPC included.
   */
  async writeRunFile(name: string, content: ByteString): Promise<void> {
    const abs = (await this.host.locate(path.posix.join(this.runDir, name), { follow: false })).abs;
    const tmp = `${abs}.tmp-${process.pid}-${Math.random().toString(16).slice(2, 10)}`;
    let created = false;
    try {
      const fh = await fs.open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o600);
      created = true;
      try {
        await fh.writeFile(bufferOf(content));
      } finally {
        await fh.close();
      }
      await fs.rename(tmp, abs);
    } catch (e) {
      if (created) await fs.rm(tmp, { force: true }).catch(() => undefined);
      throw fsError('write', path.posix.join(this.runDir, name), e);
    }
  }

  /** Target paths backed up so far, and where. */
  backups(): string[] {
    return [...this.backedUp.keys()].sort();
  }

  async end(status: 'ok' | 'failed', note?: string): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    try {
      await this.record({ kind: 'end', status, ...(note ? { note } : {}) });
    } finally {
      await this.journal.close();
    }
  }

  /**
   * Records (and, for a file, backs up) what is at `at` before it is replaced
   * or removed. The file is opened once (regular-file.ts: never a fifo or a
   * device) and its backup is written from the very bytes that were hashed.
   */
  private async priorOf(at: string, abs: string, st: Stats, backup = true): Promise<PriorEntry> {
    if (st.isSymbolicLink()) {
      const link = await fs.readlink(abs);
      return { entry: 'symlink', link, ...(backup ? { backup: await this.backup(at, { link }) } : {}) };
    }
    if (!backup) {
      // Content nobody can want back (a swap file: gigabytes): hashed as it is read, never held whole.
      const { sha256: sum, stat } = hashRegular(abs, at);
      return { entry: 'file', backup: null, mode: stat.mode & 0o7777, uid: stat.uid, gid: stat.gid, sha256: sum };
    }
    let read: { bytes: Buffer; stat: Stats };
    try {
      read = readRegular(abs, at);
    } catch (e) {
      if (e instanceof HostError) throw e;
      throw fsError('read', at, e);
    }
    const meta = { mode: read.stat.mode & 0o7777, uid: read.stat.uid, gid: read.stat.gid, sha256: sha256(read.bytes) };
    return { entry: 'file', backup: await this.backup(at, read), ...meta };
  }

  /**
   * Writes a copy into runs/<id>/backup/<path>, keeping owner, mode and
   * times; directories on the way copy the owner and mode of the originals,
   * so `cp -a backup/. /` puts things back without changing /etc's mode.
   * A copy cut short (ENOSPC) is removed: no journal record names it yet.
   */
  private async backup(at: string, source: { link: string } | { bytes: Buffer; stat: Stats }): Promise<string> {
    const known = this.backedUp.get(at);
    if (known) return known;
    const rel = path.posix.join('backup', at);
    const parts = path.posix.dirname(at).split('/').filter(Boolean);
    let dirTarget = path.posix.join(this.runDir, 'backup');
    // backup/ stands for / itself (`cp -a backup/. /` gives / its mode): the run directory keeps it private.
    const rootSt = await this.host.lstat('/');
    await ensureDirs(this.host, dirTarget, rootSt ? rootSt.mode & 0o7777 : 0o755, null);
    let original = '/';
    for (const p of parts) {
      original = path.posix.join(original, p);
      dirTarget = path.posix.join(dirTarget, p);
      const dAbs = (await this.host.locate(dirTarget, { follow: false })).abs;
      if (await lstatOrNull(dAbs, dirTarget)) continue;
      const o = await this.host.lstat(original);
      const mode = o ? o.mode & 0o7777 : 0o755;
      try {
        await fs.mkdir(dAbs, { mode });
        await fs.chmod(dAbs, mode);
        if (o && isRoot()) await fs.chown(dAbs, o.uid, o.gid);
      } catch (e) {
        throw fsError('create backup directory', dirTarget, e);
      }
    }
    const dst = (await this.host.locate(path.posix.join(this.runDir, rel), { follow: false })).abs;
    if ('link' in source) {
      try {
        await fs.symlink(source.link, dst);
      } catch (e) {
        throw fsError('back up', at, e);
      }
      this.backedUp.set(at, rel);
      return rel;
    }
    let created = false;
    try {
      // O_EXCL: never through a link or over an entry already there.
      const fh = await fs.open(dst, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o600);
      created = true;
      try {
        await fh.writeFile(source.bytes);
        await fh.chmod(source.stat.mode & 0o7777);
        if (isRoot()) await fh.chown(source.stat.uid, source.stat.gid);
        await fh.utimes(source.stat.atime, source.stat.mtime);
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (e) {
      if (created) await fs.rm(dst, { force: true }).catch(() => undefined);
      throw fsError('back up', at, e);
    }
    this.backedUp.set(at, rel);
    return rel;
  }

  /**
   * Journals directories something outside the door made for this run
   * before its journal existed (the lock's /run in an image), so that a
   * rollback removes them like the door's own.
   */
  async noteMadeDirs(dirs: Array<{ path: string; mode: number }>): Promise<void> {
    for (const d of dirs) await this.done(await this.record({ kind: 'mkdir', path: d.path, mode: d.mode }));
  }

  /** mkdir of a directory the run creates, journaled so a rollback removes it. */
  async journaledMkdir(target: string, abs: string, mode: number, owner?: { uid: number; gid: number }): Promise<void> {
    const seq = await this.record({ kind: 'mkdir', path: target, mode });
    await this.fsStep(seq, 'create directory', target, async () => {
      await fs.mkdir(abs, { mode });
      await fs.chmod(abs, mode);
      if (owner && isRoot()) await fs.chown(abs, owner.uid, owner.gid);
    });
  }
}

/**
 * Creates the missing directories of `dir` inside the root. Existing
 * components (symlinks included) are resolved inside the root first, so a
 * link pointing outside lands inside. Returns the resolved target path.
 * Existing directories keep their mode.
 */
async function ensureDirs(host: Host, dir: string, mode: number, door: WriteDoor | null): Promise<string> {
  const real = await host.realTarget(dir);
  let at = '/';
  for (const part of real.split('/').filter(Boolean)) {
    at = path.posix.join(at, part);
    const abs = (await host.locate(at, { follow: false })).abs;
    const st = await lstatOrNull(abs, at);
    if (st?.isDirectory()) continue;
    if (st) throw new HostError(`cannot create ${dir}: ${at} exists and is not a directory`, at);
    if (door) await door.journaledMkdir(at, abs, mode);
    else {
      try {
        await fs.mkdir(abs, { mode });
      } catch (e) {
        throw fsError('create directory', at, e);
      }
    }
  }
  return real;
}

async function lstatOrNull(abs: string, target: string): Promise<Stats | null> {
  try {
    return await fs.lstat(abs);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw fsError('stat', target, e);
  }
}

async function readBytesAt(abs: string, target: string): Promise<ByteString> {
  try {
    return bytesOf(readRegular(abs, target).bytes);
  } catch (e) {
    if (e instanceof HostError) throw e;
    throw fsError('read', target, e);
  }
}

/** sha256 of a regular file read in pieces, with the fstat it was read under; bounded by the file's size. */
function hashRegular(abs: string, target: string): { sha256: string; stat: Stats } {
  let opened: { fd: number; stat: Stats };
  try {
    opened = openRegular(abs, target);
  } catch (e) {
    if (e instanceof HostError) throw e;
    throw fsError('read', target, e);
  }
  const { fd, stat } = opened;
  try {
    const h = createHash('sha256');
    const buf = Buffer.allocUnsafe(1024 * 1024);
    for (let at = 0; at < stat.size;) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, stat.size - at), at);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
      at += n;
    }
    return { sha256: h.digest('hex'), stat };
  } catch (e) {
    throw fsError('read', target, e);
  } finally {
    closeSync(fd);
  }
}

/** rename(2) of the entry measured as `identity`: one swapped in since it was measured is put back and refused. */
async function renameChecked(from: string, to: string, identity: AsideIdentity): Promise<void> {
  await fs.rename(from, to);
  if (await sameEntry(to, identity)) return;
  await fs.rename(to, from);
  throw new Error('the entry changed while it was measured (another device or inode); it was left in place');
}

export function fsError(verb: string, target: string, e: unknown): HostError {
  return new HostError(`cannot ${verb} ${target}: ${describeFsError(e)}`, target);
}

async function fsyncDir(dir: string): Promise<void> {
  try {
    const fh = await fs.open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Some file systems refuse fsync on directories; the rename is still atomic.
  }
}
