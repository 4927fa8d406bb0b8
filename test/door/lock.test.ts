// The run lock (lock.ts): one apply or rollback at a time per root, taken
// with link(2) in the root's /run. Each test takes it on a fresh temp root;
// the owners are real processes (this one, and a child that has exited, whose
// pid kill(2) no longer finds), and the entries at the lock path are made with
// the real calls (mkdir, symlink, mkfifo), so what the lock meets is what an
// image can hold.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { acquireLock, LOCK_PATH, LockHeldError, MAX_LOCK_BYTES, parseLockOwner } from '../../src/door/lock.js';
import { ReconcileError } from '../../src/errors.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'lock-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const lockFile = () => path.join(root, LOCK_PATH);
const plant = (text: string) => {
  mkdirSync(path.join(root, 'run'), { recursive: true });
  writeFileSync(lockFile(), text);
};
/** A pid no process has any more: a child's, once it has exited and been reaped. */
const deadPid = () => spawnSync('true').pid!;

async function take(mode: 'apply' | 'rollback' = 'apply') {
  const said: string[] = [];
  const lock = await acquireLock(new Host({ root }), mode, (m) => void said.push(m));
  return { lock, said };
}

async function refusal(): Promise<ReconcileError> {
  try {
    const { lock } = await take();
    await lock.release();
  } catch (e) {
    if (e instanceof ReconcileError) return e;
    throw e;
  }
  throw new Error('the lock was taken');
}

describe('parseLockOwner', () => {
  it('reads an owner of ours', () => {
    expect(parseLockOwner('{"pid":12,"pid_start":"3456","started":"2026-01-01T00:00:00Z","mode":"apply"}\n')).toEqual({
      pid: 12,
      pid_start: '3456',
      started: '2026-01-01T00:00:00Z',
      mode: 'apply',
    });
    expect(parseLockOwner('{"pid":12,"pid_start":null,"started":"s","mode":"rollback"}')).toMatchObject({ pid_start: null });
  });

  it('says why a text names no owner; pid 0 and negative pids are none (kill(0) and kill(-1) always succeed)', () => {
    expect(parseLockOwner('')).toBe('it is empty');
    expect(parseLockOwner('pid=12')).toBe('it is not JSON');
    expect(parseLockOwner('[12]')).toBe('it is not a JSON object');
    expect(parseLockOwner('null')).toBe('it is not a JSON object');
    expect(parseLockOwner('{}')).toBe('it names no pid');
    for (const pid of ['0', '-1', '1.5', '"12"', '9007199254740992'])
      expect(parseLockOwner(`{"pid":${pid},"pid_start":null,"started":"s","mode":"apply"}`)).toBe(`its pid ${pid} is not a process id (an integer above 0)`);
    expect(parseLockOwner('{"pid":1,"pid_start":7,"started":"s","mode":"apply"}')).toBe('its pid_start is neither a string nor null');
    expect(parseLockOwner('{"pid":1,"pid_start":null,"mode":"apply"}')).toBe('its started time is missing');
    expect(parseLockOwner('{"pid":1,"pid_start":null,"started":"s"}')).toBe('its mode is missing');
  });
});

