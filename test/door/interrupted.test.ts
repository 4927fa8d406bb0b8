// A run killed mid-way (interrupted.ts): the next run finds its journal with
// no end record, removes the temp files of the writes that had no outcome,
// and marks the journal interrupted, once. The killed run is a real door run
// whose journal is cut where a SIGKILL after that record leaves it (every
// record is fsynced before its action), with the temp file that write had
// made; what settling leaves is read back with JSON.parse and lstat.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { WriteDoor } from '../../src/door/door.js';
import { checkJournal } from '../../src/door/journal-check.js';
import { describeInterrupted, findUnfinishedRuns, settleInterruptedRuns } from '../../src/door/interrupted.js';
import { utf8Bytes } from '../../src/bytes.js';

const RUNS = '/var/lib/rt/runs';
const DIRS = { runsDir: RUNS, reportsDir: '/var/lib/rt' };
let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'interrupted-'));
  mkdirSync(path.join(root, 'etc'), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));
const abs = (p: string) => path.join(root, p);
const journalOf = (id: string) => abs(`${RUNS}/${id}/journal`);
const lines = (id: string) =>
  readFileSync(journalOf(id), 'utf8')
    .split('\n')
    .filter((l) => l !== '');

/**
 * A door run that wrote /etc/ID-a.conf and /etc/ID-b.conf, its journal then
 * cut after the write record of b (its done and the end are gone) and b's temp
 * file put back where the door had made it: a SIGKILL between the two.
 */
async function killedRun(id: string): Promise<{ tmp: string; writeSeq: number }> {
  const door = await WriteDoor.open(new Host({ root }), { runDir: `${RUNS}/${id}`, runId: id, mode: 'apply', tool: 'test' });
  await door.writeFile({ path: `/etc/${id}-a.conf`, expect: null, content: utf8Bytes('a\n') });
  await door.writeFile({ path: `/etc/${id}-b.conf`, expect: null, content: utf8Bytes('b\n') });
  await door.end('ok');
  const all = lines(id).map((l) => JSON.parse(l));
  const w = [...all].reverse().find((r: { kind: string }) => r.kind === 'write');
  const kept = readFileSync(journalOf(id), 'utf8').split('\n').slice(0, w.seq);
  writeFileSync(journalOf(id), kept.join('\n') + '\n');
  writeFileSync(abs(w.tmp), 'b\n');
  return { tmp: w.tmp, writeSeq: w.seq };
}

describe('findUnfinishedRuns', () => {
  it('finds a run with no end record, its last record and the temp of its unsettled write; changes nothing', async () => {
    const { tmp, writeSeq } = await killedRun('r1');
    const before = readFileSync(journalOf('r1'), 'utf8');
    const seen = await findUnfinishedRuns(new Host({ root }), DIRS, 'now');
    expect(seen.skipped).toEqual([]);
    expect(seen.unfinished).toHaveLength(1);
    const u = seen.unfinished[0]!;
    expect(u).toMatchObject({ id: 'r1', journal: `${RUNS}/r1/journal`, temps: [tmp], torn: false, lockDirs: [], complete: Buffer.byteLength(before) });
    expect(u.lastRecord).toMatchObject({ seq: writeSeq, kind: 'write', path: '/etc/r1-b.conf' });
    expect(readFileSync(journalOf('r1'), 'utf8')).toBe(before);
    expect(existsSync(abs(tmp))).toBe(true);
  });

  it('a finished run, the current run and a directory without a journal are not unfinished; a link in runs/ is skipped, named', async () => {
    const door = await WriteDoor.open(new Host({ root }), { runDir: `${RUNS}/done`, runId: 'done', mode: 'apply', tool: 'test' });
    await door.end('ok');
    await killedRun('now');
    mkdirSync(abs(`${RUNS}/empty`));
    symlinkSync('/etc', abs(`${RUNS}/evil`));
    const seen = await findUnfinishedRuns(new Host({ root }), DIRS, 'now');
    expect(seen.unfinished).toEqual([]);
    expect(seen.skipped).toEqual([
      `skipped ${RUNS}/evil: it is a symbolic link to /etc, not a run directory; a run leaves a directory with a regular journal file, so it was not opened`,
    ]);
  });

  it('no runs directory: nothing', async () => {
    expect(await findUnfinishedRuns(new Host({ root }), DIRS)).toEqual({ unfinished: [], skipped: [] });
  });

  it("the directories it journaled as made for its lock (/run and the lock's own) are listed, others are not", async () => {
    await killedRun('r1');
    const text = readFileSync(journalOf('r1'), 'utf8').split('\n').filter(Boolean);
    const n = text.length;
    const at = '2026-01-01T00:00:00.000Z';
    const extra = [
      { seq: n + 1, at, kind: 'mkdir', path: '/run', mode: 0o755 },
      { seq: n + 2, at, kind: 'mkdir', path: '/etc/k8s', mode: 0o755 },
      { seq: n + 3, at, kind: 'mkdir', path: '/runner', mode: 0o755 },
    ].map((r) => JSON.stringify(r));
    writeFileSync(journalOf('r1'), [...text, ...extra].join('\n') + '\n');
    const [u] = (await findUnfinishedRuns(new Host({ root }), DIRS)).unfinished;
    expect(u!.lockDirs).toEqual(['/run']);
  });
});

