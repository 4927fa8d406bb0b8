import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, symlinkSync, statSync, chmodSync, lstatSync, readlinkSync, existsSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../src/host.js';
import { HostError } from '../src/errors.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'host-test-'));
  mkdirSync(path.join(root, 'etc/sysctl.d'), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('Host over a root tree', () => {
  it('is offline for any root other than /', () => {
    expect(new Host({ root }).live).toBe(false);
    expect(new Host({ root: '/' }).live).toBe(true);
  });

  it('resolves absolute symlinks inside the root, never outside it', async () => {
    writeFileSync(path.join(root, 'etc/sysctl.conf'), 'inside\n');
    symlinkSync('/etc/sysctl.conf', path.join(root, 'etc/sysctl.d/99-sysctl.conf'));
    symlinkSync('../../../../../../etc/hostname', path.join(root, 'etc/escape'));
    const host = new Host({ root });
    expect(await host.realTarget('/etc/sysctl.d/99-sysctl.conf')).toBe('/etc/sysctl.conf');
    expect(await host.readFile('/etc/sysctl.d/99-sysctl.conf')).toBe('inside\n');
    // ".." is clamped at the root: the link lands on <root>/etc/hostname, which does not exist.
    expect(await host.realTarget('/etc/escape')).toBe('/etc/hostname');
    expect(await host.readFile('/etc/escape')).toBeNull();
  });

  it('writes through a symlink to its target, keeps the link, and backs up the original', async () => {
    writeFileSync(path.join(root, 'etc/sysctl.conf'), 'old\n');
    chmodSync(path.join(root, 'etc/sysctl.conf'), 0o640);
    symlinkSync('../sysctl.conf', path.join(root, 'etc/sysctl.d/99-sysctl.conf'));
    const host = new Host({ root, backupDir: '/var/backups/run1' });
    await host.writeFile('/etc/sysctl.d/99-sysctl.conf', 'new\n');
    expect(lstatSync(path.join(root, 'etc/sysctl.d/99-sysctl.conf')).isSymbolicLink()).toBe(true);
    expect(readFileSync(path.join(root, 'etc/sysctl.conf'), 'utf8')).toBe('new\n');
    expect(statSync(path.join(root, 'etc/sysctl.conf')).mode & 0o7777).toBe(0o640);
    expect(readFileSync(path.join(root, 'var/backups/run1/etc/sysctl.conf'), 'utf8')).toBe('old\n');
    expect(host.backups()).toEqual(['/etc/sysctl.conf']);
    // No temporary files are left next to the target.
    expect(readdirSync(path.join(root, 'etc')).filter((n) => n.includes('reconcile'))).toEqual([]);
  });

  it('keeps the first backup when a file changes twice in one run', async () => {
    writeFileSync(path.join(root, 'etc/fstab'), 'v1\n');
    const host = new Host({ root, backupDir: '/b' });
    await host.writeFile('/etc/fstab', 'v2\n');
    await host.writeFile('/etc/fstab', 'v3\n');
    expect(readFileSync(path.join(root, 'b/etc/fstab'), 'utf8')).toBe('v1\n');
  });

  it('refuses to change an existing file without a backup directory', async () => {
    writeFileSync(path.join(root, 'etc/fstab'), 'v1\n');
    const host = new Host({ root });
    await expect(host.writeFile('/etc/fstab', 'v2\n')).rejects.toThrow(/no backup directory/);
    expect(readFileSync(path.join(root, 'etc/fstab'), 'utf8')).toBe('v1\n');
  });

  it('creates new files 0644 and their directories', async () => {
    const host = new Host({ root, backupDir: '/b' });
    await host.writeFile('/etc/modules-load.d/k8s.conf', 'overlay\n');
    expect(statSync(path.join(root, 'etc/modules-load.d/k8s.conf')).mode & 0o777).toBe(0o644);
    expect(existsSync(path.join(root, 'b'))).toBe(false);
  });

  it('symlinks and removes with backups (unit masks)', async () => {
    mkdirSync(path.join(root, 'etc/systemd/system'), { recursive: true });
    writeFileSync(path.join(root, 'etc/systemd/system/swap.target'), '[Unit]\n');
    const host = new Host({ root, backupDir: '/b' });
    await host.symlink('/dev/null', '/etc/systemd/system/swap.target');
    expect(readlinkSync(path.join(root, 'etc/systemd/system/swap.target'))).toBe('/dev/null');
    expect(readFileSync(path.join(root, 'b/etc/systemd/system/swap.target'), 'utf8')).toBe('[Unit]\n');
    expect(await host.readLink('/etc/systemd/system/swap.target')).toBe('/dev/null');
    await host.remove('/etc/systemd/system/swap.target');
    expect(await host.exists('/etc/systemd/system/swap.target')).toBe(false);
  });

  it('never reads /proc or /sys offline, and runs no commands that act on the build machine', async () => {
    let ran = false;
    const host = new Host({ root, runner: async () => ((ran = true), { command: '', exitCode: 0, stdout: '', stderr: '' }) });
    await expect(host.readKernel('/proc/meminfo')).rejects.toBeInstanceOf(HostError);
    await expect(host.run('swapoff', ['-a'])).rejects.toThrow(/refusing to run swapoff offline/);
    expect(ran).toBe(false);
    await host.run('systemctl', [`--root=${root}`, 'is-enabled', 'x'], { offlineSafe: true });
    expect(ran).toBe(true);
  });

  it('lists directories sorted and returns null for missing ones', async () => {
    writeFileSync(path.join(root, 'etc/sysctl.d/b.conf'), '');
    writeFileSync(path.join(root, 'etc/sysctl.d/a.conf'), '');
    const host = new Host({ root });
    expect((await host.readDir('/etc/sysctl.d'))!.map((d) => d.name)).toEqual(['a.conf', 'b.conf']);
    expect(await host.readDir('/run/sysctl.d')).toBeNull();
  });
});
