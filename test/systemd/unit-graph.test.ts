// The unit loader and boot reachability against systemd itself. Each fixture
// is a unit tree in a temp dir; the oracle is systemd's own test mode
// (`systemd --test --system --unit=default.target`), pointed at that tree with
// $SYSTEMD_UNIT_PATH and no generators, run as an unprivileged user: it loads
// the units with the real loader, computes the boot transaction and dumps
// every loaded unit with its reverse dependencies (WantedBy:, RequiredBy:,
// UpheldBy:, BoundBy:, TriggeredBy:). It starts nothing. A unit counts as
// started at boot by the oracle when it is in the boot transaction or, at any
// depth, triggered by or wanted by such a unit. Links in the fixtures are
// relative, since systemd resolves absolute ones on this machine.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { execa } from 'execa';
import { Host } from '../../src/host.js';
import { dashPrefixes, expandSpecifiers, loadUnitGraph, splitInstance, type UnitGraph } from '../../src/systemd/unit-loader.js';
import { bootPaths, describeBootPath } from '../../src/systemd/boot-reach.js';
import type { Tree } from '../helpers/tree.js';
import { ETC, LIB, NODEFAULT, SYSTEMD, oracle, oracleStarted, unitTree } from '../helpers/systemd-oracle.js';

const roots: string[] = [];

beforeAll(async () => {
  // No skip: without systemd these tests prove nothing.
  const r = await execa(SYSTEMD, ['--version'], { reject: false });
  if (r.exitCode !== 0) throw new Error(`${SYSTEMD} is required for test/systemd/unit-graph.test.ts (apt-get install systemd): ${r.stderr || r.message}`);
});

afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const service = (extra = ''): string => `[Unit]\nDefaultDependencies=no\n${extra}[Service]\nExecStart=/bin/true\n`;

const tree = (files: Tree): string => unitTree(roots, 'unit-graph-', files);

async function graphOf(root: string, without: string[] = []): Promise<UnitGraph> {
  return loadUnitGraph(new Host({ root, live: false }), { without: new Set(without) });
}

/** For each fixture unit: does the oracle start it at boot, and do we. */
async function compare(
  root: string,
  names: string[],
  without: string[] = [],
): Promise<{ ours: Record<string, boolean>; theirs: Record<string, boolean>; graph: UnitGraph }> {
  const started = oracleStarted(await oracle(root));
  const graph = await graphOf(root, without);
  const reach = bootPaths(graph, names);
  return {
    ours: Object.fromEntries(names.map((n) => [n, reach.has(n)])),
    theirs: Object.fromEntries(names.map((n) => [n, started.has(n)])),
    graph,
  };
}

function sentence(graph: UnitGraph, unit: string): string {
  const p = bootPaths(graph, [unit]).get(unit);
  return p ? describeBootPath(graph, p) : 'not reached';
}

