// Whose listener is it? Real processes this test starts (a `sh -c` wrapper,
// a forking daemon with a PID file, a master with workers sharing one socket,
// the child of a fake spawner), on ephemeral loopback ports. Only two things
// are faked, because this machine has no systemd as PID 1: the cgroup each
// started process reads as (/proc/PID/cgroup), and systemctl, whose answers
// (MainPID, Type, PIDFile, the unit file) come from what the test started.
// No unit on this machine is ever queried, stopped or disabled.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readlinkSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host, type CommandRunner } from '../../../src/host.js';
import { scratchContext } from '../../helpers/door.js';
import type { PortFreeSpec } from '../../../src/resources/port-free/spec.js';
import { readListeners } from '../../../src/observe/listeners.js';
import { readAncestry, holdsSocket } from '../../../src/ports/proc.js';
import { attribute, type UnitFacts } from '../../../src/ports/identity.js';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';
import type { LivePortsObserved } from '../../../src/ports/observed.js';
import type { StopOp } from '../../../src/resources/port-free/ops.js';

const NODE = process.execPath;
const PYTHON = '/usr/bin/python3';
let dir: string;
const started: number[] = [];
const children: ChildProcess[] = [];

// A listener that reports "PID PORT" into the file named by its argument.
const LISTEN_JS = `const net = require('net');
const s = net.createServer((c) => c.end());
s.listen(0, '127.0.0.1', () => require('fs').writeFileSync(process.argv[2], process.pid + ' ' + s.address().port));
`;
// A spawner (a stand-in for cron or a CI runner): runs its argument with /bin/sh -c, reports the shell's PID.
const SPAWNER_JS = `const { spawn } = require('child_process');
const c = spawn('/bin/sh', ['-c', process.argv[2]], { stdio: 'ignore' });
require('fs').writeFileSync(process.argv[3], String(c.pid));
setInterval(() => {}, 1000);
`;
// A supervisord stand-in: execs its program's words directly (no shell), reports the child's PID in the last argument.
const SUPERVISE_JS = `const { spawn } = require('child_process');
const words = process.argv.slice(2, -1);
const c = spawn(words[0], words.slice(1), { stdio: 'ignore' });
require('fs').writeFileSync(process.argv[process.argv.length - 1], String(c.pid));
setInterval(() => {}, 1000);
`;
// A classic forking daemon: the started process forks, the child writes its PID file and serves, the parent exits.
const DAEMON_JS = `const { spawn } = require('child_process');
const fs = require('fs');
const [mode, pidFile, report] = process.argv.slice(2);
if (mode === 'start') {
  spawn(process.execPath, [__filename, 'serve', pidFile, report], { detached: true, stdio: 'ignore' }).unref();
  process.exit(0);
}
fs.writeFileSync(pidFile, process.pid + '\\n');
const s = require('net').createServer((c) => c.end());
s.listen(0, '127.0.0.1', () => fs.writeFileSync(report, process.pid + ' ' + s.address().port));
`;
// nginx-style: the master binds and listens, then forks workers that accept on the same socket.
const MASTER_PY = `import os, socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
workers = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        while True:
            c, _ = s.accept()
            c.close()
    workers.append(pid)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d %d %s" % (os.getpid(), s.getsockname()[1], " ".join(map(str, workers))))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    time.sleep(1)
`;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'portfree-identity-'));
  writeFileSync(path.join(dir, 'listen.js'), LISTEN_JS);
  writeFileSync(path.join(dir, 'spawner.js'), SPAWNER_JS);
  writeFileSync(path.join(dir, 'daemon.js'), DAEMON_JS);
  writeFileSync(path.join(dir, 'supervise.js'), SUPERVISE_JS);
  writeFileSync(path.join(dir, 'master.py'), MASTER_PY);
});

