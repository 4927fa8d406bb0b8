// Whose listener is it (ports/identity.ts), on process chains written out as /proc would show them
// and unit facts as `systemctl show` answers them; ExecStart= lines go through the real ExecStart=
// parser and crontab lines through the real crontab parser. The rules pinned are the module's
// contract: the main process (MainPID, or PIDFile= for Type=forking) is the unit's own; so is a
// descendant through ExecStart='s own commands (or a plain fork), or one sharing the main process's
// listening socket; anything else in the cgroup was only spawned or left behind.
import { describe, expect, it } from 'vitest';
import { SPAWNER_UNITS, attribute, cronOrigins, loginSessionOf, pidPath, spawnerHarm, type Ancestry, type UnitFacts } from '../../src/ports/identity.js';
import type { ProcInfo } from '../../src/ports/proc.js';
import { parseExecLine } from '../../src/systemd/exec-command.js';
import { parseCrontab } from '../../src/ports/crontab.js';

const proc = (pid: number, ppid: number | null, argv: string[] | null, over: Partial<ProcInfo> = {}): ProcInfo => ({
  pid,
  ppid,
  comm: argv?.[0]?.split('/').pop() ?? null,
  argv,
  exe: argv?.[0] ?? null,
  uid: 0,
  ...over,
});
const chain = (...procs: ProcInfo[]): Ancestry => ({ chain: procs, complete: true });
const execStart = (value: string, line = 7) => ({ file: '/etc/systemd/system/api.service', line, value, command: parseExecLine(value) });
const facts = (over: Partial<UnitFacts> = {}): UnitFacts => ({
  unit: 'api.service',
  error: null,
  mainPid: 200,
  type: 'simple',
  pidFile: null,
  pidFilePid: null,
  pidFileError: null,
  execStart: [execStart('/usr/bin/api --port 6443')],
  execError: null,
  main: null,
  ...over,
});

const API = proc(200, 1, ['/usr/bin/api', '--port', '6443']);

describe('attribute: the main process', () => {
  it('the holder that is MainPID is the unit own', () => {
    expect(attribute(chain(API), facts(), null)).toEqual({ own: true, unit: 'api.service', proof: 'pid 200 is MainPID of api.service' });
  });

  it('Type=forking: MainPID confirmed by PIDFile=, or PIDFile= alone when the manager lost track', () => {
    const forking = { type: 'forking', pidFile: '/run/api.pid', pidFilePid: 200 };
    expect(attribute(chain(API), facts(forking), null)).toMatchObject({
      own: true,
      proof: 'pid 200 is MainPID of api.service (Type=forking; PIDFile=/run/api.pid names it too)',
    });
    expect(attribute(chain(API), facts({ ...forking, mainPid: null }), null)).toMatchObject({
      own: true,
      proof: "pid 200 is named by api.service's PIDFile=/run/api.pid (Type=forking)",
    });
    // PIDFile= counts only for Type=forking.
    expect(attribute(chain(API), facts({ ...forking, type: 'simple', mainPid: null }), null)).toMatchObject({ own: false, unknown: false });
  });

  it('no main process: a leftover in the cgroup, unless systemd-sysv-generator made the unit', () => {
    const none = attribute(chain(API), facts({ mainPid: null, pidFileError: 'PIDFile=/run/api.pid is missing' }), null);
    expect(none).toEqual({
      own: false,
      unit: 'api.service',
      reason:
        'api.service has no main process (MainPID=0, Type=simple; PIDFile=/run/api.pid is missing), so it is a process left in its cgroup, not one it runs',
      unknown: false,
      path: [],
    });
    const sysv = attribute(chain(API), facts({ mainPid: null, type: 'forking', sysv: '/etc/init.d/api' }), null);
    expect(sysv.own).toBe(true);
    expect(sysv.own && sysv.proof).toContain('systemd-sysv-generator made for the init script /etc/init.d/api');
  });

  it('systemctl failing, or the holder unread, is unknown, never a guess', () => {
    expect(attribute(chain(API), facts({ error: 'Failed to connect to bus' }), null)).toMatchObject({
      own: false,
      unknown: true,
      reason: "cannot tell whether pid 200 is api.service's own process: Failed to connect to bus",
    });
    expect(attribute({ chain: [], complete: false }, facts(), null)).toMatchObject({ own: false, unknown: true });
  });
});

