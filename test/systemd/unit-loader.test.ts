// The unit loader (src/systemd/unit-loader.ts) against systemd's own loader,
// unit by unit: for each name a fixture asks about, `systemd --test` (see
// test/helpers/systemd-oracle.ts) says its load state, fragment, drop-ins in
// the order applied, aliases and outgoing pull relations, and the loader
// must say the same. [Install] is checked against what `systemctl --root
// enable` links, and `without` against what `systemctl --root disable`
// removes. Every fixture lives in a temp tree; links are relative.
import { afterEach, describe, expect, it } from 'vitest';
import { realpathSync, rmSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { Host } from '../../src/host.js';
import { dependencyLinks, extendUnitGraph, loadUnitGraph, type UnitGraph } from '../../src/systemd/unit-loader.js';
import type { Tree } from '../helpers/tree.js';
import { ETC, LIB, NODEFAULT, oracle, systemctlRoot, unitTree } from '../helpers/systemd-oracle.js';

const RUN = 'run/systemd/system';
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const service = (extra = ''): string => `${NODEFAULT}${extra}[Service]\nExecStart=/bin/true\n`;

/**
 * A fixture whose default target is probe.target, which Wants= every name
 * asked about, so systemd's test run loads (and dumps) each of them.
 */
function probeTree(files: Tree, names: string[]): string {
  return unitTree(roots, 'unit-loader-', {
    [`${ETC}/default.target`]: { link: '../../../usr/lib/systemd/system/probe.target' },
    [`${LIB}/probe.target`]: `${NODEFAULT}Wants=${names.join(' ')}\n`,
    ...files,
  });
}

const RELATIONS = ['Wants', 'Requires', 'BindsTo', 'Upholds', 'PartOf', 'Triggers'] as const;
/** Dependencies the manager adds by itself (the slices, the journal socket), not read from the tree. */
const implicit = (name: string): boolean => ['-.slice', 'systemd-journald.socket'].includes(name) || /^system(-.+)?\.slice$/.test(name);

interface Summary {
  name: string;
  load: string;
  fragment: string | null;
  dropIns: string[];
  names: string[];
  deps: Record<string, string[]>;
}

async function theirs(root: string, names: string[]): Promise<Record<string, Summary | 'absent'>> {
  const o = await oracle(root);
  const rel = (p: string): string => (p.startsWith(root + '/') ? p.slice(root.length) : p);
  return Object.fromEntries(
    names.map((name) => {
      const hit = [...o.units].find(([n, u]) => n === name || u.aliases.includes(name));
      if (!hit) return [name, 'absent'];
      const [n, u] = hit;
      const loaded = u.load === 'loaded';
      const deps = Object.fromEntries(RELATIONS.map((r) => [r, [...new Set((u.deps.get(r) ?? []).filter((d) => !implicit(d)))].sort()]));
      // systemd names a linked unit file by its link; the file read is where the link ends.
      return [
        name,
        {
          name: n,
          load: u.load,
          fragment: loaded ? rel(realpathSync(u.fragment ?? '')) : null,
          dropIns: loaded ? u.dropIns.map(rel) : [],
          names: loaded ? [n, ...u.aliases].sort() : [n],
          deps,
        },
      ];
    }),
  );
}

function ours(graph: UnitGraph, names: string[]): Record<string, Summary | 'absent'> {
  return Object.fromEntries(
    names.map((name) => {
      const c = graph.resolve(name);
      const u = graph.units.get(c);
      if (!u) return [name, 'absent'];
      const load = u.masked ? 'masked' : u.fragment !== null ? 'loaded' : 'not-found';
      const deps = Object.fromEntries(
        RELATIONS.map((r) => [r, [...new Set(graph.edges.filter((e) => e.from === c && e.relation === r).map((e) => graph.resolve(e.to)))].sort()]),
      );
      // u.names as the loader gives them: sorted, each once.
      return [
        name,
        {
          name: c,
          load,
          fragment: load === 'loaded' ? u.fragment : null,
          dropIns: load === 'loaded' ? u.dropIns : [],
          names: load === 'loaded' ? u.names : [c],
          deps,
        },
      ];
    }),
  );
}

async function graphOf(root: string, without: string[] = []): Promise<UnitGraph> {
  return loadUnitGraph(new Host({ root, live: false }), { without: new Set(without) });
}

/** Ours and systemd's summaries of `names`, and our graph. */
async function compare(
  files: Tree,
  names: string[],
): Promise<{ ours: Record<string, Summary | 'absent'>; theirs: Record<string, Summary | 'absent'>; graph: UnitGraph; root: string }> {
  const root = probeTree(files, names);
  const graph = await graphOf(root);
  const out = { ours: ours(graph, names), theirs: await theirs(root, names), graph, root };
  return out;
}

describe('unit loader vs systemd --test, unit by unit', () => {
  it('search path precedence, masks (a /dev/null link, a 0-byte file; a lone newline is no mask) and linked unit files', async () => {
    const names = ['over.service', 'rt.service', 'nul.service', 'empty.service', 'web.data.service', 'app.wants.service', 'none.service', 'odd.service'];
    const root = probeTree(
      {
        [`${LIB}/over.service`]: service('Wants=from-lib.service\n'),
        [`${ETC}/over.service`]: service('Wants=from-etc.service nosuffix\n'),
        [`${LIB}/rt.service`]: service('Wants=from-lib.service\n'),
        [`${RUN}/rt.service`]: service('Wants=from-run.service\n'),
        [`${LIB}/nul.service`]: service('Wants=from-lib.service\n'),
        [`${ETC}/nul.service`]: { link: '/dev/null' },
        [`${LIB}/empty.service`]: service('Wants=from-lib.service\n'),
        [`${ETC}/empty.service`]: '',
        [`${LIB}/blank.service`]: service('Wants=from-lib.service\n'),
        [`${ETC}/blank.service`]: '\n',
        // Linked unit files (systemctl link): names that look like a .d or .wants directory are still units.
        'opt/units/web.data.service': service('Wants=from-opt.service\n'),
        [`${ETC}/web.data.service`]: { link: '../../../opt/units/web.data.service' },
        'opt/units/app.wants.service': service('Wants=from-opt.service\n'),
        [`${ETC}/app.wants.service`]: { link: '../../../opt/units/app.wants.service' },
        // A link to a link to /dev/null.
        [`${ETC}/chain.service`]: { link: 'chain-null.service' },
        [`${ETC}/chain-null.service`]: { link: '/dev/null' },
        [`${LIB}/from-lib.service`]: service(),
        [`${LIB}/from-etc.service`]: service('Wants=over.service\n'),
        [`${LIB}/from-run.service`]: service(),
        [`${LIB}/from-opt.service`]: service(),
        // Not units: a directory with a unit's name, a file without a unit suffix, a plain file named like a .wants dir.
        [`${ETC}/none.service/x.conf`]: '[Unit]\nWants=from-lib.service\n',
        [`${ETC}/README`]: 'not a unit\n',
        [`${ETC}/over.service.wants`]: 'a file, not a directory\n',
        [`${ETC}/over.service.wants.old/from-lib.service`]: { link: '../../../../usr/lib/systemd/system/from-lib.service' },
        [`${ETC}/over.service.d.orig/10-x.conf`]: '[Unit]\nWants=from-lib.service\n',
        // A link to a file whose name is no unit name.
        'opt/units/odd-unit.txt': service('Wants=from-opt.service\n'),
        [`${ETC}/odd.service`]: { link: '../../../opt/units/odd-unit.txt' },
      },
      [...names, 'chain.service', 'blank.service'],
    );
    const graph = await graphOf(root);
    const t = await theirs(root, names);
    expect(ours(graph, names)).toEqual(t);
    expect(graph.problems).toEqual([]);
    // No unit of a name systemctl does not list as a unit file.
    const listed = (await systemctlText(root, 'list-unit-files', '--no-legend')).trim();
    expect({ README: graph.units.has('README'), none: graph.units.get('none.service')?.entry ?? null }).toEqual({
      README: listed.includes('README'),
      none: null,
    });
    expect(listed).not.toContain('none.service');
    expect(t['over.service']).toMatchObject({ load: 'loaded', fragment: `/${ETC}/over.service` });
    expect(t['empty.service']).toMatchObject({ load: 'masked' });
    expect(t['web.data.service']).toMatchObject({ load: 'loaded' });
    // A unit without [Service] is a bad setting to systemd, but not masked: only a file of 0 bytes masks. systemd
    // calls chain.service (a link to a link to /dev/null) an alias of the masked chain-null.service.
    const more = await theirs(root, ['blank.service', 'chain.service']);
    const masked = (n: string): boolean => graph.units.get(graph.resolve(n))?.masked === true;
    expect({ blank: masked('blank.service'), chain: masked('chain.service') }).toEqual({
      blank: (more['blank.service'] as Summary).load === 'masked',
      chain: (more['chain.service'] as Summary).load === 'masked',
    });
    expect(more['chain.service']).toMatchObject({ load: 'masked' });
    expect((more['blank.service'] as Summary).load).not.toBe('masked');
  });

  it('aliases: chains of links, an instance linked to its own template, an alias of a template', async () => {
    const names = ['real.service', 'zal1.service', 'zal2.service', 'cyc-a.service', 'getty@tty1.service', 'getty@tty2.service', 'tpl-alias@x.service'];
    const {
      ours: o,
      theirs: t,
      graph,
    } = await compare(
      {
        [`${LIB}/real.service`]: service('Wants=r-dep.service\n'),
        [`${ETC}/zal1.service`]: { link: 'zal2.service' },
        [`${ETC}/zal2.service`]: { link: '../../../usr/lib/systemd/system/real.service' },
        // Each name links to the vendor file of the other.
        [`${LIB}/cyc-a.service`]: service('Wants=r-dep.service\n'),
        [`${LIB}/cyc-b.service`]: service('Wants=r-dep.service\n'),
        [`${ETC}/cyc-a.service`]: { link: '../../../usr/lib/systemd/system/cyc-b.service' },
        [`${ETC}/cyc-b.service`]: { link: '../../../usr/lib/systemd/system/cyc-a.service' },
        [`${LIB}/getty@.service`]: service('Wants=g-%i.service\n'),
        [`${ETC}/getty@tty1.service`]: { link: '../../../usr/lib/systemd/system/getty@.service' },
        [`${LIB}/tpl@.service`]: service('Wants=t-%i.service\n'),
        [`${ETC}/tpl-alias@.service`]: { link: '../../../usr/lib/systemd/system/tpl@.service' },
        [`${LIB}/r-dep.service`]: service(),
        [`${LIB}/g-tty1.service`]: service(),
        [`${LIB}/g-tty2.service`]: service(),
        [`${LIB}/t-x.service`]: service(),
      },
      names,
    );
    // systemd also lists tpl-alias@x.service among tpl@x.service's names; the loader resolves it without listing it.
    const noInstanceAlias = (r: Record<string, Summary | 'absent'>): Record<string, Summary | 'absent'> => ({
      ...r,
      'tpl-alias@x.service': { ...(r['tpl-alias@x.service'] as Summary), names: [] },
    });
    expect(noInstanceAlias(o)).toEqual(noInstanceAlias(t));
    expect(graph.resolve('tpl-alias@x.service')).toBe((t['tpl-alias@x.service'] as Summary).name);
    expect(t['cyc-a.service']).toMatchObject({ load: 'not-found' });
    expect(graph.problems.map((p) => p.file).sort()).toEqual([`/${ETC}/cyc-a.service`, `/${ETC}/cyc-b.service`]);
    expect(t['zal1.service']).toMatchObject({ name: 'real.service', load: 'loaded' });
    expect(t['getty@tty1.service']).toMatchObject({ name: 'getty@tty1.service', load: 'loaded' });
  });

  it('a link to the vendor file of its own name is that unit; a link to a file whose name is no unit name, or a unit of another type, is passed over and a later directory supplies the name', async () => {
    const names = ['same.service', 'odd.service', 'mix.service', 'odd2.service'];
    const { ours: o, theirs: t } = await compare(
      {
        [`${LIB}/same.service`]: service('Wants=same-dep.service\n'),
        [`${ETC}/same.service`]: { link: '../../../usr/lib/systemd/system/same.service' },
        [`${LIB}/odd-impl`]: service('Wants=odd-dep.service\n'),
        [`${ETC}/odd.service`]: { link: '../../../usr/lib/systemd/system/odd-impl' },
        [`${ETC}/odd2.service`]: { link: '../../../usr/lib/systemd/system/odd-impl' },
        [`${LIB}/odd2.service`]: service('Wants=odd2-dep.service\n'),
        [`${LIB}/odd2-dep.service`]: service(),
        [`${LIB}/mix-real.socket`]: `${NODEFAULT}[Socket]\nListenStream=127.0.0.1:1\n`,
        [`${ETC}/mix.service`]: { link: '../../../usr/lib/systemd/system/mix-real.socket' },
        [`${LIB}/same-dep.service`]: service(),
        [`${LIB}/odd-dep.service`]: service(),
      },
      names,
    );
    expect(o).toEqual(t);
    expect(t['same.service']).toMatchObject({ name: 'same.service', load: 'loaded' });
  });

  it("an alias's drop-in and .wants directories apply to the unit it names, whichever name is asked first", async () => {
    // The alias sorts before the unit it names, so it is the first of the two the loader meets.
    const names = ['real.service', 'alpha.service'];
    const { ours: o, theirs: t } = await compare(
      {
        [`${LIB}/real.service`]: service(),
        [`${ETC}/alpha.service`]: { link: '../../../usr/lib/systemd/system/real.service' },
        [`${ETC}/alpha.service.d/10-extra.conf`]: '[Unit]\nWants=from-alias-dropin.service\n',
        [`${ETC}/alpha.service.wants/from-alias-wants.service`]: { link: '../../../../usr/lib/systemd/system/from-alias-wants.service' },
        [`${LIB}/from-alias-dropin.service`]: service(),
        [`${LIB}/from-alias-wants.service`]: service(),
      },
      names,
    );
    expect(o).toEqual(t);
    // What systemd said, so the comparison above is not between two empty lists.
    expect(t['real.service']).toMatchObject({ names: ['alpha.service', 'real.service'] });
    expect((t['real.service'] as Summary).deps.Wants).toEqual(expect.arrayContaining(['from-alias-dropin.service', 'from-alias-wants.service']));
  });

  it('drop-ins: /etc replaces a same-named vendor drop-in, byte order of names, type-wide service.d, links to drop-in dirs', async () => {
    const names = ['d.service', 'e.service', 'f.service', 'a-b-c.service', '-lead.service'];
    const {
      ours: o,
      theirs: t,
      graph,
    } = await compare(
      {
        [`${LIB}/d.service`]: service('Wants=base.service\n'),
        [`${LIB}/d.service.d/10-x.conf`]: '[Unit]\nWants=lib-x.service\n',
        [`${ETC}/d.service.d/10-x.conf`]: '[Unit]\nWants=etc-x.service\n',
        [`${RUN}/d.service.d/20-y.conf`]: '[Unit]\nWants=run-y.service\n',
        [`${LIB}/d.service.d/20-y.conf`]: '[Unit]\nWants=lib-y.service\n',
        [`${LIB}/d.service.d/2-z.conf`]: '[Unit]\nWants=lib-z.service\n',
        [`${ETC}/d.service.d/README`]: '[Unit]\nWants=readme.service\n',
        [`${ETC}/d.service.d/30-install.conf`]: '[Install]\nWantedBy=x.target\n[Unit]\nRequires=req.service\n',
        [`${LIB}/service.d/05-all.conf`]: '[Unit]\nWants=all.service\n',
        [`${ETC}/d.service.d/40-dir.conf/x`]: '[Unit]\nWants=readme.service\n',
        [`${LIB}/-lead.service`]: service(),
        [`${LIB}/-.service.d/10-top.conf`]: '[Unit]\nWants=readme.service\n',
        [`${LIB}/e.service`]: service(),
        [`${ETC}/e.service.d`]: { link: '../../../opt/shared-dropins' },
        'opt/shared-dropins/10-s.conf': '[Unit]\nWants=shared.service\n',
        [`${LIB}/f.service`]: service(),
        [`${ETC}/f.service.d`]: { link: '../../../opt/missing-dir' },
        [`${ETC}/f.service.wants`]: { link: '../../../opt/missing-dir' },
        [`${ETC}/e.service.wants`]: { link: '../../../opt/wants-dir' },
        'opt/wants-dir/linked-want.service': { link: '../../usr/lib/systemd/system/linked-want.service' },
        [`${LIB}/a-b-c.service`]: service(),
        [`${LIB}/a-.service.d/10-a.conf`]: '[Unit]\nWants=pa.service\n',
        [`${LIB}/a-b-.service.d/10-a.conf`]: '[Unit]\nWants=pab.service\n',
        [`${LIB}/a-b-.service.d/20-b.conf`]: '[Unit]\nWants=pab2.service\n',
        ...Object.fromEntries(
          ['base', 'lib-x', 'etc-x', 'run-y', 'lib-y', 'lib-z', 'readme', 'req', 'all', 'shared', 'linked-want', 'pa', 'pab', 'pab2'].map((n) => [
            `${LIB}/${n}.service`,
            service(),
          ]),
        ),
      },
      names,
    );
    // systemd lists a directory named 40-dir.conf among the drop-ins and reads nothing from it; the loader skips it, loudly.
    const dir = `/${ETC}/d.service.d/40-dir.conf`;
    const d = t['d.service'] as Summary;
    expect(d.dropIns).toContain(dir);
    expect(o).toEqual({ ...t, 'd.service': { ...d, dropIns: d.dropIns.filter((p) => p !== dir) } });
    expect((t['d.service'] as Summary).dropIns.length).toBeGreaterThan(3);
    // A drop-in the loader cannot read is loud, with its path.
    expect(graph.problems.map((p) => p.file)).toEqual([`/${ETC}/d.service.d/40-dir.conf`]);
  });

  it('templates and instances: instance and template drop-ins, .wants of the template', async () => {
    // A bare template named by Wants= is no unit to systemd. (One on the path is loaded by the loader for
    // Accept=yes sockets; systemd refuses Wants=w@.service, so it is not asked about here.)
    const names = ['w@a.service', 'w@b.service', 'missing@.service'];
    const {
      ours: o,
      theirs: t,
      graph,
    } = await compare(
      {
        [`${LIB}/w@.service`]: service('Wants=tw-%i.service\n'),
        [`${ETC}/w@.service.d/10-t.conf`]: '[Unit]\nWants=tpl-dropin.service\n',
        [`${LIB}/w@a.service.d/10-t.conf`]: '[Unit]\nWants=inst-dropin.service\n',
        [`${LIB}/w@a.service.d/20-i.conf`]: '[Unit]\nWants=inst2.service\n',
        [`${LIB}/w@.service.wants/tw-wanted.service`]: { link: '../tw-wanted.service' },
        [`${LIB}/w@b.service.requires/only-b.service`]: { link: '../only-b.service' },
        // Not dependencies: a masked entry, a file without a unit suffix, a directory.
        [`${LIB}/w@.service.wants/masked-w.service`]: { link: '/dev/null' },
        [`${LIB}/w@.service.wants/notes.txt`]: 'not a unit\n',
        [`${LIB}/w@.service.wants/sub.service/x.conf`]: '[Unit]\n',
        ...Object.fromEntries(
          ['tw-a', 'tw-b', 'tpl-dropin', 'inst-dropin', 'inst2', 'tw-wanted', 'only-b', 'masked-w', 'sub'].map((n) => [`${LIB}/${n}.service`, service()]),
        ),
      },
      names,
    );
    expect(o).toEqual(t);
    // A link edge is keyed by its directory's name.
    const linkEdges = graph.edges.filter((e) => e.how === 'link');
    expect(linkEdges.length).toBeGreaterThan(0);
    for (const e of linkEdges) expect(e.key).toBe(path.posix.basename(path.posix.dirname(e.file)));
  });

  it('dashed prefixes of an instance come from the template prefix (a-b@x-y.service: a-.service.d, not a-b@x-.service.d)', async () => {
    const names = ['a-b@x-y.service', 'ab@x-y.service'];
    const { ours: o, theirs: t } = await compare(
      {
        [`${LIB}/a-b@.service`]: service(),
        [`${LIB}/ab@.service`]: service(),
        [`${LIB}/a-.service.d/10-dash.conf`]: '[Unit]\nWants=dash.service\n',
        [`${LIB}/a-b@x-.service.d/10-inst-dash.conf`]: '[Unit]\nWants=inst-dash.service\n',
        [`${LIB}/ab@x-.service.d/10-inst-dash.conf`]: '[Unit]\nWants=inst-dash.service\n',
        [`${LIB}/a-b@.service.d/20-tpl.conf`]: '[Unit]\nWants=tpl.service\n',
        ...Object.fromEntries(['dash', 'inst-dash', 'tpl'].map((n) => [`${LIB}/${n}.service`, service()])),
      },
      names,
    );
    expect(o).toEqual(t);
    expect((t['a-b@x-y.service'] as Summary).deps['Wants']).toContain('dash.service');
  });

  it('triggers: timer Unit=, socket Service=, Accept= and the same-name default', async () => {
    const names = ['t.timer', 's.socket', 'acc.socket', 'accy.socket', 'noacc.socket', 'other.socket', 'p.path', 'q.path'];
    const files: Tree = {
      [`${LIB}/t.timer`]: `${NODEFAULT}[Timer]\nOnBootSec=5min\nUnit=t-run.service\nPersistent=false\n[X-Extra]\nUnit=x-extra.service\n`,
      [`${LIB}/s.socket`]: `${NODEFAULT}[Socket]\nListenStream=/run/s.sock\nService=s-impl.service\n`,
      [`${LIB}/acc.socket`]: `${NODEFAULT}[Socket]\nListenStream=/run/acc.sock\nAccept=yes\n`,
      [`${LIB}/accy.socket`]: `${NODEFAULT}[Socket]\nListenStream=/run/accy.sock\nAccept=y\n`,
      [`${LIB}/noacc.socket`]: `${NODEFAULT}[Socket]\nListenStream=/run/noacc.sock\nAccept=yes\n`,
      [`${ETC}/noacc.socket.d/10-no.conf`]: '[Socket]\nAccept=no\n',
      [`${LIB}/other.socket`]: `${NODEFAULT}[Socket]\nListenStream=/run/other.sock\nFreeBind=yes\n[X-Extra]\nAccept=yes\n`,
      [`${LIB}/p.path`]: `${NODEFAULT}[Path]\nPathExists=/tmp/x\n`,
      [`${LIB}/q.path`]: `${NODEFAULT}[Path]\nPathExists=/tmp/x\nUnit=q-run.service\n`,
      [`${ETC}/q.path.d/10-empty.conf`]: '[Path]\nUnit=\n',
      ...Object.fromEntries(
        ['t-run', 't', 's-impl', 's', 'acc', 'accy', 'noacc', 'other', 'p', 'q-run', 'q', 'x-extra'].map((n) => [`${LIB}/${n}.service`, service()]),
      ),
      [`${LIB}/acc@.service`]: service(),
      [`${LIB}/accy@.service`]: service(),
      [`${LIB}/noacc@.service`]: service(),
      [`${LIB}/other@.service`]: service(),
    };
    const root = probeTree(files, names);
    const graph = await graphOf(root);
    const t = await theirs(root, names);
    // An Accept=yes socket starts an instance of its template per connection: it triggers no unit of its own name.
    const triggersOwn = (s: Record<string, Summary | 'absent'>): Record<string, string[]> =>
      Object.fromEntries(names.map((n) => [n, (s[n] as Summary).deps['Triggers']!.filter((d) => !d.includes('@.'))]));
    expect(triggersOwn(ours(graph, names))).toEqual(triggersOwn(t));
    expect(triggersOwn(t)['t.timer']).toEqual(['t-run.service']);
    expect(triggersOwn(t)['acc.socket']).toEqual([]);
    // systemd --test dumps no bare template, so this is checked against the tree: a template with a file on the path
    // is in the graph with that file (what its instances are read from); one an Accept=yes socket names without a file is not.
    expect(graph.units.get('acc@.service')).toMatchObject({ fragment: `/${LIB}/acc@.service`, masked: false });
    expect(graph.units.get('accy@.service')?.fragment).toBe(`/${LIB}/accy@.service`);
    const lonely = await graphOf(probeTree({ [`${LIB}/lone.socket`]: `${NODEFAULT}[Socket]\nListenStream=/run/lone.sock\nAccept=yes\n` }, ['lone.socket']));
    expect(lonely.edges).toContainEqual(expect.objectContaining({ from: 'lone.socket', to: 'lone@.service' }));
    expect(lonely.units.has('lone@.service')).toBe(false);
  });

  it('specifiers: %p and %N are the name without suffix, %i is empty in a plain unit; %I and %P name no unit', async () => {
    const names = ['plain.service', 'pl@in.service'];
    const {
      ours: o,
      theirs: t,
      graph,
    } = await compare(
      {
        [`${LIB}/plain.service`]: service('Wants=%p-h.service h%i.service %N-n.target\nWants=k%I.service\nWants=q%P.service\n'),
        [`${LIB}/pl@.service`]: service('Wants=%p-h.service h%i.service %N-n.target pct%%.service\nWants=k%I.service\nWants=q%P.service\n'),
        ...Object.fromEntries(['plain-h', 'h', 'k', 'q', 'qplain', 'pl-h', 'hin', 'kin', 'qpl', 'pct%'].map((n) => [`${LIB}/${n}.service`, service()])),
        [`${LIB}/plain-n.target`]: NODEFAULT,
        [`${LIB}/pl@in-n.target`]: NODEFAULT,
      },
      names,
    );
    expect(o).toEqual(t);
    expect((t['plain.service'] as Summary).deps['Wants']).toContain('h.service');
    // What systemd drops, the loader says it cannot expand (file and line), rather than guessing a unit.
    const unexpanded = graph.problems.filter((p) => p.file === '/usr/lib/systemd/system/plain.service').map((p) => p.line);
    expect(unexpanded).toEqual([4, 5]);
  });
});

describe('loader problems name the file and line', () => {
  it('a link loop is skipped with a problem; an unknown specifier makes the named units unknown', async () => {
    const names = ['loop1.service', 'spec.service'];
    const {
      ours: o,
      theirs: t,
      graph,
      root,
    } = await compare(
      {
        [`${ETC}/loop1.service`]: { link: 'loop2.service' },
        [`${ETC}/loop2.service`]: { link: 'loop1.service' },
        [`${LIB}/spec.service`]: service('Wants=x-%H.service\nRequires=y%\n'),
        [`${LIB}/h.timer`]: `${NODEFAULT}[Timer]\nOnBootSec=1\nUnit=h-%H.service\n`,
      },
      ['loop1.service'],
    );
    expect(o).toEqual(t);
    expect((t['loop1.service'] as Summary).load).toBe('not-found');
    void names;
    void root;
    const messages = graph.problems.map((p) => `${p.file}:${p.line ?? '-'}: ${p.message}`);
    expect(messages).toContainEqual(expect.stringMatching(/^\/etc\/systemd\/system\/loop[12]\.service:-: .*loop/));
    expect(messages).toContainEqual(expect.stringMatching(/^\/usr\/lib\/systemd\/system\/spec\.service:3: Wants=x-%H\.service: specifier %H /));
    expect(messages).toContainEqual(expect.stringMatching(/^\/usr\/lib\/systemd\/system\/spec\.service:4: Requires=y%: specifier % /));
    expect(messages).toContainEqual(expect.stringMatching(/^\/usr\/lib\/systemd\/system\/h\.timer:5: Unit=h-%H\.service: specifier %H /));
  });
});

/** The links a `systemctl --root` run created or removed, as target paths, from its output. */
function linksIn(output: string, verb: 'Created symlink' | 'Removed', root: string): string[] {
  const re = verb === 'Created symlink' ? /^Created symlink (\S+) →/gm : /^Removed "?([^"\s]+)"?\.?$/gm;
  return [...output.matchAll(re)].map((m) => (m[1]!.startsWith(root) ? m[1]!.slice(root.length) : m[1]!)).sort();
}

