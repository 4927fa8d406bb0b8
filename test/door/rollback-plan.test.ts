// The door's rollback planner on its own (door/rollback-plan.ts): a real run through the write door on a
// fixture root, read back by the planner with a recording RuntimeUndoer standing in for the engine's
// systemctl undo. What the planner must do follows from what the run did to the tree: each file put back
// as it was before the run, each runtime record handed over newest first, the undoer's steps ordered by
// phase after every file, and nothing planned for a record whose action failed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { WriteDoor } from '../../src/door/door.js';
import type { LinkDelta, RuntimeStep } from '../../src/door/journal.js';
import { planRollback, type RuntimeUndoer, type UndoSink } from '../../src/door/rollback-plan.js';
import { executeRollback } from '../../src/door/rollback-run.js';
import { utf8Bytes } from '../../src/bytes.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'rollback-plan-'));
  mkdirSync(path.join(root, 'etc/sysctl.d'), { recursive: true });
  mkdirSync(path.join(root, 'run'), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const REPORTS = '/var/lib/rt';
const RUNS = `${REPORTS}/runs`;
const abs = (p: string) => path.join(root, p);
const dirs = { reportsDir: REPORTS, runsDir: RUNS };

/** Records what the planner hands it, and plans one step per runtime record in the phase the engine would. */
class RecordingUndo implements RuntimeUndoer {
  seen: { step: string; result: LinkDelta | undefined }[] = [];
  finished = 0;
  async undo(u: UndoSink, action: RuntimeStep, result: LinkDelta | undefined): Promise<void> {
    this.seen.push({ step: action.step, result });
    u.steps.push({ summary: `undo ${action.step}`, phase: 'runtime' });
  }
  async finish(u: UndoSink): Promise<void> {
    this.finished += 1;
    if (u.unitLinksChanged) u.steps.push({ summary: 'reload', phase: 'reload' });
  }
}

async function applyRun(id: string, act: (door: WriteDoor) => Promise<void>): Promise<void> {
  const door = await WriteDoor.open(new Host({ root }), { runDir: `${RUNS}/${id}`, runId: id, mode: 'apply', tool: 'test' });
  try {
    await act(door);
  } finally {
    await door.end('ok');
  }
}

describe('the door plans a rollback from its journal', () => {
  it('puts files back as they were, hands runtime records over newest first, and orders the undoer’s steps after the files', async () => {
    writeFileSync(abs('etc/fstab'), '/swapfile none swap sw 0 0\n');
    const fstabBefore = readFileSync(abs('etc/fstab'), 'utf8');
    await applyRun('20261207T000000000Z-1', async (door) => {
      await door.writeFile({ path: '/etc/fstab', content: utf8Bytes('#/swapfile none swap sw 0 0\n') });
      await door.runtime({ step: 'swapoff', device: '/swapfile' }, async () => {});
      await door.writeFile({ path: '/etc/sysctl.d/k8s.conf', content: utf8Bytes('net.ipv4.ip_forward = 1\n') });
      await door.symlink('/etc/systemd/system/swap.target', '/dev/null');
      await door.runtime({ step: 'daemon-reload' }, async () => {});
      await expect(door.runtime({ step: 'modprobe', module: 'overlay' }, async () => Promise.reject(new Error('no such module')))).rejects.toThrow();
    });
    const undo = new RecordingUndo();
    const plan = await planRollback(new Host({ root }), dirs, RUNS, undefined, undo);
    // Newest first; the failed modprobe is not handed over (it changed nothing).
    expect(undo.seen.map((s) => s.step)).toEqual(['daemon-reload', 'swapoff']);
    expect(undo.finished).toBe(1);
    // The link under /etc/systemd told the undoer a reload is needed; files first, then reload, then runtime.
    expect(plan.steps.map((s) => s.summary)).toEqual([
      'remove /etc/systemd/system/swap.target, which the run created',
      // The door made the link's directories for it: they go too, when the run left them empty.
      'remove the directory /etc/systemd/system if the run left it empty',
      'remove the directory /etc/systemd if the run left it empty',
      'remove /etc/sysctl.d/k8s.conf, which the run created',
      'restore /etc/fstab',
      'reload',
      'undo daemon-reload',
      'undo swapoff',
    ]);
    expect(plan.incomplete).toBeNull();
    expect(plan.alreadyBy).toBeNull();

    // Run through a rollback door: the tree is as it was before the run, and the run is marked undone.
    const door = await WriteDoor.open(new Host({ root }), {
      runDir: `${RUNS}/20261207T000001000Z-2`,
      runId: '20261207T000001000Z-2',
      mode: 'rollback',
      tool: 'test',
    });
    const out = await executeRollback(door, plan);
    await door.end('ok');
    expect(out.failed.map((f) => f.step)).toEqual(['reload', 'undo daemon-reload', 'undo swapoff']); // the stand-in plans no act
    expect(readFileSync(abs('etc/fstab'), 'utf8')).toBe(fstabBefore);
    expect(existsSync(abs('etc/sysctl.d/k8s.conf'))).toBe(false);
    expect(existsSync(abs('etc/systemd'))).toBe(false);
    // A failed step leaves no marker: the run can be rolled back again.
    expect(existsSync(abs(`${RUNS}/20261207T000000000Z-1/rolled-back.json`))).toBe(false);
  });

  it('a file changed after the run is a conflict, never a silent overwrite; a second rollback after a clean one has nothing to do', async () => {
    writeFileSync(abs('etc/sysctl.conf'), 'net.ipv4.ip_forward = 0\n');
    await applyRun('20261207T000000000Z-1', async (door) => {
      await door.writeFile({ path: '/etc/sysctl.conf', content: utf8Bytes('# net.ipv4.ip_forward = 0\n') });
    });
    writeFileSync(abs('etc/sysctl.conf'), 'edited by the admin since\n');
    const conflicted = await planRollback(new Host({ root }), dirs, RUNS, undefined, new RecordingUndo());
    expect(conflicted.steps).toHaveLength(1);
    expect(conflicted.steps[0]!.conflict).toBe('/etc/sysctl.conf has other content since run 20261207T000000000Z-1 wrote it');

    writeFileSync(abs('etc/sysctl.conf'), '# net.ipv4.ip_forward = 0\n');
    const plan = await planRollback(new Host({ root }), dirs, RUNS, undefined, new RecordingUndo());
    const door = await WriteDoor.open(new Host({ root }), {
      runDir: `${RUNS}/20261207T000001000Z-2`,
      runId: '20261207T000001000Z-2',
      mode: 'rollback',
      tool: 'test',
    });
    expect((await executeRollback(door, plan)).failed).toEqual([]);
    await door.end('ok');
    expect(readFileSync(abs('etc/sysctl.conf'), 'utf8')).toBe('net.ipv4.ip_forward = 0\n');
    const again = await planRollback(new Host({ root }), dirs, RUNS, '20261207T000000000Z-1', new RecordingUndo());
    expect(again.alreadyBy).toBe('run 20261207T000001000Z-2');
    expect(again.steps).toEqual([]);
  });
});
