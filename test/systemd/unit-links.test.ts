// src/systemd/unit-links.ts against `systemctl --root=DIR disable`, case by
// case: links systemctl's directory walk skips
// (hidden, backup and invalid names), a symlink loop next to the unit, Also=
// outside [Install], Also= cycles and blank runs, instances of a template
// whose link names another file, directories disable leaves empty deeper than
// one level, and enablementOf's split between a unit's own links and its
// Also= units'. The expectation is always what systemctl did to the tree.
// systemctl only ever sees temp trees.
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { disableLinks, enablementOf, removeUnitLinks, unitLinkSnapshot } from '../../src/systemd/unit-links.js';
import { applyContext } from '../helpers/door.js';
import { snapshot } from '../helpers/snapshot.js';
import type { Tree } from '../helpers/tree.js';
import { ETC, LIB, NODEFAULT, oracle, oracleStarted, unitTree, plainTree, systemctlRoot } from '../helpers/systemd-oracle.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const tmpTree = (files: Tree): string => plainTree(roots, 'unit-links-domain-', files);

const host = (root: string) => new Host({ root, live: false });

/** The target paths of the symlinks `systemctl --root disable NAMES` removed from the tree (it runs on the tree itself). */
async function systemctlDisables(root: string, ...names: string[]): Promise<string[]> {
  const before = snapshot(root);
  await systemctlRoot(root, 'disable', ...names);
  const after = snapshot(root);
  return Object.keys(before)
    .filter((k) => before[k]!.startsWith('link') && !(k in after))
    .map((k) => `/${k}`)
    .sort();
}

const unit = (install = '', unitSection = '') => `[Unit]\nDescription=fixture\n${unitSection}\n[Service]\nExecStart=/bin/true\n\n[Install]\n${install}\n`;
const WANTS = `${ETC}/multi-user.target.wants`;

