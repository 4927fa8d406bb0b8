// The modes of the tool's own documents: a report the door writes is 0600
// (or the mode the desired state names) even over one that was world-readable,
// and the directories the door makes for reports and runs are 0700 (or the
// matching directory mode). Fixture roots only.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { WriteDoor, type ReportModes } from '../../src/door/door.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'door-modes-'));
  mkdirSync(path.join(root, 'etc'), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const abs = (p: string) => path.join(root, p);
const modeOf = (p: string) => statSync(abs(p)).mode & 0o7777;
const open = (reports?: ReportModes) =>
  WriteDoor.open(new Host({ root }), { runDir: '/root/ks/preflight/runs/r1', runId: 'r1', mode: 'apply', tool: 'test', ...(reports ? { reports } : {}) });

describe('report modes', () => {
  it('by default: the reports and runs directories the door makes 0700, a new report 0600, the run directory 0700', async () => {
    const door = await open();
    expect(await door.writeFile({ path: '/root/ks/preflight/facts.json', content: '{}\n', report: true })).toBe(true);
    expect(modeOf('root/ks/preflight/facts.json')).toBe(0o600);
    for (const d of ['root', 'root/ks', 'root/ks/preflight', 'root/ks/preflight/runs', 'root/ks/preflight/runs/r1']) expect(modeOf(d), d).toBe(0o700);
    expect(modeOf('root/ks/preflight/runs/r1/journal')).toBe(0o600);
    await door.end('ok');
  });

  it('a report left world-readable is made private, even with the same content; a host file keeps its own mode', async () => {
    mkdirSync(abs('root/ks/preflight'), { recursive: true });
    writeFileSync(abs('root/ks/preflight/ports.json'), '{"port":6443}\n');
    chmodSync(abs('root/ks/preflight/ports.json'), 0o644);
    writeFileSync(abs('etc/hostname'), 'a\n');
    chmodSync(abs('etc/hostname'), 0o644);
    const door = await open();
    expect(await door.writeFile({ path: '/root/ks/preflight/ports.json', content: '{"port":6443}\n', report: true })).toBe(true);
    expect(modeOf('root/ks/preflight/ports.json')).toBe(0o600);
    expect(readFileSync(abs('root/ks/preflight/ports.json'), 'utf8')).toBe('{"port":6443}\n');
    // Private already and the same content: nothing to write.
    expect(await door.writeFile({ path: '/root/ks/preflight/ports.json', content: '{"port":6443}\n', report: true })).toBe(false);
    await door.writeFile({ path: '/etc/hostname', expect: 'a\n', content: 'b\n' });
    expect(modeOf('etc/hostname')).toBe(0o644);
    // An existing reports directory keeps its mode; only what the door makes is private.
    expect(modeOf('root/ks/preflight')).toBe(0o777 & ~process.umask());
    await door.end('ok');
  });

  it('the modes the desired state names: 0640 files in 0750 directories', async () => {
    const door = await open({ file: 0o640, dir: 0o750 });
    await door.writeFile({ path: '/root/ks/preflight/who-fixes.json', content: '{}\n', report: true });
    expect(modeOf('root/ks/preflight/who-fixes.json')).toBe(0o640);
    expect(modeOf('root/ks/preflight')).toBe(0o750 & ~process.umask());
    // The run's own directory stays private whatever the reports' mode.
    expect(modeOf('root/ks/preflight/runs/r1')).toBe(0o700);
    await door.end('ok');
  });
});
