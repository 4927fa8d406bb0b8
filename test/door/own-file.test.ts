// The tool's own files read back (own-file.ts): whatever stands at the path
// may have been put there by an image's builder. The entries are made with
// the real calls (symlink, mkfifo, a listening unix socket, /dev/null), so the
// answers are what the kernel gives for each; a fifo must not make the read
// wait for a writer (the test would time out).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openOwnFile, readCapped, readOwnFile } from '../../src/door/own-file.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'own-file-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const at = (name: string) => path.join(dir, name);

describe('openOwnFile', () => {
  it('opens a regular file, to read or to append', async () => {
    writeFileSync(at('journal'), 'one\n');
    const r = await openOwnFile(at('journal'));
    expect(r.kind).toBe('file');
    if (r.kind !== 'file') return;
    expect(r.stat.size).toBe(4);
    await r.fh.close();
    const w = await openOwnFile(at('journal'), true);
    if (w.kind !== 'file') throw new Error(`not opened: ${JSON.stringify(w)}`);
    await w.fh.write('two\n');
    await w.fh.close();
    expect(readFileSync(at('journal'), 'utf8')).toBe('one\ntwo\n');
  });

  it('missing is missing, in either mode', async () => {
    expect(await openOwnFile(at('none'))).toEqual({ kind: 'missing' });
    expect(await openOwnFile(at('none'), true)).toEqual({ kind: 'missing' });
  });

  it('a symbolic link is named with its text and never followed, even to a regular file', async () => {
    writeFileSync(at('real'), 'x');
    symlinkSync(at('real'), at('link'));
    expect(await openOwnFile(at('link'))).toEqual({ kind: 'other', what: `a symbolic link to ${at('real')}` });
    expect(await openOwnFile(at('link'), true)).toEqual({ kind: 'other', what: `a symbolic link to ${at('real')}` });
    symlinkSync('/nowhere', at('dangling'));
    expect(await openOwnFile(at('dangling'))).toEqual({ kind: 'other', what: 'a symbolic link to /nowhere' });
  });

  it('a fifo is named without waiting for a writer, to read or to append', async () => {
    execFileSync('mkfifo', [at('fifo')]);
    expect(await openOwnFile(at('fifo'))).toEqual({ kind: 'other', what: 'a fifo' });
    expect(await openOwnFile(at('fifo'), true)).toEqual({ kind: 'other', what: 'a fifo' });
  });

  it('a directory, a socket and a character device are named', async () => {
    mkdirSync(at('dir'));
    expect(await openOwnFile(at('dir'))).toEqual({ kind: 'other', what: 'a directory' });
    expect(await openOwnFile(at('dir'), true)).toEqual({ kind: 'other', what: 'a directory' });
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(at('sock'), resolve));
    try {
      expect(await openOwnFile(at('sock'))).toEqual({ kind: 'other', what: 'a socket' });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(await openOwnFile('/dev/null')).toEqual({ kind: 'other', what: 'a character device' });
  });
});

describe('readCapped and readOwnFile', () => {
  it('reads a file of exactly the cap across several 64 KiB reads; one byte more is null', async () => {
    const bytes = Buffer.alloc(200_000, 'x');
    bytes.write('end', 199_997);
    writeFileSync(at('big'), bytes);
    const read = async (cap: number) => {
      const f = await openOwnFile(at('big'));
      if (f.kind !== 'file') throw new Error('not a file');
      try {
        return await readCapped(f.fh, cap);
      } finally {
        await f.fh.close();
      }
    };
    expect((await read(200_000))!.equals(bytes)).toBe(true);
    expect(await read(199_999)).toBeNull();
    expect(await read(0)).toBeNull();
  });

  it('an empty file is zero bytes, not null', async () => {
    writeFileSync(at('empty'), '');
    const r = await readOwnFile(at('empty'), 0);
    expect(r.kind === 'file' && r.bytes.length).toBe(0);
  });

  it('readOwnFile: the bytes, missing, other, or too large with the cap named', async () => {
    writeFileSync(at('f'), 'abc');
    const r = await readOwnFile(at('f'), 3);
    expect(r.kind === 'file' && r.bytes.toString()).toBe('abc');
    expect(await readOwnFile(at('f'), 2)).toEqual({ kind: 'other', what: 'larger than 2 bytes' });
    expect(await readOwnFile(at('none'), 2)).toEqual({ kind: 'missing' });
    execFileSync('mkfifo', [at('fifo')]);
    expect(await readOwnFile(at('fifo'), 2)).toEqual({ kind: 'other', what: 'a fifo' });
  });
});