describe('disableLinks against systemctl --root disable', () => {
  it('skips what systemctl skips: hidden and backup links, a link whose name is no valid unit name', async () => {
    const to = { link: '/usr/lib/systemd/system/agent.service' };
    const root = tmpTree({
      [`${LIB}/agent.service`]: unit('WantedBy=multi-user.target'),
      [`${WANTS}/agent.service`]: to,
      // systemd's directory walk passes over hidden and backup names (hidden_or_backup_file), and a
      // name unit_name_is_valid refuses ('+' is no unit name character, "service-x" no unit type).
      [`${WANTS}/.agent.service`]: to,
      [`${WANTS}/agent.service~`]: to,
      [`${WANTS}/agent+old.service`]: to,
      [`${WANTS}/agent.service-x`]: to,
      // An '@' first is no instance of anything (unit_name_is_valid refuses it).
      [`${WANTS}/@agent.service`]: to,
      [`${WANTS}/@agent@x.service`]: to,
    });
    const planned = await disableLinks(host(root), ['agent.service']);
    const gone = await systemctlDisables(root, 'agent.service');
    expect(gone).toEqual([`/${WANTS}/agent.service`]);
    expect(planned).toEqual(gone);
  });

  it('a symlink loop next to the unit: systemctl complains about it and still removes the unit link', async () => {
    const root = tmpTree({
      [`${LIB}/agent.service`]: unit('WantedBy=multi-user.target'),
      [`${WANTS}/agent.service`]: { link: '/usr/lib/systemd/system/agent.service' },
      [`${WANTS}/loop-a.service`]: { link: 'loop-b.service' },
      [`${WANTS}/loop-b.service`]: { link: 'loop-a.service' },
    });
    const planned = await disableLinks(host(root), ['agent.service']);
    const gone = await systemctlDisables(root, 'agent.service');
    expect(gone).toEqual([`/${WANTS}/agent.service`]);
    expect(planned).toEqual(gone);
  });

  it('Also= counts only in [Install]; an Also= cycle ends; blank runs between Also= names', async () => {
    const root = tmpTree({
      // Also= under [Unit] is no install directive: systemctl leaves other.service enabled.
      [`${LIB}/agent.service`]: unit('WantedBy=multi-user.target\nAlso=helper.service', 'Also=other.service'),
      // helper names agent back, and two more units after runs of blanks.
      [`${LIB}/helper.service`]: unit('WantedBy=multi-user.target\nAlso=agent.service   extra.service\t\tlast.service'),
      [`${LIB}/other.service`]: unit('WantedBy=multi-user.target'),
      [`${LIB}/extra.service`]: unit('WantedBy=multi-user.target'),
      [`${LIB}/last.service`]: unit('WantedBy=multi-user.target'),
      ...Object.fromEntries(
        ['agent', 'helper', 'other', 'extra', 'last'].map((n) => [`${WANTS}/${n}.service`, { link: `/usr/lib/systemd/system/${n}.service` }]),
      ),
    });
    const planned = await disableLinks(host(root), ['agent.service']);
    const gone = await systemctlDisables(root, 'agent.service');
    expect(gone).toEqual(['agent', 'extra', 'helper', 'last'].map((n) => `/${WANTS}/${n}.service`));
    expect(planned).toEqual(gone);
  });

  it('disabling a template removes its instances, also when an instance link names another file', async () => {
    const root = tmpTree({
      [`${LIB}/worker@.service`]: unit('WantedBy=multi-user.target'),
      [`${LIB}/legacy-worker.service`]: unit('WantedBy=multi-user.target'),
      [`${WANTS}/worker@a.service`]: { link: '/usr/lib/systemd/system/worker@.service' },
      // Made by hand: the instance name points at a file of another name.
      [`${WANTS}/worker@b.service`]: { link: '/usr/lib/systemd/system/legacy-worker.service' },
      [`${WANTS}/legacy-worker.service`]: { link: '/usr/lib/systemd/system/legacy-worker.service' },
      // The first '@' starts the instance (unit_name_is_valid): "x@y" is an instance of worker@.service too.
      [`${WANTS}/worker@x@y.service`]: { link: '/usr/lib/systemd/system/legacy-worker.service' },
    });
    const planned = await disableLinks(host(root), ['worker@.service']);
    const gone = await systemctlDisables(root, 'worker@.service');
    expect(gone).toContain(`/${WANTS}/worker@b.service`);
    expect(gone).toContain(`/${WANTS}/worker@x@y.service`);
    expect(gone).not.toContain(`/${WANTS}/legacy-worker.service`);
    expect(planned).toEqual(gone);
  });

  it('a link to a link that disable removes goes too, whatever its own name and final file', async () => {
    const root = tmpTree({
      // agent.service is enabled through a linked file of another name (no unit file on the search path).
      'opt/agent/agent-v2.service': unit('WantedBy=multi-user.target'),
      [`${WANTS}/agent.service`]: { link: '/opt/agent/agent-v2.service' },
      // Sorts before the link it points to.
      [`${ETC}/a.target.wants/zz.service`]: { link: `/${WANTS}/agent.service` },
      [`${ETC}/a.target.wants/other.service`]: { link: '/opt/agent/agent-v2.service' },
    });
    const planned = await disableLinks(host(root), ['agent.service']);
    const gone = await systemctlDisables(root, 'agent.service');
    expect(gone).toEqual([`/${ETC}/a.target.wants/zz.service`, `/${WANTS}/agent.service`]);
    expect(planned).toEqual(gone);
  });

  it('a unit linked to a file whose name is no unit name: the file name marks nothing', async () => {
    const root = tmpTree({
      'opt/agent/unitfile': unit('WantedBy=multi-user.target'),
      [`${ETC}/agent.service`]: { link: '/opt/agent/unitfile' },
      [`${WANTS}/agent.service`]: { link: '/etc/systemd/system/agent.service' },
      // Another unit made from the same file stays enabled.
      [`${ETC}/b.target.wants/other.service`]: { link: '/opt/agent/unitfile' },
    });
    const planned = await disableLinks(host(root), ['agent.service']);
    const gone = await systemctlDisables(root, 'agent.service');
    expect(gone).toEqual([`/${ETC}/agent.service`, `/${WANTS}/agent.service`]);
    expect(planned).toEqual(gone);
  });

  it('an Also= word that is no unit name marks nothing, not even a file of that name', async () => {
    const root = tmpTree({
      [`${LIB}/agent.service`]: unit('WantedBy=multi-user.target\nAlso=unitfile'),
      [`${WANTS}/agent.service`]: { link: '/usr/lib/systemd/system/agent.service' },
      'opt/x/unitfile': unit('WantedBy=b.target'),
      [`${ETC}/b.target.wants/other.service`]: { link: '/opt/x/unitfile' },
    });
    const planned = await disableLinks(host(root), ['agent.service']);
    const gone = await systemctlDisables(root, 'agent.service');
    expect(gone).toEqual([`/${WANTS}/agent.service`]);
    expect(planned).toEqual(gone);
  });

  it('removeUnitLinks leaves the tree systemctl leaves: nested directories emptied by disable go too', async () => {
    const files: Tree = {
      [`${LIB}/agent.service`]: unit('WantedBy=multi-user.target'),
      [`${WANTS}/agent.service`]: { link: '/usr/lib/systemd/system/agent.service' },
      // A link two levels down (made by hand): systemctl's walk recurses, and prunes every directory it empties.
      [`${ETC}/extra/deep.target.wants/agent.service`]: { link: '/usr/lib/systemd/system/agent.service' },
      // A directory left non-empty stays.
      [`${ETC}/kept/x.target.wants/agent.service`]: { link: '/usr/lib/systemd/system/agent.service' },
      [`${ETC}/kept/notes.txt`]: 'mine\n',
    };
    const ours = tmpTree(files);
    const theirs = tmpTree(files);
    const links = await disableLinks(host(ours), ['agent.service']);
    const ctx = await applyContext(host(ours));
    await removeUnitLinks(ctx.door, links);
    await systemctlDisables(theirs, 'agent.service');
    const skipVar = (rel: string) => rel === 'var';
    const theirsTree = snapshot(theirs, skipVar);
    expect(theirsTree).not.toHaveProperty(`${ETC}/extra`);
    expect(theirsTree).toHaveProperty(`${ETC}/kept`);
    expect(snapshot(ours, skipVar)).toEqual(theirsTree);
  });
});

