// src/systemd/ against systemd's own programs: `systemctl --root` (is-enabled,
// enable, disable) for masks and link snapshots, and `systemd --test`
// (test/helpers/systemd-oracle.ts) for unit-file syntax as the loader and boot
// reachability read it. systemctl and systemd only ever see temp trees. The
// timespan and output parsers: systemctl-output.test.ts; boot paths: boot-reach.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { execa } from 'execa';
import { Host } from '../../src/host.js';
import { enablementOf, linkDelta, unitLinkSnapshot } from '../../src/systemd/unit-links.js';
import type { Tree } from '../helpers/tree.js';
import { compareBootReach, plainService as service } from '../helpers/boot-reach-oracle.js';
import { ETC, LIB, NODEFAULT, oracle, plainTree, systemctlRoot } from '../helpers/systemd-oracle.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const tmpTree = (files: Tree): string => plainTree(roots, 'systemd-units-', files);

describe('masks and links, against systemctl --root', () => {
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

const compare = (files: Tree, names: string[]) => compareBootReach(roots, files, names);

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