afterEach(() => {
  // Only processes this test started, by PID.
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(cmd: string, args: string[]): ChildProcess {
  const c = spawn(cmd, args, { stdio: 'ignore' });
  children.push(c);
  if (c.pid !== undefined) started.push(c.pid);
  return c;
}

async function waitFile(file: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    if (existsSync(file)) {
      const t = readFileSync(file, 'utf8').trim();
      if (t !== '') return t;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${file} never appeared`);
}

/** Gone, or a zombie (ended, not yet reaped by whoever inherited it; its sockets are closed by then). */
function ended(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] === 'Z';
  } catch {
    return true;
  }
}

/**
 * SIGKILL and wait until the process has ended (gone, or a zombie: its sockets are closed by then), as `systemctl stop`
 * returns only once the unit's processes are gone; without the wait the port may still show held for a moment.
 */
async function killAndWait(pids: number[]): Promise<void> {
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 400 && !pids.every(ended); i++) await new Promise((r) => setTimeout(r, 10));
}

/** A report "PID PORT [more]" written by a started listener. */
async function report(file: string): Promise<{ pid: number; port: number; rest: number[] }> {
  const [pid, port, ...rest] = (await waitFile(file)).split(/\s+/).map(Number);
  started.push(pid!, ...rest);
  return { pid: pid!, port: port!, rest };
}

function spec(ports: number[], extra: Partial<PortFreeSpec> = {}): PortFreeSpec {
  return { type: 'PortFree', ports, protected_units: [], stop_spawner_units: [], mask: false, timeout_seconds: 5, disable_units: [], ...extra };
}

interface FakeUnit {
  MainPID: number;
  Type?: string;
  PIDFile?: string;
  /** Unit-file text, written to a temp file that FragmentPath names. */
  file: string;
  /** FragmentPath= as the manager says it, when not that temp file (a transient unit's). */
  fragmentPath?: string;
}

/**
 * A Host on this machine whose processes `inUnit` read as members of a
 * service's cgroup, and whose systemctl is a recorder answering `show` from
 * `units`. `files` maps target paths (crontabs, /etc/passwd) to fixture files.
 */
function fakeHost(
  inUnit: Map<number, string>,
  units: Record<string, FakeUnit>,
  files: Record<string, string> = {},
  onStop: () => Promise<void | { exitCode: number; stderr: string }> = async () => {},
  onKill: () => Promise<void | { exitCode: number; stderr: string }> = async () => {},
) {
  const calls: string[][] = [];
  const fragments: Record<string, string> = {};
  for (const [name, u] of Object.entries(units)) {
    fragments[name] = path.join(dir, `${name}-${Math.random().toString(16).slice(2)}`);
    writeFileSync(fragments[name]!, u.file);
  }
  const runner: CommandRunner = async (cmd, args) => {
    calls.push([cmd, ...args]);
    const unit = args[args.length - 1]!;
    const u = units[unit];
    if (cmd === 'systemctl' && args[0] === 'show' && u && args.includes('MainPID')) {
      const out = [
        `MainPID=${u.MainPID}`,
        `Type=${u.Type ?? 'simple'}`,
        `PIDFile=${u.PIDFile ?? ''}`,
        `FragmentPath=${u.fragmentPath ?? fragments[unit]}`,
        'DropInPaths=',
      ].join('\n');
      return { command: '', exitCode: 0, stdout: `${out}\n`, stderr: '' };
    }
    if (cmd === 'systemctl' && args[0] === 'show') return { command: '', exitCode: 0, stdout: '0\n', stderr: '' };
    const answer = cmd === 'systemctl' && args[0] === 'stop' ? await onStop() : cmd === 'systemctl' && args[0] === 'kill' ? await onKill() : undefined;
    if (answer) return { command: [cmd, ...args].join(' '), exitCode: answer.exitCode, stdout: '', stderr: answer.stderr };
    // kill(1) for real: the processes are this test's own.
    if (cmd === 'kill') for (const pid of args.slice(args.indexOf('--') + 1)) process.kill(Number(pid), 'SIGTERM');
    return { command: [cmd, ...args].join(' '), exitCode: 0, stdout: '', stderr: '' };
  };
  const host = new Host({ runner });
  const realKernel = host.readKernel.bind(host);
  host.readKernel = async (t: string) => {
    const m = /^\/proc\/(\d+)\/cgroup$/.exec(t);
    if (m && inUnit.has(Number(m[1]))) return `0::/system.slice/${inUnit.get(Number(m[1]))}\n`;
    return realKernel(t);
  };
  const fixture = path.join(dir, `files-${Math.random().toString(16).slice(2)}`);
  for (const [target, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(fixture, target)), { recursive: true });
    writeFileSync(path.join(fixture, target), text);
  }
  const mapped = (t: string) =>
    Object.keys(files).some((f) => f === t || f.startsWith(`${t}/`)) ||
    ['/etc/crontab', '/etc/cron.d', '/var/spool/cron', '/etc/passwd', '/etc/supervisor', '/etc/supervisord.conf'].some((p) => t === p || t.startsWith(`${p}/`));
  const fixtureHost = new Host({ root: fixture, live: true });
  const realRead = host.readFile.bind(host);
  const realDir = host.readDir.bind(host);
  host.readFile = async (t: string) => (mapped(t) ? fixtureHost.readFile(t) : realRead(t));
  host.readDir = async (t: string) => (mapped(t) ? fixtureHost.readDir(t) : realDir(t));
  return { host, calls };
}

async function planFor(host: Host, s: PortFreeSpec) {
  const o = (await portFreeProvider.observe(host, s)) as LivePortsObserved;
  const changes = portFreeProvider.diff(s, o, { live: true });
  expect(changes).toHaveLength(1);
  return { o, change: changes[0]! };
}

describe('PortFree stops a unit only for its own process', () => {
  it('the listener is the MainPID: stop, and the plan says so', async () => {
    const r = path.join(dir, 'main.report');
    run(NODE, [path.join(dir, 'listen.js'), r]);
    const l = await report(r);
    const { host } = fakeHost(new Map([[l.pid, 'agent.service']]), {
      'agent.service': { MainPID: l.pid, file: `[Service]\nExecStart=${NODE} ${path.join(dir, 'listen.js')} ${r}\n` },
    });
    const { change } = await planFor(host, spec([l.port]));
    expect(change.action).toBe('stop');
    expect(change.summary).toContain(`pid ${l.pid} is MainPID of agent.service: stop and disable agent.service`);
    expect(change.op).toMatchObject({ kind: 'stop', pid: l.pid, units: ['agent.service'] });
  });

  it('a `sh -c` wrapper without exec: the child is the ExecStart command, so the unit is stopped (and apply frees the port)', async () => {
    const r = path.join(dir, 'wrapped.report');
    const script = `${NODE} ${path.join(dir, 'listen.js')} ${r}; true`;
    const sh = run('/bin/sh', ['-c', script]);
    const l = await report(r);
    expect(l.pid).not.toBe(sh.pid); // `; true` keeps the shell from exec'ing node
    const unitFile = `[Unit]\nDescription=wrapped\n\n[Service]\nExecStart=/bin/sh -c '${script}'\nRestart=always\n`;
    // What `systemctl stop` does to the unit: its processes end.
    const stop = () => killAndWait([l.pid, sh.pid!]);
    const { host, calls } = fakeHost(
      new Map([
        [sh.pid!, 'wrapped.service'],
        [l.pid, 'wrapped.service'],
      ]),
      {
        'wrapped.service': { MainPID: sh.pid!, file: unitFile },
      },
      {},
      stop,
    );
    const s = spec([l.port]);
    const { change } = await planFor(host, s);
    expect(change.action).toBe('stop');
    expect(change.summary).toContain(`pid ${l.pid} was started by wrapped.service's ExecStart (${sh.pid} -> ${l.pid}): stop and disable wrapped.service`);

    const before = calls.length;
    const outcome = await portFreeProvider.apply(host, s, [change], await scratchContext());
    expect(
      calls
        .slice(before)
        .filter((c) => c[1] !== 'show')
        .map((c) => c.join(' ')),
    ).toEqual(['systemctl stop wrapped.service', 'systemctl disable wrapped.service', 'systemctl is-enabled wrapped.service']);
    expect(outcome).toMatchObject({ reports: { 'ports.json': { port: l.port, unit: 'wrapped.service', pid: l.pid } } });
  });

  it('KillMode=process wrapper: a "#!" script it backgrounds is its own; a stop leaves it, so the unit\'s cgroup gets SIGTERM', async () => {
    // The kernel runs a "#!" script as [INTERPRETER, SCRIPT, ARGS] (binfmt_script); ExecStart= wrote "SCRIPT ARGS".
    const r = path.join(dir, 'killmode.report');
    const daemon = path.join(dir, 'tinyd');
    writeFileSync(daemon, `#!${NODE}\n${LISTEN_JS}`);
    chmodSync(daemon, 0o755);
    const script = `${daemon} ${r} & exec sleep 1000`;
    const sh = run('/bin/sh', ['-c', script]);
    const l = await report(r);
    expect(readFileSync(`/proc/${l.pid}/cmdline`, 'utf8').split('\0').slice(0, 2)).toEqual([NODE, daemon]);
    const unitFile = `[Unit]\nDescription=wrapper\n\n[Service]\nKillMode=process\nExecStart=/bin/sh -c '${script}'\n`;
    // What systemd does: `stop` with KillMode=process ends the main process only; `kill --kill-whom=all` the whole cgroup.
    let killed = false;
    const stop = async () => void process.kill(sh.pid!, 'SIGKILL');
    const kill = async () => {
      killed = true;
      process.kill(l.pid, 'SIGTERM');
      await new Promise((res) => setTimeout(res, 200));
    };
    const { host, calls } = fakeHost(
      new Map([
        [sh.pid!, 'wrapper.service'],
        [l.pid, 'wrapper.service'],
      ]),
      {
        'wrapper.service': { MainPID: sh.pid!, file: unitFile },
      },
      {},
      stop,
      kill,
    );
    const s = spec([l.port]);
    const { change } = await planFor(host, s);
    expect(change.action).toBe('stop');
    expect(change.summary).toContain(`pid ${l.pid} was started by wrapper.service's ExecStart (${sh.pid} -> ${l.pid}): stop and disable wrapper.service`);

    const before = calls.length;
    const outcome = await portFreeProvider.apply(host, s, [change], await scratchContext());
    expect(killed).toBe(true);
    expect(
      calls
        .slice(before)
        .filter((c) => c[1] !== 'show')
        .map((c) => c.join(' ')),
    ).toEqual([
      'systemctl stop wrapper.service',
      'systemctl kill --kill-whom=all --signal=SIGTERM wrapper.service',
      'systemctl disable wrapper.service',
      'systemctl is-enabled wrapper.service',
    ]);
    expect(outcome).toMatchObject({ reports: { 'ports.json': { port: l.port, unit: 'wrapper.service', pid: l.pid } } });
  });

  // systemd 252, as the boot farm saw it on a loaded machine (seed 478): the stopped unit's `kill` fails, before or after signalling.
  const EIO = { exitCode: 1, stderr: 'Failed to kill unit wrapper.service: Failed to send signal SIGTERM to auxiliary processes: Input/output error\n' };

  async function killModeWrapper(name: string) {
    const r = path.join(dir, `${name}.report`);
    const daemon = path.join(dir, `${name}-tinyd`);
    writeFileSync(daemon, `#!${NODE}\n${LISTEN_JS}`);
    chmodSync(daemon, 0o755);
    const script = `${daemon} ${r} & exec sleep 1000`;
    const sh = run('/bin/sh', ['-c', script]);
    const l = await report(r);
    const unitFile = `[Unit]\nDescription=wrapper\n\n[Service]\nKillMode=process\nExecStart=/bin/sh -c '${script}'\n`;
    const inUnit = new Map([
      [sh.pid!, 'wrapper.service'],
      [l.pid, 'wrapper.service'],
    ]);
    return { sh, l, unitFile, inUnit };
  }
  const alive = (pid: number) => !ended(pid);
  /** The wrapper planned and applied, its `systemctl stop` ending the main process and its `systemctl kill` answered by `kill`. */
  async function applyKillFailing(name: string, kill: (l: { pid: number }) => Promise<{ exitCode: number; stderr: string }>) {
    const { sh, l, unitFile, inUnit } = await killModeWrapper(name);
    const { host, calls } = fakeHost(
      inUnit,
      { 'wrapper.service': { MainPID: sh.pid!, file: unitFile } },
      {},
      async () => void process.kill(sh.pid!, 'SIGKILL'),
      () => kill(l),
    );
    const s = spec([l.port]);
    const { change } = await planFor(host, s);
    const before = calls.length;
    const outcome = await portFreeProvider.apply(host, s, [change], await scratchContext());
    return { l, outcome, actions: acted(calls, before) };
  }
  const acted = (calls: string[][], from: number) =>
    calls
      .slice(from)
      .filter((c) => c[1] !== 'show')
      .map((c) => c.join(' '));

  it('KillMode=process wrapper, `systemctl kill` fails with nothing signalled: the pid the kernel shows in its cgroup holding the port gets SIGTERM', async () => {
    const { l, outcome, actions } = await applyKillFailing('eio-before', async () => EIO);
    expect(actions).toEqual([
      'systemctl stop wrapper.service',
      'systemctl kill --kill-whom=all --signal=SIGTERM wrapper.service',
      `kill -s TERM -- ${l.pid}`,
      'systemctl disable wrapper.service',
      'systemctl is-enabled wrapper.service',
    ]);
    expect(alive(l.pid)).toBe(false);
    expect(outcome?.error).toBeUndefined();
    expect(outcome).toMatchObject({ reports: { 'ports.json': { port: l.port, unit: 'wrapper.service', pid: l.pid } } });
  });

  it('KillMode=process wrapper, `systemctl kill` fails after its signal went out: nothing more is signalled, and the port counts as freed', async () => {
    const { outcome, actions } = await applyKillFailing('eio-after', async (l) => {
      process.kill(l.pid, 'SIGTERM');
      while (alive(l.pid)) await new Promise((r) => setTimeout(r, 20));
      return EIO;
    });
    expect(actions).toEqual([
      'systemctl stop wrapper.service',
      'systemctl kill --kill-whom=all --signal=SIGTERM wrapper.service',
      'systemctl disable wrapper.service',
      'systemctl is-enabled wrapper.service',
    ]);
    expect(outcome?.error).toBeUndefined();
  });

  it('a stop that fails still disables the unit, and the failure names that port alone, as a change and as a promise', async () => {
    const r = path.join(dir, 'stopfails.report');
    run(NODE, [path.join(dir, 'listen.js'), r]);
    const l = await report(r);
    const { host, calls } = fakeHost(
      new Map([[l.pid, 'stuck.service']]),
      { 'stuck.service': { MainPID: l.pid, file: `[Service]\nExecStart=${NODE} ${path.join(dir, 'listen.js')} ${r}\n` } },
      {},
      async () => ({ exitCode: 1, stderr: 'Job for stuck.service canceled.\n' }),
    );
    const s = spec([l.port]);
    const { change } = await planFor(host, s);
    const before = calls.length;
    const outcome = await portFreeProvider.apply(host, s, [change], await scratchContext());
    expect(acted(calls, before)).toEqual(['systemctl stop stuck.service', 'systemctl disable stuck.service', 'systemctl is-enabled stuck.service']);
    expect(outcome?.error).toContain(`port ${l.port} (stuck.service)`);
    expect(outcome?.failedChanges).toEqual([change.id]);
    expect(outcome?.failedPromises).toEqual([`port:${l.port}`]);
  });

  it("a transient unit (systemd-run): stopped now, and the port's promise for the next boot is withdrawn by an unknown naming it", async () => {
    // systemd.unit(5): transient units' files are in /run/systemd/transient and vanish at reboot; whatever ran systemd-run makes it again.
    const r = path.join(dir, 'transient.report');
    run(NODE, [path.join(dir, 'listen.js'), r]);
    const l = await report(r);
    const { host } = fakeHost(new Map([[l.pid, 'transient-api.service']]), {
      'transient-api.service': { MainPID: l.pid, file: '', fragmentPath: '/run/systemd/transient/transient-api.service' },
    });
    const s = spec([l.port]);
    const { o, change } = await planFor(host, s);
    expect(change.action).toBe('stop');
    const unknowns = portFreeProvider.unknowns!(s, o);
    expect(unknowns).toHaveLength(1);
    expect(unknowns[0]!.withdraws).toEqual([{ promise: `port:${l.port}`, from: 'boot' }]);
    expect(unknowns[0]!.message).toContain('transient-api.service, a transient unit (FragmentPath=/run/systemd/transient/transient-api.service');
    // A unit with a file of its own is no such line.
    const plain = fakeHost(new Map([[l.pid, 'agent.service']]), { 'agent.service': { MainPID: l.pid, file: '[Service]\nExecStart=/bin/true\n' } });
    expect(portFreeProvider.unknowns!(s, (await planFor(plain.host, s)).o)).toEqual([]);
  });

  // The boot farm's transient entries: the stop removes the unit and its file in /run/systemd/transient, and
  // `systemctl disable` then fails ("Unit file transient-api.service does not exist"): apply failed on every such host.
  it('a transient unit is stopped only: nothing to disable or mask, for mask: true as well, and the plan says why', async () => {
    for (const mask of [false, true]) {
      const r = path.join(dir, `transient-apply-${mask}.report`);
      const listener = run(NODE, [path.join(dir, 'listen.js'), r]);
      const l = await report(r);
      const { host, calls } = fakeHost(
        new Map([[l.pid, 'transient-api.service']]),
        { 'transient-api.service': { MainPID: l.pid, file: '', fragmentPath: '/run/systemd/transient/transient-api.service' } },
        {},
        () => killAndWait([listener.pid!]),
      );
      const s = spec([l.port], { mask });
      const { change } = await planFor(host, s);
      expect(change.summary).toContain(': stop transient-api.service; transient-api.service is a transient unit (systemd-run): stopped only');
      const before = calls.length;
      const outcome = await portFreeProvider.apply(host, s, [change], await scratchContext());
      expect(acted(calls, before)).toEqual(['systemctl stop transient-api.service']);
      expect(outcome?.error).toBeUndefined();
    }
  });

  it("a wrapper script file (no exec): its commands count as the unit's, run directly or as `sh FILE`", async () => {
    const r = path.join(dir, 'script.report');
    const script = path.join(dir, 'start.sh');
    writeFileSync(script, `#!/bin/sh\n# start the legacy agent\ncd /\n${NODE} ${path.join(dir, 'listen.js')} ${r}\ntrue\n`);
    chmodSync(script, 0o755);
    const sh = run(script, []);
    const l = await report(r);
    const inUnit = new Map([
      [sh.pid!, 'scripted.service'],
      [l.pid, 'scripted.service'],
    ]);
    for (const exec of [script, `/bin/sh ${script}`]) {
      const { change } = await planFor(
        fakeHost(inUnit, { 'scripted.service': { MainPID: sh.pid!, file: `[Service]\nExecStart=${exec}\n` } }).host,
        spec([l.port]),
      );
      expect(change.action, exec).toBe('stop');
      expect(change.summary, exec).toContain(`pid ${l.pid} was started by scripted.service's ExecStart (${sh.pid} -> ${l.pid})`);
    }
    // A script that does not run the listener proves nothing.
    writeFileSync(path.join(dir, 'other.sh'), '#!/bin/sh\nexec sleep 1000\n');
    const { change } = await planFor(
      fakeHost(inUnit, { 'scripted.service': { MainPID: sh.pid!, file: `[Service]\nExecStart=/bin/sh ${path.join(dir, 'other.sh')}\n` } }).host,
      spec([l.port]),
    );
    expect(change.action).toBe('operator');
  });

  it('the same wrapper under a unit whose ExecStart= runs something else: not its own, nothing stopped', async () => {
    const r = path.join(dir, 'other.report');
    const sh = run('/bin/sh', ['-c', `${NODE} ${path.join(dir, 'listen.js')} ${r}; true`]);
    const l = await report(r);
    const { host } = fakeHost(
      new Map([
        [sh.pid!, 'other.service'],
        [l.pid, 'other.service'],
      ]),
      {
        'other.service': { MainPID: sh.pid!, file: `[Service]\nExecStart=/bin/sh -c '/usr/bin/true; /usr/bin/sleep 1000'\n` },
      },
    );
    const { change } = await planFor(host, spec([l.port]));
    expect(change.action).toBe('operator');
    expect(change.operator).toContain(`pid ${l.pid} (${NODE} ${path.join(dir, 'listen.js')} ${r})`);
    expect(change.operator).toContain(`but is itself not a command of other.service's ExecStart=`);
    expect(change.operator).toContain(`(${sh.pid} -> ${l.pid})`);
  });

  it('a forking daemon: identified by MainPID, and by its PIDFile= when the manager lost track; a stale PID file names nobody', async () => {
    const pidFile = path.join(dir, 'daemon.pid');
    const r = path.join(dir, 'daemon.report');
    run(NODE, [path.join(dir, 'daemon.js'), 'start', pidFile, r]);
    const d = await report(r);
    // The test's own view: the daemon's parent is not the process it started (that one exited).
    const file = `[Service]\nType=forking\nPIDFile=${pidFile}\nExecStart=${NODE} ${path.join(dir, 'daemon.js')} start ${pidFile} ${r}\n`;
    const inUnit = new Map([[d.pid, 'forky.service']]);

    const tracked = await planFor(fakeHost(inUnit, { 'forky.service': { MainPID: d.pid, Type: 'forking', PIDFile: pidFile, file } }).host, spec([d.port]));
    expect(tracked.change.action).toBe('stop');
    expect(tracked.change.summary).toContain(`pid ${d.pid} is MainPID of forky.service (Type=forking; PIDFile=${pidFile} names it too)`);

    const lost = await planFor(fakeHost(inUnit, { 'forky.service': { MainPID: 0, Type: 'forking', PIDFile: pidFile, file } }).host, spec([d.port]));
    expect(lost.change.action).toBe('stop');
    expect(lost.change.summary).toContain(`pid ${d.pid} is named by forky.service's PIDFile=${pidFile} (Type=forking)`);

    writeFileSync(pidFile, `${process.pid}\n`); // stale: another process's PID
    const stale = await planFor(fakeHost(inUnit, { 'forky.service': { MainPID: 0, Type: 'forking', PIDFile: pidFile, file } }).host, spec([d.port]));
    expect(stale.change.action).toBe('operator');
    expect(stale.change.operator).toContain(`does not descend from it`);
  });

  it("nginx-style master and workers share one listening socket: the master is MainPID; a worker is the unit's by the shared socket", async () => {
    const r = path.join(dir, 'master.report');
    run(PYTHON, [path.join(dir, 'master.py'), r]);
    const m = await report(r);
    const workers = m.rest;
    expect(workers).toHaveLength(2);
    const host0 = new Host();
    const inode = (await readListeners(host0)).find((x) => x.port === m.port)!.inode;
    // The sharing is real: every worker holds the master's listening socket.
    for (const w of workers) {
      const links = readdirSync(`/proc/${w}/fd`).map((fd) => {
        try {
          return readlinkSync(`/proc/${w}/fd/${fd}`);
        } catch {
          return '';
        }
      });
      expect(links).toContain(`socket:[${inode}]`);
    }
    const inUnit = new Map([m.pid, ...workers].map((p) => [p, 'nginx.service'] as const));
    const file = `[Service]\nExecStart=${PYTHON} ${path.join(dir, 'master.py')} ${r}\n`;
    const { change } = await planFor(fakeHost(inUnit, { 'nginx.service': { MainPID: m.pid, file } }).host, spec([m.port]));
    expect(change.action).toBe('stop');
    expect(change.summary).toContain(`pid ${m.pid} is MainPID of nginx.service`);

    // A worker seen as the holder (the fd scan reports the lowest PID, so only
    // a PID wrap-around shows a worker first): its real ancestry and the
    // master's real fds make it the unit's own.
    const facts: UnitFacts = {
      unit: 'nginx.service',
      error: null,
      mainPid: m.pid,
      type: 'simple',
      pidFile: null,
      pidFilePid: null,
      pidFileError: null,
      execStart: [],
      execError: null,
      main: null,
    };
    const a = attribute(await readAncestry(host0, workers[0]!), facts, await holdsSocket(host0, m.pid, new Set([inode])));
    expect(a).toEqual({
      own: true,
      unit: 'nginx.service',
      proof: `pid ${workers[0]} shares the listening socket of its ancestor pid ${m.pid}, which is MainPID of nginx.service (${m.pid} -> ${workers[0]})`,
    });
  });
});

