// The run journal (journal.ts): appended one fsynced JSON line per record,
// parsed back, its actions paired with their outcomes, and a run's journal
// found under runs/ without following what an image may have put there.
// Journals are written by the real WriteDoor on temp roots; expectations are
// the lines as JSON.parse reads them and the entries as lstat sees them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { promises as fs, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { WriteDoor } from '../../src/door/door.js';
import { JournalError } from '../../src/door/journal-check.js';
import { Journal, actionsOf, parseJournal, readRunJournal, type JournalRecord } from '../../src/door/journal.js';
import { utf8Bytes } from '../../src/bytes.js';

const RUNS = '/var/lib/rt/runs';
const DIRS = { runsDir: RUNS, reportsDir: '/var/lib/rt' };
let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'journal-'));
  mkdirSync(path.join(root, 'etc'), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));
const abs = (p: string) => path.join(root, p);

/** A real door run with id `id` that writes two files and ends `ok`. */
async function doorRun(id: string): Promise<string> {
  const door = await WriteDoor.open(new Host({ root }), { runDir: `${RUNS}/${id}`, runId: id, mode: 'apply', tool: 'test' });
  await door.writeFile({ path: '/etc/a.conf', expect: null, content: utf8Bytes('a\n') });
  await door.writeFile({ path: '/etc/b.conf', expect: null, content: utf8Bytes('b\n') });
  await door.end('ok');
  return readFileSync(abs(`${RUNS}/${id}/journal`), 'utf8');
}

describe('Journal', () => {
  it('appends one JSON line per record, seq from 1, each with its time; reopen continues the count', async () => {
    const file = abs('journal');
    const j = await Journal.create(file);
    expect(await j.append({ kind: 'mkdir', path: '/etc/x', mode: 0o755 })).toBe(1);
    expect(await j.append({ kind: 'done', of: 1 })).toBe(2);
    await j.close();
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    const recs = lines.slice(0, -1).map((l) => JSON.parse(l));
    expect(recs.map((r) => [r.seq, r.kind])).toEqual([
      [1, 'mkdir'],
      [2, 'done'],
    ]);
    for (const r of recs) expect(new Date(r.at).toISOString()).toBe(r.at);
    const again = Journal.reopen(await fs.open(file, 'a'), 2);
    expect(await again.append({ kind: 'end', status: 'interrupted' })).toBe(3);
    await again.close();
    expect(JSON.parse(readFileSync(file, 'utf8').trim().split('\n')[2]!)).toMatchObject({ seq: 3, kind: 'end', status: 'interrupted' });
  });

  it('never opens a journal that exists (O_EXCL)', async () => {
    writeFileSync(abs('journal'), 'an earlier run\n');
    await expect(Journal.create(abs('journal'))).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(abs('journal'), 'utf8')).toBe('an earlier run\n');
  });
});

describe('parseJournal', () => {
  it('the complete lines as records; a torn last line is reported, not read', () => {
    expect(parseJournal('{"seq":1,"kind":"begin"}\n\n{"seq":2,"kind":"end"}\n')).toEqual({
      records: [
        { seq: 1, kind: 'begin' },
        { seq: 2, kind: 'end' },
      ],
      torn: false,
    });
    expect(parseJournal('{"seq":1,"kind":"begin"}\n{"seq":2,"ki')).toEqual({ records: [{ seq: 1, kind: 'begin' }], torn: true });
    expect(parseJournal('')).toEqual({ records: [], torn: false });
  });

  it('a complete line that is not JSON names its line', () => {
    expect(() => parseJournal('{"seq":1}\nnot json\n')).toThrow('journal line 2 is not a JSON record');
  });
});

