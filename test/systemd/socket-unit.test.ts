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
import { listenPortOf, listenStreamPort, socketUnitOf, unitFilesOf } from '../../src/systemd/socket-unit.js';
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

// Values written the way template sockets and admins write them: the instance as the port, "%%" for a literal
// "%", host-dependent specifiers, letters systemd has no specifier for, a stray "%".
const SPECIFIED = [
  '%i',
  '127.0.0.1:%i',
  '[::]:%i',
  '[fe80::1]:%i%%lo',
  '%I',
  '0.0.0.0:%I',
  '1%i',
  '%i0',
  '[::1]:2380%%lo',
  '10%%250',
  '10250%',
  '%%10250',
  '10250%eth0',
  '[fe80::1%lo]:2380',
  '%H:10250',
  '%l:10250',
  '%m',
  '%b:2379',
  '%Z6443',
  '%n',
  '%N',
  '%p',
  '%t/a.sock',
  '/run/x.%i',
  '@abs.%i',
  '%h/s',
];
/** Values whose port depends on a specifier ours does not resolve: %H %l %m %b (the running host's) and %Z %e (no such specifier). */
const UNRESOLVED = new Set(['10250%eth0', '[fe80::1%lo]:2380', '%H:10250', '%l:10250', '%m', '%b:2379', '%Z6443']);

describe('ListenStream= with specifiers, as systemd --test resolves them in instances and plain units', () => {
  it('a value ours resolves gives the port systemd listens on (or none); the rest are unknown, never a guess', async () => {
    const files: Record<string, string> = {};
    const names: string[] = [];
    SPECIFIED.forEach((v, i) => {
      files[`${LIB}/v${i}@.socket`] = `${NODEFAULT}[Socket]\nListenStream=${v}\n`;
      files[`${LIB}/v${i}@.service`] = `${NODEFAULT}[Service]\nExecStart=/bin/true\n`;
      files[`${LIB}/p${i}.socket`] = `${NODEFAULT}[Socket]\nListenStream=${v}\n`;
      files[`${LIB}/p${i}.service`] = `${NODEFAULT}[Service]\nExecStart=/bin/true\n`;
      // An instance that is a port, one that is not, and an escaped one ("\x31" is "1").
      names.push(`v${i}@10250.socket`, `v${i}@ab.socket`, `v${i}@\\x3110.socket`, `p${i}.socket`);
    });
    files[`${LIB}/multi-user.target`] = `${NODEFAULT}Wants=${names.join(' ')}\n`;
    const root = unitTree(roots, 'socket-specifiers-', files);
    const o = await oracle(root);
    let resolved = 0;
    let withPort = 0;
    for (const name of names) {
      const value = SPECIFIED[Number(/\d+/.exec(name)![0])]!;
      const lines = o.units.get(name)?.lines ?? [];
      expect(lines.length, name).toBeGreaterThan(0);
      const theirs = lines.filter((l) => l.startsWith('ListenStream: ')).map((l) => l.slice('ListenStream: '.length));
      const a = theirs[0];
      // systemd prints a scope after the port: "[fe80::1]:10250%lo".
      const port = a === undefined || a.startsWith('/') || a.startsWith('@') ? null : Number(a.slice(a.lastIndexOf(':') + 1).replace(/%.*/, ''));
      const ours = listenPortOf(value, name);
      if (UNRESOLVED.has(value)) {
        expect(ours, `${name}: ${value}`).toHaveProperty('unknown');
        continue;
      }
      expect(ours, `${name}: ListenStream=${value} (systemd: ${a ?? 'none'})`).toEqual({ port });
      resolved++;
      if (port !== null) withPort++;
    }
    expect(resolved).toBe((SPECIFIED.length - UNRESOLVED.size) * 4);
    expect(withPort).toBeGreaterThan(10);
  }, 120_000);

  it('on a template file, a value naming the instance is unknown: each instance listens on its own', () => {
    expect(listenPortOf('%i', 'kubelet-proxy@.socket')).toEqual({ unknown: '%i' });
    expect(listenPortOf('0.0.0.0:%I', 'kubelet-proxy@.socket')).toEqual({ unknown: '%I' });
    expect(listenPortOf('10250', 'kubelet-proxy@.socket')).toEqual({ port: 10250 });
    expect(listenPortOf('%t/x.%i', 'kubelet-proxy@.socket')).toEqual({ port: null });
  });

  it('socketUnitOf keeps the unresolved lines apart, with the directive that holds them', () => {
    const directive = (value: string, line: number) => ({ section: 'Socket', key: 'ListenStream', value, file: `/${LIB}/k@.socket`, line });
    const u = socketUnitOf({
      name: 'k@10250.socket',
      fragment: `/${LIB}/k@.socket`,
      masked: false,
      directives: [directive('%i', 2), directive('%H:6443', 3), directive('%t/k.sock', 4)],
    });
    expect(u.listens.map((l) => [l.port, l.directive.line])).toEqual([[10250, 2]]);
    expect(u.unread.map((l) => [l.specifier, l.directive.line])).toEqual([['%H', 3]]);
  });
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
