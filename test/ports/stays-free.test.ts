// What would start a stopped port holder again once `systemctl disable` has
// removed its links. The oracles are systemd's own tools on a copy of each
// fixture tree: `systemctl --root disable GROUP` says which links go (the
// removed links handed to wouldStartAgain), and `systemd --test` on the
// disabled copy says whether a unit of the group still starts at boot.
import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, lstatSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { REVERSE_PROPS, graphUnknown, showReverse, unexplainedLive, wouldStartAgain } from '../../src/ports/stays-free.js';
import { cannedRunner } from '../helpers/canned-runner.js';
import { ETC, LIB, oracle, oracleStarted, systemctlRoot, unitTree } from '../helpers/systemd-oracle.js';
import type { Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** Every symlink under `root`, as target paths. */
function links(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return [p.slice(root.length)];
    return st.isDirectory() ? links(root, p) : [];
  });
}

/** The links systemctl --root disable removes, and which of `group` systemd still starts on the disabled copy. */
async function systemdSays(files: Tree, group: string[]): Promise<{ root: string; removed: string[]; stillStarted: string[] }> {
  const root = unitTree(roots, 'stays-free-', files);
  const copy = unitTree(roots, 'stays-free-disabled-', {});
  cpSync(root, copy, { recursive: true, verbatimSymlinks: true });
  const before = links(copy);
  const r = await systemctlRoot(copy, 'disable', ...group);
  expect(r.exitCode, r.stderr).toBe(0);
  const after = new Set(links(copy));
  const started = oracleStarted(await oracle(copy));
  return { root, removed: before.filter((l) => !after.has(l)), stillStarted: group.filter((u) => started.has(u)) };
}

const SVC = '[Unit]\nDefaultDependencies=no\n[Service]\nExecStart=/usr/bin/python3 -m http.server 6443\n[Install]\nWantedBy=multi-user.target\n';
const wants = (target: string, unit: string): Tree => ({ [`${ETC}/${target}.wants/${unit}`]: { link: `../${unit}` } });

describe('wouldStartAgain, against systemctl disable and systemd --test', () => {
  const cases: Array<[string, Tree, string[]]> = [
    [
      'enabled by its own [Install] link only: disable takes it away',
      { [`${ETC}/api.service`]: SVC, ...wants('multi-user.target', 'api.service') },
      ['api.service'],
    ],
    [
      "another enabled unit's Wants= still starts it",
      {
        [`${ETC}/api.service`]: SVC,
        [`${ETC}/stack.service`]: '[Unit]\nDefaultDependencies=no\nWants=api.service\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n',
        ...wants('multi-user.target', 'api.service'),
        ...wants('multi-user.target', 'stack.service'),
      },
      ['api.service'],
    ],
    [
      'a socket and its service disabled together; an enabled timer not in the group still starts the service',
      {
        [`${ETC}/api.service`]: SVC,
        [`${ETC}/api.socket`]: '[Unit]\nDefaultDependencies=no\n[Socket]\nListenStream=6443\n[Install]\nWantedBy=sockets.target\n',
        [`${ETC}/api.timer`]: '[Unit]\nDefaultDependencies=no\n[Timer]\nOnBootSec=5\nUnit=api.service\n[Install]\nWantedBy=timers.target\n',
        ...wants('sockets.target', 'api.socket'),
        ...wants('multi-user.target', 'api.service'),
        ...wants('timers.target', 'api.timer'),
        // The skeleton's targets: multi-user pulls sockets and timers as Debian's basic.target does.
        [`${LIB}/multi-user.target`]: '[Unit]\nDefaultDependencies=no\nWants=sockets.target timers.target\n',
      },
      ['api.socket', 'api.service'],
    ],
  ];
  for (const [title, files, group] of cases) {
    it(title, async () => {
      const { root, removed, stillStarted } = await systemdSays(files, group);
      const c = await wouldStartAgain(new Host({ root, live: false }), group, removed);
      expect(c.unknown).toBeNull();
      expect(c.group).toEqual(group);
      // One reason per unit of the group systemd still starts, naming that unit.
      expect(c.reasons).toHaveLength(stillStarted.length);
      for (const u of stillStarted)
        expect(
          c.reasons.some((r) => r.includes(u)),
          u,
        ).toBe(true);
      // The graph already loaded gives the same answer.
      const loaded = await loadUnitGraph(new Host({ root, live: false }));
      expect(await wouldStartAgain(new Host({ root, live: false }), group, removed, loaded)).toEqual(c);
    });
  }
  it('the oracle itself: the first is not started again, the second and the timer case are', async () => {
    expect((await systemdSays(cases[0]![1], ['api.service'])).stillStarted).toEqual([]);
    expect((await systemdSays(cases[1]![1], ['api.service'])).stillStarted).toEqual(['api.service']);
    expect((await systemdSays(cases[2]![1], ['api.socket', 'api.service'])).stillStarted).toEqual(['api.service']);
  });
});

describe('graphUnknown', () => {
  it('no default.target: unknown, never "nothing starts it"', async () => {
    const root = unitTree(roots, 'stays-free-nodefault-', { [`${ETC}/api.service`]: SVC });
    rmSync(path.join(root, ETC, 'default.target'));
    const graph = await loadUnitGraph(new Host({ root, live: false }));
    expect(graphUnknown(graph)).toBe('there is no default.target on the unit search path, so what starts at boot is unknown');
    expect((await wouldStartAgain(new Host({ root, live: false }), ['api.service'], [])).unknown).toBe(graphUnknown(graph));
  });
});

describe("unexplainedLive: the running manager's reverse dependencies no unit file explains", () => {
  it('a WantedBy= the files explain is left to the boot paths; one they do not is a sentence; one disable removes is not counted', async () => {
    const root = unitTree(roots, 'stays-free-live-', { [`${ETC}/api.service`]: SVC, ...wants('multi-user.target', 'api.service') });
    const graph = await loadUnitGraph(new Host({ root, live: false }));
    const link = `/${ETC}/multi-user.target.wants/api.service`;
    const show = new Map([
      ['WantedBy', 'multi-user.target'],
      ['TriggeredBy', 'api-gen.socket'],
      ['PartOf', 'stack.target'],
    ]);
    expect(unexplainedLive(graph, 'api.service', show, new Set())).toEqual([
      'the running manager reports TriggeredBy=api-gen.socket for api.service, which no unit file on the search path explains (a generator, a transient unit, or a file changed since the last daemon-reload); it may start api.service again',
    ]);
    expect(unexplainedLive(graph, 'api.service', new Map([['WantedBy', 'multi-user.target']]), new Set([link]))).toEqual([]);
  });
});

describe('showReverse', () => {
  it('asks systemctl show for every reverse property; null when systemctl cannot answer', async () => {
    const key = `systemctl show ${REVERSE_PROPS.map((p) => `-p ${p}`).join(' ')} api.service`;
    const host = new Host({ root: '/', live: true, runner: cannedRunner({ [key]: 'WantedBy=multi-user.target\nRequiredBy=\nTriggeredBy=api.socket\n' }) });
    const m = await showReverse(host, 'api.service');
    expect([m?.get('WantedBy'), m?.get('TriggeredBy')]).toEqual(['multi-user.target', 'api.socket']);
    expect(await showReverse(host, 'other.service')).toBeNull();
  });
});
