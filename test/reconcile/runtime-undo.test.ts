// The engine's undo of journaled runtime steps (src/reconcile/runtime-undo.ts), on an UndoSink as the
// door's planner hands it: what each step becomes, offline and live, and which user managers reload.
// The journal is untrusted: a private route to a user's manager is taken only for the account
// /etc/passwd still has with that UID and GID.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import type { UndoSink } from '../../src/door/rollback-plan.js';
import { SystemdRuntimeUndo } from '../../src/reconcile/runtime-undo.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'runtime-undo-'));
  mkdirSync(path.join(root, 'etc'), { recursive: true });
  writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nops:x:1000:1000::/home/ops:/bin/sh\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

// Live, so runtime steps are planned; nothing here runs a step (no act is called).
const sink = (runtimeOk: boolean): UndoSink => ({ host: new Host({ root, live: true }), runtimeOk, steps: [], notes: [], unitLinksChanged: false });

describe('SystemdRuntimeUndo', () => {
  it('offline or for a run on another host: only notes, naming the step and what it acted on', async () => {
    const u = sink(false);
    const undo = new SystemdRuntimeUndo();
    await undo.undo(u, { step: 'swapoff', device: '/swapfile' }, undefined);
    await undo.undo(u, { step: 'unit-stop', units: ['etcd.service'] }, undefined);
    await undo.undo(u, { step: 'daemon-reload' }, undefined);
    await undo.finish(u);
    expect(u.steps).toEqual([]);
    expect(u.notes).toEqual([
      'swapoff /swapfile: runtime state is put back only on the live host the run changed; offline only files and links are restored',
      'unit-stop etcd.service: runtime state is put back only on the live host the run changed; offline only files and links are restored',
    ]);
  });

  it('live: a swapoff becomes a swapon and a stop a start, in the runtime phase; a sysctl goes back to its value, a module stays loaded', async () => {
    const u = sink(true);
    const undo = new SystemdRuntimeUndo();
    await undo.undo(u, { step: 'swapoff', device: '/swapfile' }, undefined);
    await undo.undo(u, { step: 'unit-stop', units: ['etcd.service', 'etcd.socket'] }, undefined);
    await undo.undo(u, { step: 'sysctl', key: 'net.ipv4.ip_forward', path: '/proc/sys/net/ipv4/ip_forward', before: '0', value: '1' }, undefined);
    await undo.undo(u, { step: 'sysctl', key: 'vm.swappiness', path: '/proc/sys/vm/swappiness', before: null, value: '0' }, undefined);
    await undo.undo(u, { step: 'modprobe', module: 'br_netfilter' }, undefined);
    expect(u.steps.map((s) => [s.summary, s.phase ?? 'files', typeof s.act])).toEqual([
      ['swapon /swapfile', 'runtime', 'function'],
      ['start etcd.service etcd.socket', 'runtime', 'function'],
      ['set net.ipv4.ip_forward back to 0', 'files', 'function'],
    ]);
    expect(u.notes).toEqual([
      'vm.swappiness: its value before the run is unknown',
      "module br_netfilter stays loaded: unloading it (br_netfilter above all) can cut the host's networking",
    ]);
  });

  it('a disable puts its links back and reloads the system manager once; a user’s disable reloads that user’s manager', async () => {
    const u = sink(true);
    const undo = new SystemdRuntimeUndo();
    const delta = { removed: [{ path: '/etc/systemd/system/multi-user.target.wants/etcd.service', link: '/lib/systemd/system/etcd.service' }], added: [] };
    await undo.undo(u, { step: 'unit-disable', units: ['etcd.service'] }, delta);
    await undo.undo(u, { step: 'unit-disable', units: ['relay.service'], user: 'ops' }, { removed: [], added: [] });
    await undo.finish(u);
    expect(u.steps.map((s) => [s.summary, s.phase ?? 'files'])).toEqual([
      [
        're-create /etc/systemd/system/multi-user.target.wants/etcd.service -> /lib/systemd/system/etcd.service, removed by systemctl disable etcd.service',
        'files',
      ],
      ['systemctl daemon-reload', 'reload'],
      ['systemctl --user -M ops@ daemon-reload', 'reload'],
    ]);
  });

  it('a private route to a user whose UID /etc/passwd no longer gives is a conflict to do by hand, never a guess', async () => {
    const u = sink(true);
    const undo = new SystemdRuntimeUndo();
    await undo.undo(u, { step: 'unit-stop', units: ['relay.service'], user: 'ops', route: 'private', uid: 1001, gid: 1000 }, undefined);
    expect(u.steps).toHaveLength(1);
    expect(u.steps[0]!.act).toBeUndefined();
    expect(u.steps[0]!.conflict).toBe("the run reached ops's manager as UID 1001:1000, which /etc/passwd no longer says ops is; do it by hand as that user");
  });
});