describe('attribute: descendants of the main process', () => {
  it('started through ExecStart= sh -c: own, with the pid path', () => {
    const wrapper = proc(200, 1, ['/bin/sh', '-c', '/usr/bin/api --port 6443; echo done']);
    const child = proc(238, 200, ['/usr/bin/api', '--port', '6443']);
    const f = facts({ execStart: [execStart("/bin/sh -c '/usr/bin/api --port 6443; echo done'")] });
    expect(attribute(chain(child, wrapper), f, null)).toEqual({
      own: true,
      unit: 'api.service',
      proof: "pid 238 was started by api.service's ExecStart (200 -> 238)",
    });
  });

  it('a plain fork of the main process (same exe, same argv) is own; a worker sharing the socket too', () => {
    const worker = proc(240, 200, ['/usr/bin/api', '--port', '6443']);
    expect(attribute(chain(worker, API), facts(), null)).toMatchObject({ own: true, proof: "pid 240 was started by api.service's ExecStart (200 -> 240)" });
    const renamed = proc(240, 200, ['nginx: worker process'], { exe: '/usr/sbin/nginx' });
    const nginx = proc(200, 1, ['nginx: master process /usr/sbin/nginx'], { exe: '/usr/sbin/nginx' });
    expect(attribute(chain(renamed, nginx), facts(), true)).toMatchObject({
      own: true,
      proof: 'pid 240 shares the listening socket of its ancestor pid 200, which is MainPID of api.service (200 -> 240)',
    });
  });

  it('a descendant that is no command of ExecStart= was only spawned, naming the unit file line', () => {
    const other = proc(250, 200, ['/usr/bin/python3', '-m', 'http.server', '6443']);
    const at = attribute(chain(other, API), facts(), false);
    expect(at.own).toBe(false);
    expect(!at.own && at.unknown).toBe(false);
    expect(!at.own && at.reason).toBe(
      "it descends from pid 200 (/usr/bin/api --port 6443), which is MainPID of api.service, but is itself not a command of api.service's ExecStart= (/etc/systemd/system/api.service:7) nor a plain fork of its parent",
    );
    expect(!at.own && at.path.map((p) => p.pid)).toEqual([250, 200]);
  });

  it('ExecStart= unreadable: unknown', () => {
    const child = proc(238, 200, ['/usr/bin/api']);
    expect(attribute(chain(child, API), facts({ execError: 'api.service.d/x.conf: permission denied' }), null)).toMatchObject({
      own: false,
      unknown: true,
    });
  });

  it('not below the main process: left behind, unknown only when the parent chain was cut short', () => {
    const stray = proc(300, 1, ['/usr/bin/api', '--port', '6443']);
    const full = attribute(chain(stray, proc(1, null, ['/sbin/init'])), facts(), null);
    expect(full).toMatchObject({ own: false, unknown: false });
    expect(!full.own && full.reason).toBe(
      'it is not MainPID of api.service (pid 200) and does not descend from it (its parents: 1); it was left behind in the cgroup (KillMode=process, a restart) or moved into it',
    );
    const cut = attribute({ chain: [stray], complete: false }, facts(), null);
    expect(cut).toMatchObject({ own: false, unknown: true });
    expect(!cut.own && cut.reason).toContain('(its parents: none (its parent chain could not be read to the end))');
  });
});

describe('pidPath, spawnerHarm, SPAWNER_UNITS', () => {
  it('pidPath reads from the ancestor down', () => {
    expect(pidPath([proc(240, 238, null), proc(238, 200, null), proc(200, 1, null)])).toBe('200 -> 238 -> 240');
    expect(pidPath([])).toBe('');
  });

  it('spawnerHarm names what the spawner runs, or the unit alone', () => {
    expect(spawnerHarm('cron.service', 'the cron daemon')).toBe(
      'cron.service is the cron daemon; stopping and disabling it would end all of that, at every boot, and leave what starts the listener in place',
    );
    expect(spawnerHarm('x.service', null)).toBe(
      'stopping and disabling x.service would take down what x.service really runs, at every boot, and leave what starts the listener in place',
    );
  });

  it('lists cron, at, supervisors, container runtimes and CI runners', () => {
    const patterns = SPAWNER_UNITS.map((s) => s.pattern);
    for (const p of ['cron', 'atd', 'supervisord', 'docker', 'containerd', 'kubelet', 'gitlab-runner', 'actions.runner.*']) expect(patterns).toContain(p);
  });
});

describe('cronOrigins', () => {
  const crontab = parseCrontab(
    ['SHELL=/bin/sh', '@reboot root /usr/local/bin/api --port 6443', '*/5 * * * * www-data /usr/bin/php /srv/cron.php', ''].join('\n'),
    '/etc/crontab',
    null,
  ).entries;
  const uids = new Map([
    ['root', 0],
    ['www-data', 33],
  ]);
  const CRON = proc(100, 1, ['/usr/sbin/cron', '-f']);

  it('the crontab line whose command the shell below cron runs', () => {
    const sh = proc(110, 100, ['/bin/sh', '-c', '/usr/local/bin/api --port 6443']);
    const api = proc(111, 110, ['/usr/local/bin/api', '--port', '6443']);
    expect(cronOrigins([api, sh, CRON], crontab, uids).map((e) => e.line)).toEqual([2]);
  });

  it('the shell exec-ed the command: the process itself is the command', () => {
    const api = proc(110, 100, ['/usr/local/bin/api', '--port', '6443']);
    expect(cronOrigins([api, CRON], crontab, uids).map((e) => e.line)).toEqual([2]);
  });

  it("a line for another user than the process's never matches", () => {
    const sh = proc(110, 100, ['/bin/sh', '-c', '/usr/local/bin/api --port 6443'], { uid: 33 });
    expect(cronOrigins([proc(111, 110, ['/usr/local/bin/api']), sh, CRON], crontab, uids)).toEqual([]);
  });

  it('a shell running another command matches no line', () => {
    const sh = proc(110, 100, ['/bin/sh', '-c', '/usr/local/bin/other']);
    expect(cronOrigins([proc(111, 110, ['/usr/local/bin/other']), sh, CRON], crontab, uids)).toEqual([]);
  });
});

describe('loginSessionOf', () => {
  it("finds sshd's per-connection process, else a login shell", () => {
    const sshd = proc(500, 400, ['sshd: alice@pts/0']);
    const bash = proc(501, 500, ['-bash']);
    const api = proc(502, 501, ['/usr/bin/api']);
    expect(loginSessionOf([api, bash, sshd])?.pid).toBe(500);
    expect(loginSessionOf([api, bash])?.pid).toBe(501);
    expect(loginSessionOf([api, proc(1, null, ['/sbin/init'])])).toBeNull();
    // A process whose command line could not be read is no session.
    expect(loginSessionOf([proc(9, 1, null)])).toBeNull();
  });
});
