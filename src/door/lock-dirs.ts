// The lock lives in /run, which an image root may lack: acquireLock makes it.
// What a run made for its lock is the run's to undo. A run with a journal
// records it (WriteDoor.noteMadeDirs) and its rollback removes it; a run that
// stops before its journal exists removes it here, once its lock is released.
import { promises as fs } from 'node:fs';
import type { Host } from '../host.js';

/** The directories on the way to `dir` (resolved inside the root) that do not exist yet, outermost first. */
export async function missingDirs(host: Host, dir: string): Promise<string[]> {
  const out: string[] = [];
  let at = '';
  for (const part of (await host.realTarget(dir)).split('/').filter(Boolean)) {
    at += '/' + part;
    if (out.length > 0 || (await host.lstat(at)) === null) out.push(at);
  }
  return out;
}

/** Of `missing`, those that are directories now (the lock made them), with their mode. */
export async function madeDirs(host: Host, missing: string[]): Promise<Array<{ path: string; mode: number }>> {
  if (missing.length === 0) return [];
  host.forgetLinks();
  const out: Array<{ path: string; mode: number }> = [];
  for (const p of missing) {
    const st = await host.lstat(p);
    if (st?.isDirectory()) out.push({ path: p, mode: st.mode & 0o7777 });
  }
  return out;
}

/**
 * Removes, innermost first, directories a run made for its lock and
 * journaled nowhere. rmdir(2) only: a directory another run has put its
 * lock in meanwhile is not empty and stays.
 */
export async function removeMadeDirs(host: Host, made: Array<{ path: string }>): Promise<void> {
  for (const d of [...made].reverse()) {
    const loc = await host.locate(d.path, { follow: false });
    if (loc.target !== d.path) return;
    try {
      await fs.rmdir(loc.abs);
    } catch {
      return; // not empty, or gone: either way not ours to remove
    }
  }
  host.forgetLinks();
}
