// The live plan's promise that a free wanted port stays free at the next boot
// rests on reading the whole unit graph (ports/boot-starters.ts). Where a unit
// file cannot be read, a unit that takes the port may sit there unseen: the
// promise goes, with the file named. On a graph read whole, nothing is said.
// Unit trees are built in temp dirs and read by the real loader; the
// observation around them is what the live discovery returns for a host
// where nothing listens yet.
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { execa } from 'execa';
import { Host } from '../../../src/host.js';
import { loadUnitGraph } from '../../../src/systemd/unit-loader.js';
import { graphUnknown } from '../../../src/ports/stays-free.js';
import { bootStarters, unreadBootSockets } from '../../../src/ports/boot-starters.js';
import { bootStarterUnknowns } from '../../../src/resources/port-free/boot-starters.js';
import type { LivePortsObserved } from '../../../src/ports/observed.js';
import type { PortFreeSpec } from '../../../src/resources/port-free/spec.js';
import { ETC, LIB, oracle, unitTree } from '../../helpers/systemd-oracle.js';
import { observeOffline } from '../../../src/ports/discover.js';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const spec: PortFreeSpec = {
  type: 'PortFree',
  ports: [6443, 10250],
  protected_units: [],
  stop_spawner_units: [],
  mask: false,
  timeout_seconds: 5,
  disable_units: [],
};

/** The live observation of a host where `busy` ports have a listener and the unit tree at `root` is the system's. */
async function observed(root: string, busy: number[]): Promise<LivePortsObserved> {
  const graph = await loadUnitGraph(new Host({ root, live: false }));
  const free = spec.ports.filter((p) => !busy.includes(p));
  return {
    mode: 'live',
    busy: busy.map((port) => ({ port, listeners: [], holders: [], activation: null })),
    selfUnit: null,
    unreadablePids: 0,
    units: {},
    crontabs: null,
    uids: {},
    supervisor: null,
    bootStarters: bootStarters(graph, free),
    bootStartersUnknown: graphUnknown(graph),
    unreadSockets: unreadBootSockets(graph),
  };
}

const web = '[Unit]\nDescription=web\n[Service]\nExecStart=/usr/bin/web --port 8080\n[Install]\nWantedBy=multi-user.target\n';

describe('PortFree live: the boot promise of the free ports needs the whole unit graph', () => {
  it('a drop-in that cannot be read (a fifo) takes back the next-boot promise of every free wanted port, naming the file', async () => {
    const root = unitTree(roots, 'boot-starters-', {
      [`${LIB}/web.service`]: web,
      [`${ETC}/multi-user.target.wants/web.service`]: { link: '../../../../usr/lib/systemd/system/web.service' },
    });
    await execa('mkdir', ['-p', `${root}/${ETC}/web.service.d`]);
    await execa('mkfifo', [`${root}/${ETC}/web.service.d/port.conf`]);
    const unknowns = bootStarterUnknowns(spec, await observed(root, [10250]));
    expect(unknowns).toHaveLength(1);
    // 10250 has a listener now: its promise is the busy port's own business; only 6443's next boot is unknown.
    expect(unknowns[0]!.withdraws).toEqual([{ promise: 'port:6443', from: 'boot' }]);
    expect(unknowns[0]!.message).toContain(`/${ETC}/web.service.d/port.conf`);
    expect(unknowns[0]!.message).toContain('port 6443 is free now');
  });

  it('the same host with the drop-in readable: nothing is said (no false alarm)', async () => {
    const root = unitTree(roots, 'boot-starters-', {
      [`${LIB}/web.service`]: web,
      [`${ETC}/multi-user.target.wants/web.service`]: { link: '../../../../usr/lib/systemd/system/web.service' },
      [`${ETC}/web.service.d/port.conf`]: '[Service]\nEnvironment=PORT=8081\n',
    });
    expect(bootStarterUnknowns(spec, await observed(root, []))).toEqual([]);
  });
});

// ListenStream= is resolved like systemd's unit_full_printf: an instance of a template socket listens on what its
// own name makes of %i, and a specifier this reader cannot resolve leaves the port unknown (socket-unit.ts listenPortOf).
const template = (listen: string) => `[Unit]\nDescription=proxy\n[Socket]\nListenStream=${listen}\n[Install]\nWantedBy=sockets.target\n`;
const proxyService = '[Unit]\nDescription=proxy\n[Service]\nExecStart=/usr/bin/proxy\n';
const toLib = (name: string) => ({ link: `../../../../usr/lib/systemd/system/${name}` });

