// src/systemd/ against systemd's own programs: systemd-analyze timespan for the timespan parser, `systemctl
// --root` (is-enabled, enable, disable) for masks and link snapshots, and
// `systemd --test` (test/helpers/systemd-oracle.ts) for unit-file syntax and
// boot reachability. systemctl and systemd only ever see temp trees.
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { execa } from 'execa';
import { Host, type CommandRunner } from '../../src/host.js';
import { parseListSockets, parseShowProperties, parseTimespanMs } from '../../src/systemd/systemctl-output.js';
import { systemctlValue } from '../../src/systemd/systemctl-show.js';
import { isMaskEntry } from '../../src/systemd/unit-dirs.js';
import { enablementOf, linkDelta, unitLinkSnapshot } from '../../src/systemd/unit-links.js';
import { loadUnitGraph, type UnitGraph } from '../../src/systemd/unit-loader.js';
import { bootPaths, describeBootPath } from '../../src/systemd/boot-reach.js';
import type { Tree } from '../helpers/tree.js';
import { DEFAULT_LINK, ETC, LIB, NODEFAULT, SKELETON, oracle, oracleStarted, plainTree, systemctlRoot } from '../helpers/systemd-oracle.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const tmpTree = (files: Tree): string => plainTree(roots, 'systemd-units-', files);

describe('parseTimespanMs against systemd-analyze timespan', () => {
  /** systemd's own parser: the span in ms (rounded as ours), or null when it refuses the text or says infinity. */
  const theirs = (text: string): number | null => {
    const r = spawnSync('systemd-analyze', ['timespan', text], { encoding: 'utf8' });
    if (r.status !== 0) return null;
    const us = /μs: (\d+)/.exec(r.stdout)![1]!;
    return us === '18446744073709551615' ? null : Math.round(Number(us) / 1000);
  };
  const accepted = [
    '100ms',
    '5s',
    '1min 30s',
    '1min30s',
    '1 min 30 s',
    '1.5s',
    '1.5min',
    '2',
    '0',
    '7usec',
    '1500us',
    '10msec',
    '500µs',
    '5sec',
    '1second',
    '1.5',
    '2 hours',
    '3hr',
    '1h',
    '1d 2h',
    '2d',
    '1day',
    '2days',
    '1m',
    '2minutes',
    '1minute',
    '5 s',
    '  5s  ',
    '1s 500ms',
  ];
  const refused = ['soon', '1S', '5s junk', 'x5s', '', 'infinity', 's', '5x', '5 parsecs'];
  it('accepts what systemd accepts, with the same length', () => {
    for (const t of accepted) {
      const want = theirs(t);
      expect(want, `systemd-analyze accepts ${JSON.stringify(t)}`).not.toBeNull();
      expect(parseTimespanMs(t), t).toBe(want);
    }
  });
  it('refuses what systemd refuses (and infinity, which is no delay to wait for)', () => {
    for (const t of refused) {
      expect(theirs(t), `systemd-analyze on ${JSON.stringify(t)}`).toBeNull();
      expect(parseTimespanMs(t), t).toBeNull();
    }
  });
});

