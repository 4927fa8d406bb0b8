// The write door on fixture roots: every rule of issue "one door for every write".
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { WriteDoor } from '../../src/door/door.js';
import { parseJournal } from '../../src/door/journal.js';
import { bufferOf, bytesOf } from '../../src/bytes.js';
import { HostError } from '../../src/errors.js';

let root: string;
let outside: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'door-'));
  outside = mkdtempSync(path.join(tmpdir(), 'door-outside-'));
  mkdirSync(path.join(root, 'etc/sysctl.d'), { recursive: true });
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const RUN = '/var/lib/rt/runs/r1';
const open = (host = new Host({ root })) => WriteDoor.open(host, { runDir: RUN, runId: 'r1', mode: 'apply', tool: 'test' });
const journal = () => parseJournal(readFileSync(path.join(root, RUN, 'journal'), 'utf8')).records;
const abs = (p: string) => path.join(root, p);

describe('write door', () => {
  it('writes through a symlink to its target, keeps the link, owner and mode, and backs up the original with both', async () => {
    writeFileSync(abs('etc/sysctl.conf'), 'old\n');
    chmodSync(abs('etc/sysctl.conf'), 0o640);
    chownSync(abs('etc/sysctl.conf'), 1234, 4321);
    symlinkSync('../sysctl.conf', abs('etc/sysctl.d/99-sysctl.conf'));
    const door = await open();
    expect(await door.writeFile({ path: '/etc/sysctl.d/99-sysctl.conf', expect: 'old\n', content: 'new\n' })).toBe(true);
    expect(lstatSync(abs('etc/sysctl.d/99-sysctl.conf')).isSymbolicLink()).toBe(true);
    const st = statSync(abs('etc/sysctl.conf'));
    expect([readFileSync(abs('etc/sysctl.conf'), 'utf8'), st.mode & 0o7777, st.uid, st.gid]).toEqual(['new\n', 0o640, 1234, 4321]);
    const bk = statSync(abs(`${RUN}/backup/etc/sysctl.conf`));
    expect([readFileSync(abs(`${RUN}/backup/etc/sysctl.conf`), 'utf8'), bk.mode & 0o7777, bk.uid, bk.gid]).toEqual(['old\n', 0o640, 1234, 4321]);
    expect(door.backups()).toEqual(['/etc/sysctl.conf']);
    expect(readdirSync(abs('etc')).filter((n) => n.includes('reconcile'))).toEqual([]);
  });

  it('journals each action before it happens, then its outcome', async () => {
    writeFileSync(abs('etc/fstab'), 'v1\n');
    const door = await open();
    await door.writeFile({ path: '/etc/fstab', expect: 'v1\n', content: 'v2\n' });
    await door.end('ok');
    const kinds = journal().map((r) => (r.kind === 'done' ? `done:${r.of}` : r.kind));
    expect(kinds).toEqual(['begin', 'write', 'done:2', 'end']);
    const w = journal()[1]!;
    expect(w).toMatchObject({ kind: 'write', path: '/etc/fstab', prior: { entry: 'file', backup: 'backup/etc/fstab' } });
  });

  it('keeps the first backup when a file changes twice in one run', async () => {
    writeFileSync(abs('etc/fstab'), 'v1\n');
    const door = await open();
    await door.writeFile({ path: '/etc/fstab', content: 'v2\n' });
    await door.writeFile({ path: '/etc/fstab', content: 'v3\n' });
    expect(readFileSync(abs(`${RUN}/backup/etc/fstab`), 'utf8')).toBe('v1\n');
  });

  it('refuses a file that changed since it was observed and leaves it alone', async () => {
    writeFileSync(abs('etc/fstab'), 'changed by someone\n');
    const door = await open();
    await expect(door.writeFile({ path: '/etc/fstab', expect: 'v1\n', content: 'v2\n' })).rejects.toThrow(/\/etc\/fstab changed since the plan was made/);
    expect(readFileSync(abs('etc/fstab'), 'utf8')).toBe('changed by someone\n');
    expect(journal().filter((r) => r.kind === 'write')).toEqual([]);
  });

  it('creates new files root:root 0644 and missing directories 0755, journaled; existing directory modes never change', async () => {
    chmodSync(abs('etc'), 0o750);
    const door = await open();
    await door.writeFile({ path: '/etc/modules-load.d/k8s.conf', expect: null, content: 'overlay\n' });
    const st = statSync(abs('etc/modules-load.d/k8s.conf'));
    expect([st.mode & 0o7777, st.uid, st.gid]).toEqual([0o644, 0, 0]);
    expect(statSync(abs('etc/modules-load.d')).mode & 0o7777).toBe(0o755);
    expect(statSync(abs('etc')).mode & 0o7777).toBe(0o750);
    expect(journal().find((r) => r.kind === 'mkdir')).toMatchObject({ path: '/etc/modules-load.d', mode: 0o755 });
    expect(existsSync(abs(`${RUN}/backup`))).toBe(false); // nothing existed, nothing backed up
  });

  it("backup directories copy the originals' owner and mode, so cp -a backup/. / changes no directory", async () => {
    chmodSync(abs('etc'), 0o751);
    mkdirSync(abs('etc/odd'), { mode: 0o710 });
    chownSync(abs('etc/odd'), 77, 88);
    writeFileSync(abs('etc/odd/f.conf'), 'x\n');
    const door = await open();
    await door.writeFile({ path: '/etc/odd/f.conf', content: 'y\n' });
    const mode = (p: string) => statSync(abs(p)).mode & 0o7777;
    expect(mode(`${RUN}/backup`)).toBe(statSync(root).mode & 0o7777);
    expect(mode(`${RUN}/backup/etc`)).toBe(0o751);
    expect(mode(`${RUN}/backup/etc/odd`)).toBe(0o710);
    expect([statSync(abs(`${RUN}/backup/etc/odd`)).uid, statSync(abs(`${RUN}/backup/etc/odd`)).gid]).toEqual([77, 88]);
    expect(mode(RUN)).toBe(0o700);
  });

  it('keeps every byte: Latin-1, CRLF, NUL and no final newline', async () => {
    const bytes = Buffer.from([0x4c, 0x41, 0x42, 0x45, 0x4c, 0x3d, 0xe9, 0xf4, 0x0d, 0x0a, 0x23, 0x00, 0x0a, 0x78]);
    writeFileSync(abs('etc/fstab'), bytes);
    const host = new Host({ root });
    const seen = await host.readBytes('/etc/fstab');
    expect(seen).toBe(bytesOf(bytes));
    const door = await open(host);
    await door.writeFile({ path: '/etc/fstab', expect: seen, content: '#' + seen! });
    expect(readFileSync(abs('etc/fstab'))).toEqual(Buffer.concat([Buffer.from('#'), bytes]));
  });

  it('refuses text that was never bytes rather than mangle it', () => {
    expect(() => bufferOf('caf\u00e9')).not.toThrow();
    expect(() => bufferOf('\u2014')).toThrow(/U\+2014/);
  });

  it('keeps every write inside the root when the reports directory and a directory on its way link outside', async () => {
    mkdirSync(abs('root'), { recursive: true });
    symlinkSync(outside, abs('root/ks')); // absolute: means <root><outside> inside the image
    mkdirSync(abs('var/lib'), { recursive: true });
    symlinkSync('../../../../../../../..' + outside, abs('var/lib/rt')); // climbs above the root
    const door = await open();
    await door.writeFile({ path: '/root/ks/preflight/ports.json', content: '{}\n', report: true });
    writeFileSync(abs('etc/fstab'), 'v1\n');
    await door.writeFile({ path: '/etc/fstab', content: 'v2\n' });
    expect(readdirSync(outside)).toEqual([]);
    expect(readFileSync(path.join(root, outside, 'preflight/ports.json'), 'utf8')).toBe('{}\n');
    expect(readFileSync(path.join(root, outside, 'runs/r1/backup/etc/fstab'), 'utf8')).toBe('v1\n');
  });

  it('symlink and remove journal what was there; a swap file removed without backup says so', async () => {
    mkdirSync(abs('etc/systemd/system'), { recursive: true });
    writeFileSync(abs('etc/systemd/system/swap.target'), '[Unit]\n');
    writeFileSync(abs('swapfile'), Buffer.alloc(64));
    const door = await open();
    await door.symlink('/etc/systemd/system/swap.target', '/dev/null');
    expect(readlinkSync(abs('etc/systemd/system/swap.target'))).toBe('/dev/null');
    expect(await door.symlink('/etc/systemd/system/swap.target', '/dev/null')).toBe(false);
    await door.remove('/swapfile', { backup: false });
    expect(existsSync(abs('swapfile'))).toBe(false);
    const recs = journal();
    expect(recs.find((r) => r.kind === 'link')).toMatchObject({ prior: { entry: 'file', backup: 'backup/etc/systemd/system/swap.target' } });
    expect(recs.find((r) => r.kind === 'remove')).toMatchObject({ path: '/swapfile', prior: { entry: 'file', backup: null } });
  });

  it('an unwritable place is one line naming the path and the cause', async () => {
    writeFileSync(abs('etc/modules-load.d'), 'a file where a directory should be\n');
    const door = await open();
    const err = await door.writeFile({ path: '/etc/modules-load.d/k8s.conf', content: 'x\n' }).catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err.message).toBe('cannot stat /etc/modules-load.d/k8s.conf: a component of the path is not a directory (ENOTDIR)');
  });
});