/** systemctl --root that must succeed: its stdout and stderr together (systemctl prints Created/Removed on stderr). */
async function systemctlText(root: string, ...args: string[]): Promise<string> {
  const r = await systemctlRoot(root, ...args);
  if (r.exitCode !== 0) throw new Error(`systemctl ${args.join(' ')}: ${r.stderr}`);
  return `${r.stdout}\n${r.stderr}`;
}

describe('[Install] against systemctl --root enable', () => {
  it('fragment, then NAME.d and TEMPLATE.d drop-ins: an empty assignment resets; other sections, dashed and type-wide drop-ins do not count', async () => {
    const root = probeTree(
      {
        [`${LIB}/inst.service`]: [
          `${NODEFAULT}WantedBy=unit-section.target`,
          '[Service]\nExecStart=/bin/true\nWantedBy=service-section.target\nAlias=service-alias.service',
          '[Install]\nWantedBy=early.target\nWantedBy=\nWantedBy=a.target b.target\nRequiredBy=c.target\nRequiredBy=d.target',
          'Alias=inst-alias.service\nAlso=also.service\n',
        ].join('\n'),
        [`${ETC}/inst.service.d/10-install.conf`]: '[Install]\nWantedBy=dropin.target\nAlias=dropin-alias.service\nRequiredBy=\nRequiredBy=e.target\n',
        [`${LIB}/inst.service.d/10-install.conf`]: '[Install]\nWantedBy=shadowed.target\n',
        [`${LIB}/service.d/10-typewide.conf`]: '[Install]\nWantedBy=typewide.target\n',
        [`${LIB}/also.service`]: `${service()}[Install]\nWantedBy=also.target\n`,
        [`${LIB}/ti-x@.service`]: `${service()}[Install]\nWantedBy=tpl.target\n`,
        [`${LIB}/ti-x@.service.d/10-t.conf`]: '[Install]\nWantedBy=tpl-dropin.target\n',
        [`${LIB}/ti-x@a.service.d/20-i.conf`]: '[Install]\nWantedBy=inst-dropin.target\n',
        [`${LIB}/ti-.service.d/30-dash.conf`]: '[Install]\nWantedBy=dash.target\n',
        ...Object.fromEntries(
          [
            'unit-section',
            'service-section',
            'early',
            'a',
            'b',
            'c',
            'd',
            'e',
            'dropin',
            'shadowed',
            'typewide',
            'also',
            'tpl',
            'tpl-dropin',
            'inst-dropin',
            'dash',
          ].map((t) => [`${LIB}/${t}.target`, NODEFAULT]),
        ),
      },
      [],
    );
    // Ours, before enabling: the links [Install] asks for, as systemctl names them. (UpheldBy= is left out:
    // systemd 252's systemctl does not know it.)
    const graph = await extendUnitGraph(await graphOf(root), ['ti-x@a.service']);
    const ws = (ds: { value: string }[]): string[] => ds.flatMap((d) => d.value.split(/\s+/).filter(Boolean));
    const want = (unit: string): string[] => {
      const i = graph.units.get(unit)!.install;
      return [
        ...ws(i.wantedBy).map((t) => `/${ETC}/${t}.wants/${unit}`),
        ...ws(i.requiredBy).map((t) => `/${ETC}/${t}.requires/${unit}`),
        ...ws(i.alias).map((a) => `/${ETC}/${a}`),
        ...ws(i.also).flatMap((a) => want(a)),
      ];
    };
    for (const unit of ['inst.service', 'ti-x@a.service']) {
      const created = linksIn(await systemctlText(root, 'enable', unit), 'Created symlink', root);
      expect(want(unit).sort().join('\n'), unit).toBe(created.join('\n'));
    }
    expect(linksIn(await systemctlText(root, 'disable', 'inst.service'), 'Removed', root)).toContain(`/${ETC}/dropin.target.wants/inst.service`);
  });
});

