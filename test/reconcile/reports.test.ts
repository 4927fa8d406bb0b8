import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { openDoor } from '../helpers/door.js';
import { backupDirOf, newRunJournal, recordBeforeState, writeReport } from '../../src/reconcile/reports.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'reports-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const first = { swap_total_kb: 262140, ip_forward: 0, br_netfilter: false, busy_ports: [10250] };
const later = { swap_total_kb: 0, ip_forward: 1, br_netfilter: true, busy_ports: [] };

describe('reports directory', () => {
  it('names a run journal by time and pid', () => {
    const j = newRunJournal('/root/ks/preflight', new Date('2026-11-29T20:53:00.123Z'), 42);
    expect(j.dir).toBe('/root/ks/preflight/runs/20261129T205300123Z-42');
    expect(backupDirOf(j)).toBe('/root/ks/preflight/runs/20261129T205300123Z-42/backup');
  });

  it('before.json keeps the first observation; every run has its own copy', async () => {
    const host = new Host({ root });
    const j1 = newRunJournal('/r', new Date('2026-11-29T20:00:00Z'), 1);
    expect(await recordBeforeState(await openDoor(host, j1.dir), '/r', first)).toBe(true);
    const j2 = newRunJournal('/r', new Date('2026-11-29T21:00:00Z'), 2);
    expect(await recordBeforeState(await openDoor(host, j2.dir), '/r', later)).toBe(false);
    expect(JSON.parse(readFileSync(path.join(root, 'r/before.json'), 'utf8'))).toEqual(first);
    expect(JSON.parse(readFileSync(path.join(root, j2.dir, 'before.json'), 'utf8'))).toEqual(later);
  });

  it('a report that already holds the same content is not rewritten or backed up', async () => {
    const door = await openDoor(new Host({ root }), '/b');
    expect(await writeReport(door, '/r', 'facts.json', { kernel: '6.1' })).toBe('/r/facts.json');
    expect(await writeReport(door, '/r', 'facts.json', { kernel: '6.1' })).toBeNull();
    expect(existsSync(path.join(root, 'b/backup'))).toBe(false);
    expect(await writeReport(door, '/r', 'facts.json', { kernel: '6.2' })).toBe('/r/facts.json');
    expect(JSON.parse(readFileSync(path.join(root, 'b/backup/r/facts.json'), 'utf8'))).toEqual({ kernel: '6.1' });
  });

  it('writes a report only under a name the controller fetches (REPORT_DOCUMENTS)', async () => {
    const door = await openDoor(new Host({ root }), '/b');
    await expect(writeReport(door, '/r', 'extra.json', {})).rejects.toThrow(/^extra\.json is not one of the report documents \(before\.json, /);
    await expect(writeReport(door, '/r', '../facts.json', {})).rejects.toThrow(/is not one of the report documents/);
    expect(existsSync(path.join(root, 'r'))).toBe(false);
    for (const name of ['before.json', 'facts.json', 'first-boot.json', 'ports.json', 'who-fixes.json'])
      expect(await writeReport(door, '/r', name, { name })).toBe(`/r/${name}`);
  });
});