describe('unit graph vs systemd --test', () => {
  it('Wants= in [Unit] of an enabled target pulls the unit in; the sentence names file and line', async () => {
    const root = tree({
      [`${ETC}/monitoring.target`]: '[Unit]\nDefaultDependencies=no\nWants=agent.service other.service\n[Install]\nWantedBy=multi-user.target\n',
      [`${ETC}/multi-user.target.wants/monitoring.target`]: { link: '../monitoring.target' },
      [`${LIB}/agent.service`]: service(),
      [`${LIB}/other.service`]: service(),
      [`${LIB}/idle.service`]: service(),
      [`${LIB}/idle.target`]: '[Unit]\nDefaultDependencies=no\nWants=idle.service\n',
    });
    const { ours, theirs, graph } = await compare(root, ['agent.service', 'other.service', 'idle.service', 'monitoring.target']);
    expect(ours).toEqual(theirs);
    expect(theirs['agent.service']).toBe(true);
    expect(theirs['idle.service']).toBe(false);
    expect(sentence(graph, 'agent.service')).toBe(
      'agent.service is still wanted by monitoring.target (Wants= at /etc/systemd/system/monitoring.target:3), which is enabled (multi-user.target (the default target) -> monitoring.target)',
    );
  });

  it('Requires=, BindsTo= and Upholds= pull in; PartOf= does not', async () => {
    const root = tree({
      [`${LIB}/multi-user.target`]: '[Unit]\nDefaultDependencies=no\nRequires=req.service\nBindsTo=bound.service\nUpholds=held.service\n',
      [`${LIB}/req.service`]: service(),
      [`${LIB}/bound.service`]: service(),
      [`${LIB}/held.service`]: service(),
      [`${LIB}/part.service`]: service('PartOf=multi-user.target\n'),
    });
    const { ours, theirs } = await compare(root, ['req.service', 'bound.service', 'held.service', 'part.service']);
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'req.service': true, 'bound.service': true, 'held.service': true, 'part.service': false });
  });

  it('drop-in Wants=, with a same-named drop-in in /etc replacing the vendor one', async () => {
    const root = tree({
      [`${LIB}/mon.target`]: NODEFAULT,
      [`${ETC}/multi-user.target.wants/mon.target`]: { link: '../../../../usr/lib/systemd/system/mon.target' },
      [`${LIB}/mon.target.d/10-agent.conf`]: '[Unit]\nWants=agent.service\n',
      [`${LIB}/mon.target.d/20-gone.conf`]: '[Unit]\nWants=gone.service\n',
      [`${ETC}/mon.target.d/20-gone.conf`]: '# the admin took gone.service out\n',
      [`${LIB}/agent.service`]: service(),
      [`${LIB}/gone.service`]: service(),
    });
    const { ours, theirs, graph } = await compare(root, ['agent.service', 'gone.service']);
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'agent.service': true, 'gone.service': false });
    expect(sentence(graph, 'agent.service')).toContain('(Wants= at /usr/lib/systemd/system/mon.target.d/10-agent.conf:2)');
  });

  // systemd 252's manager reads only .wants/ and .requires/ directories (libsystemd-core-252 has no ".upholds"
  // string), while `systemctl enable` writes .upholds/ links for UpheldBy=; PortFree counts them as a way back
  // (a newer manager reads them), so here ours and the oracle differ on u.service only, on purpose.
  it('.wants, .requires and .upholds links in vendor and /etc directories', async () => {
    const root = tree({
      [`${LIB}/multi-user.target.wants/w.service`]: { link: '../w.service' },
      [`${ETC}/multi-user.target.requires/r.service`]: { link: '../../../../usr/lib/systemd/system/r.service' },
      [`${LIB}/multi-user.target.upholds/u.service`]: { link: '../u.service' },
      [`${LIB}/w.service`]: service(),
      [`${LIB}/r.service`]: service(),
      [`${LIB}/u.service`]: service(),
      [`${LIB}/n.service`]: service(),
    });
    const { ours, theirs, graph } = await compare(root, ['w.service', 'r.service', 'u.service', 'n.service']);
    expect(ours).toEqual({ ...theirs, 'u.service': true });
    expect(theirs).toEqual({ 'w.service': true, 'r.service': true, 'u.service': false, 'n.service': false });
    expect(sentence(graph, 'u.service')).toContain('upheld by multi-user.target (link /usr/lib/systemd/system/multi-user.target.upholds/u.service)');
    expect(sentence(graph, 'r.service')).toBe(
      'r.service is still required by multi-user.target (link /etc/systemd/system/multi-user.target.requires/r.service), which is the default target',
    );
  });

  it('socket, timer and path triggers: Service=/Unit= and the same-name default', async () => {
    const root = tree({
      [`${LIB}/a.socket`]: `${NODEFAULT}[Socket]\nListenStream=10250\nService=a-impl.service\n`,
      [`${LIB}/a-impl.service`]: service(),
      [`${LIB}/a.service`]: service(),
      [`${LIB}/b.timer`]: `${NODEFAULT}[Timer]\nOnBootSec=5min\n`,
      [`${LIB}/b.service`]: service(),
      [`${LIB}/c.path`]: `${NODEFAULT}[Path]\nPathExists=/tmp/x\nUnit=c-run.service\n`,
      [`${LIB}/c-run.service`]: service(),
      [`${LIB}/d.timer`]: `${NODEFAULT}[Timer]\nOnBootSec=5min\n`,
      [`${LIB}/d.service`]: service(),
      [`${LIB}/multi-user.target.wants/a.socket`]: { link: '../a.socket' },
      [`${LIB}/multi-user.target.wants/b.timer`]: { link: '../b.timer' },
      [`${ETC}/multi-user.target.wants/c.path`]: { link: '../../../../usr/lib/systemd/system/c.path' },
    });
    const names = ['a-impl.service', 'a.service', 'b.service', 'c-run.service', 'd.service'];
    const { ours, theirs, graph } = await compare(root, names);
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'a-impl.service': true, 'a.service': false, 'b.service': true, 'c-run.service': true, 'd.service': false });
    expect(sentence(graph, 'c-run.service')).toContain('triggered by c.path (Unit= at /usr/lib/systemd/system/c.path:5)');
    expect(sentence(graph, 'b.service')).toContain('triggered by b.timer (b.timer triggers the unit of its own name by default');
  });

  it('aliases: Wants= and .wants links through an alias name reach the unit', async () => {
    const root = tree({
      [`${LIB}/agent.service`]: service(),
      [`${ETC}/agent-alias.service`]: { link: '../../../usr/lib/systemd/system/agent.service' },
      [`${LIB}/mon.target`]: `${NODEFAULT}Wants=agent-alias.service\n`,
      [`${LIB}/multi-user.target.wants/mon.target`]: { link: '../mon.target' },
      [`${LIB}/x.service`]: service(),
      [`${ETC}/x-alias.service`]: { link: '../../../usr/lib/systemd/system/x.service' },
      [`${ETC}/multi-user.target.wants/x-alias.service`]: { link: '../../../../usr/lib/systemd/system/x.service' },
    });
    const { ours, theirs, graph } = await compare(root, ['agent.service', 'x.service']);
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'agent.service': true, 'x.service': true });
    expect(sentence(graph, 'agent.service')).toContain('wanted by mon.target (as agent-alias.service) (Wants= at /usr/lib/systemd/system/mon.target:3)');
  });

  it('templates: an instance link in .wants, and %i in the template', async () => {
    const root = tree({
      [`${LIB}/worker@.service`]: service('Wants=helper-%i.service\n'),
      [`${ETC}/multi-user.target.wants/worker@a.service`]: { link: '../../../../usr/lib/systemd/system/worker@.service' },
      [`${LIB}/helper-a.service`]: service(),
      [`${LIB}/helper-b.service`]: service(),
    });
    const { ours, theirs } = await compare(root, ['worker@a.service', 'helper-a.service', 'helper-b.service', 'worker@b.service']);
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'worker@a.service': true, 'helper-a.service': true, 'helper-b.service': false, 'worker@b.service': false });
  });

  it('a masked unit is not started, and a masked target passes nothing on', async () => {
    const root = tree({
      [`${LIB}/agent.service`]: service(),
      [`${ETC}/agent.service`]: { link: '/dev/null' },
      [`${LIB}/multi-user.target.wants/agent.service`]: { link: '../agent.service' },
      [`${LIB}/mon.target`]: `${NODEFAULT}Wants=kept.service\n`,
      [`${ETC}/mon.target`]: { link: '/dev/null' },
      [`${LIB}/multi-user.target.wants/mon.target`]: { link: '../mon.target' },
      [`${LIB}/kept.service`]: service(),
    });
    const { ours, theirs } = await compare(root, ['agent.service', 'kept.service']);
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'agent.service': false, 'kept.service': false });
  });

  it('after `systemctl disable`, a Wants= elsewhere still starts the unit (loader told to skip the links disable removes)', async () => {
    const files: Tree = {
      [`${LIB}/agent.service`]: `${service()}[Install]\nWantedBy=multi-user.target\n`,
      [`${LIB}/mon.target`]: `${NODEFAULT}Wants=agent.service\n[Install]\nWantedBy=multi-user.target\n`,
      [`${LIB}/solo.service`]: `${service()}[Install]\nWantedBy=multi-user.target\n`,
    };
    const before = tree(files);
    const after = tree(files);
    for (const r of [before, after]) {
      const en = await execa('systemctl', [`--root=${r}`, 'enable', 'agent.service', 'mon.target', 'solo.service'], { reject: false });
      expect(en.exitCode, en.stderr).toBe(0);
    }
    const dis = await execa('systemctl', [`--root=${after}`, 'disable', 'agent.service', 'solo.service'], { reject: false });
    expect(dis.exitCode, dis.stderr).toBe(0);
    // Ours: the tree before disable, minus the links systemctl just removed (what PortFree passes as `without`).
    const removed = ['/etc/systemd/system/multi-user.target.wants/agent.service', '/etc/systemd/system/multi-user.target.wants/solo.service'];
    const theirs = oracleStarted(await oracle(after));
    const graph = await graphOf(before, removed);
    const reach = bootPaths(graph, ['agent.service', 'solo.service']);
    expect({ agent: reach.has('agent.service'), solo: reach.has('solo.service') }).toEqual({
      agent: theirs.has('agent.service'),
      solo: theirs.has('solo.service'),
    });
    expect(theirs.has('agent.service')).toBe(true);
    expect(sentence(graph, 'agent.service')).toContain('wanted by mon.target (Wants= at /usr/lib/systemd/system/mon.target:3)');
  });

  it('dashed-prefix drop-ins (a-.service.d) apply to a-b.service; a drop-in of another name does not', async () => {
    const root = tree({
      [`${LIB}/a-b.service`]: service(),
      [`${LIB}/multi-user.target.wants/a-b.service`]: { link: '../a-b.service' },
      [`${ETC}/a-.service.d/10-pull.conf`]: '[Unit]\nWants=pulled.service\n',
      [`${ETC}/ab.service.d/10-pull.conf`]: '[Unit]\nWants=not-pulled.service\n',
      [`${LIB}/pulled.service`]: service(),
      [`${LIB}/not-pulled.service`]: service(),
    });
    const { ours, theirs, graph } = await compare(root, ['pulled.service', 'not-pulled.service']);
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'pulled.service': true, 'not-pulled.service': false });
    expect(sentence(graph, 'pulled.service')).toContain('wanted by a-b.service (Wants= at /etc/systemd/system/a-.service.d/10-pull.conf:2)');
  });
});

describe('unit-name helpers (systemd.unit(5))', () => {
  it('expands the unit-name specifiers; an unknown one is unknown, not dropped', () => {
    expect(expandSpecifiers('helper-%i.service %n %N %p %%', 'worker@a.service')).toEqual({ value: 'helper-a.service worker@a.service worker@a worker %' });
    expect(expandSpecifiers('x-%H.service', 'worker@a.service')).toEqual({ unknown: '%H' });
  });
  it('dashed prefixes and instances', () => {
    expect(dashPrefixes('foo-bar-baz.service')).toEqual(['foo-.service', 'foo-bar-.service']);
    expect(dashPrefixes('plain.service')).toEqual([]);
    expect(splitInstance('getty@tty1.service')).toEqual({ template: 'getty@.service', instance: 'tty1' });
    expect(splitInstance('getty.service')).toEqual({ template: null, instance: null });
  });
});