describe('enablementOf against systemctl --root disable', () => {
  it("a unit's own links and its Also= units' links: disable without the Also= line removes exactly the first", async () => {
    const files: Tree = {
      [`${LIB}/agent.service`]: unit('WantedBy=multi-user.target\nAlso=helper.service'),
      [`${LIB}/helper.service`]: unit('RequiredBy=multi-user.target'),
      [`${WANTS}/agent.service`]: { link: '/usr/lib/systemd/system/agent.service' },
      [`${ETC}/multi-user.target.requires/helper.service`]: { link: '/usr/lib/systemd/system/helper.service' },
    };
    const root = tmpTree(files);
    const en = (await enablementOf(host(root), ['agent.service'])).get('agent.service')!;
    const all = await systemctlDisables(tmpTree(files), 'agent.service');
    const bare = tmpTree(files);
    writeFileSync(path.join(bare, LIB, 'agent.service'), unit('WantedBy=multi-user.target'));
    const own = await systemctlDisables(bare, 'agent.service');
    expect(own).toEqual([`/${WANTS}/agent.service`]);
    expect(en.links).toEqual(own);
    expect(en.alsoLinks).toEqual(all.filter((l) => !own.includes(l)));
    expect(en.alsoLinks).toHaveLength(1);
  });

  it("vendor links of a template's instances belong to the template; an unrelated instance link belongs to nobody", async () => {
    const root = tmpTree({
      [`${LIB}/getty@.service`]: unit('WantedBy=getty.target'),
      [`${LIB}/getty.target.wants/getty@tty1.service`]: { link: '../getty@.service' },
      [`${LIB}/agent.service`]: unit('WantedBy=multi-user.target'),
      [`${WANTS}/agent.service`]: { link: '/usr/lib/systemd/system/agent.service' },
    });
    const en = await enablementOf(host(root), ['getty@.service', 'agent.service']);
    // systemctl disable cannot remove a vendor link: it is still there afterwards.
    const gone = await systemctlDisables(root, 'getty@.service', 'agent.service');
    expect(gone).toEqual([`/${WANTS}/agent.service`]);
    const left = await unitLinkSnapshot(host(root));
    expect([...left.keys()]).toEqual([]);
    expect(snapshot(root)[`${LIB}/getty.target.wants/getty@tty1.service`]).toBe('link -> ../getty@.service');
    expect(en.get('getty@.service')!.vendorLinks).toEqual([`/${LIB}/getty.target.wants/getty@tty1.service`]);
    expect(en.get('agent.service')!).toMatchObject({ vendorLinks: [], links: [`/${WANTS}/agent.service`] });
    const alone = await enablementOf(host(root), ['agent.service']);
    expect(alone.get('agent.service')!.vendorLinks).toEqual([]);
  });
});

