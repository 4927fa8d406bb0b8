// Single-valued and list-valued unit settings as systemd itself reads them:
// `systemd --test` (test/helpers/systemd-oracle.ts) loads the fixture tree
// and dumps each socket's ListenStream= and Triggers= and each swap unit's
// What=. Ours is what port discovery (socketUnitOf) and swap discovery
// (readEnabledSwapUnits) read from the same tree. systemd does not treat every
// setting alike: an empty ListenStream= or What= resets it, but a value the
// setting's parser refuses (an empty or unparsable Accept=, an empty
// Service=) is ignored with a warning and the earlier value stays.
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { execa } from 'execa';
import { Host } from '../../src/host.js';
import { loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { socketUnitOf, unitFilesOf } from '../../src/systemd/socket-unit.js';
import { readEnabledSwapUnits } from '../../src/swap/units.js';
import { ETC, LIB, NODEFAULT, oracle, unitTree } from '../helpers/systemd-oracle.js';
import type { Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const service = `${NODEFAULT}[Service]\nExecStart=/bin/true\n`;

/** What systemd --test says of one socket: its TCP ports and the service it triggers (none with Accept=yes). */
function theirSocket(lines: string[]): { ports: number[]; triggers: string | null } {
  const ports = lines.filter((l) => l.startsWith('ListenStream: ')).map((l) => Number(l.slice(l.lastIndexOf(':') + 1)));
  const trig = lines.find((l) => l.startsWith('Triggers: '));
  return { ports, triggers: trig ? trig.split(' ')[1]! : null };
}

async function compareSocket(
  body: string,
  extra: Tree = {},
): Promise<{ ours: { ports: number[]; service: string; accept: boolean }; theirs: { ports: number[]; triggers: string | null } }> {
  const root = unitTree(roots, 'unit-settings-', {
    [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=s.socket\n`,
    [`${LIB}/s.socket`]: `${NODEFAULT}${body}`,
    [`${LIB}/s.service`]: service,
    [`${LIB}/s@.service`]: service,
    [`${LIB}/real.service`]: service,
    [`${LIB}/decoy.service`]: service,
    ...extra,
  });
  const o = await oracle(root);
  const u = o.units.get('s.socket');
  expect(u?.load).toBe('loaded');
  const mine = socketUnitOf(unitFilesOf(await loadUnitGraph(new Host({ root, live: false }))).get('s.socket')!);
  return { ours: { ports: mine.listens.map((l) => l.port), service: mine.service, accept: mine.accept }, theirs: theirSocket(u!.lines) };
}

describe('a socket unit, as systemd --test loads it', () => {
  it('an empty Accept= after Accept=yes is ignored: the socket still accepts', async () => {
    const { ours, theirs } = await compareSocket('[Socket]\nListenStream=8081\nAccept=yes\nAccept=\n');
    expect(theirs).toEqual({ ports: [8081], triggers: null });
    expect(ours).toEqual({ ports: [8081], service: 's@.service', accept: true });
  });

  it('an Accept= systemd cannot parse is ignored, and the earlier value stays', async () => {
    const { ours, theirs } = await compareSocket('[Socket]\nListenStream=8082\nAccept=yes\nAccept=maybe\n');
    expect(theirs.triggers).toBeNull();
    expect(ours.accept).toBe(true);
  });

  it("Accept= takes every word of systemd's parse_boolean, in any case", async () => {
    const words = [
      ['1', true],
      ['yes', true],
      ['Y', true],
      ['True', true],
      ['t', true],
      ['On', true],
      ['0', false],
      ['NO', false],
      ['n', false],
      ['false', false],
      ['F', false],
      ['off', false],
    ] as const;
    for (const [word, accepts] of words) {
      const { ours, theirs } = await compareSocket(`[Socket]\nListenStream=8083\nAccept=${accepts ? 'no' : 'yes'}\nAccept=${word}\n`);
      expect(theirs.triggers === null, word).toBe(accepts);
      expect(ours.accept, word).toBe(accepts);
      expect(ours.service, word).toBe(accepts ? 's@.service' : 's.service');
    }
  });

  it('an empty Service= is ignored ("Unit must be of type service"): the socket triggers the one named before', async () => {
    const { ours, theirs } = await compareSocket('[Socket]\nListenStream=8084\nService=real.service\nService=\n');
    expect(theirs.triggers).toBe('real.service');
    expect(ours.service).toBe('real.service');
  });

  it('Service= with blanks after "=", and a Service= in another section that systemd ignores', async () => {
    const { ours, theirs } = await compareSocket('[Socket]\nListenStream=8085\nService= real.service\n[X-Custom]\nService=decoy.service\n');
    expect(theirs.triggers).toBe('real.service');
    expect(ours.service).toBe(theirs.triggers);
  });

  it('ListenStream= in [Unit] is an unknown key there: only [Socket] listens', async () => {
    const { ours, theirs } = await compareSocket('ListenStream=9999\n[Socket]\nListenStream=8086\n');
    expect(theirs.ports).toEqual([8086]);
    expect(ours.ports).toEqual(theirs.ports);
  });

  it('an empty ListenStream= drops the ones before it, from a drop-in too', async () => {
    const { ours, theirs } = await compareSocket('[Socket]\nListenStream=8087\nListenStream=\nListenStream=8088\n', {
      [`${ETC}/s.socket.d/10-more.conf`]: '[Socket]\nListenStream=\nListenStream=8089\n',
    });
    expect(theirs.ports).toEqual([8089]);
    expect(ours.ports).toEqual(theirs.ports);
  });
});

/** The swap unit's name for a device path, as systemd-escape spells it (systemd refuses a What= that does not match the name). */
async function swapName(dev: string): Promise<string> {
  return (await execa('systemd-escape', ['--path', '--suffix=swap', dev])).stdout.trim();
}

async function compareSwap(dev: string, body: string, dropIn?: string): Promise<{ ours: string | null; theirs: string }> {
  const name = await swapName(dev);
  const root = unitTree(roots, 'unit-settings-', {
    [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=${name}\n`,
    [`${LIB}/${name}`]: `${NODEFAULT}${body}`,
    [`${ETC}/swap.target.wants/${name}`]: { link: `../../../../${LIB}/${name}` },
    ...(dropIn === undefined ? {} : { [`${ETC}/${name}.d/10-x.conf`]: dropIn }),
  });
  const u = (await oracle(root)).units.get(name);
  expect(u?.load, 'systemd loads the swap unit').toBe('loaded');
  const what = u!.lines.find((l) => l.startsWith('What: '));
  expect(what, 'systemd dumps What=').toBeDefined();
  const mine = (await readEnabledSwapUnits(new Host({ root, live: false }))).find((x) => x.unit === name);
  expect(mine, 'the enabled swap unit is found').toBeDefined();
  return { ours: mine!.what, theirs: what!.slice('What: '.length) };
}

describe("a swap unit's What=, as systemd --test loads it", () => {
  it('blanks after "=" are not part of the path', async () => {
    const r = await compareSwap('/dev/sdz1', '[Swap]\nWhat= /dev/sdz1\n');
    expect(r.theirs).toBe('/dev/sdz1');
    expect(r.ours).toBe(r.theirs);
  });

  it('What= in another section is not the [Swap] one', async () => {
    const r = await compareSwap('/dev/sdz2', '[Swap]\nWhat=/dev/sdz2\n[X-Decoy]\nWhat=/dev/decoy\n');
    expect(r.theirs).toBe('/dev/sdz2');
    expect(r.ours).toBe(r.theirs);
  });

  it('an empty What= in a drop-in resets it: systemd falls back to the path the unit name spells, and ours holds no What=', async () => {
    const r = await compareSwap('/dev/sdz3', '[Swap]\nWhat=/dev/sdz3\n', '[Swap]\nWhat=\n');
    expect(r.theirs).toBe('/dev/sdz3');
    expect(r.ours).toBeNull();
  });

  it('another key after What= in [Swap] is not What=', async () => {
    const r = await compareSwap('/dev/sdz5', '[Swap]\nWhat=/dev/sdz5\nOptions=discard\nPriority=5\n');
    expect(r.theirs).toBe('/dev/sdz5');
    expect(r.ours).toBe(r.theirs);
  });

  it('a later What= in a drop-in wins over the fragment', async () => {
    // The fragment's What= alone does not match the name (systemd would refuse it); the drop-in's does.
    const r = await compareSwap('/dev/disk/by-label/sw-4', '[Swap]\nWhat=/dev/sdz4\n', '[Swap]\nWhat=/dev/disk/by-label/sw-4\n');
    expect(r.theirs).toBe('/dev/disk/by-label/sw-4');
    expect(r.ours).toBe(r.theirs);
  });
});

/** The loader's Triggers= edges of one unit next to systemd's. */
async function compareTriggers(name: string, body: string, extra: Tree = {}): Promise<{ ours: string[]; theirs: string[] }> {
  const root = unitTree(roots, 'unit-settings-', {
    [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=${name}\n`,
    [`${LIB}/${name}`]: `${NODEFAULT}${body}`,
    ...Object.fromEntries(['real', 'decoy', 'p', 'p@', 'q', 'q@', 'r'].map((s) => [`${LIB}/${s}.service`, service])),
    ...extra,
  });
  const u = (await oracle(root)).units.get(name);
  expect(u?.load).toBe('loaded');
  const graph = await loadUnitGraph(new Host({ root, live: false }));
  return { ours: graph.edges.filter((e) => e.from === name && e.relation === 'Triggers').map((e) => e.to), theirs: u!.deps.get('Triggers') ?? [] };
}

describe("the unit graph's Triggers=, as systemd --test loads it", () => {
  it('a socket triggers the last Service= that names a .service', async () => {
    const r = await compareTriggers('p.socket', '[Socket]\nListenStream=8090\nService=real.service\nService=decoy.service\nService=\n');
    expect(r.theirs).toEqual(['decoy.service']);
    expect(r.ours).toEqual(r.theirs);
  });

  it('a timer triggers the first Unit= (systemd: "Multiple units to trigger specified, ignoring")', async () => {
    const r = await compareTriggers('q.timer', '[Timer]\nOnBootSec=1h\nUnit=\nUnit=real.service\nUnit=decoy.service\n');
    expect(r.theirs).toEqual(['real.service']);
    expect(r.ours).toEqual(r.theirs);
  });

  it('a path unit likewise, also when the second Unit= is in a drop-in', async () => {
    const r = await compareTriggers('q.path', '[Path]\nPathExists=/nonexistent\nUnit=real.service\n', {
      [`${ETC}/q.path.d/10-x.conf`]: '[Path]\nUnit=decoy.service\n',
    });
    expect(r.theirs).toEqual(['real.service']);
    expect(r.ours).toEqual(r.theirs);
  });

  it('Accept=yes then Accept=no: the socket triggers NAME.service, not the template', async () => {
    const r = await compareTriggers('r.socket', '[Socket]\nListenStream=8091\nAccept=yes\nAccept=no\n');
    expect(r.theirs).toEqual(['r.service']);
    expect(r.ours).toEqual(r.theirs);
  });

  it('Accept=no then an Accept= systemd cannot parse: still NAME.service', async () => {
    const r = await compareTriggers('r.socket', '[Socket]\nListenStream=8092\nAccept=no\nAccept=sometimes\n');
    expect(r.theirs).toEqual(['r.service']);
    expect(r.ours).toEqual(r.theirs);
  });

  it('a socket triggers only a .service ("Unit must be of type service"); a timer any unit, a target too', async () => {
    const s = await compareTriggers('p.socket', '[Socket]\nListenStream=8094\nService=real.service\nService=multi-user.target\n');
    expect(s.theirs).toEqual(['real.service']);
    expect(s.ours).toEqual(s.theirs);
    const t = await compareTriggers('q.timer', '[Timer]\nOnBootSec=1h\nUnit=multi-user.target\n');
    expect(t.theirs).toEqual(['multi-user.target']);
    expect(t.ours).toEqual(t.theirs);
  });

  it("only [Socket]'s Service= names the socket's service: not a Service= in another section, nor another [Socket] key naming a .service", async () => {
    const r = await compareTriggers(
      'p.socket',
      '[Socket]\nListenStream=8095\nService=real.service\nFileDescriptorName=decoy.service\n[X-Custom]\nService=decoy.service\n',
    );
    expect(r.theirs).toEqual(['real.service']);
    expect(r.ours).toEqual(r.theirs);
  });

  it('Accept=yes then an Accept= systemd cannot parse: still accepting (no Triggers=); ours names the template', async () => {
    const r = await compareTriggers('p.socket', '[Socket]\nListenStream=8096\nAccept=yes\nAccept=maybe\n');
    expect(r.theirs).toEqual([]);
    expect(r.ours).toEqual(['p@.service']);
  });

  it('Accept= in a timer means nothing: it triggers NAME.service', async () => {
    const r = await compareTriggers('q.timer', '[Timer]\nOnBootSec=1h\n[Socket]\nAccept=yes\n');
    expect(r.theirs).toEqual(['q.service']);
    expect(r.ours).toEqual(r.theirs);
  });

  it('Accept=y: no Triggers= in systemd (it starts an instance per connection); ours names the template', async () => {
    const r = await compareTriggers('p.socket', '[Socket]\nListenStream=8093\nAccept=y\n');
    expect(r.theirs).toEqual([]);
    expect(r.ours).toEqual(['p@.service']);
  });
});

describe("a line systemd's unit-file parser stops at", () => {
  const bad = '[Unit]\nWants=real.service\n[Bogus\nWants=decoy.service\n';
  const base = (files: Tree): Tree => ({
    [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=k.service\n`,
    [`${LIB}/real.service`]: service,
    [`${LIB}/decoy.service`]: service,
    ...files,
  });

  it("'[' without ']' in a fragment (\"Invalid section header\"): systemd does not load the unit; the loader names the file and line as a problem", async () => {
    const root = unitTree(roots, 'unit-settings-', base({ [`${LIB}/k.service`]: `${bad}[Service]\nExecStart=/bin/true\n` }));
    const o = await oracle(root);
    expect(o.units.get('k.service')?.load).toBe('error');
    expect([...o.jobs].sort()).toEqual(['multi-user.target']);
    const graph = await loadUnitGraph(new Host({ root, live: false }));
    expect(graph.problems.map((p) => [p.file, p.line])).toEqual([[`/${LIB}/k.service`, 3]]);
    expect(graph.problems[0]!.message).toContain("'[Bogus'");
  });

  it('the same line in a drop-in ends only that drop-in: the lines before it apply, the unit loads', async () => {
    const root = unitTree(roots, 'unit-settings-', base({ [`${LIB}/k.service`]: service, [`${ETC}/k.service.d/10-x.conf`]: bad }));
    const o = await oracle(root);
    expect(o.units.get('k.service')?.load).toBe('loaded');
    expect(o.jobs.has('real.service')).toBe(true);
    expect(o.jobs.has('decoy.service')).toBe(false);
    const graph = await loadUnitGraph(new Host({ root, live: false }));
    const wants = graph.edges.filter((e) => e.from === 'k.service' && e.relation === 'Wants').map((e) => e.to);
    expect(wants).toEqual(['real.service']);
    expect(graph.problems).toEqual([]);
  });

  it('a value ending in "]" or a header with blanks inside is no error for systemd nor for us', async () => {
    const root = unitTree(roots, 'unit-settings-', {
      [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=k.service\n`,
      [`${LIB}/k.service`]: `[Unit]\nDescription=k [test]\nDefaultDependencies=no\n[X-My Section]\nKey=v\n[Service]\nExecStart=/bin/true\n`,
    });
    const o = await oracle(root);
    expect(o.units.get('k.service')?.load).toBe('loaded');
    expect((await loadUnitGraph(new Host({ root, live: false }))).problems).toEqual([]);
  });
});
