// --rollback on an unbooted image: the bundle applies the lab's faults, then
// undoes the run; the tree must be exactly what it was (bytes, owner, mode,
// links), apart from the tool's own reports.
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildLabImage, FSTAB, BASELINE, SYSCTL_CONF, toolOwned } from './helpers/lab-image.js';
import { snapshot } from './helpers/snapshot.js';
import { undoOrder, type UndoStep } from '../src/reconcile/rollback.js';

const BUNDLE = path.resolve('dist/reconcile.mjs');
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

export function reconcile(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env } });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function lab() {
  const root = mkdtempSync(path.join(tmpdir(), 'rollback-'));
  roots.push(root);
  const desired = buildLabImage(root);
  return { root, desired, original: snapshot(root, toolOwned) };
}

describe('reconcile --rollback', () => {
  it('puts an applied image back exactly, then a second rollback does nothing', () => {
    const { root, desired, original } = lab();
    const planBefore = reconcile(['--plan', '--json', '-f', desired, '--root', root]);
    expect(planBefore.code).toBe(2);

    const a = reconcile(['--apply', '-f', desired, '--root', root]);
    expect(a.stderr).toBe(a.stderr); // shown on failure below
    expect({ code: a.code, err: a.stderr.split('\n').filter((l) => /error|failed/.test(l)) }).toEqual({ code: 0, err: [] });
    // The bytes of untouched lines survived the apply; only the swap line changed.
    const fstab = readFileSync(path.join(root, 'etc/fstab'));
    expect(fstab.subarray(0, FSTAB.length - '/swapfile none swap sw 0 0'.length)).toEqual(FSTAB.subarray(0, FSTAB.length - '/swapfile none swap sw 0 0'.length));
    // sysctl.conf was edited through Debian's 99-sysctl.conf link: the link stays, its Latin-1 bytes too.
    const conf = readFileSync(path.join(root, 'etc/sysctl.conf'));
    expect(conf.subarray(0, 35)).toEqual(SYSCTL_CONF.subarray(0, 35));
    expect(conf.toString('latin1')).toContain('# net.ipv4.ip_forward=0\nkernel.printk = 3 4 1 3');
    expect(snapshot(root, toolOwned)['etc/sysctl.d/99-sysctl.conf']).toBe('link -> ../sysctl.conf');
    expect(snapshot(root, toolOwned)).not.toEqual(original);

    const preview = reconcile(['--rollback', '--plan', '-f', desired, '--root', root]);
    expect(preview.code).toBe(2);
    expect(preview.stdout).toContain('restore /etc/fstab');
    expect(snapshot(root, toolOwned)).not.toEqual(original); // a preview changes nothing

    const r = reconcile(['--rollback', '-f', desired, '--root', root]);
    expect({ code: r.code, out: r.stdout }).toMatchObject({ code: 0 });
    expect(snapshot(root, toolOwned)).toEqual(original);
    expect(readFileSync(path.join(root, 'etc/fstab'))).toEqual(FSTAB);
    expect(readFileSync(path.join(root, 'etc/sysctl.d/security-baseline.conf'))).toEqual(BASELINE);
    expect(readFileSync(path.join(root, 'etc/sysctl.conf'))).toEqual(SYSCTL_CONF);
    expect(existsSync(path.join(root, 'run/k8s-host-reconcile.lock'))).toBe(false);

    const again = reconcile(['--rollback', '-f', desired, '--root', root]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/already rolled back by run .*; nothing to do/);
    expect(snapshot(root, toolOwned)).toEqual(original);

    // And the plan is what it was before the apply.
    const planAfter = reconcile(['--plan', '--json', '-f', desired, '--root', root]);
    expect(planAfter.code).toBe(2);
    const ids = (s: string) => (JSON.parse(s).resources as Array<{ changes: Array<{ id: string }> }>).map((x) => x.changes.map((c) => c.id));
    expect(ids(planAfter.stdout)).toEqual(ids(planBefore.stdout));
  });

  it('refuses to overwrite a file changed after the run, names it, and changes nothing; --force overwrites', () => {
    const { root, desired, original } = lab();
    expect(reconcile(['--apply', '-f', desired, '--root', root]).code).toBe(0);
    appendFileSync(path.join(root, 'etc/fstab'), '# added by a person after the run\n');
    const changed = snapshot(root, toolOwned);
    const r = reconcile(['--rollback', '-f', desired, '--root', root]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('/etc/fstab has other content since run');
    expect(r.stdout).toContain('--force');
    expect(snapshot(root, toolOwned)).toEqual(changed);
    const f = reconcile(['--rollback', '--force', '-f', desired, '--root', root]);
    expect(f.code).toBe(0);
    expect(snapshot(root, toolOwned)).toEqual(original);
  });

  it('names the run it undoes; an unknown run id is an error that changes nothing', () => {
    const { root, desired } = lab();
    expect(reconcile(['--apply', '-f', desired, '--root', root]).code).toBe(0);
    const runs = readdirSync(path.join(root, 'root/ks/preflight/runs'));
    expect(runs).toHaveLength(1);
    const applied = snapshot(root, toolOwned);
    const bad = reconcile(['--rollback', '20000101T000000000Z-1', '-f', desired, '--root', root]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('no run 20000101T000000000Z-1 in /root/ks/preflight/runs');
    expect(snapshot(root, toolOwned)).toEqual(applied);
    const ok = reconcile(['--rollback', runs[0]!, '--json', '-f', desired, '--root', root]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ mode: 'rollback', run: runs[0], failed: [] });
  });
});

describe('undo order', () => {
  it('puts files and links first, then the one daemon-reload, then swapon and unit starts, each in planned order', () => {
    // A summary that reads like a reload decides nothing: only the phase does.
    const steps: UndoStep[] = [
      { summary: 'start etcd.service', phase: 'runtime' },
      { summary: 'restore /etc/fstab' },
      { summary: 'systemctl daemon-reload', phase: 'reload' },
      { summary: 'swapon /swapfile', phase: 'runtime' },
      { summary: 'systemctl daemon-reload', phase: 'files' },
      { summary: 're-create /etc/systemd/system/multi-user.target.wants/etcd.service -> /lib/systemd/system/etcd.service', phase: 'files' },
    ];
    expect(undoOrder(steps).map((s) => `${s.phase ?? 'files'} ${s.summary}`)).toEqual([
      'files restore /etc/fstab',
      'files systemctl daemon-reload',
      'files re-create /etc/systemd/system/multi-user.target.wants/etcd.service -> /lib/systemd/system/etcd.service',
      'reload systemctl daemon-reload',
      'runtime start etcd.service',
      'runtime swapon /swapfile',
    ]);
  });
});