describe('`without`: the tree as it is after the named entries go', () => {
  it('is the tree systemd loads with those files removed (systemctl disable links, a drop-in, an override)', async () => {
    const files: Tree = {
      [`${LIB}/agent.service`]: `${service('Wants=lib-dep.service\n')}[Install]\nWantedBy=multi-user.target\nAlias=agent-alias.service\n`,
      [`${ETC}/agent.service.d/10-more.conf`]: '[Unit]\nWants=dropin-dep.service\n',
      [`${ETC}/agent.service.d/20-kept.conf`]: '[Unit]\nWants=kept-dep.service\n',
      [`${LIB}/web.service`]: service('Wants=lib-dep.service\n'),
      [`${ETC}/web.service`]: service('Wants=etc-dep.service\n'),
      [`${LIB}/multi-user.target.wants/kept-link.service`]: { link: '../kept-link.service' },
      [`${LIB}/multi-user.target.wants/gone-link.service`]: { link: '../gone-link.service' },
      ...Object.fromEntries(['lib-dep', 'dropin-dep', 'kept-dep', 'etc-dep', 'kept-link', 'gone-link'].map((n) => [`${LIB}/${n}.service`, service()])),
    };
    const names = ['agent.service', 'agent-alias.service', 'web.service', 'multi-user.target'];
    const before = probeTree(files, names);
    const after = probeTree(files, names);
    await systemctlText(before, 'enable', 'agent.service');
    const out = await systemctlText(after, 'enable', 'agent.service');
    void out;
    const removed = linksIn(await systemctlText(after, 'disable', 'agent.service'), 'Removed', after);
    expect(removed).toContain(`/${ETC}/agent-alias.service`);
    const alsoGone = [`/${ETC}/agent.service.d/10-more.conf`, `/${ETC}/web.service`, `/${LIB}/multi-user.target.wants/gone-link.service`];
    for (const p of alsoGone) rmSync(after + p);
    const graph = await graphOf(before, [...removed, ...alsoGone]);
    const t = await theirs(after, names);
    expect(ours(graph, names)).toEqual(t);
    expect((t['web.service'] as Summary).fragment).toBe(`/${LIB}/web.service`);
  });
});

