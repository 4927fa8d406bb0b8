// The units that would take a free port at the next boot or when a trigger
// fires, over a unit graph loaded from a fixture tree; whether each starts at
// boot is systemd's own answer (systemd --test, test/helpers/systemd-oracle.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { Host } from '../../src/host.js';
import { loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { bootStarters, unreadBootSockets } from '../../src/ports/boot-starters.js';
import { ETC, LIB, oracle, oracleStarted, unitTree } from '../helpers/systemd-oracle.js';
import type { Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});
const wants = (target: string, unit: string): Tree => ({ [`${ETC}/${target}.wants/${unit}`]: { link: `../${unit}` } });
const N = '[Unit]\nDefaultDependencies=no\n';

const TREE: Tree = {
  [`${LIB}/multi-user.target`]: `${N}Wants=sockets.target timers.target\n`,
  // Enabled: a socket on 6443 and a service naming 10250.
  [`${ETC}/api.socket`]: `${N}[Socket]\nListenStream=0.0.0.0:6443\n`,
  [`${ETC}/api.service`]: `${N}[Service]\nExecStart=/usr/bin/api\n`,
  [`${ETC}/agent.service`]: `${N}[Service]\nExecStart=/usr/bin/agent --port 10250\n`,
  // Started by an enabled timer only.
  [`${ETC}/probe.service`]: `${N}[Service]\nExecStart=/usr/bin/probe --listen :10259\n`,
  [`${ETC}/probe.timer`]: `${N}[Timer]\nOnBootSec=60\n`,
  // Disabled: names 2379 but nothing starts it.
  [`${ETC}/etcd-old.service`]: `${N}[Service]\nExecStart=/usr/bin/etcd --listen-client-urls http://0.0.0.0:2379\n`,
  // An enabled socket whose address is the host name: its port is not known here.
  [`${ETC}/named.socket`]: `${N}[Socket]\nListenStream=%H:8443\n`,
  ...wants('sockets.target', 'api.socket'),
  ...wants('sockets.target', 'named.socket'),
  ...wants('multi-user.target', 'agent.service'),
  ...wants('timers.target', 'probe.timer'),
};

describe('bootStarters and unreadBootSockets', () => {
  it("exactly the units systemd starts at boot among those that name a free port, sorted by port; a timer's service is triggered", async () => {
    const root = unitTree(roots, 'boot-starters-', TREE);
    const started = oracleStarted(await oracle(root));
    // The oracle's own view of the fixture: which of the port-naming units start.
    expect(['api.socket', 'agent.service', 'probe.service', 'etcd-old.service'].filter((u) => started.has(u))).toEqual([
      'api.socket',
      'agent.service',
      'probe.service',
    ]);
    const graph = await loadUnitGraph(new Host({ root, live: false }));
    const b = bootStarters(graph, [2379, 6443, 10250, 10259]);
    expect(b.map((x) => [x.port, x.unit, x.kind, x.evidence.key, x.triggered])).toEqual([
      [6443, 'api.socket', 'socket', 'ListenStream', false],
      [10250, 'agent.service', 'candidate', 'ExecStart', false],
      [10259, 'probe.service', 'candidate', 'ExecStart', true],
    ]);
    expect(b[2]!.reach).toContain('probe.timer');
    // Only the ports asked about.
    expect(bootStarters(graph, [6443]).map((x) => x.unit)).toEqual(['api.socket']);
    expect(bootStarters(graph, [])).toEqual([]);
  });
  it('a socket started at boot whose ListenStream= has a specifier is listed, with its line; none when it is not started', async () => {
    const root = unitTree(roots, 'boot-starters-unread-', TREE);
    const graph = await loadUnitGraph(new Host({ root, live: false }));
    const u = unreadBootSockets(graph);
    expect(u.map((x) => [x.unit, x.listen.directive.line, x.triggered])).toEqual([['named.socket', 4, false]]);
    const quiet = unitTree(roots, 'boot-starters-quiet-', { [`${ETC}/named.socket`]: `${N}[Socket]\nListenStream=%H:8443\n` });
    expect(unreadBootSockets(await loadUnitGraph(new Host({ root: quiet, live: false })))).toEqual([]);
  });
});
