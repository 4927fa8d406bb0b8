// One apply or rollback at a time per root: /run/k8s-host-reconcile.lock in
// the root, created with link(2) so exactly one process wins. A lock whose
// process is gone (pid dead, or the pid now belongs to a later process) is
// taken over with a line saying so.
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Host } from '../host.js';
import { ReconcileError } from '../errors.js';
import { describeFsError } from '../host.js';

export const LOCK_PATH = '/run/k8s-host-reconcile.lock';

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

export interface HeldLock {
  path: string;
  release(): Promise<void>;
}

export async function acquireLock(host: Host, mode: 'apply' | 'rollback', say: (m: string) => void): Promise<HeldLock> {
  const run = await host.locate('/run', { follow: true });
  try {
    await fs.mkdir(run.abs, { recursive: true, mode: 0o755 });
  } catch (e) {
    throw new ReconcileError(`cannot take the run lock: cannot create ${run.target}: ${describeFsError(e)}`);
  }
  const lockAbs = path.join(run.abs, path.posix.basename(LOCK_PATH));
  const shown = path.posix.join(run.target, path.posix.basename(LOCK_PATH));
  const me: LockOwner = { pid: process.pid, pid_start: procStart(process.pid), started: new Date().toISOString(), mode };
  const tmp = `${lockAbs}.${process.pid}.${Math.random().toString(16).slice(2, 10)}`;
  try {
    await fs.writeFile(tmp, JSON.stringify(me) + '\n', { mode: 0o644 });
  } catch (e) {
    throw new ReconcileError(`cannot take the run lock ${shown}: ${describeFsError(e)}`);
  }
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await fs.link(tmp, lockAbs);
        return {
          path: shown,
          async release() {
            try {
              const held = JSON.parse(await fs.readFile(lockAbs, 'utf8')) as LockOwner;
              if (held.pid === me.pid && held.started === me.started) await fs.rm(lockAbs);
            } catch {
              // Gone already: nothing to release.
            }
          },
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new ReconcileError(`cannot take the run lock ${shown}: ${describeFsError(e)}`);
      }
      let owner: LockOwner | null = null;
      try {
        owner = JSON.parse(await fs.readFile(lockAbs, 'utf8')) as LockOwner;
      } catch {
        owner = null; // torn or vanished: treat as stale
      }
      if (owner && alive(owner)) {
        throw new LockHeldError(`another run (pid ${owner.pid}, started ${owner.started}) holds ${shown}; nothing was changed`);
      }
      // Only one taker's rename succeeds; the others see ENOENT and retry the link.
      const aside = `${lockAbs}.stale-${process.pid}`;
      try {
        await fs.rename(lockAbs, aside);
        await fs.rm(aside, { force: true });
        say(owner ? `took over a stale lock ${shown} from pid ${owner.pid} (started ${owner.started}), which is no longer running` : `took over an unreadable lock ${shown}`);
      } catch {
        // Someone else took it over first; try again.
      }
    }
    throw new ReconcileError(`cannot take the run lock ${shown}: it keeps changing hands`);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}
