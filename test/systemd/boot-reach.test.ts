// Boot reachability (bootPaths, describeBootPath) against systemd's own
// loader: `systemd --test` (test/helpers/systemd-oracle.ts) computes the boot
// transaction over the same temp tree; a unit is reached at boot exactly when
// systemd would start it, and the sentence names the chain that pulls it in.
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { Host } from '../../src/host.js';
import { loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { bootPaths, describeBootPath } from '../../src/systemd/boot-reach.js';
import { buildTree, type Tree } from '../helpers/tree.js';
import { compareBootReach, plainService as service } from '../helpers/boot-reach-oracle.js';
import { DEFAULT_LINK, ETC, LIB, NODEFAULT, SKELETON, oracle, oracleStarted, plainTree } from '../helpers/systemd-oracle.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const tmpTree = (files: Tree): string => plainTree(roots, 'systemd-units-', files);

async function load(files: Tree) {
  const root = mkdtempSync(path.join(os.tmpdir(), 'systemd-more-'));
  roots.push(root);
  buildTree(root, { ...SKELETON, ...DEFAULT_LINK, ...files });
  chmodSync(root, 0o755);
  return { started: oracleStarted(await oracle(root)), graph: await loadUnitGraph(new Host({ root, live: false })) };
}

const compare = (files: Tree, names: string[]) => compareBootReach(roots, files, names);

describe('boot reachability, as systemd --test starts units', () => {
  it('BindsTo= and Requires= chains: the sentence names the relation, the shortest chain and where it is declared', async () => {
    const { ours, theirs, graph } = await compare(
      {
        // The short chain is listed first: breadth first, it is found before the long one is walked.
        [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=short.target long-1.target\n`,
        [`${LIB}/long-1.target`]: `${NODEFAULT}Wants=long-2.target\n`,
        [`${LIB}/long-2.target`]: `${NODEFAULT}Wants=x.service\n`,
        [`${LIB}/short.target`]: `${NODEFAULT}BindsTo=x.service\nRequires=y.service\n`,
        [`${LIB}/x.service`]: service(),
        [`${LIB}/y.service`]: service(),
      },
      ['x.service', 'y.service'],
    );
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'x.service': true, 'y.service': true });
    const x = bootPaths(graph, ['x.service']).get('x.service')!;
    expect(x.edges.map((e) => `${e.from} ${e.relation} ${e.to}`)).toEqual(['multi-user.target Wants short.target', 'short.target BindsTo x.service']);
    expect(describeBootPath(graph, x)).toBe(
      'x.service is still bound to short.target (BindsTo= at /usr/lib/systemd/system/short.target:3), which is enabled (multi-user.target (the default target) -> short.target)',
    );
    const y = bootPaths(graph, ['y.service']).get('y.service')!;
    expect(describeBootPath(graph, y, { still: false })).toBe(
      'y.service is required by short.target (Requires= at /usr/lib/systemd/system/short.target:4), which is enabled (multi-user.target (the default target) -> short.target)',
    );
  });

  it('PartOf= of a started unit starts nothing', async () => {
    const { ours, theirs } = await compare(
      {
        [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=a.service\n`,
        [`${LIB}/a.service`]: service('PartOf=group.target\n'),
        [`${LIB}/group.target`]: NODEFAULT,
      },
      ['a.service', 'group.target'],
    );
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'a.service': true, 'group.target': false });
  });

  it('asked by an alias name, the path is told under that name; the default target itself is no path', async () => {
    const { graph, theirs } = await compare(
      {
        [`${LIB}/agent.service`]: service(),
        [`${ETC}/agent-alias.service`]: { link: '../../../usr/lib/systemd/system/agent.service' },
        [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=agent.service\n`,
      },
      ['agent.service'],
    );
    expect(theirs['agent.service']).toBe(true);
    const paths = bootPaths(graph, ['agent-alias.service', 'default.target', 'multi-user.target']);
    expect([...paths.keys()]).toEqual(['agent-alias.service']);
    expect(paths.get('agent-alias.service')!.unit).toBe('agent-alias.service');
    expect(describeBootPath(graph, paths.get('agent-alias.service')!)).toBe(
      // The Wants= line names the unit under its other name, so the sentence says which.
      'agent-alias.service is still wanted by multi-user.target (as agent.service) (Wants= at /usr/lib/systemd/system/multi-user.target:3), which is the default target',
    );
  });

  it('a masked default.target, one that leads nowhere, or none: nothing starts at boot', async () => {
    for (const [files, dt] of [
      [{ [`${ETC}/default.target`]: { link: '/dev/null' } }, null],
      [{ [`${ETC}/default.target`]: { link: '../../../usr/lib/systemd/system/gone.target' } }, 'gone.target'],
      [{}, null],
    ] as Array<[Tree, string | null]>) {
      const root = tmpTree({ ...SKELETON, [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=x.service\n`, [`${LIB}/x.service`]: service(), ...files });
      const graph = await loadUnitGraph(new Host({ root, live: false }));
      expect(graph.defaultTarget).toBe(dt);
      expect(bootPaths(graph, ['x.service', 'multi-user.target']).size).toBe(0);
      // systemd --test agrees: without a default target it has no boot transaction to compute.
      const r = await execa('/lib/systemd/systemd', ['--test', '--system', '--unit=default.target', '--no-pager'], {
        env: {
          SYSTEMD_UNIT_PATH: [`${root}/${ETC}`, `${root}/${LIB}`].join(':'),
          SYSTEMD_LOG_LEVEL: 'err',
          HOME: root,
          SYSTEMD_GENERATOR_PATH: root,
          SYSTEMD_ENVIRONMENT_GENERATOR_PATH: root,
        },
        extendEnv: false,
        reject: false,
        timeout: 60_000,
        ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}),
      });
      expect(r.stdout).not.toMatch(/Action: x\.service -> start/);
    }
  });

  it('a unit without a file passes nothing on, even with a .wants directory of its own', async () => {
    const { ours, theirs } = await compare(
      {
        [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=ghost.target\n`,
        [`${LIB}/ghost.target.wants/x.service`]: { link: '../x.service' },
        [`${LIB}/x.service`]: service(),
      },
      ['x.service', 'ghost.target'],
    );
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'x.service': false, 'ghost.target': false });
  });

  it('a unit file of zero bytes masks, as /dev/null does, and passes nothing on', async () => {
    const { ours, theirs } = await compare(
      {
        [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=blank.target\n`,
        [`${LIB}/blank.target`]: '',
        [`${LIB}/blank.target.wants/x.service`]: { link: '../x.service' },
        [`${LIB}/x.service`]: service(),
      },
      ['blank.target', 'x.service'],
    );
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'blank.target': false, 'x.service': false });
  });

  it('a unit file holding only a newline is not masked (systemd masks 0 bytes only): it loads and passes its .wants on', async () => {
    const { ours, theirs } = await compare(
      {
        [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=blank.target\n`,
        [`${LIB}/blank.target`]: '\n',
        [`${LIB}/blank.target.wants/x.service`]: { link: '../x.service' },
        [`${LIB}/x.service`]: service(),
      },
      ['blank.target', 'x.service'],
    );
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'blank.target': true, 'x.service': true });
  });
});

describe('boot paths, continued', () => {
  it('a chain of three relations names every unit between the default target and the one that pulls', async () => {
    const { started, graph } = await load({
      [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=a.target\n`,
      [`${LIB}/a.target`]: `${NODEFAULT}Wants=b.target\n`,
      [`${LIB}/b.target`]: `${NODEFAULT}Wants=c.target\n`,
      [`${LIB}/c.target`]: `${NODEFAULT}Wants=x.service\n`,
      [`${LIB}/x.service`]: service(),
    });
    expect(started.has('x.service')).toBe(true);
    const p = bootPaths(graph, ['x.service']).get('x.service')!;
    expect(describeBootPath(graph, p)).toBe(
      'x.service is still wanted by c.target (Wants= at /usr/lib/systemd/system/c.target:3), which is enabled (multi-user.target (the default target) -> a.target -> b.target -> c.target)',
    );
  });

  it('a unit that wants the default target back is still reached by one relation', async () => {
    const { started, graph } = await load({
      [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=a.service\n`,
      [`${LIB}/a.service`]: service('Wants=multi-user.target\n'),
    });
    expect(started.has('a.service')).toBe(true);
    const p = bootPaths(graph, ['a.service']).get('a.service')!;
    expect(p.edges.map((e) => `${e.from} ${e.relation} ${e.to}`)).toEqual(['multi-user.target Wants a.service']);
  });
});
