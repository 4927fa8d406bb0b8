// What a mask link at DIR/NAME would find there (maskSpotOf): nothing, a mask
// already (a link to /dev/null, or an empty file, as systemd reads a mask), an
// admin's unit file, or something else that takes the spot (a directory, a
// link to a unit file). Fixture trees in temp dirs; `systemctl --root mask`
// on the same spots is what test/resources/port-free.set-aside.test.ts holds
// the whole set-aside against.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { maskSpotOf, setAsidePath } from '../../src/systemd/unit-mask.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const ETC = '/etc/systemd/system';

describe('maskSpotOf', () => {
  it('free, masked (a /dev/null link or an empty file), a unit file, a directory, a link to a unit file', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'unit-mask-'));
    roots.push(root);
    const at = (n: string) => path.join(root, ETC, n);
    mkdirSync(path.join(root, ETC), { recursive: true });
    mkdirSync(path.join(root, 'usr/lib/systemd/system'), { recursive: true });
    symlinkSync('/dev/null', at('nulled.service'));
    writeFileSync(at('empty.service'), '');
    writeFileSync(at('own.service'), '[Service]\nExecStart=/bin/true\n');
    mkdirSync(at('dir.service'));
    writeFileSync(path.join(root, 'usr/lib/systemd/system/vendor.service'), '[Service]\nExecStart=/bin/true\n');
    symlinkSync('../../../usr/lib/systemd/system/vendor.service', at('linked.service'));
    const host = new Host({ root, live: false });
    const spots = Object.fromEntries(
      await Promise.all(
        ['none.service', 'nulled.service', 'empty.service', 'own.service', 'dir.service', 'linked.service'].map(async (u) => [
          u,
          await maskSpotOf(host, ETC, u),
        ]),
      ),
    );
    expect(spots).toEqual({
      'none.service': { kind: 'free' },
      'nulled.service': { kind: 'masked' },
      'empty.service': { kind: 'masked' },
      'own.service': { kind: 'taken', path: `${ETC}/own.service`, file: true },
      'dir.service': { kind: 'taken', path: `${ETC}/dir.service`, file: false },
      'linked.service': { kind: 'taken', path: `${ETC}/linked.service`, file: false },
    });
  });

  it('a set-aside copy keeps its original path under a directory no unit search path reaches', () => {
    expect(setAsidePath(`${ETC}/own.service`)).toBe(`/var/lib/k8s-host-reconcile/set-aside${ETC}/own.service`);
  });
});
