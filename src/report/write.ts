// The report's files, written whole or not at all. Each is first written to
// its own temporary file in the output directory, created new
// (O_CREAT|O_EXCL|O_NOFOLLOW: a file or link planted at that name is never
// opened, let alone followed), mode 0600, then every one is renamed over its
// name (rename replaces a link there, never writes through it). A destination
// that is not a file or a link stops the write before anything is renamed,
// and a failure removes the temporary files this run made: the previous
// outputs stay whole. Directories it creates are 0700. The documents carry
// what hosts hold: they are for the user running the report.
import { closeSync, constants, fchmodSync, fsyncSync, lstatSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { describeFsError } from '../errors.js';

export const OUTPUT_MODE = 0o600;
export const DIRECTORY_MODE = 0o700;

/** The temporary file of an output: `.NAME.PID.tmp` beside it. */
export const tempName = (name: string, pid = process.pid) => `.${name}.${pid}.tmp`;

function writeAll(fd: number, bytes: Buffer): void {
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
}

/** Writes every file to `out`, or none; the error names the file and says what was left as it was. */
export function writeOutputs(out: string, files: ReadonlyArray<readonly [name: string, text: string]>): { ok: true } | { ok: false; message: string } {
  try {
    mkdirSync(out, { recursive: true, mode: DIRECTORY_MODE });
  } catch (e) {
    return { ok: false, message: `cannot make ${out}: ${describeFsError(e)}` };
  }
  for (const [name] of files) {
    const dest = path.join(out, name);
    let st;
    try {
      st = lstatSync(dest);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      return { ok: false, message: `cannot write ${dest}: ${describeFsError(e)}; nothing was replaced` };
    }
    if (!st.isFile() && !st.isSymbolicLink()) return { ok: false, message: `cannot write ${dest}: it is not a file; nothing was replaced` };
  }
  const made: string[] = [];
  const cleanUp = () => {
    for (const t of made) {
      try {
        unlinkSync(t);
      } catch {
        // Already renamed or gone: nothing of ours left there.
      }
    }
  };
  for (const [name, text] of files) {
    const tmp = path.join(out, tempName(name));
    let fd: number;
    try {
      fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, OUTPUT_MODE);
    } catch (e) {
      cleanUp();
      const there = (e as NodeJS.ErrnoException).code === 'EEXIST' ? ' (something is already at that name; it was left as it is)' : '';
      return { ok: false, message: `cannot create ${tmp}: ${describeFsError(e)}${there}; nothing was replaced` };
    }
    made.push(tmp);
    try {
      fchmodSync(fd, OUTPUT_MODE);
      writeAll(fd, Buffer.from(text, 'utf8'));
      fsyncSync(fd);
    } catch (e) {
      cleanUp();
      return { ok: false, message: `cannot write ${tmp}: ${describeFsError(e)}; nothing was replaced` };
    } finally {
      closeSync(fd);
    }
  }
  const renamed: string[] = [];
  for (const [name] of files) {
    try {
      renameSync(path.join(out, tempName(name)), path.join(out, name));
      renamed.push(name);
    } catch (e) {
      cleanUp();
      return {
        ok: false,
        message: `cannot replace ${path.join(out, name)}: ${describeFsError(e)}; ${renamed.length > 0 ? `${renamed.join(', ')} replaced, the others left as they were` : 'nothing was replaced'}`,
      };
    }
  }
  return { ok: true };
}
