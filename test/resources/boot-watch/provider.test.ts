// apply --watch-next-boot on an image tree (--root): what it installs through
// the write door, that systemd sees the watcher enabled for the next boot
// (systemctl --root is the oracle), that --rollback removes every piece, and
// that without bpftrace nothing is installed and apply says so (exit 1).
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildBundleBeforeAll, fileWriter, runBundle, systemctlRootText } from '../../helpers/bundle-cli.js';
import { removedAfterEach } from '../../helpers/temp-dirs.js';

const WATCH = 'k8s-host-reconcile-boot-watch.service';
const STOP = 'k8s-host-reconcile-boot-watch-stop.service';
const roots = removedAfterEach();
buildBundleBeforeAll();

const reconcile = runBundle;
const systemctlRoot = systemctlRootText;

/** An image with nothing to converge but the watch, with or without bpftrace. */
function image(bpftrace: boolean) {
  const root = mkdtempSync(path.join(tmpdir(), 'boot-watch-'));
  roots.push(root);
  const put = fileWriter(root);
  put('etc/fstab', 'UUID=1 / ext4 defaults 0 1\n');
  for (const d of ['run', 'root', 'etc/systemd/system']) mkdirSync(path.join(root, d), { recursive: true });
  if (bpftrace) put('usr/bin/bpftrace', '#!/bin/sh\n', 0o755);
  const desired = path.join(root, 'desired.yaml');
  writeFileSync(desired, 'reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SwapOff\n');
  return { root, desired };
}

describe('apply --watch-next-boot', () => {
  it('installs the tracer and both units enabled for the next boot, and --rollback removes them all', () => {
    const { root, desired } = image(true);
    const a = reconcile(['apply', '--watch-next-boot', '-f', desired, '--root', root]);
    expect({ code: a.code, err: a.stderr.split('\n').filter((l) => /error/i.test(l)) }).toEqual({ code: 0, err: [] });
    expect(a.stdout).toContain(`at the next boot ${WATCH} attaches bpftrace before systemd-modules-load and systemd-sysctl`);
    expect(systemctlRoot(root, 'is-enabled', WATCH)).toBe('enabled');
    expect(systemctlRoot(root, 'is-enabled', STOP)).toBe('enabled');
    const unit = readFileSync(path.join(root, 'etc/systemd/system', WATCH), 'utf8');
    expect(unit).toContain('\nBefore=systemd-sysctl.service systemd-modules-load.service sysinit.target shutdown.target\n');
    expect(unit).toContain(
      '\nExecStart=/usr/bin/bpftrace -B line /usr/local/lib/k8s-host-reconcile/boot-watch.bt\nStandardOutput=file:/run/k8s-host-reconcile-boot-watch.log\n',
    );
    expect(readFileSync(path.join(root, 'usr/local/lib/k8s-host-reconcile/boot-watch.bt'), 'utf8')).toContain('kfunc:vmlinux:proc_sys_write');

    const again = reconcile(['plan', '-f', desired, '--root', root]);
    expect(again.code).toBe(0);

    const rb = reconcile(['rollback', '-f', desired, '--root', root]);
    expect(rb.code).toBe(0);
    for (const p of [
      `etc/systemd/system/${WATCH}`,
      `etc/systemd/system/${STOP}`,
      `etc/systemd/system/sysinit.target.wants/${WATCH}`,
      `etc/systemd/system/multi-user.target.wants/${STOP}`,
      'usr/local/lib/k8s-host-reconcile/boot-watch.bt',
    ])
      expect({ p, there: existsSync(path.join(root, p)) }).toEqual({ p, there: false });
  });

  it('without bpftrace installs nothing, says so as an operator line, and exits 1', () => {
    const { root, desired } = image(false);
    const a = reconcile(['apply', '--watch-next-boot', '-f', desired, '--root', root]);
    expect(a.code).toBe(1);
    expect(a.stdout).toContain('the next boot cannot be watched: no /usr/bin/bpftrace');
    expect(a.stdout).toContain('install the bpftrace package');
    expect(existsSync(path.join(root, 'etc/systemd/system', WATCH))).toBe(false);
    expect(existsSync(path.join(root, 'usr/local/lib/k8s-host-reconcile/boot-watch.bt'))).toBe(false);
  });

  it('goes with apply only', () => {
    const { root, desired } = image(true);
    const p = reconcile(['plan', '--watch-next-boot', '-f', desired, '--root', root]);
    expect(p.code).toBe(1);
    expect(p.stderr).toContain('--watch-next-boot');
  });
});
