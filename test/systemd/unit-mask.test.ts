// What a mask link at DIR/NAME would find there (maskSpotOf): nothing, a mask
// already (a link to /dev/null, or an empty file, as systemd reads a mask), an
// admin's unit file, or something else that takes the spot (a directory, a
// link to a unit file). Fixture trees in temp dirs; `systemctl --root mask`
// on the same spots is what test/resources/port-free/provider.set-aside.test.ts holds
// the whole set-aside against. maskOver is run through a real write door on
// the same kinds of spot.
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { maskOver, maskSpotOf, setAsidePath } from '../../src/systemd/unit-mask.js';
import { openDoor } from '../helpers/door.js';

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

describe('maskOver, through the write door', () => {
  const ASIDE = '/var/lib/k8s-host-reconcile/set-aside';
  async function fixture(): Promise<{ root: string; at: (n: string) => string; host: Host }> {
    const root = mkdtempSync(path.join(os.tmpdir(), 'unit-mask-over-'));
    roots.push(root);
    mkdirSync(path.join(root, ETC), { recursive: true });
    mkdirSync(path.join(root, 'usr/lib/systemd/system'), { recursive: true });
    return { root, at: (n: string) => path.join(root, ETC, n), host: new Host({ root, live: false }) };
  }

  it('a free spot gets the link to /dev/null, and nothing is set aside', async () => {
    const { at, host } = await fixture();
    expect(await maskOver(await openDoor(host), host, ETC, 'none.service')).toBeNull();
    expect(readlinkSync(at('none.service'))).toBe('/dev/null');
  });

  it('a mask already there is left as it is: an empty file stays an empty file', async () => {
    const { at, host } = await fixture();
    writeFileSync(at('empty.service'), '');
    expect(await maskOver(await openDoor(host), host, ETC, 'empty.service')).toBeNull();
    expect(lstatSync(at('empty.service')).isFile()).toBe(true);
  });

  it("an admin's unit file is copied aside byte for byte with its mode, then the link replaces it", async () => {
    const { root, at, host } = await fixture();
    const bytes = '[Service]\nExecStart=/usr/local/bin/api --port 6443\n';
    writeFileSync(at('own.service'), bytes);
    chmodSync(at('own.service'), 0o640);
    const aside = await maskOver(await openDoor(host), host, ETC, 'own.service');
    expect(aside).toBe(`${ASIDE}${ETC}/own.service`);
    expect(readFileSync(path.join(root, aside!), 'utf8')).toBe(bytes);
    expect(lstatSync(path.join(root, aside!)).mode & 0o7777).toBe(0o640);
    expect(readlinkSync(at('own.service'))).toBe('/dev/null');
  });

  it('a link at the set-aside path is replaced, not written through', async () => {
    const { root, at, host } = await fixture();
    writeFileSync(at('own.service'), '[Service]\nExecStart=/bin/true\n');
    writeFileSync(path.join(root, 'usr/lib/systemd/system/victim.service'), 'vendor bytes\n');
    mkdirSync(path.join(root, ASIDE, ETC), { recursive: true });
    symlinkSync('/usr/lib/systemd/system/victim.service', path.join(root, ASIDE, ETC, 'own.service'));
    await maskOver(await openDoor(host), host, ETC, 'own.service');
    expect(readFileSync(path.join(root, 'usr/lib/systemd/system/victim.service'), 'utf8')).toBe('vendor bytes\n');
    expect(lstatSync(path.join(root, ASIDE, ETC, 'own.service')).isFile()).toBe(true);
  });

  it('a link to a unit file is replaced by the mask link with nothing set aside (the vendor file stays)', async () => {
    const { root, at, host } = await fixture();
    writeFileSync(path.join(root, 'usr/lib/systemd/system/vendor.service'), '[Service]\nExecStart=/bin/true\n');
    symlinkSync('../../../usr/lib/systemd/system/vendor.service', at('linked.service'));
    expect(await maskOver(await openDoor(host), host, ETC, 'linked.service')).toBeNull();
    expect(readlinkSync(at('linked.service'))).toBe('/dev/null');
    expect(() => lstatSync(path.join(root, ASIDE))).toThrow();
  });

  it("a directory of the unit's name is refused, naming the unit and the path", async () => {
    const { at, host } = await fixture();
    mkdirSync(at('dir.service'));
    await expect(maskOver(await openDoor(host), host, ETC, 'dir.service')).rejects.toThrow(`cannot mask dir.service: ${ETC}/dir.service is a directory`);
    expect(lstatSync(at('dir.service')).isDirectory()).toBe(true);
  });
});
