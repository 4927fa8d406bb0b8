// One unit graph per observation: PortFree and the boot-script scan share the
// system graph through Host's memo, names a caller asks about are added
// without reading the tree again, and a change made through the write door
// is seen by the next observation on the same Host.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { portFreeProvider } from '../../src/resources/port-free/provider.js';
import { systemUnitGraph } from '../../src/systemd/system-graph.js';
import { dependencyLinks, extendUnitGraph, loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { scanBootScripts } from '../../src/boot-scripts/scan.js';
import { buildTree } from '../helpers/tree.js';
import { portFreeSpec } from '../helpers/port-free-spec.js';
import { applyContext } from '../helpers/door.js';

const LIB = '/usr/lib/systemd/system';
const ETC = '/etc/systemd/system';
let root: string;

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'unit-graph-shared-'));
  buildTree(root, {
    [`${LIB}/multi-user.target`]: '[Unit]\nDescription=Multi-User\nWants=sockets.target\n',
    [`${LIB}/sockets.target`]: '[Unit]\nDescription=Sockets\n',
    [`${LIB}/default.target`]: { link: 'multi-user.target' },
    // Socket-activated on 10250 and enabled: PortFree disables it in the image.
    [`${LIB}/agent.socket`]: '[Socket]\nListenStream=10250\n\n[Install]\nWantedBy=sockets.target\n',
    [`${LIB}/agent.service`]: '[Service]\nExecStart=/usr/bin/agent\n',
    [`${ETC}/sockets.target.wants/agent.socket`]: { link: `${LIB}/agent.socket` },
    [`${LIB}/getty@.service`]: '[Service]\nExecStart=/sbin/agetty %I\n',
    // A masked entry in a dependency directory adds no edge, but it is listed.
    [`${ETC}/multi-user.target.wants/gone.service`]: { link: '/dev/null' },
  });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const spec = portFreeSpec([10250]);

describe('the shared system unit graph', () => {
  it('is one object for every reader on one Host, the boot-script scan and PortFree included', async () => {
    const host = new Host({ root });
    const first = await systemUnitGraph(host);
    await scanBootScripts(host);
    await portFreeProvider.observe(host, spec);
    expect(await systemUnitGraph(host)).toBe(first);
    // Names it already holds give the same object back.
    expect(await systemUnitGraph(host, ['agent.socket', 'agent.service'])).toBe(first);
    // A new Host reads its own.
    expect(await systemUnitGraph(new Host({ root }))).not.toBe(first);
  });

  it('adds an instance a caller asks about in a new graph, leaving the shared one as it was', async () => {
    const host = new Host({ root });
    const base = await systemUnitGraph(host);
    const unitsBefore = [...base.units.keys()];
    const edgesBefore = base.edges.length;
    const more = await systemUnitGraph(host, ['getty@tty9.service']);
    expect(more).not.toBe(base);
    expect(more.units.get('getty@tty9.service')).toMatchObject({
      instance: 'tty9',
      template: 'getty@.service',
      fragment: `${LIB}/getty@.service`,
      masked: false,
    });
    expect([...base.units.keys()]).toEqual(unitsBefore);
    expect(base.units.has('getty@tty9.service')).toBe(false);
    expect(base.edges).toHaveLength(edgesBefore);
    // Everything else is what the base says.
    for (const [name, unit] of base.units) expect(more.units.get(name)).toBe(unit);
  });

  it('extendUnitGraph refuses a graph the loader did not make', async () => {
    const g = await loadUnitGraph(new Host({ root }));
    await expect(extendUnitGraph({ ...g }, ['getty@tty1.service'])).rejects.toThrow(/not made by loadUnitGraph/);
  });

  it('lists the entries of dependency directories, /dev/null links marked', async () => {
    const links = dependencyLinks(await loadUnitGraph(new Host({ root })));
    const rows = links.map((l) => [l.owner, l.relation, l.name, l.path, l.masked]).sort((a, b) => String(a[3]).localeCompare(String(b[3])));
    expect(rows).toEqual([
      ['multi-user.target', 'Wants', 'gone.service', `${ETC}/multi-user.target.wants/gone.service`, true],
      ['sockets.target', 'Wants', 'agent.socket', `${ETC}/sockets.target.wants/agent.socket`, false],
    ]);
  });

  it('is read afresh after the write door changes the tree: the next plan on the same Host is converged', async () => {
    const host = new Host({ root });
    const changes = portFreeProvider.diff(spec, await portFreeProvider.observe(host, spec), { live: false });
    expect(changes.map((c) => [c.id, c.action])).toEqual([['disable-agent.socket', 'disable']]);
    const before = await systemUnitGraph(host);
    await portFreeProvider.apply(host, spec, changes, await applyContext(host));
    const after = await systemUnitGraph(host);
    expect(after).not.toBe(before);
    expect(after.edges.some((e) => e.file === `${ETC}/sockets.target.wants/agent.socket`)).toBe(false);
    expect(portFreeProvider.diff(spec, await portFreeProvider.observe(host, spec), { live: false })).toEqual([]);
  });
});
