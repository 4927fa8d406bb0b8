// A socket unit's TCP ports (src/systemd/socket-unit.ts) against systemd's
// own address parser: `systemd --test` (test/helpers/systemd-oracle.ts)
// loads sockets whose ListenStream= values are generated from the forms of
// systemd.socket(5) and the mistakes admins make (ports out of range, signs,
// blanks, host names, a scope, a missing port), and dumps each address it
// accepted. Ours must find the same TCP port, and none where systemd listens
// on no IP port or refuses the value. unitFilesOf is checked on a loaded
// graph: only .socket and .service units held by a file, templates' instances
// left to their templates.
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { Host } from '../../src/host.js';
import { extendUnitGraph, loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { listenStreamPort, socketUnitOf, unitFilesOf } from '../../src/systemd/socket-unit.js';
import { ETC, LIB, NODEFAULT, oracle, unitTree } from '../helpers/systemd-oracle.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const HOSTS = [
  '',
  '0.0.0.0:',
  '127.0.0.1:',
  '10.1.2.3:',
  '1.2.3:',
  '256.1.1.1:',
  '[::]:',
  '[::1]:',
  '[fe80::1%lo]:',
  '[fe80::1%1]:',
  '[::ffff:127.0.0.1]:',
  '[zz]:',
  '[::1]',
  '127.0.0.1%lo:',
  'localhost:',
  '*:',
  ':',
  '::1:',
  '01.2.3.4:',
  '1.2.3.4.5:',
  '[::1]x:',
  '[:::',
  '[]:',
];
const PORTS = [
  '80',
  '8081',
  '10250',
  '1',
  '65535',
  '0',
  '65536',
  '99999',
  '080',
  '010',
  '00',
  '0x',
  '0X1F90',
  '+80',
  '+0x50',
  '-80',
  '+-80',
  ' 80',
  '80 ',
  '8o',
  '',
  '0x50',
  '0x10000',
  '６４４３',
  '99999999999999999999',
];
const OTHERS = [
  '[::1]:2380%',
  '[::1]:2380%a:b',
  '[::1]:2380#name',
  '[::1]:2380%lo#name',
  '::1',
  '1.2.3.4',
  '::ffff:1.2.3.4:80',
  '[::1]]:80',
  '[::1x:80',
  '/run/x.sock',
  '@abstract',
  'vsock:2:1234',
  'vsock::80',
  '/',
  ' /run/y.sock',
];

describe('ListenStream= values, as systemd --test parses them', () => {
  it('every host form with every port form, and the non-IP sockets: the same TCP port, or none', async () => {
    const values = [...HOSTS.flatMap((h) => PORTS.map((p) => `${h}${p}`)), ...OTHERS];
    const files: Record<string, string> = {};
    values.forEach((v, i) => {
      files[`${LIB}/l${i}.socket`] = `${NODEFAULT}[Socket]\nListenStream=${v}\n`;
      files[`${LIB}/l${i}.service`] = `${NODEFAULT}[Service]\nExecStart=/bin/true\n`;
    });
    files[`${LIB}/multi-user.target`] = `${NODEFAULT}Wants=${values.map((_, i) => `l${i}.socket`).join(' ')}\n`;
    const root = unitTree(roots, 'socket-unit-', files);
    const o = await oracle(root);
    let ports = 0;
    values.forEach((v, i) => {
      const lines = o.units.get(`l${i}.socket`)?.lines ?? [];
      const theirs = lines.filter((l) => l.startsWith('ListenStream: ')).map((l) => l.slice('ListenStream: '.length));
      expect(theirs.length, JSON.stringify(v)).toBeLessThanOrEqual(1);
      const a = theirs[0];
      const port = a === undefined || a.startsWith('/') || a.startsWith('@') || a.startsWith('vsock:') ? null : Number(a.slice(a.lastIndexOf(':') + 1));
      expect(listenStreamPort(v), `${JSON.stringify(v)} (systemd: ${a ?? 'refused'})`).toBe(port);
      if (port !== null) ports++;
    });
    expect(ports).toBeGreaterThan(50);
  }, 120_000);
});

describe('a scope names an interface of the host', () => {
  // systemd 252 (Debian 12) takes no scope at all; later releases (Debian 13's 257) take one after the port, and refuse it
  // when the host has no such interface. A port missed is a port promised free, so ours keeps it: not compared with 252 above.
  it('a well-formed scope after the port keeps the port, also for an interface this host lacks', () => {
    expect(listenStreamPort('[fe80::1]:2380%eth0')).toBe(2380);
    expect(listenStreamPort('[::1]:2380%1')).toBe(2380);
    expect(listenStreamPort('127.0.0.1:2380%lo')).toBe(2380);
    expect(listenStreamPort('[fe80::1]:2380%no-such-if')).toBe(2380);
    expect(listenStreamPort('[fe80::1]:2380%bad/name')).toBeNull();
    // ifname_valid_full(): not "." or "..", shorter than ALTNAMSIZ (128).
    expect(listenStreamPort('[fe80::1]:2380%.')).toBeNull();
    expect(listenStreamPort('[fe80::1]:2380%..')).toBeNull();
    expect(listenStreamPort(`[fe80::1]:2380%${'a'.repeat(127)}`)).toBe(2380);
    expect(listenStreamPort(`[fe80::1]:2380%${'a'.repeat(128)}`)).toBeNull();
  });
});

describe('unitFilesOf', () => {
  it('holds the .socket and .service units a file holds, each under its own name; not targets, mounts, instances or names no file holds', async () => {
    const root = unitTree(roots, 'socket-unit-files-', {
      [`${LIB}/a.socket`]: `${NODEFAULT}[Socket]\nListenStream=8081\n`,
      [`${LIB}/a.service`]: `${NODEFAULT}[Service]\nExecStart=/bin/true\n`,
      [`${LIB}/t@.service`]: `${NODEFAULT}[Service]\nExecStart=/bin/true\n`,
      [`${LIB}/x.mount`]: `${NODEFAULT}[Mount]\nWhat=/dev/x\nWhere=/x\n`,
      [`${LIB}/x.target`]: NODEFAULT,
      [`${ETC}/masked.service`]: { link: '/dev/null' },
      [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=a.socket t@one.service missing.service\n`,
    });
    const graph = await extendUnitGraph(await loadUnitGraph(new Host({ root, live: false })), ['t@two.service']);
    expect(graph.units.has('t@two.service')).toBe(true);
    const files = unitFilesOf(graph);
    expect([...files.keys()].sort()).toEqual(['a.service', 'a.socket', 'masked.service', 't@.service']);
    expect(files.get('masked.service')!.masked).toBe(true);
    expect(files.get('a.socket')!.fragment).toBe(`/${LIB}/a.socket`);
    expect(socketUnitOf(files.get('a.socket')!)).toMatchObject({ name: 'a.socket', service: 'a.service', accept: false, listens: [{ port: 8081 }] });
    // Only the last ".socket" is the unit type.
    expect(socketUnitOf({ name: 'x.socket-proxy.socket', fragment: `/${LIB}/x.socket-proxy.socket`, masked: false, directives: [] }).service).toBe(
      'x.socket-proxy.service',
    );
  });
});
