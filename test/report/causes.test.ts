// The fleet grouped by cause, from real documents: N hosts whose kinds say
// which cause stands on each (test/helpers/fleet-scale.ts); the expected
// groups and host lists are computed from the kinds, not from the report.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../src/cli.js';
import { captureIo } from '../helpers/io.js';
import { FLEET_DESIRED, makeFleetDocuments, plantTree } from '../helpers/fleet-documents.js';
import { scaledHosts, writeScaledFleet, type ScaledHost } from '../helpers/fleet-scale.js';
import { loadFleet } from '../../src/report/load.js';
import { fleetCauses, type FleetCause } from '../../src/report/causes.js';
import { fleetDocument, renderTable } from '../../src/report/formats.js';
import type { HostSummary } from '../../src/report/document.js';

const N = 23;
let work: string;
let hosts: ScaledHost[];
let summaries: HostSummary[];
beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'fleet-causes-'));
  const fetched = await makeFleetDocuments(work);
  hosts = scaledHosts(N);
  const dir = writeScaledFleet(fetched, path.join(work, 'fleet'), hosts);
  // One more host: the same sysctl -w one line further down rc.local, a cause of its own.
  const root = plantTree(path.join(work, 'trees', 'node-rc-line3'), {
    name: 'node-rc-line3',
    mode: 'plan',
    files: { '/etc/rc.local': { content: '#!/bin/sh\n# tuned by hand\nsysctl -w net.ipv4.ip_forward=0\nexit 0\n', mode: 0o755 } },
    expect: 'operator',
  });
  writeFileSync(path.join(work, 'd.yaml'), FLEET_DESIRED);
  const io = captureIo();
  await main(['--plan', '--json', '-f', path.join(work, 'd.yaml'), '--root', root], io.value);
  mkdirSync(path.join(dir, 'node-rc-line3'));
  writeFileSync(path.join(dir, 'node-rc-line3', 'reconcile.json'), io.stdout());
  const fleet = loadFleet([dir]);
  if (!fleet.ok) throw new Error(JSON.stringify(fleet.issues));
  summaries = fleet.hosts;
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const namesOf = (f: (h: ScaledHost) => boolean) =>
  hosts
    .filter(f)
    .map((h) => h.name)
    .sort(byteOrder);
const find = (causes: FleetCause[], f: (c: FleetCause) => boolean) => {
  const found = causes.filter(f);
  expect(found).toHaveLength(1);
  return found[0]!;
};

describe('the fleet grouped by cause', () => {
  it('is one entry per cause, with every host it stands on', () => {
    const causes = fleetCauses(summaries);
    const rc = find(causes, (c) => c.text.startsWith('/etc/rc.local:2 sets net.ipv4.ip_forward = 0'));
    expect(rc).toMatchObject({ kind: 'operator', checks: ['SysctlFile'] });
    expect(rc.fix).toMatch(/^\/etc\/rc\.local:2: remove or comment out that line/);
    // The plan's and the apply's hosts alike: the cause is the line, not the mode.
    expect(rc.hosts).toEqual(namesOf((h) => h.kind.names === '/etc/rc.local:2'));

    const line3 = find(causes, (c) => c.text.startsWith('/etc/rc.local:3 sets net.ipv4.ip_forward = 0'));
    expect(line3.hosts).toEqual(['node-rc-line3']);

    // One rc.local line running a Python program may undo each of the three resources: one cause filed under all three.
    const python = find(causes, (c) => c.kind === 'unknown');
    expect(python.checks).toEqual(['ModulesLoad', 'SwapOff', 'SysctlFile']);
    expect(python.text).toContain('/usr/local/bin/tune.py');
    expect(python.hosts).toEqual(namesOf((h) => h.kind.expect === 'unknown'));

    const failed = find(causes, (c) => c.kind === 'failed');
    expect(failed.text).toMatch(/resources\[0\]\.persist: unknown key/);
    expect(failed.hosts).toEqual(namesOf((h) => h.kind.expect === 'failed'));

    // Nothing else: the swap hosts' changes are the tool's to make, no cause a person reads.
    expect(causes).toHaveLength(4);
    // Worst first; among the operator lines the one on more hosts first.
    expect(causes.map((c) => c.kind)).toEqual(['failed', 'operator', 'operator', 'unknown']);
    expect(causes[1]).toBe(rc);
  });

  it('is in the JSON document and, counted, in the text table', () => {
    const doc = fleetDocument(summaries);
    expect(doc.causes.map((c) => c.hosts.length)).toEqual([
      namesOf((h) => h.kind.expect === 'failed').length,
      namesOf((h) => h.kind.names === '/etc/rc.local:2').length,
      1,
      namesOf((h) => h.kind.expect === 'unknown').length,
    ]);
    const table = renderTable(summaries);
    const rcHosts = namesOf((h) => h.kind.names === '/etc/rc.local:2').length;
    expect(table).toContain('CAUSES (4, each once;');
    expect(table).toMatch(
      new RegExp(`\\n  ! SysctlFile: /etc/rc\\.local:2 sets net\\.ipv4\\.ip_forward = 0[^\\n]* — ${rcHosts} hosts\\n      fix: /etc/rc\\.local:2: remove`),
    );
  });
});

describe('test/fixtures/example-fleet (scripts/example-fleet.mjs, walked through in docs/fleets.md)', () => {
  it('reads as the verdicts its hosts were planted for, each cause once', () => {
    const fleet = loadFleet([path.resolve('test/fixtures/example-fleet')]);
    if (!fleet.ok) throw new Error(JSON.stringify(fleet.issues));
    // The script's hosts and what each implies (see HOSTS there).
    expect(Object.fromEntries(fleet.hosts.map((h) => [h.host, h.verdict]))).toEqual({
      'node-01-swap': 'changes',
      'node-02-applied': 'ready',
      'node-03-rc-sysctl': 'operator',
      'node-04-rc-python': 'unknown',
      'node-05-bad-desired': 'failed',
    });
    expect(fleetCauses(fleet.hosts).map((c) => [c.kind, c.hosts])).toEqual([
      ['failed', ['node-05-bad-desired']],
      ['operator', ['node-03-rc-sysctl']],
      ['unknown', ['node-04-rc-python']],
    ]);
    // The applied host links its fetched run documents too.
    const applied = fleet.hosts.find((h) => h.host === 'node-02-applied')!;
    expect(applied.documents.map((d) => path.basename(d))).toEqual(['reconcile.json', 'plan.json', 'result.json']);
  });
});
