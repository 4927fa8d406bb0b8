// The door's "move aside, never delete" (WriteDoor.moveAside) on fixture roots: the tree renamed beside
// itself, measured as find(1) measures it, refused through a link at any level, read back field by field
// by the journal check, and put back by a rollback byte for byte: the tree before and after is compared by
// diff(1) on a copy cp -a made first and by an lstat walk of modes, owners and link targets
// (test/helpers/snapshot.ts), neither of which asks the door. A run killed at the move is rolled back from
// either side of the rename.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { renameSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { WriteDoor } from '../../src/door/door.js';
import { parseJournal, type JournalRecord } from '../../src/door/journal.js';
import { checkJournal, JournalError } from '../../src/door/journal-check.js';
import { planRollback, type RuntimeUndoer } from '../../src/door/rollback-plan.js';
import { executeRollback } from '../../src/door/rollback-run.js';
import { findUnfinishedRuns, settleInterruptedRuns } from '../../src/door/interrupted.js';
import { HostError } from '../../src/errors.js';
import { snapshot } from '../helpers/snapshot.js';

let root: string;
let copy: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'move-aside-'));
  copy = mkdtempSync(path.join(tmpdir(), 'move-aside-copy-'));
  mkdirSync(path.join(root, 'var/lib'), { recursive: true });
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(copy, { recursive: true, force: true });
});

const REPORTS = '/var/lib/rt';
const RUNS = `${REPORTS}/runs`;
const dirs = { reportsDir: REPORTS, runsDir: RUNS };
const abs = (p: string) => path.join(root, p);
const RUN = '20261207T100000000Z-1';
const ASIDE = `/var/lib/etcd.k8s-host-reconcile-aside-${RUN}`;
const journalOf = (id: string) => path.join(root, RUNS, id, 'journal');
const records = (id: string): JournalRecord[] => parseJournal(readFileSync(journalOf(id), 'utf8')).records;
const openDoor = (id: string, mode: 'apply' | 'rollback' = 'apply') =>
  WriteDoor.open(new Host({ root }), { runDir: `${RUNS}/${id}`, runId: id, mode, tool: 'test', ...(mode === 'rollback' ? { rollbackOf: RUN } : {}) });
const noRuntime: RuntimeUndoer = { undo: async () => {}, finish: async () => {} };
// The runs directory (reached through /var/lib, which one case makes a link to /srv/lib).
const skipRuns = (rel: string) => ['var/lib/rt', 'srv/lib/rt'].some((d) => rel === d || rel.startsWith(d + '/'));

/** An etcd data directory as etcd leaves one: nested directories, files of several modes and owners, a link, an empty directory. */
function etcdTree(): void {
  const d = abs('var/lib/etcd/member');
  mkdirSync(path.join(d, 'snap'), { recursive: true });
  mkdirSync(path.join(d, 'wal'), { recursive: true });
  mkdirSync(abs('var/lib/etcd/empty'));
  writeFileSync(path.join(d, 'snap/db'), Buffer.alloc(70_001, 7));
  writeFileSync(path.join(d, 'wal/0000000000000000-0000000000000000.wal'), 'wal bytes\n');
  chmodSync(path.join(d, 'wal/0000000000000000-0000000000000000.wal'), 0o600);
  chownSync(path.join(d, 'snap/db'), 998, 997);
  chmodSync(abs('var/lib/etcd'), 0o700);
  symlinkSync('member/snap/db', abs('var/lib/etcd/db-link'));
}

