// More of src/systemd/ against systemd's own programs: multi-digit and two-decimal spans and a
// blank text (systemd-analyze timespan), a chain of three relations told in
// one sentence, and a relation back to the default target (systemd --test).
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { parseTimespanMs } from '../../src/systemd/systemctl-output.js';
import { loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { bootPaths, describeBootPath } from '../../src/systemd/boot-reach.js';
import { buildTree, type Tree } from '../helpers/tree.js';
import { DEFAULT_LINK, LIB, NODEFAULT, SKELETON, oracle, oracleStarted } from '../helpers/systemd-oracle.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** systemd's own parser: the span in ms, or null when it refuses the text. */
function theirs(text: string): number | null {
  const r = spawnSync('systemd-analyze', ['timespan', text], { encoding: 'utf8' });
  return r.status === 0 ? Math.round(Number(/μs: (\d+)/.exec(r.stdout)![1]) / 1000) : null;
}

describe('parseTimespanMs against systemd-analyze timespan, continued', () => {
  it('several digits and two decimals, bare (seconds) or with a unit', () => {
    for (const t of ['12', '1.25', '1.25s', '10.75min', '250ms']) {
      expect(theirs(t), t).not.toBeNull();
      expect(parseTimespanMs(t), t).toBe(theirs(t));
    }
  });
  it('every unit systemd knows (weeks, months, years, both micro signs), numbers without a unit summed, and what it refuses', () => {
    const known = [
      '19',
      '9s',
      '1\t5',
      '1\n5',
      '1\r5',
      '\t2s',
      '1w',
      '2M',
      '1y',
      '500\u03bcs',
      '500\u00b5s',
      '5 5',
      '1min 30',
      '1month 2w',
      '1y 2month 3w',
      '2 h',
      '1.5h',
      '3 days',
      '10msec',
      '12.34 .56',
      '1s.5',
    ];
    for (const t of known) {
      expect(theirs(t), t).not.toBeNull();
      expect(parseTimespanMs(t), t).toBe(theirs(t));
    }
    for (const t of ['12.34.56', '5x', '-1', '1 s s']) {
      expect(theirs(t), t).toBeNull();
      expect(parseTimespanMs(t), t).toBeNull();
    }
  });
  it('a text of blanks only is no span', () => {
    expect(theirs('   ')).toBeNull();
    expect(parseTimespanMs('   ')).toBeNull();
  });
});

const service = (extra = ''): string => `[Unit]\nDefaultDependencies=no\n${extra}[Service]\nExecStart=/bin/true\n`;

async function load(files: Tree) {
  const root = mkdtempSync(path.join(os.tmpdir(), 'systemd-more-'));
  roots.push(root);
  buildTree(root, { ...SKELETON, ...DEFAULT_LINK, ...files });
  chmodSync(root, 0o755);
  return { started: oracleStarted(await oracle(root)), graph: await loadUnitGraph(new Host({ root, live: false })) };
}

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