describe('systemctl show and list-sockets output', () => {
  it('show: one property per line, split at the first "=", the value trimmed; a line without a name is no property', () => {
    const text = 'Environment=A=1 B=2\nRestartUSec=100ms  \nMainPID=0\n=orphan\nnot a property\nExecMainStatus=\n';
    const p = parseShowProperties(text);
    expect([...p]).toEqual([
      ['Environment', 'A=1 B=2'],
      ['RestartUSec', '100ms'],
      ['MainPID', '0'],
      ['ExecMainStatus', ''],
    ]);
  });

  it('list-sockets: a header and a footer are no sockets; ACTIVATES is a comma list', () => {
    const text = [
      'LISTEN                      UNIT                  ACTIVATES',
      '[::]:10250                  agent.socket          agent.service, agent-helper.service',
      '/run/x.sock                 x.socket              x.service',
      '',
      '2 sockets listed.',
      'Pass --all to see loaded but inactive sockets, too.',
    ].join('\n');
    expect(parseListSockets(text)).toEqual([
      { listen: '[::]:10250', port: 10250, unit: 'agent.socket', activates: ['agent.service', 'agent-helper.service'] },
      { listen: '/run/x.sock', port: null, unit: 'x.socket', activates: ['x.service'] },
    ]);
  });

  it('systemctlValue asks `systemctl [scope] show -p PROP --value UNIT` and trims; a failure or a missing systemctl is null', async () => {
    const calls: string[][] = [];
    const answers: Record<string, Awaited<ReturnType<CommandRunner>> | Error> = {
      'a.service': { command: 'systemctl', exitCode: 0, stdout: ' 100ms\n', stderr: '' },
      'b.service': { command: 'systemctl', exitCode: 1, stdout: 'ignored\n', stderr: 'Unit b.service could not be found.' },
      'c.service': new Error('spawn systemctl ENOENT'),
    };
    const runner: CommandRunner = async (cmd, args) => {
      calls.push([cmd, ...args]);
      const a = answers[args[args.length - 1]!]!;
      if (a instanceof Error) throw a;
      return a;
    };
    const host = new Host({ root: '/nonexistent-fixture', live: true, runner });
    expect(await systemctlValue(host, 'RestartUSec', 'a.service', { cmd: 'systemctl', args: ['--user', '-M', 'alice@'] })).toBe('100ms');
    expect(await systemctlValue(host, 'RestartUSec', 'b.service')).toBeNull();
    expect(await systemctlValue(host, 'MainPID', 'c.service')).toBeNull();
    expect(calls[0]).toEqual(['systemctl', '--user', '-M', 'alice@', 'show', '-p', 'RestartUSec', '--value', 'a.service']);
    expect(calls[1]).toEqual(['systemctl', 'show', '-p', 'RestartUSec', '--value', 'b.service']);
  });
});

