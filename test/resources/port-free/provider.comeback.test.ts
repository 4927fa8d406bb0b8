// PortFree and "what would start it again": a holder that another
// unit still starts at boot once its own links are gone. Offline on fixture
// trees; live against a real listener of this process, with a command runner
// that runs `systemctl --root=FIXTURE disable|mask` for real on the fixture
// (never on this machine) and fakes only the manager's answers. After each
// apply, systemd's own loader (`systemd --test`, test/helpers/systemd-oracle)
// says whether the unit still starts at boot.
import { afterEach, describe, expect, it } from 'vitest';
import net from 'node:net';
import { mkdtempSync, readlinkSync, rmSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { Host, type CommandRunner } from '../../../src/host.js';
import type { PortFreeSpec } from '../../../src/resources/port-free/spec.js';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';
import { planRollback, executeRollback } from '../../../src/reconcile/rollback.js';
import { WriteDoor } from '../../../src/door/door.js';
import { buildTree, type Tree } from '../../helpers/tree.js';
import { applyContext } from '../../helpers/door.js';
import { snapshot } from '../../helpers/snapshot.js';
import { ETC, LIB, NODEFAULT, oracle, oracleStarted, unitTree } from '../../helpers/systemd-oracle.js';

const roots: string[] = [];
const servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => (s.listening ? s.close(() => r()) : r()))));
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function spec(extra: Partial<PortFreeSpec> = {}): PortFreeSpec {
  return {
    type: 'PortFree',
    ports: [10250, 10257],
    protected_units: [],
    stop_spawner_units: [],
    mask: 'auto',
    timeout_seconds: 5,
    disable_units: [],
    ...extra,
  };
}

const AGENT = `[Unit]\nDefaultDependencies=no\n[Service]\nExecStart=/usr/bin/agent --port 10250\n[Install]\nWantedBy=multi-user.target\n`;
// Wants= is on line 3, as the sentences below say.
const MONITORING = `[Unit]\nDescription=Monitoring\nWants=agent.service\nDefaultDependencies=no\n[Install]\nWantedBy=multi-user.target\n`;

const tree = (files: Tree): string => unitTree(roots, 'port-comeback-', files);

/** agent.service enabled by its own link and wanted by an enabled monitoring.target. */
function agentTree(): string {
  return tree({
    [`${LIB}/agent.service`]: AGENT,
    [`${ETC}/monitoring.target`]: MONITORING,
    [`${ETC}/multi-user.target.wants/agent.service`]: { link: '../../../../usr/lib/systemd/system/agent.service' },
    [`${ETC}/multi-user.target.wants/monitoring.target`]: { link: '../monitoring.target' },
  });
}

const WANTED = 'agent.service is still wanted by monitoring.target (Wants= at /etc/systemd/system/monitoring.target:3), which is enabled';

async function offlinePlan(root: string, s: PortFreeSpec) {
  const host = new Host({ root, live: false });
  return portFreeProvider.diff(s, await portFreeProvider.observe(host, s), { live: false });
}

async function startedAtBoot(root: string, unit: string): Promise<boolean> {
  return oracleStarted(await oracle(root)).has(unit);
}