describe('extendUnitGraph and dependencyLinks', () => {
  it('loads an instance nothing names, as systemd does, into a new graph; a graph holding the names is returned as is', async () => {
    const files: Tree = {
      [`${LIB}/w@.service`]: service('Wants=tw-%i.service\n'),
      [`${LIB}/w@.service.wants/tw-wanted.service`]: { link: '../tw-wanted.service' },
      ...Object.fromEntries(['tw-c', 'tw-wanted', 'plain'].map((n) => [`${LIB}/${n}.service`, service()])),
    };
    // The loader reads a tree where nothing names w@c.service; systemd is asked about it in the same tree plus a probe.
    const graph = await graphOf(probeTree(files, ['plain.service']));
    const root = probeTree(files, ['w@c.service']);
    expect(graph.units.has('w@c.service')).toBe(false);
    const more = await extendUnitGraph(graph, ['w@c.service']);
    expect(more).not.toBe(graph);
    expect(graph.units.has('w@c.service')).toBe(false);
    expect(ours(more, ['w@c.service'])).toEqual(await theirs(root, ['w@c.service']));
    expect(more.units.size).toBe(graph.units.size + 1);
    expect(await extendUnitGraph(more, ['w@c.service', 'plain.service'])).toBe(more);
    // A bare template is no unit: nothing to add, the same graph.
    expect(await extendUnitGraph(more, ['nothing@.service'])).toBe(more);
    expect(() => dependencyLinks({ ...more })).toThrow(/dependencyLinks: the graph was not made by loadUnitGraph/);
    await expect(extendUnitGraph({ ...more }, ['x.service'])).rejects.toThrow(/extendUnitGraph: the graph was not made by loadUnitGraph/);
    expect(dependencyLinks(more).map((l) => `${l.owner} ${l.relation} ${l.name}`)).toEqual(['w@.service Wants tw-wanted.service']);
  });
});