describe('enablementOf masked against systemctl --root is-enabled', () => {
  it('masked is what is-enabled says: the winning entry on the search path, vendor masks and empty files included', async () => {
    const svc = '[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n';
    const root = tmpTree({
      // A unit file in /etc beats a mask in /run: not masked.
      [`${ETC}/over.service`]: svc,
      'run/systemd/system/over.service': { link: '/dev/null' },
      // Masks shipped in the vendor directory: a link to /dev/null, an empty file.
      [`${LIB}/vendor-link.service`]: { link: '/dev/null' },
      [`${LIB}/vendor-empty.service`]: '',
      // A masked template masks its instances.
      [`${LIB}/tpl@.service`]: { link: '/dev/null' },
      // The usual mask: /etc over a vendor unit file.
      [`${ETC}/plain.service`]: { link: '/dev/null' },
      [`${LIB}/plain.service`]: svc,
      [`${LIB}/free.service`]: svc,
    });
    // missing.service has no file at all: is-enabled finds nothing to call masked.
    const units = ['over.service', 'vendor-link.service', 'vendor-empty.service', 'tpl@x.service', 'plain.service', 'free.service', 'missing.service'];
    const en = await enablementOf(host(root), units);
    const said: Record<string, string> = {};
    for (const u of units) said[u] = (await systemctlRoot(root, 'is-enabled', u)).stdout.trim();
    expect(Object.values(said).filter((s) => s === 'masked')).toHaveLength(4);
    for (const u of units) expect(en.get(u)!.masked, `${u}: is-enabled says ${said[u]}`).toBe(said[u] === 'masked');
  });
});

describe('enablementOf vendor links against systemd --test', () => {
  it('a vendor link counts only in a real NAME.wants/.requires directory: the ones systemd starts the unit through', async () => {
    const svc = `${NODEFAULT}[Service]\nExecStart=/bin/true\n`;
    const root = unitTree(roots, 'unit-links-vendor-', {
      [`${LIB}/shipped.service`]: svc,
      [`${LIB}/parked.service`]: svc,
      [`${LIB}/stored.service`]: svc,
      [`${LIB}/multi-user.target.wants/shipped.service`]: { link: '../shipped.service' },
      // A directory whose name only begins like a dependency directory.
      [`${LIB}/multi-user.target.wants.off/parked.service`]: { link: '../parked.service' },
      // A dependency directory that is a symlink to a directory: systemd does not read it.
      [`${LIB}/store/stored.service`]: { link: '../stored.service' },
      [`${LIB}/multi-user.target.requires`]: { link: 'store' },
    });
    const started = oracleStarted(await oracle(root));
    const units = ['shipped.service', 'parked.service', 'stored.service'];
    const en = await enablementOf(host(root), units);
    expect(units.filter((u) => started.has(u))).toEqual(['shipped.service']);
    for (const u of units) expect(en.get(u)!.vendorLinks.length > 0, u).toBe(started.has(u));
    expect(en.get('shipped.service')!.vendorLinks).toEqual([`/${LIB}/multi-user.target.wants/shipped.service`]);
  });
});
