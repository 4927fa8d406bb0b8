// How systemd's configuration readers (systemd-sysctl, systemd-modules-load,
// and kmod for modprobe.d) treat a directory entry they list but cannot read:
// they skip it, with a warning, and go on with the rest. An entry that exists
// but cannot be read (permission, I/O) is different: the tool cannot know
// what it says, so that is an error, never an empty file.
import type { TargetFs } from '../host.js';
import { HostError } from '../errors.js';
import type { ByteString } from '../bytes.js';

const SKIPPED_BY_CODE: Record<string, string> = {
  EISDIR: 'it is a directory',
  ENOENT: 'it is a dangling symbolic link',
  ELOOP: 'it is a symbolic link loop',
  ENOTDIR: 'a link on its way is not a directory',
};

export type ConfEntryRead = { content: ByteString; real: string } | { skipped: string };

export async function readConfEntry(host: TargetFs, listed: string, isDir = false): Promise<ConfEntryRead> {
  if (isDir) return { skipped: SKIPPED_BY_CODE.EISDIR! };
  try {
    const real = await host.realTarget(listed);
    const content = await host.readBytes(listed);
    return content === null ? { skipped: SKIPPED_BY_CODE.ENOENT! } : { content, real };
  } catch (e) {
    const why = e instanceof HostError && e.code ? SKIPPED_BY_CODE[e.code] : undefined;
    if (why === undefined) throw e;
    return { skipped: why };
  }
}
