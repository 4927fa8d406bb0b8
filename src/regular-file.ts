// The one way the tool opens a file it did not just create: inside an image
// root, on a live host, or in its own runs directory (which it no longer
// trusts once written). Callers resolve links inside the root first
// (Host.realTarget); the open then refuses a link at the last component
// (O_NOFOLLOW), so a link swapped in after the resolution cannot lead out of
// the root. O_NONBLOCK makes opening a fifo return at once instead of waiting
// for a writer; fstat on the open handle decides, with no second lookup of the
// name, and only a regular file is read: a fifo would block the reader, a
// character device such as /dev/zero never ends, a socket cannot be opened.
// Synchronous on purpose: one open, one fstat and the reads per file, the
// same system calls readFileSync makes, for trees of thousands of files.
import { closeSync, constants as fsc, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { HostError } from './errors.js';

/**
 * Larger files are refused, not read: every file the tool interprets (unit
 * files, sysctl.d and modprobe.d entries, fstab, crontabs, its own journals
 * and lock) is text of a few kilobytes, and a file it may rewrite is read
 * whole into memory. 16 MiB is far beyond any real one and small enough that
 * a hostile image cannot exhaust memory with a few of them.
 */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

export type FileKind = 'regular file' | 'directory' | 'symbolic link' | 'fifo' | 'socket' | 'character device' | 'block device' | 'unknown type';

export function kindOf(st: Stats): FileKind {
  if (st.isFile()) return 'regular file';
  if (st.isDirectory()) return 'directory';
  if (st.isSymbolicLink()) return 'symbolic link';
  if (st.isFIFO()) return 'fifo';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isBlockDevice()) return 'block device';
  return 'unknown type';
}

/** The entry at a path is something other than a regular file; nothing was read from it. */
export class NotRegularFileError extends HostError {
  constructor(
    shown: string,
    readonly kind: FileKind,
  ) {
    // A directory keeps its errno name: callers (conf-entry) skip EISDIR as systemd does.
    super(
      kind === 'directory' ? `cannot read ${shown}: is a directory (EISDIR)` : `cannot read ${shown}: not a regular file: ${kind}`,
      shown,
      kind === 'directory' ? 'EISDIR' : 'ENOTREG',
    );
  }
}

/** The file is larger than the cap; nothing of it is used. */
export class FileTooLargeError extends HostError {
  constructor(shown: string, size: number | null, limit: number) {
    super(`cannot read ${shown}: it is larger than ${describeSize(limit)}${size === null ? '' : ` (${size} bytes)`}; refused rather than read`, shown, 'EFBIG');
  }
}

function describeSize(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`;
}

const OPEN_FLAGS = fsc.O_RDONLY | fsc.O_NONBLOCK | fsc.O_NOCTTY;

export interface OpenOptions {
  /**
   * Follow a link at the last component. Only for a path the operator gave
   * on the build machine (the desired-state file); never inside a root,
   * where realTarget has resolved every link already.
   */
  follow?: boolean;
}

/**
 * Opens `abs` for reading when it is a regular file; returns the descriptor
 * and its fstat. `shown` names it in errors (the target path). Errors of the
 * open itself (ENOENT, EACCES) are thrown as they are, for the caller to map.
 */
export function openRegular(abs: string, shown: string, opts: OpenOptions = {}): { fd: number; stat: Stats } {
  let fd: number;
  try {
    fd = openSync(abs, OPEN_FLAGS | (opts.follow ? 0 : fsc.O_NOFOLLOW));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // ELOOP under O_NOFOLLOW: the last component is a link (it became one after resolution).
    // ENXIO: a socket, or a device with no driver. Only then is the entry looked at again, to name it.
    if (code === 'ELOOP' || code === 'ENXIO') {
      const kind = kindAt(abs);
      if (kind !== null && kind !== 'regular file' && kind !== 'directory') throw new NotRegularFileError(shown, kind);
    }
    throw e;
  }
  let stat: Stats;
  try {
    stat = fstatSync(fd);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  if (!stat.isFile()) {
    closeSync(fd);
    throw new NotRegularFileError(shown, kindOf(stat));
  }
  return { fd, stat };
}

function kindAt(abs: string): FileKind | null {
  try {
    return kindOf(lstatSync(abs));
  } catch {
    return null;
  }
}

/**
 * The whole content of the regular file open at `fd`, at most `limit` bytes
 * (FileTooLargeError beyond). A file that reports its size is read up to it,
 * as readFileSync does; procfs and sysfs files report 0 (or a page) and are
 * read to their end, never past limit + 1 bytes.
 */
export function readOpened(fd: number, stat: Stats, shown: string, limit: number = MAX_READ_BYTES): Buffer {
  if (stat.size > limit) throw new FileTooLargeError(shown, stat.size, limit);
  if (stat.size > 0) {
    const buf = Buffer.allocUnsafe(stat.size);
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0) break;
      n += r;
    }
    // Shorter than its size (sysfs pages, a file truncated meanwhile): what is there.
    if (n < buf.length) return buf.subarray(0, n);
    return buf;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const buf = Buffer.allocUnsafe(Math.min(64 * 1024, limit + 1 - total));
    const r = readSync(fd, buf, 0, buf.length, null);
    if (r === 0) break;
    chunks.push(buf.subarray(0, r));
    total += r;
    if (total > limit) throw new FileTooLargeError(shown, null, limit);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/** openRegular + readOpened + close: the content and the fstat it was read under. */
export function readRegular(abs: string, shown: string, opts: OpenOptions & { limit?: number } = {}): { bytes: Buffer; stat: Stats } {
  const { fd, stat } = openRegular(abs, shown, opts);
  try {
    return { bytes: readOpened(fd, stat, shown, opts.limit), stat };
  } finally {
    closeSync(fd);
  }
}

/** The first `length` bytes of a regular file (a swap file is gigabytes: never the whole). */
export function readRegularHead(abs: string, shown: string, length: number): Buffer {
  const { fd } = openRegular(abs, shown);
  try {
    const buf = Buffer.alloc(length);
    let n = 0;
    while (n < length) {
      const r = readSync(fd, buf, n, length - n, n);
      if (r === 0) break;
      n += r;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}
