// A planned rollback run through a real door on a temp root (rollback-run.ts):
// every step in plan order, a step refused or in conflict or without a way
// back reported and skipped, a failing step's message kept, the lock released
// once before the first step that needs it gone, and the run marked rolled
// back only when every step went through. The steps are hand-made: what each
// undoes is rollback-plan.ts's part (test/door/rollback-plan.test.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { WriteDoor } from '../../src/door/door.js';
import { executeRollback } from '../../src/door/rollback-run.js';
import { MARKER, type RollbackPlan, type UndoStep } from '../../src/door/rollback-plan.js';
import { utf8Bytes } from '../../src/bytes.js';

const RUNS = '/var/lib/rt/runs';
let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'rollback-run-'));
  mkdirSync(path.join(root, `${RUNS}/r0`), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const open = () => WriteDoor.open(new Host({ root }), { runDir: `${RUNS}/r1`, runId: 'r1', mode: 'rollback', tool: 'test' });
const planOf = (steps: UndoStep[]): RollbackPlan => ({ run: 'r0', runDir: `${RUNS}/r0`, steps, notes: [], alreadyBy: null, incomplete: null });
const marker = () => path.join(root, RUNS, 'r0', MARKER);

describe('executeRollback', () => {
  it('runs every step in order, then marks the undone run with this run as its undoer', async () => {
    const door = await open();
    const order: string[] = [];
    const step = (name: string, phase?: UndoStep['phase']): UndoStep => ({ summary: name, phase, act: async () => void order.push(name) });
    let unlocked = 0;
    const out = await executeRollback(
      door,
      planOf([step('restore /etc/a'), step('reload', 'reload'), step('rmdir /run', 'unlocked'), step('rmdir /x', 'unlocked')]),
      async () => {
        order.push('unlock');
        unlocked++;
      },
    );
    await door.end('ok');
    expect(out).toEqual({ done: ['restore /etc/a', 'reload', 'rmdir /run', 'rmdir /x'], failed: [] });
    expect(order).toEqual(['restore /etc/a', 'reload', 'unlock', 'rmdir /run', 'rmdir /x']);
    expect(unlocked).toBe(1);
    const m = JSON.parse(readFileSync(marker(), 'utf8'));
    expect(m.by).toBe('r1');
    expect(new Date(m.at).toISOString()).toBe(m.at);
  });

  it('a step really writes through the door it is given', async () => {
    const door = await open();
    mkdirSync(path.join(root, 'etc'));
    const out = await executeRollback(
      door,
      planOf([{ summary: 'put back /etc/a', act: (d) => d.writeFile({ path: '/etc/a', expect: null, content: utf8Bytes('old\n') }).then(() => undefined) }]),
    );
    await door.end('ok');
    expect(out.failed).toEqual([]);
    expect(readFileSync(path.join(root, 'etc/a'), 'utf8')).toBe('old\n');
  });

  it('refused, conflicting and unrestorable steps are failures with their reason; a throwing step keeps its message; the rest still run; no marker', async () => {
    const door = await open();
    const ran: string[] = [];
    const out = await executeRollback(
      door,
      planOf([
        { summary: 'restore /etc/a', refused: 'its backup is not what the run kept', act: async () => void ran.push('a') },
        { summary: 'restore /etc/b', conflict: '/etc/b changed since the run' },
        { summary: 'restore /etc/c' },
        {
          summary: 'start kubelet.service',
          phase: 'runtime',
          act: async () => {
            throw new Error('systemctl start failed');
          },
        },
        { summary: 'restore /etc/d', act: async () => void ran.push('d') },
      ]),
    );
    await door.end('failed');
    expect(out.done).toEqual(['restore /etc/d']);
    expect(out.failed).toEqual([
      { step: 'restore /etc/a', message: 'its backup is not what the run kept' },
      { step: 'restore /etc/b', message: '/etc/b changed since the run' },
      { step: 'restore /etc/c', message: 'nothing to restore it from' },
      { step: 'start kubelet.service', message: 'systemctl start failed' },
    ]);
    // A refused step never runs, even with a way back.
    expect(ran).toEqual(['d']);
    expect(existsSync(marker())).toBe(false);
  });

  it('no step that needs the lock gone: the lock is never released here; an empty plan still marks the run', async () => {
    const door = await open();
    let unlocked = 0;
    const out = await executeRollback(door, planOf([]), async () => void unlocked++);
    await door.end('ok');
    expect(out).toEqual({ done: [], failed: [] });
    expect(unlocked).toBe(0);
    expect(existsSync(marker())).toBe(true);
  });
});