/** What find(1) says of a tree: the bytes of its regular files and how many entries are not directories. */
function findFigures(dir: string): { bytes: number; files: number } {
  const sizes = spawnSync('find', [dir, '-type', 'f', '-printf', '%s\n'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  const files = spawnSync('find', [dir, '-mindepth', '1', '!', '-type', 'd'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  return { bytes: sizes.reduce((a, s) => a + Number(s), 0), files: files.length };
}

const statId = (p: string) => spawnSync('stat', ['-c', '%d %i', p], { encoding: 'utf8' }).stdout.trim();

async function moveRun(target = '/var/lib/etcd') {
  const door = await openDoor(RUN);
  try {
    return await door.moveAside(target);
  } finally {
    await door.end('ok');
  }
}

async function rollback(id = 'rb-1', force = false) {
  const plan = await planRollback(new Host({ root }), dirs, RUNS, RUN, noRuntime);
  const door = await openDoor(id, 'rollback');
  try {
    if (plan.incomplete && !force) return { plan, outcome: null };
    return { plan, outcome: await executeRollback(door, plan) };
  } finally {
    await door.end('ok');
  }
}

describe('door.moveAside', () => {
  it('renames the tree beside itself, journaled with what find(1) and stat(1) say of it', async () => {
    etcdTree();
    const figures = findFigures(abs('var/lib/etcd'));
    const id = statId(abs('var/lib/etcd'));
    const before = snapshot(abs('var/lib/etcd'));
    const moved = await moveRun();
    expect(existsSync(abs('var/lib/etcd'))).toBe(false);
    expect(snapshot(abs(ASIDE))).toEqual(before);
    expect(statId(abs(ASIDE))).toBe(id);
    const [dev, ino] = id.split(' ');
    const rec = records(RUN).find((r) => r.kind === 'aside');
    expect(rec).toMatchObject({ kind: 'aside', path: '/var/lib/etcd', to: ASIDE, entry: 'dir', ...figures, dev, ino });
    expect(moved).toEqual({ to: ASIDE, entry: 'dir', ...figures, dev, ino });
    const kinds = records(RUN).map((r) => r.kind);
    expect(kinds).toEqual(['begin', 'aside', 'done', 'end']);
  });

  it('moves a single file, counted as one', async () => {
    mkdirSync(abs('etc/kubernetes'), { recursive: true });
    writeFileSync(abs('etc/kubernetes/admin.conf'), 'kubeconfig\n');
    expect(await moveRun('/etc/kubernetes/admin.conf')).toMatchObject({ entry: 'file', bytes: 11, files: 1 });
    expect(readFileSync(abs(`etc/kubernetes/admin.conf.k8s-host-reconcile-aside-${RUN}`), 'utf8')).toBe('kubeconfig\n');
  });

  it('says null and journals nothing for a path that is not there', async () => {
    expect(await moveRun('/var/lib/etcd')).toBeNull();
    expect(records(RUN).map((r) => r.kind)).toEqual(['begin', 'end']);
  });

  it.each([
    [
      'the entry itself is a link',
      () => (mkdirSync(abs('data/etcd'), { recursive: true }), symlinkSync('/data/etcd', abs('var/lib/etcd'))),
      /it is a symbolic link/,
    ],
    [
      'a directory on its way is a link',
      () => (mkdirSync(abs('srv/lib/etcd'), { recursive: true }), rmSync(abs('var/lib'), { recursive: true }), symlinkSync('../srv/lib', abs('var/lib'))),
      /a directory on its way is a symbolic link \(it resolves to \/srv\/lib\/etcd\)/,
    ],
    ['its set-aside name is taken', () => (etcdTree(), mkdirSync(abs(ASIDE))), /already exists; nothing was moved/],
  ])('refuses when %s, moving and journaling nothing', async (_what, make, message) => {
    make();
    const before = snapshot(root, skipRuns);
    const door = await openDoor(RUN);
    const err = await door.moveAside('/var/lib/etcd').catch((e: unknown) => e);
    await door.end('ok');
    expect(err).toBeInstanceOf(HostError);
    expect((err as Error).message).toMatch(message);
    expect(snapshot(root, skipRuns)).toEqual(before);
    expect(records(RUN).map((r) => r.kind)).toEqual(['begin', 'end']);
  });
});

describe('the journal check reads a move aside back field by field', () => {
  const place = { file: '/j', runId: RUN, ...dirs };
  const lines = () => readFileSync(journalOf(RUN), 'utf8').split('\n');
  const withAside = (edit: (r: Record<string, unknown>) => void, begin?: (r: Record<string, unknown>) => void) =>
    lines()
      .map((l, i) => {
        if (l === '') return l;
        const r = JSON.parse(l) as Record<string, unknown>;
        if (i === 0) begin?.(r);
        if (r.kind === 'aside') edit(r);
        return JSON.stringify(r);
      })
      .join('\n');

  it('accepts what the door wrote', async () => {
    etcdTree();
    await moveRun();
    expect(checkJournal(readFileSync(journalOf(RUN), 'utf8'), place).records[1]).toMatchObject({ kind: 'aside', to: ASIDE });
  });

  it.each([
    ['another set-aside name', (r: Record<string, unknown>) => (r.to = '/var/lib/etcd.old'), /is not the name this run sets \/var\/lib\/etcd aside to/],
    ['a device that is no number', (r: Record<string, unknown>) => (r.dev = '0x801'), /dev "0x801" is not a 64-bit number in decimal/],
    ['an inode past 64 bits', (r: Record<string, unknown>) => (r.ino = '18446744073709551616'), /ino .* is not a 64-bit number/],
    ['a file counted as two', (r: Record<string, unknown>) => ((r.entry = 'file'), (r.files = 2)), /a file set aside counts 2 files, not 1/],
    ['a negative size', (r: Record<string, unknown>) => (r.bytes = -1), /bytes must be an integer/],
    ['an unknown entry kind', (r: Record<string, unknown>) => (r.entry = 'fifo'), /entry must be one of file, dir/],
    ['an unexpected key', (r: Record<string, unknown>) => (r.follow = true), /unexpected key "follow"/],
    [
      'a path in the runs directory',
      (r: Record<string, unknown>) => ((r.path = `${RUNS}/x`), (r.to = `${RUNS}/x.k8s-host-reconcile-aside-${RUN}`)),
      /lies in the runs directory/,
    ],
  ])('refuses %s', async (_what, edit, message) => {
    etcdTree();
    await moveRun();
    const err = (() => {
      try {
        return checkJournal(withAside(edit), place);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(JournalError);
    expect((err as Error).message).toMatch(message);
  });

  it('refuses a move aside in a rollback run', async () => {
    etcdTree();
    await moveRun();
    const text = withAside(
      () => {},
      (b) => ((b.mode = 'rollback'), (b.rollback_of = 'r0')),
    );
    expect(() => checkJournal(text, place)).toThrow(/a move aside in a rollback run/);
  });
});

describe('a rollback puts a moved tree back', () => {
  it('byte for byte, with modes, owners and link targets, and journals the move back', async () => {
    etcdTree();
    spawnSync('cp', ['-a', abs('var/lib/etcd'), copy]);
    const before = snapshot(root, skipRuns);
    await moveRun();
    const { plan, outcome } = await rollback();
    expect(plan.steps.map((s) => s.summary)).toEqual([
      expect.stringMatching(/^move .*aside.* back to \/var\/lib\/etcd \(a directory of 3 files, 70011 bytes\)$/),
    ]);
    expect(outcome).toEqual({ done: [plan.steps[0]!.summary], failed: [] });
    expect(snapshot(root, skipRuns)).toEqual(before);
    const diff = spawnSync('diff', ['-r', '--no-dereference', path.join(copy, 'etcd'), abs('var/lib/etcd')], { encoding: 'utf8' });
    expect([diff.status, diff.stdout]).toEqual([0, '']);
    expect(records('rb-1').find((r) => r.kind === 'unaside')).toMatchObject({ path: '/var/lib/etcd', from: ASIDE, entry: 'dir' });
    expect(() => checkJournal(readFileSync(journalOf('rb-1'), 'utf8'), { file: '/j', runId: 'rb-1', ...dirs })).not.toThrow();
  });

  it('refuses, by name, when the path exists again, and leaves both where they are', async () => {
    etcdTree();
    await moveRun();
    mkdirSync(abs('var/lib/etcd'));
    writeFileSync(abs('var/lib/etcd/new'), 'a new etcd\n');
    const after = snapshot(root, skipRuns);
    const { outcome } = await rollback();
    expect(outcome?.failed).toEqual([
      { step: expect.stringMatching(/back to \/var\/lib\/etcd/), message: expect.stringMatching(/\/var\/lib\/etcd exists again .* was left where it is/) },
    ]);
    expect(snapshot(root, skipRuns)).toEqual(after);
  });

  it('refuses when the set-aside entry is another one than the journal names (replaced since)', async () => {
    etcdTree();
    await moveRun();
    // Made before the old one goes, so it cannot get the old inode number back.
    mkdirSync(abs('var/lib/other'));
    rmSync(abs(ASIDE), { recursive: true });
    renameSync(abs('var/lib/other'), abs(ASIDE));
    const { outcome } = await rollback();
    expect(outcome?.failed[0]?.message).toMatch(/is not the entry run .* set aside \(device \d+, inode \d+\); it was left where it is/);
    expect(existsSync(abs('var/lib/etcd'))).toBe(false);
  });

  it('refuses when the set-aside entry is gone', async () => {
    etcdTree();
    await moveRun();
    rmSync(abs(ASIDE), { recursive: true });
    const { outcome } = await rollback();
    expect(outcome?.failed[0]?.message).toMatch(/is gone; \/var\/lib\/etcd cannot be put back/);
  });
});

describe('a run killed at the move', () => {
  /** The journal as a SIGKILL right after the aside record leaves it: that record, no outcome, no end. */
  function cutAfterAside(): void {
    const text = readFileSync(journalOf(RUN), 'utf8').split('\n');
    const at = text.findIndex((l) => l.includes('"kind":"aside"'));
    writeFileSync(journalOf(RUN), text.slice(0, at + 1).join('\n') + '\n');
  }

  it.each([
    ['before the rename', true],
    ['after the rename', false],
  ])('%s: the next run marks it interrupted, and a forced rollback leaves the tree as it was', async (_when, beforeRename) => {
    etcdTree();
    const before = snapshot(root, skipRuns);
    await moveRun();
    cutAfterAside();
    if (beforeRename) renameSync(abs(ASIDE), abs('var/lib/etcd'));
    const host = new Host({ root });
    const seen = await findUnfinishedRuns(host, dirs, 'rb-1');
    expect(seen.unfinished.map((u) => [u.id, u.lastRecord?.kind])).toEqual([[RUN, 'aside']]);
    await settleInterruptedRuns(host, seen.unfinished, 'rb-1', () => {});
    expect(records(RUN).at(-1)).toMatchObject({ kind: 'end', status: 'interrupted' });
    const { plan, outcome } = await rollback('rb-1', true);
    expect(plan.incomplete).not.toBeNull();
    expect(plan.steps.length).toBe(beforeRename ? 0 : 1);
    expect(outcome?.failed).toEqual([]);
    expect(snapshot(root, skipRuns)).toEqual(before);
  });
});