describe('PortFree never stops a spawner', () => {
  async function spawned(name: string) {
    const r = path.join(dir, `${name}.report`);
    const shReport = path.join(dir, `${name}.sh`);
    const command = `${NODE} ${path.join(dir, 'listen.js')} ${r}; true`;
    const spawner = run(NODE, [path.join(dir, 'spawner.js'), command, shReport]);
    const l = await report(r);
    const sh = Number(await waitFile(shReport));
    started.push(sh);
    return { spawner: spawner.pid!, sh, listener: l, command, argv: `${NODE} ${path.join(dir, 'listen.js')} ${r}` };
  }

  it('a child of a general-purpose spawner: operator line with the holder, the spawner and the chain; no systemctl stop', async () => {
    const p = await spawned('job');
    const unit = 'job-runner.service';
    const inUnit = new Map([p.spawner, p.sh, p.listener.pid].map((x) => [x, unit] as const));
    const { host, calls } = fakeHost(inUnit, {
      [unit]: { MainPID: p.spawner, file: `[Service]\nExecStart=${NODE} ${path.join(dir, 'spawner.js')} "sleep 1" /dev/null\n` },
    });
    const s = spec([p.listener.port]);
    const { change } = await planFor(host, s);
    expect(change.action).toBe('operator');
    expect(change.summary).toContain(`held by pid ${p.listener.pid} (node) in ${unit}`);
    expect(change.operator).toContain(`pid ${p.listener.pid} (${p.argv}) is not ${unit}'s own process`);
    expect(change.operator).toContain(`is not ${unit}'s own process`);
    expect(change.operator).toContain(`${unit} only spawned it (${p.spawner} -> ${p.sh} -> ${p.listener.pid})`);
    expect(change.operator).toContain(`stopping and disabling ${unit} would take down what ${unit} really runs`);
    expect(change.operator).toContain(`name ${unit} in stop_spawner_units`);
    expect(await portFreeProvider.apply(host, s, [change], await scratchContext())).toBeUndefined();
    expect(calls.filter((c) => c[1] !== 'show')).toEqual([]);
  });

  it('stop_spawner_units restores the stop for the named unit only, and the plan says a person chose it', async () => {
    const p = await spawned('optin');
    const unit = 'job-runner.service';
    const inUnit = new Map([p.spawner, p.sh, p.listener.pid].map((x) => [x, unit] as const));
    const units = { [unit]: { MainPID: p.spawner, file: `[Service]\nExecStart=${NODE} ${path.join(dir, 'spawner.js')}\n` } };
    const other = await planFor(fakeHost(inUnit, units).host, spec([p.listener.port], { stop_spawner_units: ['cron.service'] }));
    expect(other.change.action).toBe('operator');
    const named = await planFor(fakeHost(inUnit, units).host, spec([p.listener.port], { stop_spawner_units: [unit] }));
    expect(named.change.action).toBe('stop');
    expect(named.change.summary).toContain(`pid ${p.listener.pid} is not ${unit}'s own process (`);
    expect(named.change.summary).toContain(`but stop_spawner_units names ${unit}: stop and disable ${unit}`);
  });

  it('a cron-style spawner: the crontab line is named (system crontab with a user field); a line of another user is not', async () => {
    const p = await spawned('cronjob');
    const unit = 'cron.service';
    const inUnit = new Map([p.spawner, p.sh, p.listener.pid].map((x) => [x, unit] as const));
    const uid = process.getuid!();
    const crontab = `# legacy\nSHELL=/bin/sh\n@reboot tester ${p.command}\n*/5 * * * * someone-else ${p.command}\n`;
    const userTab = `0 4 * * * ${p.command}\n`;
    const { host } = fakeHost(
      inUnit,
      { [unit]: { MainPID: p.spawner, file: `[Service]\nExecStart=/usr/sbin/cron -f $EXTRA_OPTS\nKillMode=process\n` } },
      {
        '/etc/cron.d/legacy-etcd': crontab,
        '/etc/cron.d/ignored.dpkg-old': `@reboot tester ${p.command}\n`,
        '/var/spool/cron/crontabs/other': userTab,
        '/etc/passwd': `root:x:0:0:root:/root:/bin/sh\ntester:x:${uid}:${uid}::/tmp:/bin/sh\nsomeone-else:x:${uid + 1}:${uid + 1}::/tmp:/bin/sh\nother:x:${uid + 2}:${uid + 2}::/tmp:/bin/sh\n`,
      },
    );
    const { change } = await planFor(host, spec([p.listener.port]));
    expect(change.action).toBe('operator');
    expect(change.operator).toContain(`is not cron.service's own process`);
    expect(change.operator).toContain('cron.service is the cron daemon: it runs every cron job on this host');
    expect(change.operator).toContain(
      `It was started by the crontab line /etc/cron.d/legacy-etcd:3: @reboot tester ${p.command}: remove or change that line, then stop pid ${p.listener.pid}`,
    );
    expect(change.operator).not.toContain('someone-else');
    expect(change.operator).not.toContain('ignored.dpkg-old');
    expect(change.operator).not.toContain('/var/spool/cron/crontabs/other');
    expect(change.operator).toContain('name cron.service in stop_spawner_units');
  });

  it('a supervisord program: its [program:] section is named', async () => {
    const r = path.join(dir, 'supervised.report');
    const childReport = path.join(dir, 'supervised.child');
    const sup = run(NODE, [path.join(dir, 'supervise.js'), NODE, path.join(dir, 'listen.js'), r, childReport]);
    const l = await report(r);
    expect(Number(await waitFile(childReport))).toBe(l.pid); // a direct child, no shell between
    const unit = 'supervisor.service';
    const inUnit = new Map([sup.pid!, l.pid].map((x) => [x, unit] as const));
    const command = `${NODE} ${path.join(dir, 'listen.js')} ${r}`;
    const { host } = fakeHost(
      inUnit,
      { [unit]: { MainPID: sup.pid!, file: `[Service]\nExecStart=/usr/bin/supervisord -n -c /etc/supervisor/supervisord.conf\n` } },
      {
        '/etc/supervisor/supervisord.conf': `[supervisord]\nlogfile=/var/log/supervisor/supervisord.log\n\n[include]\nfiles = /etc/supervisor/conf.d/*.conf\n`,
        '/etc/supervisor/conf.d/legacy.conf': `[program:other]\ncommand=/usr/bin/sleep 1000\n\n[program:legacy-etcd]\ncommand=${command} ; stand-in\nautorestart=true\n`,
      },
    );
    const { change } = await planFor(host, spec([l.port]));
    expect(change.action).toBe('operator');
    expect(change.operator).toContain(`pid ${l.pid} (${command}) is not ${unit}'s own process`);
    expect(change.operator).toContain(`(${sup.pid} -> ${l.pid})`);
    expect(change.operator).toContain('supervisor.service is a process supervisor: it runs every program in its configuration');
    expect(change.operator).toContain(`It is supervisord's program "legacy-etcd" (/etc/supervisor/conf.d/legacy.conf:5: command=${command})`);
    expect(change.operator).not.toContain('"other"');
  });

  it('an ssh session without logind (its processes in ssh.service): the session is named, ssh.service is never stopped', async () => {
    const r = path.join(dir, 'session.report');
    const sessionReport = path.join(dir, 'session.pid');
    const command = `${NODE} ${path.join(dir, 'listen.js')} ${r}; true`;
    // sshd's per-connection process titles itself "sshd: USER@TTY" and runs the user's shell.
    const become = 'import os, sys; os.execv("/bin/sh", ["sshd: tester@pts/0", "-c", sys.argv[1]])';
    const sshd = run(NODE, [path.join(dir, 'supervise.js'), PYTHON, '-c', become, command, sessionReport]);
    const l = await report(r);
    const session = Number(await waitFile(sessionReport));
    const unit = 'ssh.service';
    const inUnit = new Map([sshd.pid!, session, l.pid].map((x) => [x, unit] as const));
    const { host, calls } = fakeHost(inUnit, { [unit]: { MainPID: sshd.pid!, file: `[Service]\nExecStart=/usr/sbin/sshd -D $SSHD_OPTS\n` } });
    const s = spec([l.port], { stop_spawner_units: ['ssh.service'] });
    const { change } = await planFor(host, s);
    expect(change.action).toBe('operator');
    expect(change.operator).toContain(`ssh.service only spawned it (${sshd.pid} -> ${session} -> ${l.pid})`);
    expect(change.operator).toContain('ssh.service is protected by the built-in list (ssh*): it carries every remote login');
    expect(change.operator).toContain(`It was started in the login session of pid ${session} (`);
    expect(change.operator).toContain('sshd: tester@pts/0');
    // ssh is not a spawner stop_spawner_units can release.
    expect(change.operator).not.toContain('stop_spawner_units');
    expect(await portFreeProvider.apply(host, s, [change], await scratchContext())).toBeUndefined();
    expect(calls.filter((c) => c[1] !== 'show')).toEqual([]);
  });

  it('a cron job whose line cannot be found says so (unknown), naming the crontabs it read', async () => {
    const p = await spawned('nocron');
    const unit = 'cron.service';
    const inUnit = new Map([p.spawner, p.sh, p.listener.pid].map((x) => [x, unit] as const));
    const { host } = fakeHost(
      inUnit,
      { [unit]: { MainPID: p.spawner, file: `[Service]\nExecStart=/usr/sbin/cron -f\n` } },
      {
        '/etc/crontab': `17 * * * * root cd / && run-parts --report /etc/cron.hourly\n`,
      },
    );
    const { change } = await planFor(host, spec([p.listener.port]));
    expect(change.action).toBe('operator');
    expect(change.operator).toContain('Its origin is unknown: no crontab line runs its command (read /etc/crontab)');
  });

  it('a process left in the cgroup (KillMode=process): it does not descend from the MainPID, so nothing is stopped', async () => {
    const r = path.join(dir, 'leftover.report');
    run(NODE, [path.join(dir, 'listen.js'), r]);
    const l = await report(r);
    const main = run('/bin/sleep', ['1000']);
    const { host } = fakeHost(
      new Map([
        [l.pid, 'restarted.service'],
        [main.pid!, 'restarted.service'],
      ]),
      {
        'restarted.service': { MainPID: main.pid!, file: `[Service]\nExecStart=/bin/sleep 1000\nKillMode=process\n` },
      },
    );
    const { change } = await planFor(host, spec([l.port]));
    expect(change.action).toBe('operator');
    expect(change.operator).toContain(
      `pid ${l.pid} (${NODE} ${path.join(dir, 'listen.js')} ${r}) is not restarted.service's own process: it is not MainPID of restarted.service (pid ${main.pid}) and does not descend from it (its parents: ${process.pid}`,
    );
  });

  it('when systemctl cannot say, the unit is never stopped on a guess', async () => {
    const r = path.join(dir, 'unknown.report');
    run(NODE, [path.join(dir, 'listen.js'), r]);
    const l = await report(r);
    const { host } = fakeHost(new Map([[l.pid, 'mystery.service']]), {});
    const { change } = await planFor(host, spec([l.port]));
    expect(change.action).toBe('operator');
    expect(change.operator).toContain(`cannot tell whether pid ${l.pid} is mystery.service's own process: systemctl show mystery.service gave no MainPID`);
  });

  it('a built-in spawner (cron.service) is protected even for its own MainPID, with the reason; stop_spawner_units releases it', async () => {
    const r = path.join(dir, 'cronmain.report');
    run(NODE, [path.join(dir, 'listen.js'), r]);
    const l = await report(r);
    const units = { 'cron.service': { MainPID: l.pid, file: `[Service]\nExecStart=${NODE} ${path.join(dir, 'listen.js')} ${r}\n` } };
    const inUnit = new Map([[l.pid, 'cron.service']]);
    const held = await planFor(fakeHost(inUnit, units).host, spec([l.port]));
    expect(held.change.action).toBe('operator');
    expect(held.change.operator).toContain('cron.service is protected by the built-in list of spawners: it is the cron daemon');
    const released = await planFor(fakeHost(inUnit, units).host, spec([l.port], { stop_spawner_units: ['cron.service'] }));
    expect(released.change.action).toBe('stop');
    expect((released.change.op as StopOp).proof).toBe(`pid ${l.pid} is MainPID of cron.service`);
  });
});
