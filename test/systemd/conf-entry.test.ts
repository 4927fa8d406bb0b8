// src/systemd/conf-entry.ts, read through a real Host over a temp tree: what
// systemd-sysctl, systemd-modules-load and kmod do with a listed entry they
// cannot read. A directory, a dangling link, a link loop and a link through
// a regular file are skipped (test/sysctl/order.namespace.test.ts shows systemd-sysctl
// and procps skipping the first three); anything else that stops the read
// is an error, never an empty file.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { HostError } from '../../src/errors.js';
import { notRegularWarning, readConfEntry } from '../../src/systemd/conf-entry.js';

const root = mkdtempSync(path.join(tmpdir(), 'conf-entry-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const D = '/etc/sysctl.d';
mkdirSync(path.join(root, D, 'dir.conf'), { recursive: true });
mkdirSync(path.join(root, 'usr/lib/sysctl.d'), { recursive: true });
writeFileSync(path.join(root, D, 'plain.conf'), 'net.ipv4.ip_forward = 1\n');
writeFileSync(path.join(root, 'usr/lib/sysctl.d/vendor.conf'), 'vm.swappiness = 1\n');
writeFileSync(path.join(root, D, 'regular'), 'x\n');
symlinkSync('/usr/lib/sysctl.d/vendor.conf', path.join(root, D, 'linked.conf'));
symlinkSync('/nonexistent.conf', path.join(root, D, 'dangling.conf'));
symlinkSync('loop.conf', path.join(root, D, 'loop.conf'));
symlinkSync('regular/inner.conf', path.join(root, D, 'notdir.conf'));
const host = new Host({ root });

describe('readConfEntry', () => {
  it('a regular file gives its bytes and its own path', async () => {
    expect(await readConfEntry(host, `${D}/plain.conf`)).toEqual({ content: 'net.ipv4.ip_forward = 1\n', real: `${D}/plain.conf` });
  });

  it('a link gives the bytes of its target, and where they live', async () => {
    expect(await readConfEntry(host, `${D}/linked.conf`)).toEqual({ content: 'vm.swappiness = 1\n', real: '/usr/lib/sysctl.d/vendor.conf' });
  });

  it('skips a directory, whether the listing said so or the read finds it', async () => {
    expect(await readConfEntry(host, `${D}/dir.conf`, true)).toEqual({ skipped: 'it is a directory' });
    expect(await readConfEntry(host, `${D}/dir.conf`)).toEqual({ skipped: 'it is a directory' });
  });

  it('a directory flag wins even over a readable file (the listing saw a directory)', async () => {
    expect(await readConfEntry(host, `${D}/plain.conf`, true)).toEqual({ skipped: 'it is a directory' });
  });

  it('skips a dangling link, a link loop and a link through a regular file, each named', async () => {
    expect(await readConfEntry(host, `${D}/dangling.conf`)).toEqual({ skipped: 'it is a dangling symbolic link' });
    expect(await readConfEntry(host, `${D}/loop.conf`)).toEqual({ skipped: 'it is a symbolic link loop' });
    expect(await readConfEntry(host, `${D}/notdir.conf`)).toEqual({ skipped: 'a link on its way is not a directory' });
  });

  it('an entry that exists but is no regular file is never an empty file: Host refuses it naming it, the listing skips it as unknown', async () => {
    // A unix socket: open(2) fails with ENXIO, as root too. The read is a HostError naming the path and
    // the kind; a configuration directory's reader skips the entry, saying what it is (no content is made up).
    const sock = path.join(root, D, 'socket.conf');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      const r = host.readBytes(`${D}/socket.conf`);
      await expect(r).rejects.toBeInstanceOf(HostError);
      await expect(host.readBytes(`${D}/socket.conf`)).rejects.toThrow(`${D}/socket.conf: not a regular file: socket`);
      expect(await readConfEntry(host, `${D}/socket.conf`)).toEqual({ skipped: 'it is a socket, not a regular file', notRegular: 'socket' });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('the warning for such an entry names it and its kind, says what it sets is unknown, and that a fifo holds the program up', () => {
    // systemd-sysctl and kmod open a listed fifo and wait for a writer: the boot stops there, which the operator must hear.
    expect(notRegularWarning('/etc/sysctl.d/50-f.conf', 'fifo', 'systemd-sysctl')).toBe(
      '/etc/sysctl.d/50-f.conf is a fifo, not a regular file: not read, and what it sets is unknown (systemd-sysctl opens it at boot and waits there for a writer)',
    );
    expect(notRegularWarning('/etc/modules-load.d/s.conf', 'socket', 'systemd-modules-load')).toBe(
      '/etc/modules-load.d/s.conf is a socket, not a regular file: not read, and what it sets is unknown (systemd-modules-load opens it at boot)',
    );
  });
});
