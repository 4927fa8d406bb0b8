// stop_containers, end to end without a daemon: the plan's stop for a named
// Docker container, apply's argv through the command runner (a recorder: no
// docker runs), the journaled container-stop step and its undo by --rollback
// (docker update --restart=BEFORE, docker start). Fixture files as in
// container-line.test.ts (moby's daemon/container/container.go).
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../../src/host.js';
import { buildTree } from '../../helpers/tree.js';
import { containersOf } from '../../../src/containers/holder.js';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';
import { applyContainerStops } from '../../../src/resources/port-free/apply-containers.js';
import type { ContainerStopOp } from '../../../src/resources/port-free/ops.js';
import type { BusyPort, LivePortsObserved } from '../../../src/ports/observed.js';
import { placementOfPath } from '../../../src/systemd/cgroup.js';
import { recorder, spec } from '../../helpers/port-listeners.js';
import { SystemdRuntimeUndo } from '../../../src/reconcile/runtime-undo.js';
import type { ApplyContext } from '../../../src/resources/types.js';

const ID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';
const roots: string[] = [];
afterEach(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

function root(restart: string): string {
  const r = mkdtempSync(path.join(tmpdir(), 'container-stop-'));
  roots.push(r);
  buildTree(r, {
    [`var/lib/docker/containers/${ID}/config.v2.json`]: JSON.stringify({ ID, Name: '/api', Config: { Image: 'img:1' }, State: { Running: true, Pid: 77 } }),
    [`var/lib/docker/containers/${ID}/hostconfig.json`]: JSON.stringify({ RestartPolicy: { Name: restart }, NetworkMode: 'host' }),
  });
  return r;
}

async function diff(r: string, stop: string[]) {
  const b: BusyPort = {
    port: 6443,
    listeners: [{ family: 'ipv4', address: '0.0.0.0', port: 6443, inode: 1 } as never],
    holders: [{ pid: 77, comm: 'api', placement: placementOfPath(`/system.slice/docker-${ID}.scope`, 'v2'), ancestry: null, mainHoldsSocket: null }],
    activation: null,
  };
  const o: LivePortsObserved = {
    mode: 'live',
    busy: [b],
    selfUnit: null,
    unreadablePids: 0,
    units: {},
    crontabs: null,
    uids: {},
    supervisor: null,
    containers: await containersOf(new Host({ root: r }), [b]),
  };
  return portFreeProvider.diff(spec([6443], { stop_containers: stop }), o, { live: true });
}

describe('stop_containers', () => {
  it('a container named there (by name or a 12-character id prefix) is a stop; any other stays an operator line', async () => {
    const r = root('always');
    for (const name of ['api', ID.slice(0, 12)]) {
      const [c] = await diff(r, [name]);
      expect(c!.action).toBe('stop');
      expect(c!.op).toEqual({ kind: 'container-stop', port: 6443, pid: 77, runtime: 'docker', id: ID, name: 'api', restart: 'always' });
      expect(c!.summary).toBe(
        'port 6443 (0.0.0.0:6443) held by pid 77 (api), docker container a1b2c3d4e5f6 "api" (restart policy always), named in stop_containers: docker update --restart=no api, then docker stop api (--rollback sets --restart=always again and starts it)',
      );
    }
    for (const name of ['other', ID.slice(0, 11)]) expect((await diff(r, [name]))[0]!.action).toBe('operator');
  });

  it('a container whose restart policy is unknown is never stopped: the operator line stays', async () => {
    const [c] = await diff(root('sometimes'), ['api']);
    expect(c!.action).toBe('operator');
  });

  it('apply runs docker update --restart=no then docker stop as argv, in one journaled container-stop step; the rollback restores the policy and starts it', async () => {
    const { calls, runner } = recorder(() => ({ exitCode: 0 }));
    const host = new Host({ runner, live: true, root: '/' });
    const journaled: unknown[] = [];
    const ctx = {
      door: { runtime: async (step: unknown, act: () => Promise<unknown>) => (journaled.push(step), act()) },
      progress: () => {},
    } as unknown as ApplyContext;
    const op: ContainerStopOp = { kind: 'container-stop', port: 1, pid: 77, runtime: 'docker', id: ID, name: 'api', restart: 'unless-stopped' };
    // Port 1 is not listened on here, so the wait ends at once.
    expect(await applyContainerStops(host, [op], 2000, ctx)).toEqual({ errors: [], failedPorts: [] });
    expect(calls).toEqual([
      { cmd: 'docker', args: ['update', '--restart=no', ID] },
      { cmd: 'docker', args: ['stop', ID] },
    ]);
    expect(journaled).toEqual([{ step: 'container-stop', runtime: 'docker', id: ID, restart: 'unless-stopped' }]);

    const u = { host, runtimeOk: true, steps: [] as { summary: string; act?: (d: unknown) => Promise<unknown> }[], notes: [], unitLinksChanged: false };
    await new SystemdRuntimeUndo().undo(u as never, journaled[0] as never, undefined);
    expect(u.steps.map((s) => s.summary)).toEqual(['docker update --restart=unless-stopped a1b2c3d4e5f6 && docker start a1b2c3d4e5f6']);
    calls.length = 0;
    journaled.length = 0;
    await u.steps[0]!.act!(ctx.door);
    expect(calls).toEqual([
      { cmd: 'docker', args: ['update', '--restart=unless-stopped', ID] },
      { cmd: 'docker', args: ['start', ID] },
    ]);
    expect(journaled).toEqual([{ step: 'container-start', runtime: 'docker', id: ID, restart: 'unless-stopped' }]);
  });

  it('a failing docker stop fails that port, naming the container', async () => {
    const { runner } = recorder((c) => ({ exitCode: c.args[0] === 'stop' ? 1 : 0 }));
    const host = new Host({ runner, live: true, root: '/' });
    const ctx = { door: { runtime: async (_s: unknown, act: () => Promise<unknown>) => act() }, progress: () => {} } as unknown as ApplyContext;
    const op: ContainerStopOp = { kind: 'container-stop', port: 1, pid: 77, runtime: 'docker', id: ID, name: 'api', restart: 'always' };
    const r = await applyContainerStops(host, [op], 2000, ctx);
    expect(r.failedPorts).toEqual([1]);
    expect(r.errors[0]).toMatch(/^port 1 \(docker container api\): /);
  });
});