describe('settleInterruptedRuns', () => {
  it('removes the temp file, appends one end record marked interrupted (seq following), and the journal still checks', async () => {
    const { tmp, writeSeq } = await killedRun('r1');
    const host = new Host({ root });
    const said: string[] = [];
    const settled = await settleInterruptedRuns(host, (await findUnfinishedRuns(host, DIRS, 'r2')).unfinished, 'r2', (m) => void said.push(m));
    expect(said).toEqual([]);
    expect(settled).toEqual([{ id: 'r1', lastRecord: expect.objectContaining({ seq: writeSeq }), tempFilesRemoved: [tmp] }]);
    expect(existsSync(abs(tmp))).toBe(false);
    const last = JSON.parse(lines('r1').at(-1)!);
    expect(last).toMatchObject({ seq: writeSeq + 1, kind: 'end', status: 'interrupted', note: 'found by run r2' });
    const checked = checkJournal(readFileSync(journalOf('r1'), 'utf8'), { file: `${RUNS}/r1/journal`, runId: 'r1', ...DIRS });
    expect(checked.end).toBe('interrupted');
    // Reported once: the next run finds nothing unfinished.
    expect((await findUnfinishedRuns(host, DIRS, 'r3')).unfinished).toEqual([]);
  });

  it('a torn last line is cut before the end record, so the two never read as one line', async () => {
    const { writeSeq } = await killedRun('r1');
    writeFileSync(journalOf('r1'), readFileSync(journalOf('r1'), 'utf8') + '{"seq":99,"at":"20');
    const host = new Host({ root });
    const runs = (await findUnfinishedRuns(host, DIRS, 'r2')).unfinished;
    expect(runs[0]!.torn).toBe(true);
    await settleInterruptedRuns(host, runs, 'r2', () => {});
    const all = lines('r1');
    expect(all.at(-1)).not.toContain('"seq":99');
    expect(JSON.parse(all.at(-1)!)).toMatchObject({ seq: writeSeq + 1, note: 'found by run r2; its torn last line was cut' });
    expect(checkJournal(readFileSync(journalOf('r1'), 'utf8'), { file: 'j', runId: 'r1', ...DIRS }).torn).toBe(false);
  });

  it('what stands at a temp name now and is neither a file nor a link (a directory) is left alone', async () => {
    const { tmp } = await killedRun('r1');
    rmSync(abs(tmp));
    mkdirSync(abs(tmp));
    const host = new Host({ root });
    const settled = await settleInterruptedRuns(host, (await findUnfinishedRuns(host, DIRS, 'r2')).unfinished, 'r2', () => {});
    expect(settled[0]!.tempFilesRemoved).toEqual([]);
    expect(existsSync(abs(tmp))).toBe(true);
  });

  it('a journal gone or shrunk since it was read is not marked, and says so', async () => {
    await killedRun('r1');
    await killedRun('r2');
    const host = new Host({ root });
    const runs = (await findUnfinishedRuns(host, DIRS, 'now')).unfinished;
    rmSync(journalOf('r1'));
    writeFileSync(journalOf('r2'), '{}\n');
    const said: string[] = [];
    expect(await settleInterruptedRuns(host, runs, 'now', (m) => void said.push(m))).toEqual([]);
    expect(said.sort()).toEqual([
      `did not mark run r1 interrupted: ${RUNS}/r1/journal is now gone`,
      `did not mark run r2 interrupted: ${RUNS}/r2/journal shrank since it was read`,
    ]);
  });
});

describe('describeInterrupted', () => {
  const at = '2026-01-01T00:00:00.000Z';
  it('names the last record, the temp files removed and the rollback command with the program invoked', () => {
    expect(
      describeInterrupted(
        {
          id: 'r1',
          lastRecord: {
            seq: 4,
            at,
            kind: 'write',
            path: '/etc/b.conf',
            prior: { entry: 'absent' },
            mode: 420,
            uid: 0,
            gid: 0,
            sha256: 'a'.repeat(64),
            tmp: '/etc/.b',
            report: false,
          },
          tempFilesRemoved: ['/etc/.b'],
        },
        'k8s-host-reconcile',
      ),
    ).toBe(
      'run r1 was interrupted after record 4: write /etc/b.conf; removed its temp file /etc/.b; this run converges from where it stopped (k8s-host-reconcile --rollback r1 undoes it)',
    );
    expect(
      describeInterrupted({
        id: 'r1',
        lastRecord: { seq: 2, at, kind: 'runtime', action: { step: 'swapoff', device: '/swapfile' } },
        tempFilesRemoved: ['/a', '/b'],
      }),
    ).toBe(
      'run r1 was interrupted after record 2: swapoff; removed its temp files /a, /b; this run converges from where it stopped (reconcile --rollback r1 undoes it)',
    );
    expect(describeInterrupted({ id: 'r1', lastRecord: { seq: 3, at, kind: 'done', of: 2 }, tempFilesRemoved: [] })).toBe(
      'run r1 was interrupted after record 3: done; this run converges from where it stopped (reconcile --rollback r1 undoes it)',
    );
    expect(describeInterrupted({ id: 'r1', lastRecord: null, tempFilesRemoved: [] })).toContain('interrupted after before its first record;');
  });
});
