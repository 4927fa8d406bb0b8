// PreviousCluster's apply, step by step through a real write door on a temporary root: units stopped
// and disabled through systemctl (a fake runner standing in for systemctl, which removes the link as
// `systemctl disable` would), each step journaled before it runs; unit files and directories moved
// aside (never deleted, the bytes found again under the aside name); a unit masked since the plan left
// as it is; the live manager reloaded once after a unit file went; a failing step named, the rest done.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host, type CommandRunner } from '../../../src/host.js';
import { buildTree } from '../../helpers/tree.js';
import { applyContext } from '../../helpers/door.js';
import { applyPreviousCluster } from '../../../src/resources/previous-cluster/apply.js';
import type { PreviousClusterOp } from '../../../src/resources/previous-cluster/ops.js';
import type { Change } from '../../../src/resources/types.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const WANTS = 'etc/systemd/system/multi-user.target.wants';
function formerNode(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'pc-apply-'));
  dirs.push(root);
  buildTree(root, {
    'etc/systemd/system/kubelet.service': '[Service]\nExecStart=/usr/local/bin/kubelet\n[Install]\nWantedBy=multi-user.target\n',
    'var/lib/etcd/member/snap/db': 'x'.repeat(2048),
    'var/lib/etcd/member/wal/0.wal': 'wal\n',
  });
  mkdirSync(path.join(root, WANTS), { recursive: true });
  symlinkSync('/etc/systemd/system/kubelet.service', path.join(root, WANTS, 'kubelet.service'));
  return root;
}

/** Records each command; `systemctl disable U` removes U's wants link, as systemctl does; `fail` commands exit 1. */
function systemctlRunner(root: string, calls: string[], fail: string[] = []): CommandRunner {
  return async (cmd, args) => {
    const key = [cmd, ...args].join(' ');
    calls.push(key);
    if (fail.includes(key)) return { command: key, exitCode: 1, stdout: '', stderr: `Failed to ${args[0]} ${args[1]}: Access denied` };
    if (cmd === 'systemctl' && args[0] === 'disable') rmSync(path.join(root, WANTS, args[1]!), { force: true });
    return { command: key, exitCode: 0, stdout: '', stderr: '' };
  };
}

const change = (id: string, op: PreviousClusterOp): Change<PreviousClusterOp> => ({ id, action: 'update', summary: `do ${id}`, op });

