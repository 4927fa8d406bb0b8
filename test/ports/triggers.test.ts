// The units that start a unit: its triggers (.path, .timer, .socket), from the
// unit graph against systemd's own TriggeredBy= (systemd --test, the oracle
// in test/helpers/systemd-oracle.ts), from the running manager's TriggeredBy=
// followed transitively, and the list of units a stop must include.
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { Host } from '../../src/host.js';
import { loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { liveTriggers, triggersInGraph, withTriggers } from '../../src/ports/triggers.js';
import { ETC, LIB, oracle, unitTree } from '../helpers/systemd-oracle.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

describe('the triggers of a unit, as systemd loads them', () => {
  it('.path, .timer and .socket units naming a service (by Unit=/Service= or by their own name) are its triggers; a masked one is not', async () => {
    const root = unitTree(roots, 'triggers-', {
      [`${LIB}/watch.service`]: '[Service]\nExecStart=/bin/true\n',
      [`${ETC}/watch.path`]: '[Path]\nPathExists=/etc/passwd\n',
      [`${ETC}/poll.timer`]: '[Timer]\nOnBootSec=1\nUnit=watch.service\n',
      [`${ETC}/watch.socket`]: '[Socket]\nListenStream=/run/watch.sock\n',
      [`${ETC}/other.socket`]: '[Socket]\nListenStream=/run/other.sock\nService=watch.service\n',
      [`${ETC}/gone.path`]: { link: '/dev/null' },
      [`${LIB}/gone.path`]: '[Path]\nPathExists=/\nUnit=watch.service\n',
      [`${ETC}/multi-user.target.wants/watch.path`]: { link: '../watch.path' },
      [`${ETC}/multi-user.target.wants/poll.timer`]: { link: '../poll.timer' },
      [`${ETC}/multi-user.target.wants/watch.socket`]: { link: '../watch.socket' },
      [`${ETC}/multi-user.target.wants/other.socket`]: { link: '../other.socket' },
    });
    const o = await oracle(root);
    const expected = [...(o.units.get('watch.service')?.deps.get('TriggeredBy') ?? [])].sort();
    expect(expected).toEqual(['other.socket', 'poll.timer', 'watch.path', 'watch.socket']);
    const graph = await loadUnitGraph(new Host({ root, live: false }));
    expect(triggersInGraph(graph, 'watch.service')).toEqual(expected);
  });
});

describe("liveTriggers: the manager's TriggeredBy= beside the files', followed to the triggers' own triggers", () => {
  it('a socket started by a timer: both listed, each once; a unit nothing triggers is absent; a TriggeredBy= word that is no unit name is dropped', async () => {
    const root = unitTree(roots, 'live-triggers-', {
      [`${LIB}/api.service`]: '[Service]\nExecStart=/bin/true\n',
      [`${ETC}/api.path`]: '[Path]\nPathExists=/run/go\nUnit=api.service\n',
      [`${LIB}/plain.service`]: '[Service]\nExecStart=/bin/true\n',
    });
    const graph = await loadUnitGraph(new Host({ root, live: false }));
    const shown: string[] = [];
    // What `systemctl show -p TriggeredBy` says on a host where a transient api.socket (no file) starts api.service, and a timer starts it.
    const manager: Record<string, string> = { 'api.service': 'api.socket  api.path', 'api.socket': 'wake.timer', 'plain.service': '', 'wake.timer': 'n/a' };
    const show = async (u: string) => {
      shown.push(u);
      return u in manager ? new Map([['TriggeredBy', manager[u]!]]) : null;
    };
    expect(await liveTriggers(show, graph, ['api.service', 'plain.service', 'api.service'])).toEqual({
      'api.service': ['api.path', 'api.socket'],
      'api.socket': ['wake.timer'],
    });
    expect(shown.sort()).toEqual(['api.path', 'api.service', 'api.socket', 'plain.service', 'wake.timer']);
  });
});

describe('withTriggers: the units and, before them, everything that would start them again', () => {
  it('triggers of triggers, each once and sorted, before the units as given; no map leaves the units alone', () => {
    const t = { 'a.service': ['a.socket', 'a.path'], 'a.socket': ['z.timer', 'a.path'], 'b.service': ['a.socket'] };
    expect(withTriggers(['b.service', 'a.service'], t)).toEqual(['a.path', 'a.socket', 'z.timer', 'b.service', 'a.service']);
    expect(withTriggers(['c.service'], t)).toEqual(['c.service']);
    expect(withTriggers(['a.service'], undefined)).toEqual(['a.service']);
    // A unit that triggers one of the units given is not listed twice.
    expect(withTriggers(['a.service', 'a.socket'], t)).toEqual(['a.path', 'z.timer', 'a.service', 'a.socket']);
  });
});