describe('PortFree: sockets whose ListenStream= has a specifier', () => {
  it('an enabled instance kproxy@10250.socket of ListenStream=%i takes back port 10250 at boot (systemd --test listens there too)', async () => {
    const root = unitTree(roots, 'boot-starters-', {
      [`${LIB}/kproxy@.socket`]: template('%i'),
      [`${LIB}/kproxy@.service`]: proxyService,
      [`${ETC}/multi-user.target.wants/kproxy@10250.socket`]: toLib('kproxy@.socket'),
    });
    const theirs = (await oracle(root)).units.get('kproxy@10250.socket');
    expect(theirs?.lines.filter((l) => l.startsWith('ListenStream: '))).toEqual(['ListenStream: [::]:10250']);
    const unknowns = bootStarterUnknowns(spec, await observed(root, []));
    expect(unknowns.map((u) => u.withdraws)).toEqual([[{ promise: 'port:10250', from: 'boot' }]]);
    expect(unknowns[0]!.message).toContain('kproxy@10250.socket would listen on it');
    expect(unknowns[0]!.message).toContain(`ListenStream= at /${LIB}/kproxy@.socket:4`);
  });

  it('ListenStream=%H:6443 on an enabled socket: every free port is unknown, naming the line and the specifier', async () => {
    const root = unitTree(roots, 'boot-starters-', {
      [`${LIB}/hostproxy.socket`]: template('%H:6443'),
      [`${LIB}/hostproxy.service`]: proxyService,
      [`${ETC}/multi-user.target.wants/hostproxy.socket`]: toLib('hostproxy.socket'),
    });
    const unknowns = bootStarterUnknowns(spec, await observed(root, [10250]));
    expect(unknowns.map((u) => u.withdraws)).toEqual([[{ promise: 'port:6443', from: 'boot' }]]);
    expect(unknowns[0]!.message).toContain(`ListenStream=%H:6443 at /${LIB}/hostproxy.socket:4 holds the specifier %H`);
    expect(unknowns[0]!.message).toContain('whether hostproxy.socket would take port 6443 is unknown');
  });

  it('no false alarm: a template nobody instantiates, an instance on another port, and sockets on paths made of specifiers', async () => {
    const root = unitTree(roots, 'boot-starters-', {
      [`${LIB}/kproxy@.socket`]: template('%i'),
      [`${LIB}/kproxy@.service`]: proxyService,
      [`${ETC}/multi-user.target.wants/kproxy@8080.socket`]: toLib('kproxy@.socket'),
      [`${LIB}/journal@.socket`]: template('/run/systemd/journal.%i/stdout'),
      [`${LIB}/journal@.service`]: proxyService,
      [`${ETC}/multi-user.target.wants/journal@x.socket`]: toLib('journal@.socket'),
      [`${LIB}/bus.socket`]: template('%t/bus'),
      [`${LIB}/bus.service`]: proxyService,
      [`${ETC}/multi-user.target.wants/bus.socket`]: toLib('bus.socket'),
      [`${LIB}/unused.socket`]: template('%H:6443'),
      [`${LIB}/unused.service`]: proxyService,
    });
    expect(bootStarterUnknowns(spec, await observed(root, []))).toEqual([]);
  });

  it('offline: an image whose enabled instance takes a wanted port withdraws that port at boot; one on another port does not', async () => {
    const image = (port: number) =>
      unitTree(roots, 'boot-starters-offline-', {
        [`${LIB}/kproxy@.socket`]: template('%i'),
        [`${LIB}/kproxy@.service`]: proxyService,
        [`${ETC}/multi-user.target.wants/kproxy@${port}.socket`]: toLib('kproxy@.socket'),
      });
    const offline = async (root: string) => portFreeProvider.unknowns!(spec, await observeOffline(new Host({ root, live: false }), spec));
    const found = await offline(image(6443));
    expect(found.map((u) => u.withdraws)).toEqual([[{ promise: 'port:6443', from: 'boot' }]]);
    expect(found[0]!.message).toContain('systemctl --root=IMAGE disable kproxy@6443.socket');
    expect(await offline(image(8080))).toEqual([]);
  });
});
