// PortFree's first-boot wait (first-boot-wait.ts): before the first boot's
// run observes, each running candidate (a service whose ExecStart= or
// Environment= names a wanted port) is waited for until it listens on a
// wanted port, is gone, or the timeout passes. The units are files on a
// fixture root read by the real loader; systemctl's ActiveState answers and
// the successive observations are scripted, as the manager and the kernel
// would give them while the agent starts; the poll's pause is skipped.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host, type CommandRunner } from '../../../src/host.js';
import { isRunningState, verdictOf, waitForPortCandidates } from '../../../src/resources/port-free/first-boot-wait.js';
import type { LivePortsObserved } from '../../../src/ports/observed.js';
import type { FirstBootWait } from '../../../src/resources/types.js';
import { spec } from '../../helpers/port-listeners.js';
import { buildTree } from '../../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const ETC = 'etc/systemd/system';
const unit = (exec: string) => `[Unit]\nDescription=x\n[Service]\nExecStart=${exec}\n[Install]\nWantedBy=multi-user.target\n`;
/** A live-treated root with agent.service naming 6443 and metrics.service naming 10250 (by Environment=), and one naming no wanted port. */
function root(): string {
  const r = mkdtempSync(path.join(tmpdir(), 'first-boot-wait-'));
  roots.push(r);
  buildTree(r, {
    [`${ETC}/agent.service`]: unit('/usr/bin/agent --listen :6443'),
    [`${ETC}/metrics.service`]: '[Service]\nEnvironment=PORT=10250\nExecStart=/usr/bin/metrics\n',
    [`${ETC}/web.service`]: unit('/usr/bin/web --port 8080'),
  });
  return r;
}

/** systemctl show -p ActiveState --value UNIT answered from `states` (each unit's answers in turn, the last repeated). */
function manager(states: Record<string, string[]>) {
  const asked: string[] = [];
  const runner: CommandRunner = async (cmd, args) => {
    const u = args.at(-1)!;
    asked.push(u);
    const list = states[u] ?? ['inactive'];
    const v = list.length > 1 ? list.shift()! : list[0]!;
    return { command: [cmd, ...args].join(' '), exitCode: 0, stdout: `${v}\n`, stderr: '' };
  };
  return { runner, asked };
}

const nothingListens = (): LivePortsObserved =>
  ({ mode: 'live', busy: [], selfUnit: null, unreadablePids: 0, units: {}, crontabs: null, uids: {}, supervisor: null }) as unknown as LivePortsObserved;
const listening = (port: number, u: string): LivePortsObserved =>
  ({
    ...nothingListens(),
    busy: [{ port, listeners: [], holders: [{ pid: 9, comm: 'agent', placement: { unit: u } }], activation: null }],
  }) as unknown as LivePortsObserved;

async function wait(states: Record<string, string[]>, observations: LivePortsObserved[], extra: Parameters<typeof spec>[1] = {}, waited: FirstBootWait[] = []) {
  const { runner } = manager(states);
  const host = new Host({ root: root(), live: true, runner });
  const progress: string[] = [];
  let polls = 0;
  const got = await waitForPortCandidates(
    host,
    spec([6443, 10250], extra),
    { progress: (m) => void progress.push(m), waited, sleep: async () => undefined },
    async () => {
      const o = observations[Math.min(polls, observations.length - 1)]!;
      polls++;
      return o;
    },
  );
  return { got, progress, polls };
}

describe('isRunningState and verdictOf', () => {
  it('active, activating and reloading are running; anything else is not', () => {
    for (const s of ['active', 'activating', 'reloading']) expect(isRunningState(s)).toBe(true);
    for (const s of ['inactive', 'failed', 'deactivating', 'unknown', '']) expect(isRunningState(s)).toBe(false);
  });

  it('listening when the unit holds a port or its socket activates it; gone when it stopped; else keep waiting', () => {
    expect(verdictOf('agent.service', 'active', listening(6443, 'agent.service'))).toEqual({ outcome: 'listening', port: 6443 });
    const activated = {
      ...nothingListens(),
      busy: [{ port: 10250, listeners: [], holders: [], activation: { service: 'metrics.service' } }],
    } as unknown as LivePortsObserved;
    expect(verdictOf('metrics.service', 'active', activated)).toEqual({ outcome: 'listening', port: 10250 });
    expect(verdictOf('agent.service', 'failed', nothingListens())).toEqual({ outcome: 'gone' });
    expect(verdictOf('agent.service', 'activating', listening(6443, 'other.service'))).toBeNull();
  });
});

describe('waitForPortCandidates', () => {
  it('a candidate that is not running is not waited for; one naming no wanted port is no candidate', async () => {
    const { got, progress, polls } = await wait({ 'agent.service': ['inactive'], 'metrics.service': ['failed'] }, [nothingListens()]);
    expect(got).toEqual([
      { unit: 'agent.service', ports: [6443], outcome: 'not running', seconds: 0 },
      { unit: 'metrics.service', ports: [10250], outcome: 'not running', seconds: 0 },
    ]);
    expect(progress).toEqual([]);
    expect(polls).toBe(0);
  });

  it('a running agent that binds its port on the third poll: listening, with progress lines', async () => {
    const { got, progress, polls } = await wait({ 'agent.service': ['activating'] }, [nothingListens(), nothingListens(), listening(6443, 'agent.service')]);
    expect(got).toEqual([
      { unit: 'metrics.service', ports: [10250], outcome: 'not running', seconds: 0 },
      { unit: 'agent.service', ports: [6443], outcome: 'listening', port: 6443, seconds: expect.any(Number) },
    ]);
    expect(polls).toBe(3);
    expect(progress[0]).toBe('first boot: waiting up to 5 s for agent.service to listen on 6443 or stop');
    expect(progress.at(-1)).toMatch(/^first boot: agent\.service listens on 6443 after [0-9.]+ s$/);
  });

  it('a running candidate that stops is gone', async () => {
    const { got, progress } = await wait({ 'agent.service': ['active', 'active', 'failed'] }, [nothingListens()]);
    expect(got.find((w) => w.unit === 'agent.service')).toMatchObject({ outcome: 'gone' });
    expect(progress.at(-1)).toMatch(/^first boot: agent\.service is gone after /);
  });

  it('one still running and not listening at the timeout is left alone, with a warning naming protected_units', async () => {
    const { got, progress } = await wait({ 'agent.service': ['active'] }, [nothingListens()], { timeout_seconds: 0 });
    expect(got.find((w) => w.unit === 'agent.service')).toEqual({ unit: 'agent.service', ports: [6443], outcome: 'timeout', seconds: 0 });
    expect(progress.at(-1)).toBe(
      'first boot: warning: agent.service is still running after 0 s and does not listen on 6443; left alone (list it in protected_units if it never binds them)',
    );
  });

  it('a protected candidate, or one an earlier resource waited for, is not waited for again', async () => {
    const earlier: FirstBootWait = { unit: 'metrics.service' } as FirstBootWait;
    const { got, polls } = await wait(
      { 'agent.service': ['active'], 'metrics.service': ['active'] },
      [nothingListens()],
      { protected_units: ['agent.service'] },
      [earlier],
    );
    expect(got).toEqual([]);
    expect(polls).toBe(0);
  });
});
