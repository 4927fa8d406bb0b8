// PortFree's discovery, the parts that decide what one stop takes together:
// stopGroups over busy ports as the live scan reports them (written by hand),
// and observeOffline on an image's unit tree, whose enablement and boot are
// told by systemd's own tools (systemctl --root is-enabled, systemd --test).
// observeLive needs a running manager: test/resources/port-free/diff-live.test.ts runs it.
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { Host } from '../../src/host.js';
import { observeOffline, stemOf, stopGroups } from '../../src/ports/discover.js';
import type { BusyPort, PortHolder } from '../../src/ports/observed.js';
import { ETC, LIB, oracle, oracleStarted, systemctlRoot, unitTree } from '../helpers/systemd-oracle.js';
import type { Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const holder = (pid: number, unit: string | null): PortHolder => ({
  pid,
  comm: 'x',
  placement:
    unit === null ? null : ({ path: `/system.slice/${unit}`, hierarchy: 'v2', unit, unitKind: null, slice: 'system.slice' } as PortHolder['placement']),
  ancestry: null,
  mainHoldsSocket: null,
});
const busy = (port: number, holders: PortHolder[], activation: BusyPort['activation'] = null): BusyPort => ({ port, listeners: [], holders, activation });

describe('stopGroups: the units one stop disables together', () => {
  it('a socket-activated port: the socket and its service (Accept=yes: the socket alone), led by their triggers', () => {
    const act = (service: string | null) => ({ socket: 'api.socket', service, servicePid: null, source: 'unit files' as const });
    expect(stopGroups([busy(6443, [holder(1, 'init.scope')], act('api.service'))], { 'api.socket': ['api.path'] })).toEqual([
      ['api.path', 'api.socket', 'api.service'],
    ]);
    expect(stopGroups([busy(6443, [], act(null))], undefined)).toEqual([['api.socket']]);
  });
  it("holders in services: their services, once each; a holder outside a unit, in a scope or in a user's manager makes no group", () => {
    expect(stopGroups([busy(10250, [holder(10, 'agent.service'), holder(11, 'agent.service'), holder(12, 'helper.service')])], {})).toEqual([
      ['agent.service', 'helper.service'],
    ]);
    expect(stopGroups([busy(10250, [holder(10, 'agent.service'), holder(13, null)])], {})).toEqual([]);
    expect(stopGroups([busy(10250, [holder(10, 'session-3.scope')])], {})).toEqual([]);
    expect(stopGroups([busy(10250, [holder(10, 'user@1000.service')])], {})).toEqual([]);
    expect(stopGroups([busy(10250, [])], {})).toEqual([]);
  });
  it('stemOf drops the unit type only', () => {
    expect([stemOf('cron.service'), stemOf('supervisor'), stemOf('a.b.socket'), stemOf('getty@tty1.service')]).toEqual([
      'cron',
      'supervisor',
      'a.b',
      'getty@tty1',
    ]);
  });
});

const N = '[Unit]\nDefaultDependencies=no\n';
const wants = (target: string, unit: string): Tree => ({ [`${ETC}/${target}.wants/${unit}`]: { link: `../../../../${LIB}/${unit}` } });
const IMAGE: Tree = {
  [`${LIB}/multi-user.target`]: `${N}Wants=sockets.target\n`,
  [`${LIB}/api.socket`]: `${N}[Socket]\nListenStream=6443\nListenStream=[::]:10250\n[Install]\nWantedBy=sockets.target\n`,
  [`${LIB}/api.service`]: `${N}[Service]\nExecStart=/usr/bin/api\n`,
  [`${LIB}/agent.service`]: `${N}[Service]\nExecStart=/usr/bin/agent --port 10259\n[Install]\nWantedBy=multi-user.target\n`,
  // An admin's own file where a mask link would go.
  [`${ETC}/old.service`]: `${N}[Service]\nExecStart=/usr/bin/old\n[Install]\nWantedBy=multi-user.target\n`,
  ...wants('sockets.target', 'api.socket'),
  ...wants('multi-user.target', 'agent.service'),
  [`${ETC}/multi-user.target.wants/old.service`]: { link: '../old.service' },
};

describe('observeOffline: an image read without a manager', () => {
  it("sockets and candidates on the wanted ports with systemctl's enablement, the admin's file, and what starts each now", async () => {
    const root = unitTree(roots, 'discover-offline-', IMAGE);
    const o = await observeOffline(new Host({ root, live: false }), { ports: [6443, 10250, 10259], disable_units: ['old.service', 'gone.service'] });
    expect(o.sockets.map((s) => [s.socket.name, s.ports, s.socket.service])).toEqual([['api.socket', [6443, 10250], 'api.service']]);
    expect(o.candidates.map((c) => [c.candidate.unit, c.candidate.port])).toEqual([['agent.service', 10259]]);
    expect(o.disableUnits.map((d) => [d.unit, d.exists, d.fragment])).toEqual([
      ['old.service', true, `/${ETC}/old.service`],
      ['gone.service', false, null],
    ]);
    expect(o.etcFiles).toEqual({ 'old.service': `/${ETC}/old.service` });
    expect(o.graphUnknown).toBeNull();
    // systemd's answers for the same tree.
    const started = oracleStarted(await oracle(root));
    for (const u of ['api.socket', 'agent.service', 'old.service', 'api.service']) expect(o.reachNow[u] !== undefined, u).toBe(started.has(u));
    for (const u of ['api.socket', 'agent.service', 'old.service']) {
      const state = (await systemctlRoot(root, 'is-enabled', u)).stdout.trim();
      expect(state, u).toBe('enabled');
    }
    // Each is started only by its own links: once disabled, nothing brings it back.
    for (const u of ['api.socket', 'agent.service', 'old.service']) expect(o.comeback[u]!.reasons, u).toEqual([]);
  });
});
