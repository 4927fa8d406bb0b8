// The files a run leaves for the next one (journals, backups, markers) are
// read back as untrusted: whatever is at the path now may be a link to the
// build machine's files, a fifo that blocks open(2) and read(2) until a writer
// comes, or a device that never ends. So: O_NOFOLLOW (a link is refused, not
// followed), O_NONBLOCK (opening a fifo does not wait), fstat on the open
// descriptor (only a regular file is read) and a size cap.
import { constants as fsc, promises as fs } from 'node:fs';
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { kindOf } from '../regular-file.js';

export type OwnFile =
  | { kind: 'file'; fh: FileHandle; stat: Stats }
  | { kind: 'missing' }
  /** Something other than a regular file, described ("a symbolic link to /tmp/x", "a fifo"). */
  | { kind: 'other'; what: string };

/** What stands where a regular file was wanted, in the words of regular-file.ts's kindOf. */
function describeEntry(st: Stats): string {
  const kind = kindOf(st);
  return kind === 'regular file' || kind === 'unknown type' ? 'not a regular file' : `a ${kind}`;
}

/**
 * Opens `abs` (a build-machine path whose directories were resolved inside
 * the root) only when it is a regular file itself. `append`: for adding a
 * record to a journal; the caller closes `fh`.
 */
export async function openOwnFile(abs: string, append = false): Promise<OwnFile> {
  let fh: FileHandle;
  try {
    fh = await fs.open(abs, (append ? fsc.O_WRONLY | fsc.O_APPEND : fsc.O_RDONLY) | fsc.O_NOFOLLOW | fsc.O_NONBLOCK | fsc.O_NOCTTY);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    // ELOOP: the last component is a link; ENXIO: a fifo without a reader
    // (O_WRONLY|O_NONBLOCK) or a socket; EISDIR: a directory opened to write.
    if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR' || code === 'EOPNOTSUPP') {
      const st = await fs.lstat(abs).catch(() => null);
      if (st?.isSymbolicLink()) return { kind: 'other', what: `a symbolic link to ${await fs.readlink(abs).catch(() => '?')}` };
      if (st) return { kind: 'other', what: describeEntry(st) };
    }
    throw e;
  }
  const stat = await fh.stat();
  if (!stat.isFile()) {
    await fh.close();
    return { kind: 'other', what: describeEntry(stat) };
  }
  return { kind: 'file', fh, stat };
}

/** The whole file, or null when it holds more than `cap` bytes (it is never read past cap + 1). */
export async function readCapped(fh: FileHandle, cap: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let n = 0;
  for (;;) {
    const buf = Buffer.alloc(Math.min(64 * 1024, cap + 1 - n));
    const { bytesRead } = await fh.read(buf, 0, buf.length, n);
    if (bytesRead === 0) break;
    chunks.push(buf.subarray(0, bytesRead));
    n += bytesRead;
    if (n > cap) return null;
  }
  return Buffer.concat(chunks, n);
}

/** Reads a regular file the tool wrote earlier; `missing`, `other` or `too large` otherwise. */
export async function readOwnFile(abs: string, cap: number): Promise<{ kind: 'file'; bytes: Buffer } | { kind: 'missing' } | { kind: 'other'; what: string }> {
  const f = await openOwnFile(abs);
  if (f.kind !== 'file') return f;
  try {
    const bytes = await readCapped(f.fh, cap);
    if (bytes === null) return { kind: 'other', what: `larger than ${cap} bytes` };
    return { kind: 'file', bytes };
  } finally {
    await f.fh.close();
  }
}
