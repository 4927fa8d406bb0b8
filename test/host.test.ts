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
