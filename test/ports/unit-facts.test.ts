// The manager's view of the service a port holder sits in: `systemctl show`'s
// MainPID, Type, PIDFile, FragmentPath and DropInPaths (canned, as systemd 252
// prints them), a forking unit's PID file, and the effective ExecStart= read
// from exactly the files the manager loaded, with the wrapper script it runs.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { mainPidOf, unitFacts } from '../../src/ports/unit-facts.js';
import { cannedRunner } from '../helpers/canned-runner.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
const SHOW = (unit: string) => `systemctl show -p MainPID -p Type -p PIDFile -p FragmentPath -p DropInPaths ${unit}`;
function host(tree: Tree, shows: Record<string, string>): Host {
  const root = mkdtempSync(path.join(os.tmpdir(), 'unit-facts-'));
  roots.push(root);
  buildTree(root, tree);
  return new Host({ root, live: true, runner: cannedRunner(Object.fromEntries(Object.entries(shows).map(([u, out]) => [SHOW(u), out]))) });
}
const ETC = 'etc/systemd/system';

describe('unitFacts', () => {
  it('a drop-in that resets ExecStart= and runs a "#!/bin/sh" wrapper: that one command, its line, and the script', async () => {
    const h = host(
      {
        [`${ETC}/api.service`]: '[Service]\nExecStart=/usr/bin/api --port 1\n',
        [`${ETC}/api.service.d/port.conf`]: '[Service]\nExecStart=\nExecStart=/usr/local/bin/run-api 6443\n',
        'usr/local/bin/run-api': '#!/bin/sh\nexec python3 -m http.server "$1"\n',
      },
      { 'api.service': `MainPID=0\nType=simple\nPIDFile=\nFragmentPath=/${ETC}/api.service\nDropInPaths=/${ETC}/api.service.d/port.conf\n` },
    );
    const f = await unitFacts(h, 'api.service');
    expect([f.error, f.mainPid, f.type, f.pidFile, f.execError, f.main]).toEqual([null, null, 'simple', null, null, null]);
    expect(f.execStart.map((e) => [e.file, e.line, e.value, e.command?.argv, e.script])).toEqual([
      [
        `/${ETC}/api.service.d/port.conf`,
        3,
        '/usr/local/bin/run-api 6443',
        ['/usr/local/bin/run-api', '6443'],
        { path: '/usr/local/bin/run-api', text: '#!/bin/sh\nexec python3 -m http.server "$1"\n' },
      ],
    ]);
  });
  it('`sh FILE` reads FILE whatever its first line; a program run directly without a shell "#!" has no script', async () => {
    const h = host(
      {
        [`${ETC}/a.service`]: '[Service]\nExecStart=/bin/sh /opt/start.sh\n',
        [`${ETC}/b.service`]: '[Service]\nExecStart=/opt/start.sh\n',
        'opt/start.sh': 'python3 -m http.server 6443\n',
      },
      {
        'a.service': `MainPID=12\nType=simple\nFragmentPath=/${ETC}/a.service\nDropInPaths=\n`,
        'b.service': `MainPID=0\nType=simple\nFragmentPath=/${ETC}/b.service\nDropInPaths=\n`,
      },
    );
    const a = await unitFacts(h, 'a.service');
    expect([a.mainPid, a.execStart[0]!.script]).toEqual([12, { path: '/opt/start.sh', text: 'python3 -m http.server 6443\n' }]);
    expect((await unitFacts(h, 'b.service')).execStart[0]!.script).toBeNull();
  });
  it("a forking unit without MainPID: its PIDFile='s PID is the main process, read from /proc", async () => {
    const h = host(
      {
        [`${ETC}/d.service`]: '[Service]\nType=forking\nPIDFile=/run/d.pid\nExecStart=/usr/sbin/d\n',
        'run/d.pid': '1234\n',
        'proc/1234/stat': '1234 (d) S 1 1234 1234 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 1\n',
        'proc/1234/cmdline': '/usr/sbin/d\0--daemon\0',
      },
      { 'd.service': `MainPID=0\nType=forking\nPIDFile=/run/d.pid\nFragmentPath=/${ETC}/d.service\nDropInPaths=\n` },
    );
    const f = await unitFacts(h, 'd.service');
    expect([f.mainPid, f.pidFilePid, f.pidFileError, mainPidOf(f)]).toEqual([null, 1234, null, 1234]);
    expect([f.main?.pid, f.main?.ppid, f.main?.argv]).toEqual([1234, 1, ['/usr/sbin/d', '--daemon']]);
  });
  it('a PID file that is missing or holds no PID is said so; a simple unit never reads its PIDFile=', async () => {
    const shows = (pidFile: string, type = 'forking') => `MainPID=0\nType=${type}\nPIDFile=${pidFile}\nFragmentPath=\nDropInPaths=\n`;
    const h = host(
      { 'run/bad.pid': 'abc\n' },
      { 'm.service': shows('/run/none.pid'), 'b.service': shows('/run/bad.pid'), 's.service': shows('/run/bad.pid', 'simple') },
    );
    expect((await unitFacts(h, 'm.service')).pidFileError).toBe('PIDFile=/run/none.pid does not exist');
    expect((await unitFacts(h, 'b.service')).pidFileError).toBe('PIDFile=/run/bad.pid holds no PID');
    const s = await unitFacts(h, 's.service');
    expect([s.pidFileError, s.pidFilePid, mainPidOf(s)]).toEqual([null, null, null]);
    expect(s.execError).toBe('systemctl shows no unit file (FragmentPath=) for s.service');
  });
  it('systemctl failing, or no MainPID in its answer: an error naming the unit, nothing else guessed', async () => {
    const h = host({}, { 'odd.service': 'Type=simple\n' });
    expect((await unitFacts(h, 'gone.service')).error).toBe('systemctl show gone.service exited 127: ');
    const odd = await unitFacts(h, 'odd.service');
    expect([odd.error, odd.execStart]).toEqual(['systemctl show odd.service gave no MainPID (null)', []]);
  });
});
