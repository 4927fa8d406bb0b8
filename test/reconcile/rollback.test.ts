// --rollback on an unbooted image: the bundle applies the lab's faults, then
// undoes the run; the tree must be exactly what it was (bytes, owner, mode,
// links), apart from the tool's own reports.
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildLabImage, FSTAB, BASELINE, SYSCTL_CONF, toolOwned } from '../helpers/lab-image.js';
import { snapshot } from '../helpers/snapshot.js';
import { undoOrder, type UndoStep } from '../../src/reconcile/rollback.js';

const BUNDLE = path.resolve('dist/reconcile.mjs');
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

export function reconcile(args: string[], env: Record<string, string> = {}) {
  // A hang (a fifo opened or read) is killed and shows as a null exit code.
  const r = spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 30_000 });
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
    expect(fstab.subarray(0, FSTAB.length - '/swapfile none swap sw 0 0'.length)).toEqual(
      FSTAB.subarray(0, FSTAB.length - '/swapfile none swap sw 0 0'.length),
    );
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

/** The one run directory of an applied lab, its journal's records (parsed here, as JSON lines) and its path. */
function appliedLab() {
  const l = lab();
  expect(reconcile(['--apply', '-f', l.desired, '--root', l.root]).code).toBe(0);
  const runs = path.join(l.root, 'root/ks/preflight/runs');
  const [id] = readdirSync(runs);
  const runDir = path.join(runs, id!);
  const journalFile = path.join(runDir, 'journal');
  const records = readFileSync(journalFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((x) => JSON.parse(x) as { kind: string; path?: string; seq: number });
  return { ...l, id: id!, runDir, journalFile, records, converged: snapshot(l.root, toolOwned) };
}

describe('--rollback trusts no backup it has not checked', () => {
  // fstab is written by the run: its backup is runs/<id>/backup/etc/fstab, and
  // rollback copies it back. Each case spoils that backup in one way.
  const SHADOW = 'root:$6$salt$hash:19000:0:99999:7:::\n';
  const cases: Array<[string, (a: ReturnType<typeof appliedLab>) => void, string]> = [
    [
      'a link to /etc/shadow',
      (a) => {
        writeFileSync(path.join(a.root, 'etc/shadow'), SHADOW);
        rmSync(path.join(a.runDir, 'backup/etc/fstab'));
        symlinkSync('/etc/shadow', path.join(a.runDir, 'backup/etc/fstab'));
      },
      'symbolic link',
    ],
    ['truncated to 50 bytes', (a) => truncateSync(path.join(a.runDir, 'backup/etc/fstab'), 50), 'sha256'],
    [
      'other bytes of the same length',
      (a) => {
        const b = readFileSync(path.join(a.runDir, 'backup/etc/fstab'));
        b[0] = b[0]! ^ 0x20;
        writeFileSync(path.join(a.runDir, 'backup/etc/fstab'), b);
      },
      'sha256',
    ],
    ['gone', (a) => rmSync(path.join(a.runDir, 'backup/etc/fstab')), 'missing'],
    [
      'a directory on the way linking to /etc',
      (a) => {
        rmSync(path.join(a.runDir, 'backup/etc'), { recursive: true });
        symlinkSync('/etc', path.join(a.runDir, 'backup/etc'));
      },
      'symbolic link',
    ],
    [
      'a fifo',
      (a) => {
        rmSync(path.join(a.runDir, 'backup/etc/fstab'));
        expect(spawnSync('mkfifo', [path.join(a.runDir, 'backup/etc/fstab')]).status).toBe(0);
      },
      'fifo',
    ],
  ];
  it.each(cases)(
    'backup %s: fstab is not restored, the backup is named, exit 1, with or without --force',
    (_what, spoil, why) => {
      const a = appliedLab();
      const fstab = readFileSync(path.join(a.root, 'etc/fstab'));
      spoil(a);
      const before = snapshot(a.root, toolOwned);
      const r = reconcile(['--rollback', a.id, '-f', a.desired, '--root', a.root]);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toContain(`/root/ks/preflight/runs/${a.id}/backup/etc/fstab`);
      expect(r.stdout).toContain(why);
      expect(snapshot(a.root, toolOwned)).toEqual(before); // refused: nothing at all changed
      const f = reconcile(['--rollback', a.id, '--force', '-f', a.desired, '--root', a.root]);
      expect(f.code, f.stdout + f.stderr).toBe(1);
      expect(f.stdout).toContain(`/root/ks/preflight/runs/${a.id}/backup/etc/fstab`);
      // --force undoes the rest, never fstab from a backup that is not what the run kept.
      expect(readFileSync(path.join(a.root, 'etc/fstab'))).toEqual(fstab);
      expect(readFileSync(path.join(a.root, 'etc/fstab')).toString('latin1')).not.toContain('root:$6$');
      // Every backup under the linked directory is refused alike; otherwise the others are put back.
      if (!r.stdout.includes(`backup/etc/sysctl.conf`)) expect(readFileSync(path.join(a.root, 'etc/sysctl.conf'))).toEqual(SYSCTL_CONF);
      else expect(_what).toBe('a directory on the way linking to /etc');
    },
    60_000,
  );
});

describe('--rollback of an incomplete journal', () => {
  const writesIn = (records: Array<{ kind: string; path?: string }>) =>
    new Set(records.filter((r) => r.kind === 'write' && r.path!.startsWith('/etc/')).map((r) => r.path!));

  it('cut in half: reported incomplete with what it can and cannot undo, exit 1 and nothing changed; --force undoes the first half only', () => {
    const a = appliedLab();
    const bytes = readFileSync(a.journalFile);
    writeFileSync(a.journalFile, bytes.subarray(0, Math.floor(bytes.length / 2)));
    // What survives: the complete lines of the first half.
    const kept = bytes
      .subarray(0, Math.floor(bytes.length / 2))
      .toString('utf8')
      .split('\n')
      .slice(0, -1)
      .map((x) => JSON.parse(x) as { kind: string; path?: string; seq: number });
    const lost = a.records.slice(kept.length);
    expect(lost.some((r) => r.kind === 'write')).toBe(true); // the cut took writes away
    const torn = !bytes
      .subarray(0, Math.floor(bytes.length / 2))
      .toString('utf8')
      .endsWith('\n');
    const before = snapshot(a.root, toolOwned);

    const preview = reconcile(['--rollback', a.id, '--plan', '-f', a.desired, '--root', a.root]);
    expect(preview.code).toBe(1);
    const r = reconcile(['--rollback', a.id, '-f', a.desired, '--root', a.root]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain('incomplete');
    if (torn) expect(r.stdout).toContain('torn');
    expect(r.stdout).toContain(`after record ${kept.at(-1)!.seq}`);
    for (const p of writesIn(kept)) expect(r.stdout).toMatch(new RegExp(`< (restore|remove) ${p.replace(/\./g, '\\.')}`));
    expect(r.stdout).toContain('--force');
    expect(snapshot(a.root, toolOwned)).toEqual(before);

    const f = reconcile(['--rollback', a.id, '--force', '-f', a.desired, '--root', a.root]);
    expect(f.code, f.stdout + f.stderr).toBe(0);
    const now = snapshot(a.root, toolOwned);
    const rel = (p: string) => p.slice(1);
    for (const p of writesIn(kept)) expect(now[rel(p)], p).toBe(a.original[rel(p)]);
    for (const p of writesIn(lost)) if (!writesIn(kept).has(p)) expect(now[rel(p)], p).toBe(a.converged[rel(p)]);
  }, 60_000);

  it('no end record: exit 1 without --force, nothing changed; --force puts everything back', () => {
    const a = appliedLab();
    const lines = readFileSync(a.journalFile, 'utf8').split('\n').filter(Boolean);
    expect(JSON.parse(lines.at(-1)!).kind).toBe('end');
    writeFileSync(a.journalFile, lines.slice(0, -1).join('\n') + '\n');
    const before = snapshot(a.root, toolOwned);
    const r = reconcile(['--rollback', a.id, '-f', a.desired, '--root', a.root]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('no end record');
    expect(snapshot(a.root, toolOwned)).toEqual(before);
    const f = reconcile(['--rollback', a.id, '--force', '-f', a.desired, '--root', a.root]);
    expect(f.code, f.stdout + f.stderr).toBe(0);
    expect(snapshot(a.root, toolOwned)).toEqual(a.original);
  }, 60_000);
});

describe('--rollback removes the directories the run made for its lock', () => {
  it('an image without /run: apply makes it for the lock and removes it with the lock; rollback leaves none either', () => {
    const { root, desired } = lab();
    rmSync(path.join(root, 'run'), { recursive: true });
    const original = snapshot(root, toolOwned);
    expect(reconcile(['--apply', '-f', desired, '--root', root]).code).toBe(0);
    // The lock's release removes the directories it had to create (door/lock.ts), so the image keeps no /run.
    expect(existsSync(path.join(root, 'run'))).toBe(false);
    const r = reconcile(['--rollback', '-f', desired, '--root', root]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(existsSync(path.join(root, 'run'))).toBe(false);
    expect(snapshot(root, toolOwned)).toEqual(original);
  }, 60_000);

  it("/run gone before the rollback: the rollback's own lock makes it, and it goes with the rollback", () => {
    const { root, desired } = lab();
    expect(reconcile(['--apply', '-f', desired, '--root', root]).code).toBe(0);
    rmSync(path.join(root, 'run'), { recursive: true });
    const r = reconcile(['--rollback', '-f', desired, '--root', root]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(existsSync(path.join(root, 'run'))).toBe(false);
  }, 60_000);
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

describe('renderRollback shows host text as data', () => {
  it('escapes bidi overrides and ESC in the paths and notes it quotes', async () => {
    const { renderRollback } = await import('../../src/reconcile/rollback.js');
    const text = renderRollback(
      {
        run: '20260101T000000Z-1',
        runDir: '/root/ks/preflight/runs/20260101T000000Z-1',
        steps: [{ summary: 'restore /etc/sysctl.d/\u202eevil.conf', conflict: 'changed \u001b[31m' }],
        notes: ['/etc/\u2066x: kept'],
        alreadyBy: null,
        incomplete: null,
      },
      null,
      { preview: true, force: false },
    );
    expect(text).toContain('restore /etc/sysctl.d/\\u{202E}evil.conf  [changed since: changed \\x1b[31m]');
    expect(text).toContain('note: /etc/\\u{2066}x: kept');
    expect(text).not.toMatch(/[\u001b\u202e\u2066]/);
  });
});
