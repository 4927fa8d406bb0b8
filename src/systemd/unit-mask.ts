// Masking a unit whose own file sits where the mask link must go. A mask is
// a link NAME -> /dev/null in the configuration directory
// (/etc/systemd/system, or ~/.config/systemd/user); an admin's unit file of
// that name is already there, and `systemctl mask` refuses ("File ... already
// exists"), so the unit keeps starting at boot through whatever wants or
// triggers it. Here the file is copied aside, outside every unit search path,
// and the mask link replaces it in one rename through the write door, which
// backs the original up with owner and mode: the journal says what happened,
// and --rollback puts the admin's file back byte for byte. Drop-ins
// (NAME.d/) stay; a masked unit ignores them, as systemd does.
import path from 'node:path';
import type { WriteDoor } from '../door/door.js';
import type { TargetFs } from '../host.js';
import { isMaskEntry } from './unit-dirs.js';

/** Where set-aside unit files go, under their original path: no unit search path (system or user) reaches /var/lib. */
export const SET_ASIDE_ROOT = '/var/lib/k8s-host-reconcile/set-aside';

/** What is at DIR/NAME, as a mask link there would find it. */
export type MaskSpot =
  | { kind: 'free' }
  | { kind: 'masked' }
  /** A unit file (the admin's own), or a link to one that `systemctl disable` did not remove. */
  | { kind: 'taken'; path: string; file: boolean };

export async function maskSpotOf(host: TargetFs, dir: string, unit: string): Promise<MaskSpot> {
  const p = path.posix.join(dir, unit);
  const st = await host.lstat(p);
  if (st === null) return { kind: 'free' };
  if (await isMaskEntry(host, p)) return { kind: 'masked' };
  if (st.isDirectory()) return { kind: 'taken', path: p, file: false };
  return { kind: 'taken', path: p, file: st.isFile() };
}

/** Where a unit file at `entry` is set aside. */
export function setAsidePath(entry: string): string {
  return path.posix.join(SET_ASIDE_ROOT, entry);
}

/**
 * Masks `unit` in `dir` whatever holds the spot: a free spot gets the link; a
 * unit file is copied to setAsidePath first, then replaced by the link. Returns
 * the set-aside copy's path, or null when nothing was set aside. A directory
 * of the unit's name is refused (systemd would not load it either).
 */
export async function maskOver(door: WriteDoor, host: TargetFs, dir: string, unit: string): Promise<string | null> {
  const spot = await maskSpotOf(host, dir, unit);
  if (spot.kind === 'masked') return null;
  let aside: string | null = null;
  if (spot.kind === 'taken') {
    if (!spot.file && (await host.readLink(spot.path)) === null) throw new Error(`cannot mask ${unit}: ${spot.path} is a directory`);
    if (spot.file) {
      const bytes = await host.readBytes(spot.path);
      const st = await host.lstat(spot.path);
      if (bytes === null || st === null) throw new Error(`cannot mask ${unit}: ${spot.path} vanished`);
      aside = setAsidePath(spot.path);
      await door.writeFile({ path: aside, content: bytes, mode: st.mode & 0o7777, replaceLink: true });
    }
  }
  await door.symlink(path.posix.join(dir, unit), '/dev/null');
  return aside;
}
