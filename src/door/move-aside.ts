// What the door's "move aside, never delete" needs before it renames: the
// entry reached without following a link at any level, on the same file
// system as the directory it lies in (a rename cannot cross one, and a mount
// point cannot be renamed), and measured: its size and file count, walked
// without following a link and refusing a mount below it (renaming would
// carry a mounted file system along unseen). The rename itself is the door's.
import { promises as fs } from 'node:fs';
import type { BigIntStats } from 'node:fs';
import path from 'node:path';
import type { Host } from '../host.js';
import { HostError } from '../errors.js';
import type { AsideIdentity } from './journal-records.js';

/** A tree this big is not walked to the end: a data directory's leaves number far fewer. */
export const MAX_ASIDE_ENTRIES = 10_000_000;

export interface AsideSource {
  /** Target path, as given (and as it resolves: no link on the way). */
  target: string;
  abs: string;
  identity: AsideIdentity;
}

async function lstatBig(abs: string): Promise<BigIntStats | null> {
  try {
    return await fs.lstat(abs, { bigint: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** The entry at `target` when it may be moved aside; a HostError naming it and why not otherwise. Null: absent. */
export async function asideSource(host: Host, target: string): Promise<AsideSource | null> {
  const norm = path.posix.normalize('/' + target);
  if (norm === '/' || norm !== target) throw new HostError(`refusing to move ${target} aside: not a normalised absolute path other than /`, target);
  const loc = await host.locate(norm, { follow: false });
  if (loc.target !== norm)
    throw new HostError(
      `refusing to move ${target} aside: a directory on its way is a symbolic link (it resolves to ${loc.target}); nothing was moved`,
      target,
    );
  const st = await lstatBig(loc.abs);
  if (st === null) return null;
  if (st.isSymbolicLink())
    throw new HostError(`refusing to move ${target} aside: it is a symbolic link (to ${await fs.readlink(loc.abs)}); nothing was moved`, target);
  const parent = await fs.lstat(path.dirname(loc.abs), { bigint: true });
  if (parent.dev !== st.dev) throw new HostError(`refusing to move ${target} aside: it is a mount point (another file system); unmount it first`, target);
  const { bytes, files } = st.isDirectory() ? await measure(loc.abs, target, st.dev) : { bytes: Number(st.size), files: 1 };
  return { target: norm, abs: loc.abs, identity: { entry: st.isDirectory() ? 'dir' : 'file', bytes, files, dev: String(st.dev), ino: String(st.ino) } };
}

/** Bytes of the regular files and count of every non-directory entry below `abs`, no link followed. */
async function measure(abs: string, target: string, dev: bigint): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  let seen = 0;
  const todo: Array<{ abs: string; target: string }> = [{ abs, target }];
  for (let d = todo.pop(); d !== undefined; d = todo.pop()) {
    for (const name of await fs.readdir(d.abs)) {
      if (++seen > MAX_ASIDE_ENTRIES) throw new HostError(`refusing to move ${target} aside: more than ${MAX_ASIDE_ENTRIES} entries under it`, target);
      const a = path.join(d.abs, name);
      const t = path.posix.join(d.target, name);
      const st = await fs.lstat(a, { bigint: true });
      if (st.dev !== dev) throw new HostError(`refusing to move ${target} aside: ${t} is a mount point under it; unmount it first; nothing was moved`, t);
      if (st.isDirectory()) todo.push({ abs: a, target: t });
      else {
        files += 1;
        if (st.isFile()) bytes += Number(st.size);
      }
    }
  }
  return { bytes, files };
}

/** The entry at `abs` is the one `identity` names (same device, inode and kind), no link followed. */
export async function sameEntry(abs: string, identity: Pick<AsideIdentity, 'entry' | 'dev' | 'ino'>): Promise<boolean> {
  const st = await lstatBig(abs);
  if (st === null || st.isSymbolicLink()) return false;
  return String(st.dev) === identity.dev && String(st.ino) === identity.ino && (st.isDirectory() ? 'dir' : 'file') === identity.entry;
}

/** Whether anything (a link included) is at `abs`. */
export async function entryThere(abs: string): Promise<boolean> {
  return (await lstatBig(abs)) !== null;
}