describe('unit loader vs systemd --test: entries systemd skips', () => {
  it('a fifo with a unit name is no unit file (systemd takes only regular files and links): the next directory wins', async () => {
    const names = ['ff.service'];
    const root = probeTree({ [`${LIB}/ff.service`]: service('Wants=from-lib.service\n'), [`${LIB}/from-lib.service`]: service() }, names);
    await execa('mkfifo', [`${root}/${ETC}/ff.service`]);
    const t = await theirs(root, names);
    expect(t['ff.service']).toMatchObject({ load: 'loaded', fragment: `/${LIB}/ff.service` });
    expect(ours(await graphOf(root), names)).toEqual(t);
  });

  it('a fifo as a drop-in, or a link to one as a unit file or drop-in, is not read: a problem names it and what it is', async () => {
    // Not shown to systemd --test: systemd 252 opens a fifo drop-in and waits for a writer (tried: the oracle's run hung
    // until its time limit), so the loader makes it a problem (unknown) rather than guess.
    const root = probeTree(
      {
        [`${ETC}/fl.service`]: { link: '../../../opt/units/fl.service' },
        [`${LIB}/fd2.service`]: service(),
        [`${ETC}/fd2.service.d/10-x.conf`]: { link: '../../../../opt/units/10-x.conf' },
      },
      ['fl.service', 'fd2.service'],
    );
    await execa('mkdir', ['-p', `${root}/opt/units`]);
    await execa('mkfifo', [`${root}/opt/units/fl.service`, `${root}/opt/units/10-x.conf`, `${root}/${ETC}/fd2.service.d/20-fifo.conf`]);
    const graph = await graphOf(root);
    expect(graph.problems).toEqual(
      expect.arrayContaining([
        { file: '/opt/units/fl.service', line: null, message: '/opt/units/fl.service is a fifo, not a regular file: not read' },
        { file: `/${ETC}/fd2.service.d/10-x.conf`, line: null, message: `drop-in /${ETC}/fd2.service.d/10-x.conf is a fifo, not a regular file: not read` },
        {
          file: `/${ETC}/fd2.service.d/20-fifo.conf`,
          line: null,
          message: `drop-in /${ETC}/fd2.service.d/20-fifo.conf is a fifo, not a regular file: not read`,
        },
      ]),
    );
  });

  it('a link to a file that does not exist is not found, as systemd says; a problem names the link and where it leads', async () => {
    const names = ['dang.service', 'dang2.service'];
    const root = probeTree(
      {
        [`${ETC}/dang.service`]: { link: '../../../opt/units/dang.service' },
        [`${ETC}/dang2.service`]: { link: '/opt/gone/dang2.service' },
      },
      names,
    );
    const t = await theirs(root, names);
    expect(Object.values(t).map((s) => (s === 'absent' ? s : s.load))).toEqual(['not-found', 'not-found']);
    const graph = await graphOf(root);
    expect(ours(graph, names)).toEqual(t);
    expect(graph.problems).toEqual(
      expect.arrayContaining([
        { file: `/${ETC}/dang.service`, line: null, message: `/${ETC}/dang.service leads to /opt/units/dang.service, which does not exist` },
        { file: `/${ETC}/dang2.service`, line: null, message: `/${ETC}/dang2.service leads to /opt/gone/dang2.service, which does not exist` },
      ]),
    );
  });

  it('a name whose alias links lead into a loop is not found, like the names of the loop', async () => {
    const names = ['a.service', 'b.service', 'c.service'];
    const root = probeTree(
      {
        [`${ETC}/a.service`]: { link: 'b.service' },
        [`${ETC}/b.service`]: { link: 'c.service' },
        [`${ETC}/c.service`]: { link: 'b.service' },
      },
      names,
    );
    const t = await theirs(root, names);
    expect(Object.values(t).map((s) => (s === 'absent' ? s : s.load))).toEqual(['not-found', 'not-found', 'not-found']);
    expect(ours(await graphOf(root), names)).toEqual(t);
  });
});

