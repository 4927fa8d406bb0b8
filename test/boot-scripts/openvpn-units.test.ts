// Which OpenVPN instances Debian's openvpn 2.6 package starts at boot (src/boot-scripts/openvpn-units.ts),
// judged by the package's own files (test/fixtures/debian-packages/openvpn_2.6.14-0+deb12u2): its
// openvpn-generator script run as shipped (only its two paths pointed into a temporary directory), and
// systemd's own systemd-escape for what %I unescapes to.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generatorNames, openvpnInstanceOf, resolveSpecifiers } from '../../src/boot-scripts/openvpn-units.js';

const PACKAGE = path.resolve('test/fixtures/debian-packages/openvpn_2.6.14-0+deb12u2');
const dir = mkdtempSync(path.join(tmpdir(), 'openvpn-units-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('openvpn-generator, as shipped', () => {
  function generator(defaults: string | null, confs: string[]): string[] {
    const d = mkdtempSync(path.join(dir, 'gen-'));
    mkdirSync(path.join(d, 'etc'));
    for (const c of confs) writeFileSync(path.join(d, 'etc', c), '');
    if (defaults !== null) writeFileSync(path.join(d, 'default'), defaults);
    const script = readFileSync(path.join(PACKAGE, 'lib/systemd/system-generators/openvpn-generator'), 'utf8')
      .split('/etc/default/openvpn')
      .join(path.join(d, 'default'))
      .replace('CONFIG_DIR=/etc/openvpn', `CONFIG_DIR=${path.join(d, 'etc')}`);
    execFileSync('sh', ['-c', script, 'openvpn-generator', path.join(d, 'out')], { stdio: 'ignore' });
    return readdirSync(path.join(d, 'out/openvpn.service.wants'))
      .map((n) => n.replace(/^openvpn@|\.service$/g, ''))
      .sort();
  }
  const shipped = readFileSync(path.join(PACKAGE, 'etc/default/openvpn'), 'utf8');
  for (const [label, defaults] of [
    ['the shipped file', shipped],
    ['no file', null],
    ['AUTOSTART="none"', 'AUTOSTART="none"\n'],
    ['AUTOSTART="home office"', 'AUTOSTART="home office"\n'],
    ['AUTOSTART="all"', 'AUTOSTART="all"\n'],
    ['AUTOSTART=""', 'AUTOSTART=""\n'],
  ] as const) {
    it(`${label}: the same instances`, () => {
      const confs = ['home.conf', 'office.conf', 'notes.txt', '.hidden.conf'];
      const want = generator(defaults, confs);
      const got = generatorNames(defaults, confs);
      expect(Array.isArray(got) ? [...got].sort() : got).toEqual(want);
    });
  }
});

describe('instance names and specifiers, as systemd reads them', () => {
  const names = ['office', 'site-a', 'a\\x2db', 'vpn\\x20one'];
  for (const instance of names) {
    it(`%i and %I of ${instance}: %I is what systemd-escape --unescape gives`, () => {
      const unescaped = spawnSync('systemd-escape', ['--unescape', '--', instance], { encoding: 'utf8' });
      expect(unescaped.status, unescaped.stderr).toBe(0);
      expect(resolveSpecifiers('%i.conf', instance)).toBe(`${instance}.conf`);
      expect(resolveSpecifiers('/etc/openvpn/%I.conf', instance)).toBe(`/etc/openvpn/${unescaped.stdout.trim()}.conf`);
      expect(resolveSpecifiers('%t/openvpn/%i.status 100%%', instance)).toBe(`/run/openvpn/${instance}.status 100%`);
    });
  }
  it('a specifier these units do not use is no answer, never left in the value', () => {
    expect(resolveSpecifiers('--config %h/x.conf', 'office')).toBeNull();
  });
  it('the three templates of the package, and no other unit', () => {
    expect(openvpnInstanceOf('openvpn@office.service')).toEqual({ template: 'openvpn', instance: 'office' });
    expect(openvpnInstanceOf('openvpn-server@vpn.service')).toEqual({ template: 'openvpn-server', instance: 'vpn' });
    expect(openvpnInstanceOf('openvpn-client@home.service')).toEqual({ template: 'openvpn-client', instance: 'home' });
    const shipped = readdirSync(path.join(PACKAGE, 'lib/systemd/system'));
    for (const t of ['openvpn', 'openvpn-server', 'openvpn-client']) expect(shipped).toContain(`${t}@.service`);
    for (const other of ['openvpn.service', 'openvpn@.service', 'openvpnas@x.service', 'openvpn@x.socket']) expect(openvpnInstanceOf(other)).toBeNull();
  });
});
