// How systemd's configuration readers (systemd-sysctl, systemd-modules-load,
// and kmod for modprobe.d) treat a directory entry they list but cannot read:
// they skip it, with a warning, and go on with the rest. An entry that exists
// but cannot be read (permission, I/O) is different: the tool cannot know
// what it says, so that is an error, never an empty file. A fifo, socket or
// device is not read at all (regular-file.ts): it is skipped too, but said
// apart, since systemd-sysctl 252 and kmod open such an entry and wait on it.
import type { TargetFs } from '../host.js';
import { HostError } from '../errors.js';
import { NotRegularFileError, type FileKind } from '../regular-file.js';
import type { ByteString } from '../bytes.js';

const SKIPPED_BY_CODE: Record<string, string> = {
  EISDIR: 'it is a directory',
  ENOENT: 'it is a dangling symbolic link',
  ELOOP: 'it is a symbolic link loop',
  ENOTDIR: 'a link on its way is not a directory',
};

export type ConfEntryRead = { content: ByteString; real: string } | { skipped: string; notRegular?: FileKind };

export async function readConfEntry(host: TargetFs, listed: string, isDir = false): Promise<ConfEntryRead> {
  if (isDir) return { skipped: SKIPPED_BY_CODE.EISDIR! };
  try {
    const real = await host.realTarget(listed);
    const content = await host.readBytes(listed);
    return content === null ? { skipped: SKIPPED_BY_CODE.ENOENT! } : { content, real };
  } catch (e) {
    if (e instanceof NotRegularFileError && e.kind !== 'directory') return { skipped: `it is a ${e.kind}, not a regular file`, notRegular: e.kind };
    const why = e instanceof HostError && e.code ? SKIPPED_BY_CODE[e.code] : undefined;
    if (why === undefined) throw e;
    return { skipped: why };
  }
}

/**
 * The warning for a listed entry that is not a regular file. Not "skipped as
 * systemd skips it": systemd-sysctl 252 (--cat-config shows it) and kmod open
 * such an entry, and a fifo stops them there; so what it holds is unknown.
 */
export function notRegularWarning(listed: string, kind: FileKind, program: string): string {
  return `${listed} is a ${kind}, not a regular file: not read, and what it sets is unknown (${program} opens it at boot${kind === 'fifo' ? ' and waits there for a writer' : ''})`;
}