describe('masks and links, against systemctl --root', () => {
  it('isMaskEntry says masked exactly where `systemctl is-enabled` says masked', async () => {
    const root = tmpTree({
      [`${ETC}/null.service`]: { link: '/dev/null' },
      [`${ETC}/empty.service`]: '',
      [`${ETC}/blank.service`]: '\n',
      [`${LIB}/real.service`]: '[Service]\nExecStart=/bin/true\n',
      [`${ETC}/linked.service`]: { link: '/usr/lib/systemd/system/real.service' },
      'run/systemd/system/rt.service': { link: '/dev/null' },
    });
    const host = new Host({ root, live: false });
    const cases: Array<[string, string]> = [
      ['null.service', `/${ETC}/null.service`],
      ['empty.service', `/${ETC}/empty.service`],
      ['blank.service', `/${ETC}/blank.service`],
      ['real.service', `/${LIB}/real.service`],
      ['linked.service', `/${ETC}/linked.service`],
      ['rt.service', '/run/systemd/system/rt.service'],
    ];
    for (const [unit, entry] of cases) {
      const state = (await systemctlRoot(root, 'is-enabled', unit)).stdout.trim();
      expect(await isMaskEntry(host, entry), `${unit}: systemctl says ${state}`).toBe(state.startsWith('masked'));
    }
    expect(await isMaskEntry(host, `/${ETC}/missing.service`)).toBe(false);
  });

  it('linkDelta over two snapshots names exactly the links systemctl enable created and disable removed', async () => {
    const root = tmpTree({
      [`${LIB}/a.service`]: '[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\nAlias=b.service\n',
      [`${LIB}/multi-user.target`]: NODEFAULT,
      [`${ETC}/other.target.wants/keep.service`]: { link: '/usr/lib/systemd/system/keep.service' },
      [`${LIB}/keep.service`]: '[Service]\nExecStart=/bin/true\n',
    });
    const host = new Host({ root, live: false });
    const listed = (text: string, re: RegExp) => [...text.matchAll(re)].map((m) => m[1]!.slice(root.length)).sort();
    const s0 = await unitLinkSnapshot(host);
    const en = await systemctlRoot(root, 'enable', 'a.service');
    expect(en.exitCode, en.stderr).toBe(0);
    const s1 = await unitLinkSnapshot(host);
    const d1 = linkDelta(s0, s1);
    expect(d1.removed).toEqual([]);
    expect(d1.added.map((l) => l.path).sort()).toEqual(listed(en.stderr, /^Created symlink (\S+) → /gm));
    expect(d1.added.every((l) => l.link === '/usr/lib/systemd/system/a.service')).toBe(true);
    const dis = await systemctlRoot(root, 'disable', 'a.service');
    expect(dis.exitCode, dis.stderr).toBe(0);
    const d2 = linkDelta(s1, await unitLinkSnapshot(host));
    expect(d2.added).toEqual([]);
    expect(d2.removed.map((l) => l.path).sort()).toEqual(listed(dis.stderr, /^Removed "([^"]+)"\.$/gm));
    // The link nobody touched is in every snapshot and in no delta.
    expect(s0.get('/etc/systemd/system/other.target.wants/keep.service')).toBe('/usr/lib/systemd/system/keep.service');
  });

  it('a link whose target text changed is removed and added', () => {
    const d = linkDelta(new Map([['/etc/systemd/system/x.service', '/a/x.service']]), new Map([['/etc/systemd/system/x.service', '/b/x.service']]));
    expect(d).toEqual({
      removed: [{ path: '/etc/systemd/system/x.service', link: '/a/x.service' }],
      added: [{ path: '/etc/systemd/system/x.service', link: '/b/x.service' }],
    });
  });

  it('enablementOf: masked as `systemctl is-enabled` says, vendor links that disable leaves as systemctl disable leaves them', async () => {
    const files: Tree = {
      [`${LIB}/v.service`]: '[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n',
      [`${LIB}/multi-user.target.wants/v.service`]: { link: '../v.service' },
      [`${LIB}/t@.service`]: '[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n',
      [`${LIB}/multi-user.target.wants/t@one.service`]: { link: '../t@.service' },
      [`${LIB}/m.service`]: '[Service]\nExecStart=/bin/true\n',
      [`${ETC}/m.service`]: { link: '/dev/null' },
      [`${LIB}/rm.service`]: '[Service]\nExecStart=/bin/true\n',
      'run/systemd/system/rm.service': { link: '/dev/null' },
      [`${LIB}/e.service`]: '[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n',
      [`${ETC}/multi-user.target.wants/e.service`]: { link: '/usr/lib/systemd/system/e.service' },
      [`${LIB}/multi-user.target`]: NODEFAULT,
    };
    const root = tmpTree(files);
    const units = ['v.service', 't@one.service', 'm.service', 'rm.service', 'e.service'];
    const en = await enablementOf(new Host({ root, live: false }), units);
    for (const u of units) {
      const state = (await systemctlRoot(root, 'is-enabled', u)).stdout.trim();
      expect(en.get(u)!.masked, `${u}: ${state}`).toBe(state.startsWith('masked'));
    }
    expect(en.get('v.service')!.vendorLinks).toEqual(['/usr/lib/systemd/system/multi-user.target.wants/v.service']);
    expect(en.get('t@one.service')!.vendorLinks).toEqual(['/usr/lib/systemd/system/multi-user.target.wants/t@one.service']);
    expect(en.get('e.service')!).toMatchObject({ links: ['/etc/systemd/system/multi-user.target.wants/e.service'], vendorLinks: [], masked: false });
    // systemctl disable removes the /etc link and leaves both vendor links where they are.
    const dis = await systemctlRoot(root, 'disable', 'v.service', 't@one.service', 'e.service');
    expect(dis.exitCode, dis.stderr).toBe(0);
    const after = await unitLinkSnapshot(new Host({ root, live: false }));
    // Only the mask is left in /etc (disable never touches a mask).
    expect([...after.keys()]).toEqual(['/etc/systemd/system/m.service']);
    expect(spawnSync('test', ['-L', `${root}/${LIB}/multi-user.target.wants/v.service`]).status).toBe(0);
    expect(spawnSync('test', ['-L', `${root}/${LIB}/multi-user.target.wants/t@one.service`]).status).toBe(0);
  });
});

const service = (extra = ''): string => `[Unit]\nDefaultDependencies=no\n${extra}[Service]\nExecStart=/bin/true\n`;

async function compare(files: Tree, names: string[]): Promise<{ ours: Record<string, boolean>; theirs: Record<string, boolean>; graph: UnitGraph }> {
  const root = tmpTree({ ...SKELETON, ...DEFAULT_LINK, ...files });
  const started = oracleStarted(await oracle(root));
  const graph = await loadUnitGraph(new Host({ root, live: false }));
  const reach = bootPaths(graph, names);
  return { ours: Object.fromEntries(names.map((n) => [n, reach.has(n)])), theirs: Object.fromEntries(names.map((n) => [n, started.has(n)])), graph };
}

