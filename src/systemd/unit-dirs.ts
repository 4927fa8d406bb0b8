// Where the system manager looks for unit files, and what counts as a mask.
import path from 'node:path';
import type { TargetFs } from '../host.js';

/** The one directory `systemctl enable/disable` (without --runtime) and `mask` change. */
export const SYSTEMD_SYSTEM_ETC = '/etc/systemd/system';

/**
 * The system manager's unit search path, highest precedence first, as
 * systemd 252 builds it (lookup_paths_init) without $SYSTEMD_UNIT_PATH.
 * Directories that do not exist (offline: all of /run) cost nothing.
 * systemctl enable/disable search the same path (install.c uses lookup_paths_init's search_path).
 */
export const SYSTEM_UNIT_PATH = [
  '/etc/systemd/system.control',
  '/run/systemd/system.control',
  '/run/systemd/transient',
  '/run/systemd/generator.early',
  SYSTEMD_SYSTEM_ETC,
  '/etc/systemd/system.attached',
  '/run/systemd/system',
  '/run/systemd/system.attached',
  '/run/systemd/generator',
  '/usr/local/lib/systemd/system',
  '/usr/lib/systemd/system',
  '/lib/systemd/system',
  '/run/systemd/generator.late',
] as const;

/** Where generators write units (systemd.generator(7)): such a unit comes from another source (fstab, zram-generator.conf), fixed there. */
export const GENERATOR_DIRS = ['/run/systemd/generator.early', '/run/systemd/generator', '/run/systemd/generator.late'] as const;

/** Whether a unit's search-path entry is a generator's output. */
export function isGeneratedEntry(entry: string | null): boolean {
  return entry !== null && GENERATOR_DIRS.some((d) => entry.startsWith(`${d}/`));
}

/** Where `systemctl mask UNIT` puts its link. */
export function maskLinkOf(unit: string): string {
  return path.posix.join(SYSTEMD_SYSTEM_ETC, unit);
}

/** The directory `systemctl --user enable/disable/mask` changes. */
export function userConfigDir(home: string): string {
  return path.posix.join(home, '.config/systemd/user');
}

/**
 * A user manager's unit search path, highest precedence first, as systemd 252
 * builds it for `home` with the default XDG directories and without a
 * runtime directory (the per-user /run/user/UID/systemd/ dirs are left out).
 */
export function userUnitPath(home: string): string[] {
  return [
    path.posix.join(home, '.config/systemd/user.control'),
    userConfigDir(home),
    '/etc/xdg/systemd/user',
    '/etc/systemd/user',
    '/run/systemd/user',
    path.posix.join(home, '.local/share/systemd/user'),
    '/usr/local/share/systemd/user',
    '/usr/share/systemd/user',
    '/usr/local/lib/systemd/user',
    '/usr/lib/systemd/user',
  ];
}

/** Where a mask link overrides every vendor unit. */
export const CONFIG_DIRS: ReadonlySet<string> = new Set<string>([SYSTEMD_SYSTEM_ETC, '/run/systemd/system']);

/** A unit entry that masks: a link to /dev/null, or an empty regular file. */
export async function isMaskEntry(host: TargetFs, target: string): Promise<boolean> {
  const link = await host.readLink(target);
  if (link !== null) return link === '/dev/null';
  const st = await host.lstat(target);
  return st !== null && st.isFile() && st.size === 0;
}
