// Where the system and user managers look for units, and what a mask is,
// against systemd's own programs: `systemd-analyze unit-paths` (and --user)
// for the search paths, `systemctl --root ... is-enabled` for masks. systemctl
// only ever sees temp trees.
import { afterEach, describe, expect, it } from 'vitest';
import { realpathSync, rmSync } from 'node:fs';
import { execa } from 'execa';
import { Host } from '../../src/host.js';
import { GENERATOR_DIRS, isGeneratedEntry, isMaskEntry, maskLinkOf, SYSTEM_UNIT_PATH, userConfigDir, userUnitPath } from '../../src/systemd/unit-dirs.js';
import type { Tree } from '../helpers/tree.js';
import { ETC, LIB, plainTree, systemctlRoot } from '../helpers/systemd-oracle.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});
const tmpTree = (files: Tree): string => plainTree(roots, 'systemd-unit-dirs-', files);

describe('masks, against systemctl --root', () => {
  it('isMaskEntry says masked exactly where `systemctl is-enabled` says masked', async () => {
    const root = tmpTree({
      [`${ETC}/null.service`]: { link: '/dev/null' },
      [`${ETC}/empty.service`]: '',
      [`${ETC}/blank.service`]: '\n',
      [`${LIB}/real.service`]: '[Service]\nExecStart=/bin/true\n',
      [`${ETC}/linked.service`]: { link: '/usr/lib/systemd/system/real.service' },
      'run/systemd/system/rt.service': { link: '/dev/null' },
    });
    const host = new Host({ root, live: false });
    const cases: Array<[string, string]> = [
      ['null.service', `/${ETC}/null.service`],
      ['empty.service', `/${ETC}/empty.service`],
      ['blank.service', `/${ETC}/blank.service`],
      ['real.service', `/${LIB}/real.service`],
      ['linked.service', `/${ETC}/linked.service`],
      ['rt.service', '/run/systemd/system/rt.service'],
    ];
    for (const [unit, entry] of cases) {
      const state = (await systemctlRoot(root, 'is-enabled', unit)).stdout.trim();
      expect(await isMaskEntry(host, entry), `${unit}: systemctl says ${state}`).toBe(state.startsWith('masked'));
    }
    expect(await isMaskEntry(host, `/${ETC}/missing.service`)).toBe(false);
  });
});

describe('the user search path', () => {
  it('is what `systemd-analyze --user unit-paths` prints for that home, without a runtime directory', async () => {
    const home = '/home/alice-fixture';
    const r = await execa('systemd-analyze', ['--user', 'unit-paths'], { env: { HOME: home, PATH: process.env.PATH ?? '/usr/bin:/bin' }, extendEnv: false });
    expect(userUnitPath(home)).toEqual(r.stdout.trim().split('\n'));
  });
});

describe('the system search path', () => {
  it('is the directories `systemd-analyze unit-paths` prints, in its order, on this machine', async () => {
    const r = await execa('systemd-analyze', ['unit-paths'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, extendEnv: false });
    // Debian's systemd 252 lists /lib/systemd/system before /usr/lib/systemd/system; SYSTEM_UNIT_PATH has them the
    // other way round. With /lib -> usr/lib (merged /usr, as here) they are one directory, so what is searched, in
    // order, is compared as real directories.
    const real = (dirs: readonly string[]) => [
      ...new Set(
        dirs.map((d) => {
          try {
            return realpathSync(d);
          } catch {
            return d;
          }
        }),
      ),
    ];
    expect(real(SYSTEM_UNIT_PATH)).toEqual(real(r.stdout.trim().split('\n')));
  });
  it('holds every generator directory; mask links go to /etc/systemd/system, user config to ~/.config/systemd/user', () => {
    for (const d of GENERATOR_DIRS) expect(SYSTEM_UNIT_PATH as readonly string[]).toContain(d);
    expect(maskLinkOf('kubelet.service')).toBe('/etc/systemd/system/kubelet.service');
    expect(userConfigDir('/home/a/')).toBe('/home/a/.config/systemd/user');
  });
});

describe('generated entries', () => {
  it("a unit whose entry is in a generator's directory is generated; one in /run/systemd/system or named like one is not", () => {
    for (const d of ['/run/systemd/generator.early', '/run/systemd/generator', '/run/systemd/generator.late'])
      expect(isGeneratedEntry(`${d}/x.service`), d).toBe(true);
    for (const e of [
      '/run/systemd/system/x.service',
      '/etc/systemd/system/x.service',
      '/run/systemd/generator.later/x.service',
      '/srv/run/systemd/generator/x.service',
    ])
      expect(isGeneratedEntry(e), e).toBe(false);
    expect(isGeneratedEntry(null)).toBe(false);
  });
});