describe('[Install] drop-ins in byte order of their names, whatever directory each is in', () => {
  it('a later-named drop-in in /etc resets what an earlier-named one in /usr/lib adds (systemctl --root enable)', async () => {
    const root = probeTree(
      {
        [`${LIB}/ord.service`]: `${service()}[Install]\nWantedBy=frag.target\n`,
        [`${ETC}/ord.service.d/20-etc.conf`]: '[Install]\nWantedBy=\nWantedBy=etc.target\n',
        [`${LIB}/ord.service.d/10-lib.conf`]: '[Install]\nWantedBy=lib.target\n',
        ...Object.fromEntries(['frag', 'etc', 'lib'].map((t) => [`${LIB}/${t}.target`, NODEFAULT])),
      },
      [],
    );
    const graph = await graphOf(root);
    const wanted = graph.units.get('ord.service')!.install.wantedBy.flatMap((d) => d.value.split(/\s+/).filter(Boolean));
    const created = linksIn(await systemctlText(root, 'enable', 'ord.service'), 'Created symlink', root);
    expect(created).toEqual([`/${ETC}/etc.target.wants/ord.service`]);
    expect(wanted.map((t) => `/${ETC}/${t}.wants/ord.service`)).toEqual(created);
  });
});

describe('unit loader vs systemd --test: names of linked files and instances of aliased templates', () => {
  it('a link to a unit file of another name outside the path, and an instance with its own file under an aliased template', async () => {
    const names = ['lk.service', 'other.service', 'foo-alias@x.service', 'foo-alias@y.service', 'foo@y.service'];
    const { ours: o, theirs: t } = await compare(
      {
        'opt/units/other.service': service('Wants=from-lib.service\n'),
        [`${ETC}/lk.service`]: { link: '../../../opt/units/other.service' },
        [`${LIB}/foo@.service`]: service('Wants=from-lib.service\n'),
        [`${ETC}/foo-alias@.service`]: { link: '../../../usr/lib/systemd/system/foo@.service' },
        [`${ETC}/foo-alias@x.service`]: service('Wants=own.service\n'),
        [`${LIB}/from-lib.service`]: service(),
        [`${LIB}/own.service`]: service(),
      },
      names,
    );
    expect(o).toEqual(t);
  });
});

describe('[Install] drop-ins: the first directory of the search path wins a name', () => {
  it('a drop-in in /etc/systemd/system.control beats one of the same name in /usr/lib (systemctl --root enable)', async () => {
    const root = probeTree(
      {
        [`${LIB}/ctl.service`]: `${service()}[Install]\nWantedBy=frag.target\n`,
        ['etc/systemd/system.control/ctl.service.d/10-x.conf']: '[Install]\nWantedBy=\nWantedBy=control.target\n',
        [`${LIB}/ctl.service.d/10-x.conf`]: '[Install]\nWantedBy=lib.target\n',
        ...Object.fromEntries(['frag', 'control', 'lib'].map((t) => [`${LIB}/${t}.target`, NODEFAULT])),
      },
      [],
    );
    const graph = await graphOf(root);
    const wanted = graph.units.get('ctl.service')!.install.wantedBy.flatMap((d) => d.value.split(/\s+/).filter(Boolean));
    const created = linksIn(await systemctlText(root, 'enable', 'ctl.service'), 'Created symlink', root);
    expect(created).toEqual([`/${ETC}/control.target.wants/ctl.service`]);
    expect(wanted.map((t) => `/${ETC}/${t}.wants/ctl.service`)).toEqual(created);
  });
});