describe('PortFree offline: a unit something else still starts at boot', () => {
  it('mask: auto masks it, naming the Wants= line; the target stays enabled; systemd agrees it no longer starts', async () => {
    const root = agentTree();
    expect(await startedAtBoot(root, 'agent.service')).toBe(true);
    const s = spec({ disable_units: ['agent.service'] });
    const changes = await offlinePlan(root, s);
    expect(changes.map((c) => [c.id, c.action])).toEqual([
      ['disable-agent.service', 'disable'],
      ['mask-agent.service', 'mask'],
    ]);
    expect(changes[1]!.summary).toContain(WANTED);
    const host = new Host({ root, live: false });
    await portFreeProvider.apply(host, s, changes, await applyContext(host));
    expect(readlinkSync(path.join(root, ETC, 'agent.service'))).toBe('/dev/null');
    expect(readlinkSync(path.join(root, ETC, 'multi-user.target.wants/monitoring.target'))).toBe('../monitoring.target');
    expect(await offlinePlan(root, s)).toEqual([]);
    expect(await startedAtBoot(root, 'agent.service')).toBe(false);
    expect(await startedAtBoot(root, 'monitoring.target')).toBe(true);
  });

  it('mask: false leaves an operator line naming the path, before and after apply (verification fails)', async () => {
    const root = agentTree();
    const s = spec({ disable_units: ['agent.service'], mask: false });
    const changes = await offlinePlan(root, s);
    expect(changes.map((c) => [c.id, c.action])).toEqual([
      ['disable-agent.service', 'disable'],
      ['comeback-agent.service', 'operator'],
    ]);
    expect(changes[1]!.operator).toContain(`${WANTED} (multi-user.target (the default target) -> monitoring.target): disabling it is not enough`);
    const host = new Host({ root, live: false });
    await portFreeProvider.apply(host, s, changes, await applyContext(host));
    const after = await offlinePlan(root, s);
    expect(after.map((c) => [c.id, c.action])).toEqual([['comeback-agent.service', 'operator']]);
    // systemd agrees: disabled, it still starts at boot.
    expect(await startedAtBoot(root, 'agent.service')).toBe(true);
  });

  it('mask: auto does not mask a unit only its own links started', async () => {
    const root = tree({
      [`${LIB}/agent.service`]: AGENT,
      [`${ETC}/multi-user.target.wants/agent.service`]: { link: '../../../../usr/lib/systemd/system/agent.service' },
    });
    const s = spec({ disable_units: ['agent.service'] });
    const changes = await offlinePlan(root, s);
    expect(changes.map((c) => [c.id, c.action])).toEqual([['disable-agent.service', 'disable']]);
    const host = new Host({ root, live: false });
    await portFreeProvider.apply(host, s, changes, await applyContext(host));
    expect(await offlinePlan(root, s)).toEqual([]);
    expect(await startedAtBoot(root, 'agent.service')).toBe(false);
  });

  it('a timer-triggered static service: the timer is named, the service masked, the timer left alone', async () => {
    const root = tree({
      [`${LIB}/report.service`]: `${NODEFAULT}[Service]\nExecStart=/usr/bin/report --listen 10257\n`,
      [`${LIB}/report.timer`]: `${NODEFAULT}[Timer]\nOnBootSec=2s\n[Install]\nWantedBy=timers.target\n`,
      [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=timers.target\n`,
      [`${ETC}/timers.target.wants/report.timer`]: { link: '../../../../usr/lib/systemd/system/report.timer' },
    });
    expect(await startedAtBoot(root, 'report.service')).toBe(true);
    const s = spec({ disable_units: ['report.service'] });
    const changes = await offlinePlan(root, s);
    expect(changes.map((c) => [c.id, c.action])).toEqual([['mask-report.service', 'mask']]);
    expect(changes[0]!.summary).toContain(
      'report.service is still triggered by report.timer (report.timer triggers the unit of its own name by default, /usr/lib/systemd/system/report.timer), which is enabled',
    );
    const host = new Host({ root, live: false });
    await portFreeProvider.apply(host, s, changes, await applyContext(host));
    expect(await startedAtBoot(root, 'report.service')).toBe(false);
    expect(await startedAtBoot(root, 'report.timer')).toBe(true);
  });

  it('an image without default.target: what starts at boot is unknown, and a warning says why', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'port-comeback-'));
    roots.push(root);
    buildTree(root, {
      [`${LIB}/agent.service`]: AGENT,
      [`${ETC}/multi-user.target.wants/agent.service`]: { link: '../../../../usr/lib/systemd/system/agent.service' },
    });
    const s = spec({ disable_units: ['agent.service'] });
    const o = await portFreeProvider.observe(new Host({ root, live: false }), s);
    expect(portFreeProvider.warnings!(s, o)).toEqual([
      'PortFree: what would start the units above again at boot is unknown (there is no default.target on the unit search path, so what starts at boot is unknown); only their own links and vendor links were judged',
    ]);
  });

  it('a static candidate pulled in only by another unit is found (not only units with their own links)', async () => {
    const root = tree({
      [`${LIB}/agent.service`]: `${NODEFAULT}[Service]\nExecStart=/usr/bin/agent --port 10250\n`,
      [`${ETC}/monitoring.target`]: MONITORING,
      [`${ETC}/multi-user.target.wants/monitoring.target`]: { link: '../monitoring.target' },
    });
    const changes = await offlinePlan(root, spec());
    expect(changes.map((c) => [c.id, c.action])).toEqual([['candidate-agent.service', 'operator']]);
  });
});

// ------------------------------------------------------------------ live

async function listen(): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer((c) => c.end());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => resolve());
  });
  servers.push(server);
  return { server, port: (server.address() as net.AddressInfo).port };
}

/**
 * A live Host on a fixture root: /proc is this machine's (our own listener),
 * with our process placed in `unit`'s cgroup; unit files are the fixture's;
 * systemctl disable/mask run for real with --root on the fixture.
 */
function liveOnFixture(root: string, unit: string, server: net.Server, wantedBy: string) {
  const calls: string[] = [];
  const real = new Host({ root: '/' });
  const runner: CommandRunner = async (cmd, args) => {
    calls.push([cmd, ...args].join(' '));
    const ok = (stdout = '') => ({ command: cmd, exitCode: 0, stdout, stderr: '' });
    if (cmd !== 'systemctl') return { command: cmd, exitCode: 1, stdout: '', stderr: 'refused by test' };
    if (args[0] === 'show' && args.includes('MainPID') && args.includes('FragmentPath')) {
      return ok(`MainPID=${process.pid}\nType=simple\nPIDFile=\nFragmentPath=/usr/lib/systemd/system/${unit}\nDropInPaths=\n`);
    }
    if (args[0] === 'show' && args.includes('WantedBy'))
      return ok(`WantedBy=${wantedBy}\nRequiredBy=\nUpheldBy=\nBoundBy=\nPartOf=\nTriggeredBy=\nConsistsOf=\n`);
    if (args[0] === 'show') return ok('0\n');
    if (args[0] === 'stop') {
      await new Promise<void>((r) => server.close(() => r()));
      return ok();
    }
    if (['disable', 'mask', 'unmask', 'enable'].includes(args[0]!)) {
      const r = await execa('systemctl', [`--root=${root}`, ...args], { reject: false });
      return { command: cmd, exitCode: r.exitCode ?? 1, stdout: r.stdout, stderr: r.stderr };
    }
    return ok();
  };
  const host = new Host({ root, live: true, runner });
  host.readKernel = async (t: string) => (t === `/proc/${process.pid}/cgroup` ? `0::/system.slice/${unit}\n` : real.readKernel(t));
  host.readLinksIn = (d: string) => real.readLinksIn(d);
  const fixtureDir = host.readDir.bind(host);
  host.readDir = (d: string) => (d === '/proc' || d.startsWith('/proc/') ? real.readDir(d) : fixtureDir(d));
  return { host, calls };
}

/** Everything but the tool's own run directories and the oracle's scratch. */
const unitsOnly = (p: string) => ['root', 'var', 'run', 'no-generators'].includes(p.split('/')[0]!);

describe('PortFree live: stays-free proof from the unit graph', () => {
  it('mask: auto stops, disables and masks; journaled, and --rollback puts every link back', async () => {
    const { server, port } = await listen();
    const root = agentTree();
    const before = snapshot(root, unitsOnly);
    const { host, calls } = liveOnFixture(root, 'agent.service', server, 'multi-user.target monitoring.target');
    const s = spec({ ports: [port] });
    const changes = portFreeProvider.diff(s, await portFreeProvider.observe(host, s), { live: true });
    expect(changes).toHaveLength(1);
    expect(changes[0]!.summary).toContain(`stop, disable and mask agent.service (${WANTED}`);
    const ctx = await applyContext(host, '/root/ks/preflight/runs/run-live');
    const outcome = await portFreeProvider.apply(host, s, changes, ctx);
    await ctx.door.end('ok');
    expect(outcome?.error).toBeUndefined();
    expect(outcome?.reports?.['ports.json']).toMatchObject({ port, unit: 'agent.service', pid: process.pid });
    expect(calls.filter((c) => /^systemctl (stop|disable|mask)/.test(c))).toEqual([
      'systemctl disable agent.service',
      'systemctl mask agent.service',
      'systemctl stop agent.service',
    ]); // masked first: nothing can start it again once stopped
    expect(readlinkSync(path.join(root, ETC, 'agent.service'))).toBe('/dev/null');
    expect(await startedAtBoot(root, 'agent.service')).toBe(false);
    const journal = readFileSync(path.join(root, 'root/ks/preflight/runs/run-live/journal'), 'utf8');
    expect(journal).toContain('"step":"unit-mask"');

    const plan = await planRollback(host, '/root/ks/preflight', 'run-live');
    const door = await WriteDoor.open(host, { runDir: '/root/ks/preflight/runs/rollback-1', runId: 'rollback-1', mode: 'rollback', tool: 'test' });
    const r = await executeRollback(door, plan);
    expect(r.failed).toEqual([]);
    expect(snapshot(root, unitsOnly)).toEqual(before);
    expect(await startedAtBoot(root, 'agent.service')).toBe(true);
  });

  it('mask: false: apply stops and disables, then fails naming the Wants= line; the port is not reported freed', async () => {
    const { server, port } = await listen();
    const root = agentTree();
    const { host } = liveOnFixture(root, 'agent.service', server, 'multi-user.target monitoring.target');
    const s = spec({ ports: [port], mask: false });
    const changes = portFreeProvider.diff(s, await portFreeProvider.observe(host, s), { live: true });
    expect(changes[0]!.summary).toContain(`stop and disable agent.service; but ${WANTED}`);
    const outcome = await portFreeProvider.apply(host, s, changes, await applyContext(host));
    expect(outcome?.error).toContain(`port ${port} is free now, but ${WANTED}`);
    expect(outcome?.reports?.['ports.json']).toBeUndefined();
    expect(await startedAtBoot(root, 'agent.service')).toBe(true);
  });

  it('a reverse dependency the manager reports but no file explains counts as a way back (mask: auto masks)', async () => {
    const { server, port } = await listen();
    const root = tree({
      [`${LIB}/agent.service`]: AGENT,
      [`${ETC}/multi-user.target.wants/agent.service`]: { link: '../../../../usr/lib/systemd/system/agent.service' },
    });
    const { host } = liveOnFixture(root, 'agent.service', server, 'multi-user.target generated-thing.target');
    const s = spec({ ports: [port] });
    const changes = portFreeProvider.diff(s, await portFreeProvider.observe(host, s), { live: true });
    expect(changes[0]!.summary).toContain(
      'stop, disable and mask agent.service (the running manager reports WantedBy=generated-thing.target for agent.service, which no unit file on the search path explains',
    );
  });
});

// ------------------------------------------------------------------ user managers

const HOME = 'home/alice';
const UCONF = `${HOME}/.config/systemd/user`;
const USHARE = `${HOME}/.local/share/systemd/user`;
const ULIB = 'usr/lib/systemd/user';

/** alice (UID 1000), lingering unless told, with api.service (vendor-style, in ~/.local/share) enabled and wanted by stack.target. */
function userTree(opts: { lingers?: boolean; stack?: boolean } = {}): string {
  return tree({
    'etc/passwd': 'root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Alice:/home/alice:/bin/bash\n',
    ...(opts.lingers === false ? {} : { 'var/lib/systemd/linger/alice': '' }),
    [`${ULIB}/default.target`]: '[Unit]\nDescription=Main User Target\n',
    [`${USHARE}/api.service`]: '[Service]\nExecStart=/usr/bin/api --port 6443\n[Install]\nWantedBy=default.target\n',
    [`${UCONF}/default.target.wants/api.service`]: { link: '/home/alice/.local/share/systemd/user/api.service' },
    ...(opts.stack === false
      ? {}
      : {
          [`${UCONF}/stack.target`]: '[Unit]\nWants=api.service\n[Install]\nWantedBy=default.target\n',
          [`${UCONF}/default.target.wants/stack.target`]: { link: '/home/alice/.config/systemd/user/stack.target' },
        }),
  });
}

/**
 * Like liveOnFixture, for a holder in alice's manager: `systemctl --user -M
 * alice@` answers from the fixture, and its disable/mask change the links
 * under ~/.config/systemd/user the way systemctl --user does (systemctl
 * --root cannot act on a user tree, so the recorder does it).
 */
function liveUserOnFixture(root: string, server: net.Server) {
  const calls: string[] = [];
  const real = new Host({ root: '/' });
  const conf = path.join(root, UCONF);
  const runner: CommandRunner = async (cmd, args) => {
    calls.push([cmd, ...args].join(' '));
    const ok = (stdout = '') => ({ command: cmd, exitCode: 0, stdout, stderr: '' });
    if (cmd !== 'systemctl' || args[0] !== '--user' || args[1] !== '-M' || args[2] !== 'alice@')
      return { command: cmd, exitCode: 1, stdout: '', stderr: "refused by test: not alice's manager" };
    const [verb, ...rest] = args.slice(3);
    if (verb === 'show' && rest.includes('MainPID'))
      return ok(`MainPID=${process.pid}\nType=simple\nPIDFile=\nFragmentPath=/home/alice/.local/share/systemd/user/api.service\nDropInPaths=\n`);
    if (verb === 'show') return ok('0\n');
    if (verb === 'stop') {
      await new Promise<void>((r) => server.close(() => r()));
      return ok();
    }
    if (verb === 'disable') {
      // The link is absolute (into the user's tree), so only lstat can tell it is there.
      const { unlinkSync, lstatSync } = await import('node:fs');
      const at = path.join(conf, 'default.target.wants', rest[0]!);
      try {
        lstatSync(at);
        unlinkSync(at);
      } catch {
        // not enabled there
      }
      return ok();
    }
    if (verb === 'mask') {
      const { symlinkSync } = await import('node:fs');
      symlinkSync('/dev/null', path.join(conf, rest[0]!));
      return ok();
    }
    return ok();
  };
  const host = new Host({ root, live: true, runner });
  host.readKernel = async (t: string) =>
    t === `/proc/${process.pid}/cgroup` ? '0::/user.slice/user-1000.slice/user@1000.service/app.slice/api.service\n' : real.readKernel(t);
  host.readLinksIn = (d: string) => real.readLinksIn(d);
  const fixtureDir = host.readDir.bind(host);
  host.readDir = (d: string) => (d === '/proc' || d.startsWith('/proc/') ? real.readDir(d) : fixtureDir(d));
  return { host, calls };
}

describe("PortFree live: a holder in a lingering user's manager", () => {
  it('is stopped, disabled and (auto) masked through systemctl --user -M alice@, naming the Wants= line and the linger; rollback restores her links', async () => {
    const { server, port } = await listen();
    const root = userTree();
    const before = snapshot(root, unitsOnly);
    const { host, calls } = liveUserOnFixture(root, server);
    const s = spec({ ports: [port] });
    const changes = portFreeProvider.diff(s, await portFreeProvider.observe(host, s), { live: true });
    expect(changes.map((c) => c.action)).toEqual(['stop']);
    expect(changes[0]!.summary).toContain(`held by pid ${process.pid}`);
    expect(changes[0]!.summary).toContain('in user unit api.service of user@1000.service; pid');
    expect(changes[0]!.summary).toContain(
      'stop, disable and mask api.service through systemctl --user -M alice@ (api.service is still wanted by stack.target (Wants= at /home/alice/.config/systemd/user/stack.target:2), which is enabled',
    );
    expect(changes[0]!.summary).toContain("alice lingers (/var/lib/systemd/linger/alice exists), so alice's manager (user@1000.service) starts at boot");

    const ctx = await applyContext(host, '/root/ks/preflight/runs/run-user');
    const outcome = await portFreeProvider.apply(host, s, changes, ctx);
    await ctx.door.end('ok');
    expect(outcome?.error).toBeUndefined();
    expect(outcome?.reports?.['ports.json']).toMatchObject({ port, unit: 'api.service', user: 'alice', pid: process.pid });
    expect(calls.filter((c) => /(stop|disable|mask) /.test(c))).toEqual([
      'systemctl --user -M alice@ disable api.service',
      'systemctl --user -M alice@ mask api.service',
      'systemctl --user -M alice@ stop api.service',
    ]);
    const journal = readFileSync(path.join(root, 'root/ks/preflight/runs/run-user/journal'), 'utf8');
    expect(journal).toContain('"step":"unit-mask","units":["api.service"],"user":"alice"');

    const plan = await planRollback(host, '/root/ks/preflight', 'run-user');
    expect(plan.steps.map((x) => x.summary)).toEqual(
      expect.arrayContaining(['systemctl --user -M alice@ daemon-reload', "start api.service (alice's manager)"]),
    );
    const door = await WriteDoor.open(host, { runDir: '/root/ks/preflight/runs/rollback-u', runId: 'rollback-u', mode: 'rollback', tool: 'test' });
    const r = await executeRollback(door, plan);
    expect(r.failed).toEqual([]);
    expect(snapshot(root, unitsOnly)).toEqual(before);
    expect(calls.slice(-2)).toEqual(['systemctl --user -M alice@ daemon-reload', 'systemctl --user -M alice@ start api.service']);
  });

  it('without another way back it is only stopped and disabled; a user who does not linger is named so', async () => {
    const { server, port } = await listen();
    const root = userTree({ lingers: false, stack: false });
    const { host } = liveUserOnFixture(root, server);
    const s = spec({ ports: [port] });
    const changes = portFreeProvider.diff(s, await portFreeProvider.observe(host, s), { live: true });
    expect(changes[0]!.summary).toContain(
      'stop and disable api.service through systemctl --user -M alice@; alice does not linger (no /var/lib/systemd/linger/alice)',
    );
    const outcome = await portFreeProvider.apply(host, s, changes, await applyContext(host));
    expect(outcome?.error).toBeUndefined();
  });

  it('protected-unit rules apply to user units too', async () => {
    const { server, port } = await listen();
    const root = userTree();
    const { host, calls } = liveUserOnFixture(root, server);
    const s = spec({ ports: [port], protected_units: ['api.service'] });
    const changes = portFreeProvider.diff(s, await portFreeProvider.observe(host, s), { live: true });
    expect(changes.map((c) => [c.action, c.operator])).toEqual([
      ['operator', "api.service is listed in protected_units (api.service) (in alice's manager); it is never stopped automatically"],
    ]);
    expect(calls.some((c) => / (stop|disable|mask) /.test(c))).toBe(false);
  });
});
