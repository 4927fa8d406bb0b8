// One apply or rollback at a time per root: /run/k8s-host-reconcile.lock in
// the root, created with link(2) so exactly one process wins. A lock whose
// process is gone (pid dead, or the pid now belongs to a later process) is
// taken over with a line saying so.
//
// The lock path is in the root, which may be an image someone else built: it
// is read without following a link, without waiting on a fifo and only when
// it is a small regular file (regular-file.ts). Anything else at that path
// (a directory, a link, a fifo, a device) was not left by this tool: the run
// stops and names it, and nothing is renamed. A regular file whose content is
// not a lock of ours (no pid above 0, missing fields) is taken over, saying so.
import { promises as fs, readFileSync } from 'node:fs';
import type { Stats } from 'node:fs';
import path from 'node:path';
import type { Host } from '../host.js';
import { HostError, ReconcileError } from '../errors.js';
import { describeFsError } from '../host.js';
import { NotRegularFileError, readRegular } from '../regular-file.js';

export const LOCK_PATH = '/run/k8s-host-reconcile.lock';

/** A lock of ours is one line of JSON, about 120 bytes; anything past this is not one. */
export const MAX_LOCK_BYTES = 4096;

interface LockOwner {
  pid: number;
  /** Field 22 of /proc/PID/stat: tells a reused pid from the original process. */
  pid_start: string | null;
  started: string;
  mode: string;
}

export class LockHeldError extends ReconcileError {}

function procStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may contain spaces and parentheses: fields start after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function alive(owner: LockOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = procStart(owner.pid);
  return owner.pid_start === null || now === null || now === owner.pid_start;
}

/**
 * The owner a lock's text names, or why it names none. pid 0 and negative
 * pids are refused: kill(0, 0) and kill(-1, 0) succeed for any caller (they
 * address a process group, or every process), so such a lock would look held
 * for ever.
 */
export function parseLockOwner(text: string): LockOwner | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return text.length === 0 ? 'it is empty' : 'it is not JSON';
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'it is not a JSON object';
  const o = v as Record<string, unknown>;
  if (o.pid === undefined) return 'it names no pid';
  if (typeof o.pid !== 'number' || !Number.isSafeInteger(o.pid) || o.pid <= 0)
    return `its pid ${JSON.stringify(o.pid)} is not a process id (an integer above 0)`;
  if (o.pid_start !== null && typeof o.pid_start !== 'string') return 'its pid_start is neither a string nor null';
  if (typeof o.started !== 'string') return 'its started time is missing';
  if (typeof o.mode !== 'string') return 'its mode is missing';
  return { pid: o.pid, pid_start: o.pid_start, started: o.started, mode: o.mode };
}

type LockRead = { gone: true } | { owner: LockOwner | string; stat: Stats };

/** Reads the lock at `abs` (regular file, no link followed, at most MAX_LOCK_BYTES); anything else is an error naming `shown`. */
function readLock(abs: string, shown: string): LockRead {
  try {
    const { bytes, stat } = readRegular(abs, shown, { limit: MAX_LOCK_BYTES });
    return { owner: parseLockOwner(bytes.toString('utf8')), stat };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { gone: true };
    if (e instanceof NotRegularFileError) {
      throw new ReconcileError(
        `cannot take the run lock ${shown}: it is a ${e.kind}, not a lock file this tool writes; nothing was changed; remove it if no run is under way`,
      );
    }
    if (e instanceof HostError && e.code === 'EFBIG') {
      throw new ReconcileError(
        `cannot take the run lock ${shown}: it is larger than ${MAX_LOCK_BYTES} bytes, not a lock file this tool writes; nothing was changed; remove it if no run is under way`,
      );
    }
    throw new ReconcileError(`cannot take the run lock ${shown}: cannot read it: ${describeFsError(e)}`);
  }
}

export interface HeldLock {
  path: string;
  release(): Promise<void>;
}

/**
 * Creates the directories of /run in the root that are missing, one by one
 * (never through a link: the way was resolved inside the root), and returns
 * those it made, deepest first, for release() to remove when empty.
 */
