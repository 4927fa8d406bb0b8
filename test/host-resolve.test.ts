// realTarget keeps the directories it resolved (until forgetLinks): the
// answers must be the kernel's, whatever order the paths come in. The oracle
// is the C library's realpath(3) (fs.realpathSync.native) over a fixture tree
// of relative, absolute and chained links, read with root "/" so absolute
// links mean the same to both.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../src/host.js';

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