function journal(root: string): Array<Record<string, unknown>> {
  const runs = path.join(root, 'var/lib/reconcile-test/runs');
  const [run] = readdirSync(runs);
  return readFileSync(path.join(runs, run!, 'journal'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('applyPreviousCluster', () => {
  it('stops, disables and moves aside in the given order, journals each step, and reloads the manager once', async () => {
    const root = formerNode();
    const calls: string[] = [];
    const host = new Host({ root, live: true, runner: systemctlRunner(root, calls) });
    const progress: string[] = [];
    const ctx = await applyContext(host, undefined, (m) => progress.push(m));
    const out = await applyPreviousCluster(
      host,
      [
        change('stop', { kind: 'stop', unit: 'kubelet.service' }),
        change('disable', { kind: 'disable', unit: 'kubelet.service' }),
        change('unit', { kind: 'aside', path: '/etc/systemd/system/kubelet.service', unitFile: true }),
        change('etcd', { kind: 'aside', path: '/var/lib/etcd', unitFile: false }),
        change('nothing', { kind: 'operator' }),
      ],
      ctx,
    );
    expect(out).toBeUndefined();
    expect(calls).toEqual(['systemctl stop kubelet.service', 'systemctl disable kubelet.service', 'systemctl daemon-reload']);

    // Moved, never deleted: the same bytes under an aside name beside the original.
    expect(existsSync(path.join(root, 'var/lib/etcd'))).toBe(false);
    const aside = readdirSync(path.join(root, 'var/lib')).filter((n) => n.startsWith('etcd.'));
    expect(aside).toHaveLength(1);
    expect(readFileSync(path.join(root, 'var/lib', aside[0]!, 'member/snap/db'), 'utf8')).toBe('x'.repeat(2048));
    expect(existsSync(path.join(root, 'etc/systemd/system/kubelet.service'))).toBe(false);
    expect(readdirSync(path.join(root, 'etc/systemd/system')).filter((n) => n.startsWith('kubelet.service.'))).toHaveLength(1);

    const runtime = journal(root).filter((r) => r['kind'] === 'runtime');
    expect(runtime.map((r) => r['action'])).toEqual([
      { step: 'unit-stop', units: ['kubelet.service'] },
      { step: 'unit-disable', units: ['kubelet.service'] },
      { step: 'daemon-reload' },
    ]);
    // The disable's record carries the link systemctl removed, so a rollback can put it back.
    const disableSeq = runtime[1]!['seq'];
    const done = journal(root).find((r) => r['kind'] === 'done' && r['of'] === disableSeq)!;
    expect(done['result']).toEqual({ removed: [{ path: `/${WANTS}/kubelet.service`, link: '/etc/systemd/system/kubelet.service' }], added: [] });

    // 2048 + 4 bytes in 2 files: "2.0 KiB" (2052 / 1024 = 2.004).
    expect(progress).toContain('PreviousCluster: systemctl stop kubelet.service');
    expect(progress.find((m) => m.startsWith('PreviousCluster: moved /var/lib/etcd aside to '))).toMatch(/ \(2 files, 2\.0 KiB\)$/);
    expect(progress.find((m) => m.startsWith('PreviousCluster: moved /etc/systemd/system/kubelet.service aside'))).toMatch(/ \(1 file, /);
  });

  it('leaves a unit file that became a link (masked since the plan) and then has nothing to reload', async () => {
    const root = formerNode();
    rmSync(path.join(root, 'etc/systemd/system/kubelet.service'));
    symlinkSync('/dev/null', path.join(root, 'etc/systemd/system/kubelet.service'));
    const calls: string[] = [];
    const host = new Host({ root, live: true, runner: systemctlRunner(root, calls) });
    const progress: string[] = [];
    const out = await applyPreviousCluster(
      host,
      [change('unit', { kind: 'aside', path: '/etc/systemd/system/kubelet.service', unitFile: true })],
      await applyContext(host, undefined, (m) => progress.push(m)),
    );
    expect(out).toBeUndefined();
    expect(calls).toEqual([]);
    expect(progress).toEqual(['PreviousCluster: /etc/systemd/system/kubelet.service is a link now (masked since the plan): left as it is']);
    expect(readdirSync(path.join(root, 'etc/systemd/system')).filter((n) => n.startsWith('kubelet.service'))).toEqual(['kubelet.service']);
  });

  it('moving a plain directory aside needs no reload, and offline there is no manager to reload', async () => {
    const calls: string[] = [];
    const live = formerNode();
    const liveHost = new Host({ root: live, live: true, runner: systemctlRunner(live, calls) });
    await applyPreviousCluster(liveHost, [change('etcd', { kind: 'aside', path: '/var/lib/etcd', unitFile: false })], await applyContext(liveHost));
    const offline = formerNode();
    const offHost = new Host({ root: offline, runner: systemctlRunner(offline, calls) });
    await applyPreviousCluster(
      offHost,
      [change('unit', { kind: 'aside', path: '/etc/systemd/system/kubelet.service', unitFile: true })],
      await applyContext(offHost),
    );
    expect(calls).toEqual([]);
    expect(existsSync(path.join(offline, 'etc/systemd/system/kubelet.service'))).toBe(false);
  });

  it('offline, disable-links removes exactly the links named, through the door', async () => {
    const root = formerNode();
    const host = new Host({ root });
    await applyPreviousCluster(
      host,
      [change('links', { kind: 'disable-links', unit: 'kubelet.service', links: [`/${WANTS}/kubelet.service`] })],
      await applyContext(host),
    );
    expect(existsSync(path.join(root, WANTS, 'kubelet.service'))).toBe(false);
    expect(existsSync(path.join(root, 'etc/systemd/system/kubelet.service'))).toBe(true);
  });

  it('a failing step is named with its change and error; the steps after it still run', async () => {
    const root = formerNode();
    const calls: string[] = [];
    const host = new Host({ root, live: true, runner: systemctlRunner(root, calls, ['systemctl stop kubelet.service']) });
    const out = await applyPreviousCluster(
      host,
      [change('stop', { kind: 'stop', unit: 'kubelet.service' }), change('etcd', { kind: 'aside', path: '/var/lib/etcd', unitFile: false })],
      await applyContext(host),
    );
    expect(out).toBeDefined();
    expect(out!.failedChanges).toEqual(['stop']);
    expect(out!.error).toMatch(/^do stop: .*Access denied/);
    expect(existsSync(path.join(root, 'var/lib/etcd'))).toBe(false);
  });
});
