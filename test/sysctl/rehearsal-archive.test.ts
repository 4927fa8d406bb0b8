// The rehearsal's archive (src/sysctl/rehearsal-archive.ts) read back by the
// real programs the script inside the namespaces hands it to: GNU tar
// unpacks it (names and link targets over 100 bytes, blanks, UTF-8, sizes
// on and off a block boundary), and findmnt reads its fstab fields as
// libmount does (mount -a -T reads the same table).
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fstabField, rehearsalArchive, tarArchive } from '../../src/sysctl/rehearsal-archive.js';
import type { RehearsalLayout } from '../../src/sysctl/rehearsal.js';

const work = mkdtempSync(path.join(os.tmpdir(), 'rehearsal-archive-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

/** Unpacks an archive with GNU tar, as the script does, into a directory of its own. */
function unpack(archive: Buffer): string {
  const dir = path.join(work, `x${n++}`);
  execFileSync('mkdir', [dir]);
  execFileSync('tar', ['-x', '-f', '-', '-C', dir, '--no-same-owner'], { input: archive });
  return dir;
}

/** Every path under dir with what it is: a directory, a link's target, or a file's bytes (hex). */
function listing(dir: string, at = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(path.join(dir, at)).sort()) {
    const rel = at ? `${at}/${name}` : name;
    const st = lstatSync(path.join(dir, rel));
    if (st.isDirectory()) {
      out[rel] = `dir ${(st.mode & 0o777).toString(8)}`;
      Object.assign(out, listing(dir, rel));
    } else if (st.isSymbolicLink()) out[rel] = `link ${readlinkSync(path.join(dir, rel))}`;
    else out[rel] = `file ${(st.mode & 0o777).toString(8)} ${readFileSync(path.join(dir, rel)).toString('hex')}`;
  }
  return out;
}

describe('tarArchive, unpacked by GNU tar', () => {
  it('names, link targets and contents come out byte for byte', () => {
    const long = 'x'.repeat(150) + '.conf';
    const deep = `t0/s1/${'d'.repeat(93)}`; // 99 bytes plus the directory's slash: exactly the name field
    const target = `/usr/lib/sysctl.d/${'y'.repeat(120)}.conf`;
    const block = Buffer.alloc(512, 'a');
    const members = [
      { name: 't0', dir: true as const },
      { name: 't0/s1', dir: true as const },
      { name: deep, dir: true as const },
      { name: `t0/s1/${long}`, content: Buffer.from('net.ipv4.ip_forward = 1\n') },
      { name: 't0/s1/50 café\tx.conf', content: Buffer.from([0xff, 0x00, 0x0a, 0xe9]) },
      { name: 't0/s1/empty.conf', content: Buffer.alloc(0) },
      { name: 't0/s1/block.conf', content: block },
      { name: 't0/s1/mask.conf', link: '/dev/null' },
      { name: 't0/s1/long-link.conf', link: target },
    ];
    const got = listing(unpack(tarArchive(members)));
    const hex = (s: string | Buffer) => Buffer.from(s).toString('hex');
    expect(got).toEqual({
      t0: 'dir 755',
      't0/s1': 'dir 755',
      [deep]: 'dir 755',
      [`t0/s1/${long}`]: `file 644 ${hex('net.ipv4.ip_forward = 1\n')}`,
      't0/s1/50 café\tx.conf': 'file 644 ff000ae9',
      't0/s1/empty.conf': 'file 644 ',
      't0/s1/block.conf': `file 644 ${hex(block)}`,
      't0/s1/mask.conf': 'link /dev/null',
      't0/s1/long-link.conf': `link ${target}`,
    });
  });

  it('GNU tar lists exactly the members given, in order', () => {
    const names = ['keys', 't0/', 't0/s0', `t0/${'n'.repeat(200)}`];
    const archive = tarArchive([
      { name: 'keys', content: Buffer.from('k\n') },
      { name: 't0', dir: true },
      { name: 't0/s0', content: Buffer.alloc(0) },
      { name: `t0/${'n'.repeat(200)}`, content: Buffer.from('z') },
    ]);
    expect(archive.length % 512).toBe(0);
    expect(execFileSync('tar', ['-t', '-f', '-'], { input: archive, encoding: 'utf8' }).split('\n').slice(0, -1)).toEqual(names);
  });
});

describe('fstabField, read back by findmnt (libmount)', () => {
  it('a blank, a tab, a backslash, a # and UTF-8 stay one field each, as written', () => {
    const paths = ['/etc/sysctl.d', '/srv/a b/sysctl.d', '/x\ty\\z', '/#not-a-comment', '/é/ü', 'lowerdir=/e t,upperdir=/tmp/o0/u'];
    const file = path.join(work, 'fstab');
    writeFileSync(file, paths.map((p, i) => `src${i} ${fstabField(p)} none ${fstabField(p)} 0 0\n`).join(''));
    const read = JSON.parse(execFileSync('findmnt', ['-F', file, '--json', '-o', 'SOURCE,TARGET,OPTIONS'], { encoding: 'utf8' })) as {
      filesystems: Array<{ source: string; target: string; options: string }>;
    };
    expect(read.filesystems.map((f) => [f.source, f.target, f.options])).toEqual(paths.map((p, i) => [`src${i}`, p, p]));
  });
});

describe('rehearsalArchive', () => {
  const b64 = (s: string) => Buffer.from(s, 'latin1').toString('base64');
  const lay: RehearsalLayout = {
    sources: [
      { path: '/etc/sysctl.d', kind: 'dir' },
      { path: '/run/sysctl.d', kind: 'dir', create: { ancestor: '/run' } },
      { path: '/etc/sysctl.conf', kind: 'file' },
    ],
    trials: [
      {
        sources: [{ entries: [{ name: 'k8s.conf', content: b64('net.ipv4.ip_forward = 1\n') }] }, { entries: [] }, { content: b64('\n\n') }],
        start: [['net.ipv4.ip_forward', '0']],
        seed: [['net.ipv4.ip_forward', '1']],
      },
      {
        sources: [{ entries: [{ name: '99-sysctl.conf', link: '/etc/sysctl.conf' }] }, { entries: [] }, { content: '' }],
        start: [],
        seed: [['net.ipv4.ip_local_port_range', '32768 60999']],
      },
    ],
  };
  const keys = ['net.ipv4.ip_forward', 'net.ipv4.ip_local_port_range'];

  it('lays every trial out as the script reads it: copies, values, and the binds over the real paths', () => {
    const packed = rehearsalArchive(lay, keys);
    if ('reason' in packed) throw new Error(packed.reason);
    const dir = unpack(packed.archive);
    const text = (p: string) => readFileSync(path.join(dir, p), 'utf8');
    expect(text('keys')).toBe('/proc/sys/net/ipv4/ip_forward\n/proc/sys/net/ipv4/ip_local_port_range\n');
    expect(text('t0/s0/k8s.conf')).toBe('net.ipv4.ip_forward = 1\n');
    expect(readlinkSync(path.join(dir, 't1/s0/99-sysctl.conf'))).toBe('/etc/sysctl.conf');
    expect(readdirSync(path.join(dir, 't0/s1'))).toEqual([]);
    expect([text('t0/s2'), text('t1/s2')]).toEqual(['\n\n', '']);
    expect([text('t0/start'), text('t0/seed')]).toEqual(['/proc/sys/net/ipv4/ip_forward\n0\n', '/proc/sys/net/ipv4/ip_forward\n1\n']);
    expect([text('t1/start'), text('t1/seed')]).toEqual(['', '/proc/sys/net/ipv4/ip_local_port_range\n32768 60999\n']);
    expect(lstatSync(path.join(dir, 'o1/u')).isDirectory() && lstatSync(path.join(dir, 'o1/w')).isDirectory()).toBe(true);
    const table = (t: number) =>
      (
        JSON.parse(execFileSync('findmnt', ['-F', path.join(dir, `t${t}/fstab`), '--json', '-o', 'SOURCE,TARGET,FSTYPE,OPTIONS'], { encoding: 'utf8' })) as {
          filesystems: Array<Record<string, string>>;
        }
      ).filesystems.map((f) => [f.source, f.target, f.fstype, f.options]);
    const binds = (t: number) => [
      [`/tmp/t${t}/s0`, '/etc/sysctl.d', 'none', 'bind,ro'],
      [`/tmp/t${t}/s1`, '/run/sysctl.d', 'none', 'bind,ro,X-mount.mkdir'],
      [`/tmp/t${t}/s2`, '/etc/sysctl.conf', 'none', 'bind,ro'],
    ];
    expect(table(0)).toEqual([['k8s-host-reconcile-rehearsal', '/run', 'overlay', 'lowerdir=/run,upperdir=/tmp/o1/u,workdir=/tmp/o1/w'], ...binds(0)]);
    expect(table(1)).toEqual(binds(1));
    expect(packed.tmpfsBytes).toBe(16 * 1024 * 1024);
  });

  it('refuses a value for a key it does not read, a newline in a value, and a name that is a path', () => {
    const trial = lay.trials[0]!;
    const withTrial = (t: Partial<typeof trial>) => ({ ...lay, trials: [{ ...trial, ...t }] });
    expect(rehearsalArchive(withTrial({ start: [['net.core.somaxconn', '1']] }), keys)).toEqual({
      reason: 'the rehearsal was given a start value for net.core.somaxconn, a key it does not read',
    });
    expect(rehearsalArchive(withTrial({ seed: [['net.ipv4.ip_forward', '1\n0']] }), keys)).toEqual({
      reason: 'the seed of net.ipv4.ip_forward holds a newline or NUL; it cannot be written as one value',
    });
    const named = (name: string) => withTrial({ sources: [{ entries: [{ name, content: '' }] }, { entries: [] }, { content: '' }] });
    for (const name of ['../x', '..', 'a/b', ''])
      expect(rehearsalArchive(named(name), keys)).toEqual({ reason: `the rehearsal cannot lay out a file named ${JSON.stringify(name)}` });
  });

  it('a tmpfs big enough for ten thousand files: a page each, twice over', () => {
    const entries = Array.from({ length: 10_000 }, (_, i) => ({ name: `${i}.conf`, content: b64('net.ipv4.ip_forward = 1\n') }));
    const big: RehearsalLayout = { sources: [lay.sources[0]!], trials: [{ sources: [{ entries }], start: [], seed: [] }] };
    const packed = rehearsalArchive(big, keys);
    if ('reason' in packed) throw new Error(packed.reason);
    // A page per member and one per page of data: keys 2, t0 1, t0/s0 1, the 10,000 files 2 each, start 1, seed 1 (empty), fstab 2.
    expect(packed.tmpfsBytes).toBe(2 * 4096 * (2 + 1 + 1 + 2 * 10_000 + 1 + 1 + 2));
  });
});