describe('unit-file syntax, as systemd --test reads it', () => {
  it('continuations (with comment lines inside), ";" comments, blanks around "=", sections other than [Unit]', async () => {
    const { ours, theirs } = await compare(
      {
        [`${LIB}/multi-user.target`]:
          [
            '[Unit]',
            'DefaultDependencies=no',
            'Wants=a.service \\',
            '# a comment inside the continuation',
            'b.service \\',
            '; another',
            'c.service',
            '; Wants=commented.service',
            '  Wants  =  spaced.service  ',
            '=no-key.service',
            '[Install]',
            'Wants=install-section.service',
            '[Unit]',
            'Requires=again.service',
          ].join('\n') + '\n',
        ...Object.fromEntries(['a', 'b', 'c', 'commented', 'spaced', 'no-key', 'install-section', 'again'].map((n) => [`${LIB}/${n}.service`, service()])),
      },
      ['a.service', 'b.service', 'c.service', 'commented.service', 'spaced.service', 'no-key.service', 'install-section.service', 'again.service'],
    );
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({
      'a.service': true,
      'b.service': true,
      'c.service': true,
      'commented.service': false,
      'spaced.service': true,
      'no-key.service': false,
      'install-section.service': false,
      'again.service': true,
    });
  });

  it('a comment line ending in a backslash continues nothing', async () => {
    const { ours, theirs } = await compare(
      {
        [`${LIB}/multi-user.target`]: '[Unit]\nDefaultDependencies=no\n# a comment \\\nWants=after-hash.service\n; another \\\nWants=after-semicolon.service\n',
        [`${LIB}/after-hash.service`]: service(),
        [`${LIB}/after-semicolon.service`]: service(),
      },
      ['after-hash.service', 'after-semicolon.service'],
    );
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'after-hash.service': true, 'after-semicolon.service': true });
  });

  it('a file ending in a backslash keeps its last value', async () => {
    const { ours, theirs } = await compare(
      {
        [`${LIB}/multi-user.target`]: '[Unit]\nDefaultDependencies=no\nWants=last.service \\',
        [`${LIB}/last.service`]: service(),
      },
      ['last.service'],
    );
    expect(ours).toEqual(theirs);
    expect(theirs['last.service']).toBe(true);
  });

  it('blanks before a header, a directive or a comment line, also inside a continuation', async () => {
    const { ours, theirs } = await compare(
      {
        [`${LIB}/multi-user.target`]:
          [
            '  [Unit]',
            '  DefaultDependencies=no',
            '\tWants=indented.service',
            'Wants=cont-a.service \\',
            '   # an indented comment inside the continuation',
            '\t; and another',
            ' cont-b.service',
          ].join('\n') + '\n',
        ...Object.fromEntries(['indented', 'cont-a', 'cont-b'].map((n) => [`${LIB}/${n}.service`, service()])),
      },
      ['indented.service', 'cont-a.service', 'cont-b.service'],
    );
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'indented.service': true, 'cont-a.service': true, 'cont-b.service': true });
  });

  it('a continuation followed only by comment lines up to the end of the file keeps its value', async () => {
    for (const end of ['', '\n']) {
      const { ours, theirs } = await compare(
        {
          [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=tail.service \\\n# one\n  # two${end}`,
          [`${LIB}/tail.service`]: service(),
        },
        ['tail.service'],
      );
      expect(ours, JSON.stringify(end)).toEqual(theirs);
      expect(theirs).toEqual({ 'tail.service': true });
    }
  });

  it('a lone carriage return ends a line; an even run of backslashes continues nothing; a vertical tab is no blank', async () => {
    const { ours, theirs } = await compare(
      {
        [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=cr-a.service\rWants=cr-b.service\r\nWants=even.service \\\\\nWants=after-even.service\nWants=vt.service\v\nWants=vt-ok.service\n`,
        ...Object.fromEntries(['cr-a', 'cr-b', 'even', 'after-even', 'vt', 'vt-ok'].map((n) => [`${LIB}/${n}.service`, service()])),
      },
      ['cr-a.service', 'cr-b.service', 'even.service', 'after-even.service', 'vt.service', 'vt-ok.service'],
    );
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({
      'cr-a.service': true,
      'cr-b.service': true,
      'even.service': true,
      'after-even.service': true,
      'vt.service': false,
      'vt-ok.service': true,
    });
  });

  it("a value ending in ']' is no section header", async () => {
    const { ours, theirs } = await compare(
      {
        [`${LIB}/multi-user.target`]: `${NODEFAULT}Description=multi-user [test]\nWants=after-bracket.service\n`,
        [`${LIB}/after-bracket.service`]: service(),
      },
      ['after-bracket.service'],
    );
    expect(ours).toEqual(theirs);
    expect(theirs).toEqual({ 'after-bracket.service': true });
  });
});

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
