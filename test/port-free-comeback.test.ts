// PortFree and "what would start it again" (issue 17): a holder that another
// unit still starts at boot once its own links are gone. Offline on fixture
// trees; live against a real listener of this process, with a command runner
// that runs `systemctl --root=FIXTURE disable|mask` for real on the fixture
// (never on this machine) and fakes only the manager's answers. After each
// apply, systemd's own loader (`systemd --test`, test/helpers/systemd-oracle)
// says whether the unit still starts at boot.
import { afterEach, describe, expect, it } from 'vitest';
import net from 'node:net';
import { mkdtempSync, readlinkSync, rmSync, chmodSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { Host, type CommandRunner } from '../src/host.js';
import type { PortFreeSpec } from '../src/desired-state.js';
import { portFreeProvider } from '../src/resources/port-free.js';
import { planRollback, executeRollback } from '../src/reconcile/rollback.js';
import { WriteDoor } from '../src/door/door.js';
import { buildTree, type Tree } from './helpers/tree.js';
import { applyContext } from './helpers/door.js';
import { snapshot } from './helpers/snapshot.js';
import { DEFAULT_LINK, ETC, LIB, NODEFAULT, SKELETON, oracle, oracleStarted } from './helpers/systemd-oracle.js';

const roots: string[] = [];
const servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => (s.listening ? s.close(() => r()) : r()))));
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function spec(extra: Partial<PortFreeSpec> = {}): PortFreeSpec {
  return { type: 'PortFree', ports: [10250, 10257], protected_units: [], stop_spawner_units: [], mask: 'auto', timeout_seconds: 5, disable_units: [], ...extra };
}

const AGENT = `[Unit]\nDefaultDependencies=no\n[Service]\nExecStart=/usr/bin/agent --port 10250\n[Install]\nWantedBy=multi-user.target\n`;
// Wants= is on line 3, as the sentences below say.
const MONITORING = `[Unit]\nDescription=Monitoring\nWants=agent.service\nDefaultDependencies=no\n[Install]\nWantedBy=multi-user.target\n`;

function tree(files: Tree): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'port-comeback-'));
  roots.push(root);
  buildTree(root, { ...SKELETON, ...DEFAULT_LINK, ...files });
  chmodSync(root, 0o755);
  return root;
}

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
    expect(changes[0]!.summary).toContain('report.service is still triggered by report.timer (report.timer triggers the unit of its own name by default, /usr/lib/systemd/system/report.timer), which is enabled');
    const host = new Host({ root, live: false });
    await portFreeProvider.apply(host, s, changes, await applyContext(host));
    expect(await startedAtBoot(root, 'report.service')).toBe(false);
    expect(await startedAtBoot(root, 'report.timer')).toBe(true);
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
    if (args[0] === 'show' && args.includes('WantedBy')) return ok(`WantedBy=${wantedBy}\nRequiredBy=\nUpheldBy=\nBoundBy=\nPartOf=\nTriggeredBy=\nConsistsOf=\n`);
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
    expect(calls.filter((c) => /^systemctl (stop|disable|mask)/.test(c))).toEqual(['systemctl stop agent.service', 'systemctl disable agent.service', 'systemctl mask agent.service']);
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
    expect(changes[0]!.summary).toContain('stop, disable and mask agent.service (the running manager reports WantedBy=generated-thing.target for agent.service, which no unit file on the search path explains');
  });
});
