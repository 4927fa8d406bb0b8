// The one way to open a file for reading (src/regular-file.ts), against what
// the kernel does: open(2) of a fifo with O_NONBLOCK returns at once (without
// it, it waits for a writer), open(2) of a unix socket fails with ENXIO,
// O_NOFOLLOW fails with ELOOP on a link at the last component, procfs files
// report st_size 0 and are read to their end, /dev/zero never ends.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FileTooLargeError, MAX_READ_BYTES, NotRegularFileError, readRegular, readRegularHead } from '../src/regular-file.js';
import { Host } from '../src/host.js';
import { HostError } from '../src/errors.js';

const dir = mkdtempSync(path.join(tmpdir(), 'regular-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const at = (n: string) => path.join(dir, n);
const run = (cmd: string, ...args: string[]) => expect(spawnSync(cmd, args, { encoding: 'utf8' }).status).toBe(0);

describe('readRegular', () => {
  it('reads a regular file whole, with the fstat it was read under', () => {
    writeFileSync(at('plain'), Buffer.from([0x6b, 0xe9, 0x0d, 0x0a, 0x00]));
    const r = readRegular(at('plain'), '/plain');
    expect(r.bytes).toEqual(readFileSync(at('plain')));
    expect(r.stat.ino).toBe(statSync(at('plain')).ino);
  });

  it('reads a procfs file (st_size 0) to its end', () => {
    expect(statSync('/proc/self/status').size).toBe(0);
    const text = readRegular('/proc/self/status', '/proc/self/status').bytes.toString('utf8');
    expect(text).toMatch(/^Name:/);
    expect(text).toMatch(/\nPid:\t\d+\n/);
  });

  it.each([
    ['a fifo (returns at once: O_NONBLOCK)', (p: string) => run('mkfifo', p), 'fifo'],
    ['a character device (1:5, what /dev/zero is)', (p: string) => run('mknod', p, 'c', '1', '5'), 'character device'],
    [
      'a unix socket (open fails with ENXIO)',
      (p: string) => run('python3', '-c', 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])', p),
      'socket',
    ],
    [
      'a link at the last component (O_NOFOLLOW), even to a regular file',
      (p: string) => {
        writeFileSync(`${p}.target`, 'x');
        symlinkSync(`${p}.target`, p);
      },
      'symbolic link',
    ],
  ] as const)('refuses %s, naming the path and the kind', (label, make, kind) => {
    const p = at(label.replace(/\W+/g, '-'));
    make(p);
    let err: unknown;
    try {
      readRegular(p, '/shown/path');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NotRegularFileError);
    expect(err).toBeInstanceOf(HostError);
    expect((err as NotRegularFileError).kind).toBe(kind);
    expect((err as Error).message).toBe(`cannot read /shown/path: not a regular file: ${kind}`);
  });

  it('a directory keeps the errno name EISDIR (configuration readers skip it as systemd does)', () => {
    mkdirSync(at('adir'));
    expect(() => readRegular(at('adir'), '/adir')).toThrow(
      expect.objectContaining({ message: 'cannot read /adir: is a directory (EISDIR)', code: 'EISDIR', kind: 'directory' }),
    );
  });

  it('follows a link only when asked (the desired-state file on the build machine)', () => {
    writeFileSync(at('real.yaml'), 'a: 1\n');
    symlinkSync(at('real.yaml'), at('link.yaml'));
    expect(readRegular(at('link.yaml'), 'link.yaml', { follow: true }).bytes.toString()).toBe('a: 1\n');
  });

  it('a missing file is the open error itself, for the caller to map (ENOENT)', () => {
    expect(() => readRegular(at('missing'), '/missing')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it(`reads exactly ${MAX_READ_BYTES} bytes and refuses one more, naming the size, before reading any`, () => {
    expect(MAX_READ_BYTES).toBe(16 * 1024 * 1024);
    writeFileSync(at('edge'), '');
    truncateSync(at('edge'), MAX_READ_BYTES);
    expect(readRegular(at('edge'), '/edge').bytes.length).toBe(MAX_READ_BYTES);
    truncateSync(at('edge'), MAX_READ_BYTES + 1);
    expect(() => readRegular(at('edge'), '/edge')).toThrow(FileTooLargeError);
    expect(() => readRegular(at('edge'), '/edge')).toThrow(
      `cannot read /edge: it is larger than 16 MiB (${MAX_READ_BYTES + 1} bytes); refused rather than read`,
    );
  });

  it('a file reporting size 0 that goes on past the limit is cut off at limit + 1 bytes, never read to its end', () => {
    const whole = readFileSync('/proc/self/maps').length;
    expect(whole).toBeGreaterThan(100);
    expect(() => readRegular('/proc/self/maps', '/proc/self/maps', { limit: 100 })).toThrow(
      'cannot read /proc/self/maps: it is larger than 100 bytes; refused rather than read',
    );
  });
});

describe('readRegularHead', () => {
  it('the first bytes of a file, never more; a fifo is refused, not waited on', () => {
    writeFileSync(at('swapfile'), Buffer.concat([Buffer.alloc(4086), Buffer.from('SWAPSPACE2'), Buffer.alloc(100)]));
    expect(readRegularHead(at('swapfile'), '/swapfile', 4096).subarray(4086).toString()).toBe('SWAPSPACE2');
    expect(readRegularHead(at('swapfile'), '/swapfile', 10)).toEqual(Buffer.alloc(10));
    run('mkfifo', at('head-fifo'));
    expect(() => readRegularHead(at('head-fifo'), '/head-fifo', 10)).toThrow(NotRegularFileError);
  });
});

describe('Host reads through it', () => {
  it('readFile of a fifo, a device and a huge file inside a root: a HostError naming the target path', async () => {
    const root = at('root');
    mkdirSync(path.join(root, 'etc/sysctl.d'), { recursive: true });
    mkdirSync(path.join(root, 'dev'));
    run('mkfifo', path.join(root, 'etc/fifo'));
    run('mknod', path.join(root, 'dev/zero'), 'c', '1', '5');
    symlinkSync('/dev/zero', path.join(root, 'etc/sysctl.d/zero.conf'));
    writeFileSync(path.join(root, 'etc/huge'), '');
    truncateSync(path.join(root, 'etc/huge'), MAX_READ_BYTES + 1);
    const host = new Host({ root });
    await expect(host.readFile('/etc/fifo')).rejects.toThrow('cannot read /etc/fifo: not a regular file: fifo');
    await expect(host.readBytes('/etc/sysctl.d/zero.conf')).rejects.toThrow('cannot read /etc/sysctl.d/zero.conf: not a regular file: character device');
    await expect(host.readFile('/etc/huge')).rejects.toThrow('cannot read /etc/huge: it is larger than 16 MiB');
    // The head of a swap file candidate: null for what is not a regular file, as before.
    expect(await host.readHead('/etc/fifo', 10)).toBeNull();
  });
});
