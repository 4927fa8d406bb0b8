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
import { Host } from '../../src/host.js';
import { loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { graphUnknown } from '../../src/ports/stays-free.js';
import { bootStarters } from '../../src/ports/boot-starters.js';
import { bootStarterUnknowns } from '../../src/resources/port-free/boot-starters.js';
import type { LivePortsObserved } from '../../src/ports/observed.js';
import type { PortFreeSpec } from '../../src/desired-state.js';
import { ETC, LIB, unitTree } from '../helpers/systemd-oracle.js';

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
