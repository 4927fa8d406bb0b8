// Configuration entries the real programs cannot read: skipped with a
// warning naming the path when the programs skip them too (a directory, a
// dangling link, a link loop: test/sysctl-netns.test.ts shows the programs
// agree), and an error when the file exists but cannot be read, never "empty".
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { snapshot } from './helpers/snapshot.js';

const BUNDLE = path.resolve('dist/reconcile.mjs');
const roots: string[] = [];
afterEach(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

const DESIRED = `reports_dir: /root/ks/preflight
resources:
  - type: SysctlFile
    file: /etc/sysctl.d/k8s.conf
    settings:
      net.ipv4.ip_forward: 1
`;

function tree() {
  const root = mkdtempSync(path.join(tmpdir(), 'conf-entries-'));
  roots.push(root);
  chmodSync(root, 0o755);
  mkdirSync(path.join(root, 'etc/sysctl.d'), { recursive: true });
  writeFileSync(path.join(root, 'desired.yaml'), DESIRED);
  chmodSync(path.join(root, 'desired.yaml'), 0o644);
  return root;
}

const plan = (root: string, pre: string[] = []) =>
  spawnSync(pre[0] ?? process.execPath, [...pre.slice(1), ...(pre.length ? [process.execPath] : []), BUNDLE, '--plan', '-f', path.join(root, 'desired.yaml'), '--root', root], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });

describe('sysctl.d entries nobody can read', () => {
  it('a directory, a dangling link and a link loop are skipped with a warning naming each; the plan goes on', () => {
    const root = tree();
    mkdirSync(path.join(root, 'etc/sysctl.d/40-dir.conf'));
    symlinkSync('/no/such/file.conf', path.join(root, 'etc/sysctl.d/50-dangling.conf'));
    symlinkSync('60-loop.conf', path.join(root, 'etc/sysctl.d/60-loop.conf'));
    writeFileSync(path.join(root, 'etc/sysctl.d/zz-later.conf'), 'net.ipv4.ip_forward = 0\n');
    const r = plan(root);
    expect(r.status).toBe(2);
    expect(r.stdout).toContain('warning: SysctlFile: /etc/sysctl.d/40-dir.conf is skipped, as systemd-sysctl and sysctl --system skip it: it is a directory');
    expect(r.stdout).toContain('warning: SysctlFile: /etc/sysctl.d/50-dangling.conf is skipped, as systemd-sysctl and sysctl --system skip it: it is a dangling symbolic link');
    expect(r.stdout).toContain('warning: SysctlFile: /etc/sysctl.d/60-loop.conf is skipped, as systemd-sysctl and sysctl --system skip it: it is a symbolic link loop');
    // The readable conflict behind them is still found.
    expect(r.stdout).toContain('/etc/sysctl.d/zz-later.conf:1 sorts after /etc/sysctl.d/k8s.conf');
  });

  it('a file that exists but cannot be read is an error naming it, never an empty file', () => {
    const root = tree();
    writeFileSync(path.join(root, 'etc/sysctl.d/50-secret.conf'), 'net.ipv4.ip_forward = 0\n');
    chmodSync(path.join(root, 'etc/sysctl.d/50-secret.conf'), 0o600);
    const before = snapshot(root);
    // As an unprivileged user, for whom the root-owned 0600 file is unreadable.
    const r = plan(root, ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']);
    expect(r.stderr).toBe('reconcile: cannot read /etc/sysctl.d/50-secret.conf: permission denied (EACCES)\n');
    expect(r.status).toBe(1);
    expect(r.stdout).not.toContain('in sync');
    expect(snapshot(root)).toEqual(before);
  });
});