describe('acquireLock', () => {
  it('on an image without /run: makes it, writes this process as the owner, and release removes both', async () => {
    const { lock, said } = await take('rollback');
    expect(lock.path).toBe(LOCK_PATH);
    const owner = JSON.parse(readFileSync(lockFile(), 'utf8'));
    expect(owner).toMatchObject({ pid: process.pid, mode: 'rollback' });
    // The start time that tells this process from a later one given the same pid: clock ticks, digits only.
    expect(owner.pid_start).toMatch(/^[0-9]+$/);
    expect(said).toEqual([]);
    await lock.release();
    expect(existsSync(lockFile())).toBe(false);
    expect(existsSync(path.join(root, 'run'))).toBe(false);
  });

  it('leaves a /run that was there, and no temporary file beside the lock', async () => {
    mkdirSync(path.join(root, 'run'));
    const { lock } = await take();
    expect(execFileSync('ls', ['-A', path.join(root, 'run')], { encoding: 'utf8' })).toBe('k8s-host-reconcile.lock\n');
    await lock.release();
    expect(existsSync(path.join(root, 'run'))).toBe(true);
    expect(existsSync(lockFile())).toBe(false);
  });

  it('a second run while the first holds it is refused, naming the holder; the first still holds it', async () => {
    const { lock } = await take();
    const e = await refusal();
    expect(e).toBeInstanceOf(LockHeldError);
    const started = JSON.parse(readFileSync(lockFile(), 'utf8')).started;
    expect(e.message).toBe(`another run (pid ${process.pid}, started ${started}) holds ${LOCK_PATH}; nothing was changed`);
    expect(JSON.parse(readFileSync(lockFile(), 'utf8')).pid).toBe(process.pid);
    await lock.release();
  });

  it('a live pid with no pid_start recorded is held', async () => {
    plant(JSON.stringify({ pid: process.pid, pid_start: null, started: 'then', mode: 'apply' }));
    expect(await refusal()).toBeInstanceOf(LockHeldError);
  });

  it('a lock whose process has exited is taken over, saying so', async () => {
    const pid = deadPid();
    plant(JSON.stringify({ pid, pid_start: '1', started: 'yesterday', mode: 'apply' }));
    const { lock, said } = await take();
    expect(said).toEqual([`took over a stale lock ${LOCK_PATH} from pid ${pid} (started yesterday), which is no longer running`]);
    expect(JSON.parse(readFileSync(lockFile(), 'utf8')).pid).toBe(process.pid);
    await lock.release();
  });

  it('a pid that now belongs to a later process (another start time) is stale', async () => {
    plant(JSON.stringify({ pid: process.pid, pid_start: '1', started: 'at boot', mode: 'apply' }));
    const { lock, said } = await take();
    expect(said).toEqual([`took over a stale lock ${LOCK_PATH} from pid ${process.pid} (started at boot), which is no longer running`]);
    await lock.release();
  });

  it('a regular file that is no lock of ours is taken over, with the reason', async () => {
    plant('{"pid":0,"pid_start":null,"started":"s","mode":"apply"}');
    const { lock, said } = await take();
    expect(said).toEqual([`took over an unreadable lock ${LOCK_PATH}: its pid 0 is not a process id (an integer above 0)`]);
    await lock.release();
  });

  it('anything but a small regular file at the lock path stops the run, named, and is left where it is', async () => {
    mkdirSync(lockFile(), { recursive: true });
    expect((await refusal()).message).toBe(
      `cannot take the run lock ${LOCK_PATH}: it is a directory, not a lock file this tool writes; nothing was changed; remove it if no run is under way`,
    );
    rmSync(lockFile(), { recursive: true });
    symlinkSync('/etc/passwd', lockFile());
    expect((await refusal()).message).toContain(`${LOCK_PATH}: it is a symbolic link, not a lock file`);
    rmSync(lockFile());
    // A fifo: the read must not wait for a writer (the test would time out).
    execFileSync('mkfifo', [lockFile()]);
    expect((await refusal()).message).toContain(`${LOCK_PATH}: it is a fifo, not a lock file`);
    expect(execFileSync('stat', ['-c', '%F', lockFile()], { encoding: 'utf8' }).trim()).toBe('fifo');
    rmSync(lockFile());
    writeFileSync(lockFile(), ' '.repeat(MAX_LOCK_BYTES + 1));
    expect((await refusal()).message).toBe(
      `cannot take the run lock ${LOCK_PATH}: it is larger than ${MAX_LOCK_BYTES} bytes, not a lock file this tool writes; nothing was changed; remove it if no run is under way`,
    );
    expect(readFileSync(lockFile(), 'utf8')).toHaveLength(MAX_LOCK_BYTES + 1);
  });

  it('a /run that is a file is named; a /run linked elsewhere in the image is followed inside the root', async () => {
    writeFileSync(path.join(root, 'run'), '');
    expect((await refusal()).message).toBe('cannot take the run lock: /run exists and is not a directory');
    rmSync(path.join(root, 'run'));
    mkdirSync(path.join(root, 'var'));
    // /run -> var/run in the image: the lock goes where the link leads inside the root, and a held lock there refuses.
    symlinkSync('var/run', path.join(root, 'run'));
    mkdirSync(path.join(root, 'var/run'));
    writeFileSync(path.join(root, 'var/run/k8s-host-reconcile.lock'), JSON.stringify({ pid: process.pid, pid_start: null, started: 's', mode: 'apply' }));
    const e = await refusal();
    expect(e.message).toContain('holds /var/run/k8s-host-reconcile.lock');
  });

  it('release removes only its own lock: one another run put there after a takeover stays', async () => {
    const { lock } = await take();
    const other = JSON.stringify({ pid: 1, pid_start: null, started: 'later', mode: 'apply' });
    writeFileSync(lockFile(), other);
    await lock.release();
    expect(readFileSync(lockFile(), 'utf8')).toBe(other);
    // The /run it made is not empty, so it stays too.
    expect(existsSync(path.join(root, 'run'))).toBe(true);
  });
});
