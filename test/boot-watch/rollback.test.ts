// apply --watch-next-boot, then rollback: nothing of the watch may be left,
// whether the watched boot happened in between or not. The tree is walked
// before apply and after rollback (every path, its type, mode and content)
// and the two walks must be equal; only the reports directory and its parent (the runs'
// journals live there) and /run (a tmpfs, empty at every boot) are left out.
// The watched boot's own writes are made by the installed units' own command
// lines (the watcher's ExecStopPost=, the stopper's copy), run by /bin/sh in a
// mount namespace where the image's /etc/systemd/system, /var and /run are
// bound over the real ones: what the units do at boot, not a fixture of it.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildBundleBeforeAll, fileWriter, runBundle } from '../helpers/bundle-cli.js';
import { removedAfterEach } from '../helpers/temp-dirs.js';

const roots = removedAfterEach();
buildBundleBeforeAll();

const reconcile = runBundle;

function image() {
  const root = mkdtempSync(path.join(tmpdir(), 'boot-watch-rb-'));
  roots.push(root);
  const put = fileWriter(root);
  put('etc/fstab', 'UUID=1 / ext4 defaults 0 1\n');
  for (const d of ['run', 'root', 'var/lib', 'etc/systemd/system']) mkdirSync(path.join(root, d), { recursive: true });
  put('usr/bin/bpftrace', '#!/bin/sh\n', 0o755);
  const desired = path.join(root, 'desired.yaml');
  writeFileSync(desired, 'reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SwapOff\n');
  return { root, desired };
}

// root/ks is made for the reports directory, which keeps the runs' journals (and so what rollback reads).
const SKIP = new Set(['root/ks', 'run']);

/** Every entry under root: relative path -> type, mode and content (a link's text, a file's sha256). */
function walk(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string) => {
    for (const name of readdirSync(path.join(root, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (SKIP.has(r)) continue;
      const abs = path.join(root, r);
      const st = lstatSync(abs);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[r] = `link ${readlinkSync(abs)}`;
      else if (st.isDirectory()) {
        out[r] = `dir ${mode}`;
        visit(r);
      } else out[r] = `file ${mode} ${createHash('sha256').update(readFileSync(abs)).digest('hex')}`;
    }
  };
  visit('');
  return out;
}

/** The value of each `KEY=/bin/sh -c '...'` line of an installed unit file, as written. */
function shellLines(root: string, unit: string, key: string): string[] {
  const text = readFileSync(path.join(root, 'etc/systemd/system', unit), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${key}=/bin/sh -c `))
    .map((l) => l.slice(`${key}=`.length));
}

/** Runs the watched boot's file writes with the units' own commands, the image's directories bound over the real ones. */
function bootWrites(root: string) {
  // What bpftrace's stdout would hold: the record the stopper copies.
  writeFileSync(path.join(root, 'run/k8s-host-reconcile-boot-watch.log'), 'ready\n');
  // The stopper's `sleep` and `systemctl stop` change no file; its copy does, and the watcher's ExecStopPost= after it.
  const cmds = [
    ...shellLines(root, 'k8s-host-reconcile-boot-watch-stop.service', 'ExecStart'),
    ...shellLines(root, 'k8s-host-reconcile-boot-watch.service', 'ExecStopPost'),
  ];
  expect(cmds.length).toBe(2);
  const binds = ['etc/systemd/system', 'var', 'run'].map((d) => `mount --bind ${root}/${d} /${d}`).join(' && ');
  const script = `${binds} && ${cmds.join(' && ')}`;
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', '/bin/sh', '-c', script], { encoding: 'utf8' });
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
}

describe('rollback of apply --watch-next-boot', () => {
  it('before the watched boot: leaves the tree as it was before apply', () => {
    const { root, desired } = image();
    const before = walk(root);
    expect(reconcile(['apply', '--watch-next-boot', '-f', desired, '--root', root]).code).toBe(0);
    expect(walk(root)).not.toEqual(before);
    const rb = reconcile(['rollback', '-f', desired, '--root', root]);
    expect({ code: rb.code, err: rb.stderr }).toEqual({ code: 0, err: '' });
    expect(walk(root)).toEqual(before);
  });

  it('after the watched boot: the stamp, the kept record and their directory go too', () => {
    const { root, desired } = image();
    const before = walk(root);
    expect(reconcile(['apply', '--watch-next-boot', '-f', desired, '--root', root]).code).toBe(0);
    bootWrites(root);
    const booted = walk(root);
    expect(booted['var/lib/k8s-host-reconcile/boot-watch.done']).toMatch(/^file /);
    expect(booted['var/lib/k8s-host-reconcile/boot-watch.log']).toMatch(/^file /);
    expect(booted['etc/systemd/system/sysinit.target.wants/k8s-host-reconcile-boot-watch.service']).toBeUndefined();
    const rb = reconcile(['rollback', '-f', desired, '--root', root]);
    expect({ code: rb.code, err: rb.stderr }).toEqual({ code: 0, err: '' });
    expect(walk(root)).toEqual(before);
  });

  it('after a second watched boot: the earlier stamp and kept record are put back as they were', () => {
    const { root, desired } = image();
    mkdirSync(path.join(root, 'var/lib/k8s-host-reconcile'), { mode: 0o755 });
    writeFileSync(path.join(root, 'var/lib/k8s-host-reconcile/boot-watch.done'), '');
    writeFileSync(path.join(root, 'var/lib/k8s-host-reconcile/boot-watch.log'), 'ready\nthe earlier boot\n');
    const before = walk(root);
    expect(reconcile(['apply', '--watch-next-boot', '-f', desired, '--root', root]).code).toBe(0);
    bootWrites(root);
    expect(walk(root)['var/lib/k8s-host-reconcile/boot-watch.log']).not.toBe(before['var/lib/k8s-host-reconcile/boot-watch.log']);
    const rb = reconcile(['rollback', '-f', desired, '--root', root]);
    expect({ code: rb.code, err: rb.stderr }).toEqual({ code: 0, err: '' });
    expect(walk(root)).toEqual(before);
  });
});
