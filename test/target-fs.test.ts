// The read-only file-system interface (TargetFs) is real: an in-memory object
// implementing only it, with no command runner and no Host behind it, drives
// the ModulesLoad observer. The files below are written by hand; what the
// observer must report follows from modules-load.d(5) and modprobe.d(5):
// the first directory wins a name, a /dev/null link masks, `install M /bin/true`
// stops M from loading.
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import type { Dirent, Stats } from 'node:fs';
import type { TargetFs } from '../src/host.js';
import { observeModules } from '../src/modprobe/observe.js';
import { rehearsalAvailability } from '../src/sysctl/rehearsal.js';

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