async function ensureRunDir(host: Host): Promise<{ abs: string; target: string; made: string[] }> {
  const run = await host.locate('/run', { follow: true });
  const made: string[] = [];
  let at = '/';
  for (const part of run.target.split('/').filter(Boolean)) {
    at = path.posix.join(at, part);
    const abs = (await host.locate(at, { follow: false })).abs;
    try {
      await fs.mkdir(abs, { mode: 0o755 });
      made.unshift(abs);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new ReconcileError(`cannot take the run lock: cannot create ${at}: ${describeFsError(e)}`);
      const st = await fs.lstat(abs);
      if (!st.isDirectory()) throw new ReconcileError(`cannot take the run lock: ${at} exists and is not a directory`);
    }
  }
  if (made.length > 0) host.forgetLinks();
  return { ...run, made };
}

export async function acquireLock(host: Host, mode: 'apply' | 'rollback', say: (m: string) => void): Promise<HeldLock> {
  const run = await ensureRunDir(host);
  const lockAbs = path.join(run.abs, path.posix.basename(LOCK_PATH));
  const shown = path.posix.join(run.target, path.posix.basename(LOCK_PATH));
  const me: LockOwner = { pid: process.pid, pid_start: procStart(process.pid), started: new Date().toISOString(), mode };
  const removeMade = async () => {
    for (const d of run.made) await fs.rmdir(d).catch(() => undefined);
  };
  const tmp = `${lockAbs}.${process.pid}.${Math.random().toString(16).slice(2, 10)}`;
  try {
    try {
      // New (O_EXCL: never through a link); removed in the finally below whatever happens, ENOSPC included.
      await fs.writeFile(tmp, JSON.stringify(me) + '\n', { mode: 0o644, flag: 'wx' });
    } catch (e) {
      throw new ReconcileError(`cannot take the run lock ${shown}: ${describeFsError(e)}`);
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await fs.link(tmp, lockAbs);
        return {
          path: shown,
          async release() {
            try {
              const held = readLock(lockAbs, shown);
              if ('owner' in held && typeof held.owner !== 'string' && held.owner.pid === me.pid && held.owner.started === me.started) await fs.rm(lockAbs);
            } catch {
              // Gone already, or replaced by something that is not ours: not ours to remove.
            }
            await removeMade();
          },
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new ReconcileError(`cannot take the run lock ${shown}: ${describeFsError(e)}`);
      }
      const held = readLock(lockAbs, shown);
      if ('gone' in held) continue;
      const owner = held.owner;
      if (typeof owner !== 'string' && alive(owner)) {
        throw new LockHeldError(`another run (pid ${owner.pid}, started ${owner.started}) holds ${shown}; nothing was changed`);
      }
      // Only one taker's rename succeeds; the others see ENOENT and retry the link.
      const aside = `${lockAbs}.stale-${process.pid}`;
      try {
        await fs.rename(lockAbs, aside);
      } catch {
        continue; // someone else took it over first; try again
      }
      // The entry renamed must be the file just judged: one swapped in meanwhile (a directory) goes back, named.
      const moved = await fs.lstat(aside);
      if (moved.ino !== held.stat.ino || moved.dev !== held.stat.dev) {
        await fs.rename(aside, lockAbs).catch(() => undefined);
        throw new ReconcileError(`cannot take the run lock ${shown}: it was replaced while being taken over; nothing was changed`);
      }
      await fs.rm(aside, { force: true });
      say(
        typeof owner !== 'string'
          ? `took over a stale lock ${shown} from pid ${owner.pid} (started ${owner.started}), which is no longer running`
          : `took over an unreadable lock ${shown}: ${owner}`,
      );
    }
    throw new ReconcileError(`cannot take the run lock ${shown}: it keeps changing hands`);
  } catch (e) {
    await fs.rm(tmp, { force: true });
    await removeMade();
    throw e;
  } finally {
    await fs.rm(tmp, { force: true });
  }
}
