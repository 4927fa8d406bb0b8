import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  mkdtempSync,
  mkdirSync,
  writeFileSync,
  readFileSync,
  symlinkSync,
  statSync,
  chmodSync,
  lstatSync,
  readlinkSync,
  existsSync,
  rmSync,
  readdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../src/host.js';
import { HostError } from '../src/errors.js';
import { realpathSync, unlinkSync } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import type { TargetFs } from '../src/host.js';
import { observeModules } from '../src/modprobe/observe.js';
import { rehearsalAvailability } from '../src/sysctl/rehearsal.js';

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

// ---------------------------------------------------------------------------
// realTarget keeps the directories it resolved (until forgetLinks): the
// answers must be the kernel's, whatever order the paths come in. The oracle
// is the C library's realpath(3) (fs.realpathSync.native) over a fixture tree
// of relative, absolute and chained links, read with root "/" so absolute
// links mean the same to both.
describe('Host.realTarget', () => {
  let base: string;
  beforeEach(() => {
    // The tmp dir itself may sit behind a link (macOS /tmp): resolve it first, so every path below is real.
    base = realpathSync(mkdtempSync(path.join(tmpdir(), 'host-resolve-')));
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const at = (p: string) => path.join(base, p);

  function tree(): string[] {
    for (const d of ['usr/lib/systemd/system', 'etc/systemd/system/multi-user.target.wants', 'lib-real/deep/er']) mkdirSync(at(d), { recursive: true });
    for (const f of ['usr/lib/systemd/system/a.service', 'usr/lib/systemd/system/b.service', 'lib-real/deep/er/c.conf']) writeFileSync(at(f), '');
    symlinkSync('usr/lib', at('lib'));
    symlinkSync(at('usr/lib/systemd/system/a.service'), at('etc/systemd/system/multi-user.target.wants/a.service'));
    symlinkSync('../../../../usr/lib/systemd/system/b.service', at('etc/systemd/system/multi-user.target.wants/b.service'));
    symlinkSync('../lib/systemd', at('etc/sd'));
    symlinkSync('deep/./er/..', at('lib-real/up'));
    symlinkSync(at('lib-real'), at('etc/lr'));
    symlinkSync('lr/up/er', at('etc/chain'));
    symlinkSync('missing/x', at('etc/dangling'));
    return [
      'lib/systemd/system/a.service',
      'lib/systemd/system/b.service',
      'lib/systemd/system',
      'etc/systemd/system/multi-user.target.wants/a.service',
      'etc/systemd/system/multi-user.target.wants/b.service',
      'etc/sd/system/a.service',
      'etc/sd/system/nope.service',
      'etc/chain/c.conf',
      'etc/chain',
      'etc/lr/up',
      'etc/lr/deep/er/c.conf',
      'usr/lib/systemd/system/a.service',
      // Forms the walk normalises first: a trailing slash (on a directory met before and on one not), '//' and '.'.
      'lib/systemd/system/',
      'etc/chain/',
      'etc//sd/./system/a.service',
      'etc/lr/deep/er/./',
    ].map(at);
  }

  /** realpath(3) of a path whose last components may not exist: the existing head resolved, the rest appended. */
  function oracle(p: string): string {
    try {
      return realpathSync.native(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || p === '/') throw e;
      return path.join(oracle(path.dirname(p)), path.basename(p));
    }
  }

  describe('Host.realTarget with resolved directories kept', () => {
    it('answers as realpath(3) does, in any order, on one Host and on a fresh one per path', async () => {
      const paths = tree();
      const expected = paths.map(oracle);
      const shared = new Host({ root: '/', live: false });
      expect(await Promise.all(paths.map((p) => new Host({ root: '/', live: false }).realTarget(p)))).toEqual(expected);
      for (const order of [paths, [...paths].reverse()]) {
        const got = [];
        for (const p of order) got.push(await shared.realTarget(p));
        expect(got).toEqual(order.map(oracle));
      }
      // A dangling link resolves as far as it goes, like `realpath -m`.
      expect(await shared.realTarget(at('etc/dangling'))).toBe(at('etc/missing/x'));
    });

    it('follows a changed link once forgetLinks() is called', async () => {
      tree();
      const host = new Host({ root: '/', live: false });
      expect(await host.realTarget(at('etc/sd/system/a.service'))).toBe(at('usr/lib/systemd/system/a.service'));
      unlinkSync(at('etc/sd'));
      symlinkSync('lr/deep', at('etc/sd'));
      host.forgetLinks();
      expect(await host.realTarget(at('etc/sd/system/a.service'))).toBe(at('lib-real/deep/system/a.service'));
      expect(await host.realTarget(at('etc/sd/er/c.conf'))).toBe(oracle(at('etc/sd/er/c.conf')));
    });

    it('counts symlink hops across a kept directory: ELOOP exactly where realpath(3) gives it', async () => {
      // d0 -> d1 -> ... -> d19 -> real (20 hops to the directory), then f0 -> ... -> fK -> file inside it.
      mkdirSync(at('real'));
      writeFileSync(at('real/file'), '');
      for (let i = 0; i < 20; i++) symlinkSync(i === 19 ? 'real' : `d${i + 1}`, at(`d${i}`));
      for (const k of [19, 20, 21]) {
        for (let i = 0; i <= k; i++) symlinkSync(i === k ? 'file' : `f${k}-${i + 1}`, at(`real/f${k}-${i}`));
      }
      const host = new Host({ root: '/', live: false });
      // The directory first, so the file paths below start from the kept resolution and its 20 hops.
      expect(await host.realTarget(at('d0'))).toBe(at('real'));
      for (const k of [19, 20, 21]) {
        const p = at(`d0/f${k}-0`);
        let kernel: string | NodeJS.ErrnoException;
        try {
          kernel = realpathSync.native(p);
        } catch (e) {
          kernel = e as NodeJS.ErrnoException;
        }
        if (typeof kernel === 'string') expect(await host.realTarget(p)).toBe(kernel);
        else {
          expect(kernel.code).toBe('ELOOP');
          await expect(host.realTarget(p)).rejects.toMatchObject({ code: 'ELOOP' });
        }
      }
      // The three lengths straddle the limit: both answers occur.
      expect(await host.realTarget(at('d0/f19-0'))).toBe(at('real/file'));
      await expect(host.realTarget(at('d0/f21-0'))).rejects.toMatchObject({ code: 'ELOOP' });
    });
  });
});

// ---------------------------------------------------------------------------
// The read-only file-system interface (TargetFs) is real: an in-memory object
// implementing only it, with no command runner and no Host behind it, drives
// the ModulesLoad observer. The files below are written by hand; what the
// observer must report follows from modules-load.d(5) and modprobe.d(5):
// the first directory wins a name, a /dev/null link masks, `install M /bin/true`
// stops M from loading.
/** Target paths → content, and target paths → link text. Directories are implied by the paths. */
function memoryFs(files: Record<string, string>, links: Record<string, string> = {}): TargetFs & { reads: string[] } {
  const reads: string[] = [];
  const all = [...Object.keys(files), ...Object.keys(links)];
  const entry = (name: string, kind: 'file' | 'dir' | 'link'): Dirent =>
    ({ name, isFile: () => kind === 'file', isDirectory: () => kind === 'dir', isSymbolicLink: () => kind === 'link' }) as Dirent;
  const kindOf = (p: string): 'file' | 'dir' | 'link' | null =>
    p in links ? 'link' : p in files ? 'file' : all.some((f) => f.startsWith(p + '/')) ? 'dir' : null;
  const resolve = (p: string): string => {
    for (let hops = 0; p in links; hops++) {
      if (hops > 40) throw new Error(`loop at ${p}`);
      const to = links[p]!;
      p = to.startsWith('/') ? to : path.posix.join(path.posix.dirname(p), to);
    }
    return p;
  };
  const notHere = (what: string) => () => {
    throw new Error(`${what} is not part of this fake`);
  };
  return {
    root: '/',
    live: false,
    reads,
    realTarget: async (t) => resolve(path.posix.normalize(t)),
    readFile: async (t) => {
      reads.push(t);
      return files[resolve(t)] ?? null;
    },
    readBytes: async (t) => {
      reads.push(t);
      return files[resolve(t)] ?? null;
    },
    readHead: notHere('readHead'),
    locate: notHere('locate'),
    readDir: async (dir) => {
      if (kindOf(dir) !== 'dir') return null;
      const names = new Set(all.filter((p) => p.startsWith(dir + '/')).map((p) => p.slice(dir.length + 1).split('/')[0]!));
      return [...names].map((n) => entry(n, kindOf(`${dir}/${n}`)!));
    },
    lstat: async (t) => {
      const k = kindOf(t);
      return k === null ? null : ({ isFile: () => k === 'file', isDirectory: () => k === 'dir', isSymbolicLink: () => k === 'link' } as Stats);
    },
    readLink: async (t) => links[t] ?? null,
    readLinksIn: notHere('readLinksIn'),
    statfs: notHere('statfs'),
    exists: async (t) => kindOf(t) !== null,
    assertLive: (what) => {
      throw new Error(`${what}: offline`);
    },
    readKernel: notHere('readKernel'),
    memo: (_key, read) => read(),
  };
}

describe('TargetFs: a file-system-only fake drives an observer', () => {
  it('observeModules reads modules-load.d and modprobe.d through the interface alone', async () => {
    const fs = memoryFs(
      {
        '/etc/modules-load.d/k8s.conf': 'overlay\n',
        // /etc wins the name extra.conf: the /usr/lib copy listing br_netfilter is never read.
        '/etc/modules-load.d/extra.conf': '# ours\noverlay\n',
        '/usr/lib/modules-load.d/extra.conf': 'br_netfilter\n',
        // masked in /etc by a /dev/null link below
        '/usr/lib/modules-load.d/vendor.conf': 'br_netfilter\n',
        '/usr/lib/modprobe.d/stop.conf': 'install br_netfilter /bin/true\n',
      },
      { '/etc/modules-load.d/vendor.conf': '/dev/null' },
    );
    const seen = await observeModules(fs, { type: 'ModulesLoad', file: '/etc/modules-load.d/k8s.conf', modules: ['overlay', 'br_netfilter'] } as never);

    expect(seen.live).toBe(false);
    expect(seen.states).toBeNull();
    expect(seen.file).toEqual({ path: '/etc/modules-load.d/k8s.conf', content: 'overlay\n', link: null });
    expect(seen.alsoListedIn).toEqual([{ module: 'overlay', files: ['/etc/modules-load.d/extra.conf'] }]);
    expect(seen.blockerFiles).toHaveLength(1);
    const b = seen.blockerFiles[0]!;
    // A vendor file is never edited: the fix is a same-named override in /etc/modprobe.d.
    expect([b.source, b.target, b.targetContent]).toEqual(['/usr/lib/modprobe.d/stop.conf', '/etc/modprobe.d/stop.conf', null]);
    expect(b.blockers.map((x) => [x.module, x.kind, x.firstLine])).toEqual([['br_netfilter', 'install', 1]]);
    expect(fs.reads).not.toContain('/usr/lib/modules-load.d/extra.conf');
    expect(fs.reads).not.toContain('/usr/lib/modules-load.d/vendor.conf');
  });

  it('an observer that runs commands does not accept it (the type says so)', async () => {
    const fs = memoryFs({});
    // @ts-expect-error TargetFs has no run(): tsc --noEmit fails here if the rehearsal stops needing commands
    const r = await rehearsalAvailability(fs);
    // offline, it answers before running anything
    expect(r.ok).toBe(false);
  });
});
