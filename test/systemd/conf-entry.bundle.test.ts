// Configuration entries the real programs cannot read: skipped with a
// warning naming the path when the programs skip them too (a directory, a
// dangling link, a link loop: test/sysctl/order.namespace.test.ts shows the programs
// agree), and an error when the file exists but cannot be read, never "empty".
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { snapshot } from '../helpers/snapshot.js';

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
  spawnSync(
    pre[0] ?? process.execPath,
    [...pre.slice(1), ...(pre.length ? [process.execPath] : []), BUNDLE, '--plan', '-f', path.join(root, 'desired.yaml'), '--root', root],
    { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
  );

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
    expect(r.stdout).toContain(
      'warning: SysctlFile: /etc/sysctl.d/50-dangling.conf is skipped, as systemd-sysctl and sysctl --system skip it: it is a dangling symbolic link',
    );
    expect(r.stdout).toContain(
      'warning: SysctlFile: /etc/sysctl.d/60-loop.conf is skipped, as systemd-sysctl and sysctl --system skip it: it is a symbolic link loop',
    );
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

describe('modprobe.d, modules-load.d and unit links nobody can read', () => {
  it('are skipped with a warning (or, for a .wants link loop, ignored as systemd does) and every resource still plans', () => {
    const root = tree();
    writeFileSync(
      path.join(root, 'desired.yaml'),
      `reports_dir: /root/ks/preflight
resources:
  - type: ModulesLoad
    file: /etc/modules-load.d/k8s.conf
    modules: [overlay, br_netfilter]
  - type: PortFree
    ports: [10250]
`,
    );
    mkdirSync(path.join(root, 'etc/modprobe.d/broken.conf'), { recursive: true });
    mkdirSync(path.join(root, 'etc/modules-load.d'), { recursive: true });
    symlinkSync('loop.conf', path.join(root, 'etc/modules-load.d/loop.conf'));
    writeFileSync(path.join(root, 'etc/modprobe.d/bridge.conf'), 'blacklist br_netfilter\n');
    mkdirSync(path.join(root, 'etc/systemd/system/multi-user.target.wants'), { recursive: true });
    symlinkSync('agent.service', path.join(root, 'etc/systemd/system/multi-user.target.wants/agent.service'));
    const r = plan(root);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(2);
    expect(r.stdout).toContain('warning: ModulesLoad: /etc/modprobe.d/broken.conf is skipped, as modprobe skips it: it is a directory');
    expect(r.stdout).toContain('warning: ModulesLoad: /etc/modules-load.d/loop.conf is skipped, as systemd-modules-load skips it: it is a symbolic link loop');
    expect(r.stdout).toMatch(/blacklist br_netfilter/);
  });
});

describe('an image whose /etc is a link', () => {
  it('resolves a conflicting line in place under the real /etc, and a second plan is in sync', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'etc-link-'));
    roots.push(root);
    mkdirSync(path.join(root, 'etc.real/sysctl.d'), { recursive: true });
    symlinkSync('etc.real', path.join(root, 'etc'));
    writeFileSync(path.join(root, 'etc.real/sysctl.d/zz-hardening.conf'), 'net.ipv4.ip_forward = 0\n');
    // Applied last by sysctl --system: only an in-place edit under the real /etc resolves it.
    writeFileSync(path.join(root, 'etc.real/sysctl.conf'), 'net.ipv4.ip_forward = 0\n');
    writeFileSync(path.join(root, 'desired.yaml'), DESIRED);
    const apply = spawnSync(process.execPath, [BUNDLE, '--apply', '-f', path.join(root, 'desired.yaml'), '--root', root], { encoding: 'utf8' });
    expect({ code: apply.status, out: apply.stdout.split('\n').filter((l) => /outside|error/.test(l)) }).toEqual({ code: 0, out: [] });
    expect(readFileSync(path.join(root, 'etc.real/sysctl.d/zz-hardening.conf'), 'utf8')).toContain('# net.ipv4.ip_forward = 0');
    expect(readFileSync(path.join(root, 'etc.real/sysctl.conf'), 'utf8')).toContain('# net.ipv4.ip_forward = 0');
    expect(lstatSync(path.join(root, 'etc')).isSymbolicLink()).toBe(true);
    expect(plan(root).status).toBe(0);
  });
});