describe('actionsOf', () => {
  const at = '2026-01-01T00:00:00.000Z';
  it('pairs each action with its outcome, in the order taken; begin and end are no actions', () => {
    const records: JournalRecord[] = [
      { seq: 1, at, kind: 'begin', mode: 'apply', run: 'r', pid: 1, root: '/', live: true, tool: 't' },
      { seq: 2, at, kind: 'mkdir', path: '/etc/a', mode: 0o755 },
      { seq: 3, at, kind: 'runtime', action: { step: 'unit-disable', units: ['a.service'] } },
      { seq: 4, at, kind: 'done', of: 3, result: { removed: [{ path: '/etc/systemd/system/x.wants/a.service', link: '/lib/a.service' }], added: [] } },
      { seq: 5, at, kind: 'runtime', action: { step: 'modprobe', module: 'overlay' } },
      { seq: 6, at, kind: 'failed', of: 5, error: 'modprobe: FATAL' },
      { seq: 7, at, kind: 'done', of: 2 },
      { seq: 8, at, kind: 'remove', path: '/etc/b', prior: { entry: 'symlink', link: '/dev/null' } },
      { seq: 9, at, kind: 'end', status: 'failed' },
    ];
    const a = actionsOf(records);
    expect(a.map((x) => [x.record.seq, x.outcome])).toEqual([
      [2, 'done'],
      [3, 'done'],
      [5, 'failed'],
      [8, 'unknown'],
    ]);
    expect(a[1]!.result).toEqual({ removed: [{ path: '/etc/systemd/system/x.wants/a.service', link: '/lib/a.service' }], added: [] });
    expect(a[0]!.result).toBeUndefined();
  });

  it('an outcome of no known action is ignored', () => {
    expect(actionsOf([{ seq: 1, at, kind: 'done', of: 7 }])).toEqual([]);
  });
});

describe('readRunJournal', () => {
  it("reads and checks a run's journal; complete counts the bytes up to the last newline", async () => {
    const text = await doorRun('r1');
    const r = await readRunJournal(new Host({ root }), DIRS, 'r1');
    if (r.kind !== 'journal') throw new Error(`not read: ${JSON.stringify(r)}`);
    expect(r.target).toBe(`${RUNS}/r1/journal`);
    expect(r.journal.records).toEqual(
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    );
    expect(r.journal.end).toBe('ok');
    expect(r.complete).toBe(Buffer.byteLength(text));
    writeFileSync(abs(`${RUNS}/r1/journal`), text + '{"seq":99');
    const torn = await readRunJournal(new Host({ root }), DIRS, 'r1');
    expect(torn.kind === 'journal' && [torn.complete, torn.journal.torn]).toEqual([Buffer.byteLength(text), true]);
  });

  it('missing: no run directory, or a directory without a journal', async () => {
    expect(await readRunJournal(new Host({ root }), DIRS, 'r1')).toEqual({ kind: 'missing' });
    mkdirSync(abs(`${RUNS}/r2`), { recursive: true });
    expect(await readRunJournal(new Host({ root }), DIRS, 'r2')).toEqual({ kind: 'missing' });
  });

  it('a run directory that is a link or a file, and a journal that is a link or a fifo, are named and never opened', async () => {
    mkdirSync(abs(RUNS), { recursive: true });
    symlinkSync('/etc', abs(`${RUNS}/r1`));
    expect(await readRunJournal(new Host({ root }), DIRS, 'r1')).toEqual({
      kind: 'other',
      target: `${RUNS}/r1`,
      what: 'a symbolic link to /etc, not a run directory',
    });
    writeFileSync(abs(`${RUNS}/r2`), '');
    expect(await readRunJournal(new Host({ root }), DIRS, 'r2')).toEqual({ kind: 'other', target: `${RUNS}/r2`, what: 'not a run directory' });
    mkdirSync(abs(`${RUNS}/r3`));
    symlinkSync('/etc/passwd', abs(`${RUNS}/r3/journal`));
    expect(await readRunJournal(new Host({ root }), DIRS, 'r3')).toEqual({
      kind: 'other',
      target: `${RUNS}/r3/journal`,
      what: 'a symbolic link to /etc/passwd',
    });
    mkdirSync(abs(`${RUNS}/r4`));
    execFileSync('mkfifo', [abs(`${RUNS}/r4/journal`)]);
    expect(await readRunJournal(new Host({ root }), DIRS, 'r4')).toEqual({ kind: 'other', target: `${RUNS}/r4/journal`, what: 'a fifo' });
  });

  it("a journal another run's id wrote is refused by the checker, naming its file and line", async () => {
    const text = await doorRun('r1');
    mkdirSync(abs(`${RUNS}/r2`));
    writeFileSync(abs(`${RUNS}/r2/journal`), text);
    const e = await readRunJournal(new Host({ root }), DIRS, 'r2').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(JournalError);
    expect(e).toMatchObject({ file: `${RUNS}/r2/journal`, line: 1 });
  });
});
