// The directories a run makes on the way to its lock (lock-dirs.ts): which
// are missing, which of those the lock made, and their removal, innermost
// first and only while empty. Trees are temp roots; the directories are made
// and judged with the real calls (mkdir, stat), never with the module's own.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { madeDirs, missingDirs, removeMadeDirs } from '../../src/door/lock-dirs.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'lock-dirs-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));
const abs = (p: string) => path.join(root, p);

describe('missingDirs', () => {
  it('lists the directories that do not exist yet, outermost first', async () => {
    mkdirSync(abs('var'));
    expect(await missingDirs(new Host({ root }), '/var/run/reconcile/locks')).toEqual(['/var/run', '/var/run/reconcile', '/var/run/reconcile/locks']);
  });

  it('nothing when the whole way exists', async () => {
    mkdirSync(abs('run/x'), { recursive: true });
    expect(await missingDirs(new Host({ root }), '/run/x')).toEqual([]);
  });

  it('follows a link on the way inside the root: /run -> var/run', async () => {
    mkdirSync(abs('var/run'), { recursive: true });
    symlinkSync('var/run', abs('run'));
    expect(await missingDirs(new Host({ root }), '/run/lock')).toEqual(['/var/run/lock']);
  });
});

describe('madeDirs', () => {
  it('keeps the missing ones that are directories now, with their mode', async () => {
    const host = new Host({ root });
    const missing = await missingDirs(host, '/run/a/b');
    mkdirSync(abs('run/a'), { recursive: true, mode: 0o750 });
    writeFileSync(abs('run/a/b'), ''); // a file where the innermost was wanted is not a directory the run made
    expect(await madeDirs(host, missing)).toEqual([
      { path: '/run', mode: statSync(abs('run')).mode & 0o7777 },
      { path: '/run/a', mode: statSync(abs('run/a')).mode & 0o7777 },
    ]);
  });

  it('none missing, none made', async () => {
    expect(await madeDirs(new Host({ root }), [])).toEqual([]);
  });
});

describe('removeMadeDirs', () => {
  it('removes them innermost first while each is empty', async () => {
    mkdirSync(abs('run/a/b'), { recursive: true });
    await removeMadeDirs(new Host({ root }), [{ path: '/run' }, { path: '/run/a' }, { path: '/run/a/b' }]);
    expect(existsSync(abs('run'))).toBe(false);
  });

  it('stops at the first that is not empty (another run put its lock there) and leaves those outside it', async () => {
    mkdirSync(abs('run/a/b'), { recursive: true });
    writeFileSync(abs('run/a/other.lock'), '');
    await removeMadeDirs(new Host({ root }), [{ path: '/run' }, { path: '/run/a' }, { path: '/run/a/b' }]);
    expect(existsSync(abs('run/a/b'))).toBe(false);
    expect(existsSync(abs('run/a/other.lock'))).toBe(true);
    expect(existsSync(abs('run'))).toBe(true);
  });

  it('a directory replaced by a link since is not followed nor removed', async () => {
    mkdirSync(abs('elsewhere/b'), { recursive: true });
    symlinkSync('elsewhere', abs('run'));
    await removeMadeDirs(new Host({ root }), [{ path: '/run' }, { path: '/run/b' }]);
    // /run/b resolves through the link to /elsewhere/b: not the directory the run made, so nothing goes.
    expect(existsSync(abs('elsewhere/b'))).toBe(true);
    expect(existsSync(abs('run'))).toBe(true);
  });
});
