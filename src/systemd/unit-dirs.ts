// Where the system manager looks for unit files, and what counts as a mask.
import type { TargetFs } from '../host.js';

/** The one directory `systemctl enable/disable` (without --runtime) and `mask` change. */
export const SYSTEMD_SYSTEM_ETC = '/etc/systemd/system';

/** Unit search path of the system manager, highest precedence first (systemd.unit(5)). */
export const UNIT_DIRS = [
  SYSTEMD_SYSTEM_ETC,
  '/run/systemd/system',
  '/usr/local/lib/systemd/system',
  '/usr/lib/systemd/system',
  '/lib/systemd/system',
] as const;

/** Where a mask link overrides every vendor unit. */
export const CONFIG_DIRS: ReadonlySet<string> = new Set<string>([SYSTEMD_SYSTEM_ETC, '/run/systemd/system']);

/** A unit entry that masks: a link to /dev/null, or an empty regular file. */
export async function isMaskEntry(host: TargetFs, target: string): Promise<boolean> {
  const link = await host.readLink(target);
  if (link !== null) return link === '/dev/null';
  const st = await host.lstat(target);
  return st !== null && st.isFile() && st.size === 0;
}
