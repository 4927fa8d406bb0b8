// PortFree's live apply (apply-live.ts) on this machine, against listeners the
// test opens itself on ephemeral ports: stop, disable, mask, the hold past a
// restart delay, socket activation. systemctl never runs for real: the Host's
// command runner is a recorder (test/helpers/port-listeners.ts) whose answers
// do to the test's own listeners what the unit's stop would do.
import { describe, expect, it } from 'vitest';
import { Host } from '../../../src/host.js';
import type { PortFreeSpec } from '../../../src/resources/port-free/spec.js';
import { readListeners } from '../../../src/observe/listeners.js';
import { parseCgroup } from '../../../src/systemd/cgroup.js';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';
import type { LivePortsObserved } from '../../../src/ports/observed.js';
import { close, closeListenersAfterEach, connects, listen, live, progressContext, recorder, spec } from '../../helpers/port-listeners.js';

closeListenersAfterEach();

describe('PortFree apply, with a recorded systemctl and real ports', () => {
  /**
   * The live observation, re-attributed to a service unit whose main process
   * the holder is (the cgroup and the manager are the only things a test
   * cannot make for real; test/resources/port-free/provider.identity.test.ts covers the holders
   * that are not a unit's own).
   */
  async function observedAsService(host: Host, s: PortFreeSpec, unit: (port: number) => string): Promise<LivePortsObserved> {
    const o = live(await portFreeProvider.observe(host, s));
    for (const b of o.busy) {
      for (const h of b.holders) {
        h.placement = parseCgroup(`0::/system.slice/${unit(b.port)}\n`);
        h.ancestry = { chain: [{ pid: h.pid, ppid: process.ppid, comm: h.comm, argv: process.argv, exe: process.execPath, uid: 0 }], complete: false };
        o.units[unit(b.port)] = {
          unit: unit(b.port),
          error: null,
          mainPid: h.pid,
          type: 'simple',
          pidFile: null,
          pidFilePid: null,
          pidFileError: null,
          execStart: [],
          execError: null,
          main: null,
        };
      }
    }
    return { ...o, selfUnit: null };
  }

  it('records, stops, disables, waits past the restart delay, and reports the lowest port with all freed', async () => {
    const a = await listen('0.0.0.0');
    const b = await listen('::', true);
    const byUnit = new Map([
      [`agent-${a.port}.service`, a.server],
      [`agent-${b.port}.service`, b.server],
    ]);
    const { calls, runner } = recorder(async ({ cmd, args }) => {
      expect(cmd).toBe('systemctl');
      if (args[0] === 'show') return { exitCode: 0, stdout: '300ms\n' };
      if (args[0] === 'stop') await close(byUnit.get(args[1]!)!); // what stopping the unit would do
      return { exitCode: 0 };
    });
    const host = new Host({ runner });
    const s = spec([a.port, b.port]);
    const o = await observedAsService(host, s, (p) => `agent-${p}.service`);
    const changes = portFreeProvider.diff(s, o, { live: true });
    expect(changes.map((c) => c.action)).toEqual(['stop', 'stop']);
    expect(changes[0]!.summary).toContain(`pid ${process.pid}`);

    const p = await progressContext();
    const started = Date.now();
    const outcome = await portFreeProvider.apply(host, s, changes, p.ctx);
    // Held past RestartUSec (300 ms) + 1 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1300);
    const [low, high] = [a.port, b.port].sort((x, y) => x - y) as [number, number];
    expect(outcome).toEqual({
      reports: {
        'ports.json': {
          port: low,
          unit: `agent-${low}.service`,
          pid: process.pid,
          freed: [
            { port: low, unit: `agent-${low}.service`, pid: process.pid },
            { port: high, unit: `agent-${high}.service`, pid: process.pid },
          ],
        },
      },
    });
    const first = `agent-${a.port}.service`;
    expect(calls.filter((c) => c.args.includes(first)).map((c) => c.args.join(' '))).toEqual([
      `show -p RestartUSec --value ${first}`,
      `stop ${first}`,
      `disable ${first}`,
      `is-enabled ${first}`,
    ]);
    expect(p.lines[0]).toMatch(/recorded unit agent-\d+\.service, pid \d+/);
    const busy = new Set((await readListeners(host)).map((l) => l.port));
    expect(busy.has(a.port) || busy.has(b.port)).toBe(false);
    // Verification: observing again gives an empty diff.
    expect(portFreeProvider.diff(s, await portFreeProvider.observe(host, s), { live: true })).toEqual([]);
  });

  it('fails, naming the port, when the listener comes back during the hold (Restart=always elsewhere)', async () => {
    const a = await listen('127.0.0.1');
    const { runner } = recorder(async ({ args }) => {
      if (args[0] === 'show') return { exitCode: 0, stdout: '100ms\n' };
      if (args[0] === 'stop') {
        await close(a.server);
        setTimeout(() => void listen('127.0.0.1', false, a.port), 300);
      }
      return { exitCode: 0 };
    });
    const host = new Host({ runner });
    const s = spec([a.port], { mask: true, timeout_seconds: 3 });
    const o = await observedAsService(host, s, () => 'respawner.service');
    const changes = portFreeProvider.diff(s, o, { live: true });
    expect(changes[0]!.summary).toContain('stop, disable and mask respawner.service');
    const outcome = await portFreeProvider.apply(host, s, changes, (await progressContext()).ctx);
    expect(outcome?.error).toMatch(new RegExp(`port ${a.port} was free and then listening again`));
    // The port did not stay free, so it is not reported as freed.
    expect(outcome?.reports?.['ports.json']).toBeUndefined();
  });

  it('an upheld unit (Upholds=, systemd 249+) is masked before it is stopped, so its upholder cannot start it again', async () => {
    // What the manager does (systemd.unit(5) Upholds=): while the upholder is active, a stopped upheld
    // unit is started again at once, unless it is masked (a masked unit cannot be started).
    const a = await listen('127.0.0.1');
    let masked = false;
    const { calls, runner } = recorder(async ({ args }) => {
      if (args[0] === 'show') return { exitCode: 0, stdout: '100ms\n' };
      if (args[0] === 'mask') masked = true;
      if (args[0] === 'stop') {
        await close(a.server);
        if (!masked) await listen('127.0.0.1', false, a.port); // keeper.service starts it again
      }
      return { exitCode: 0 };
    });
    const host = new Host({ runner });
    const s = spec([a.port], { mask: 'auto', timeout_seconds: 3 });
    const o = await observedAsService(host, s, () => 'companion.service');
    const upheld = 'companion.service is still upheld by keeper.service (Upholds= at /etc/systemd/system/keeper.service:3), which is enabled';
    o.comeback = { 'companion.service': { group: ['companion.service'], reasons: [upheld], unknown: null } };
    const changes = portFreeProvider.diff(s, o, { live: true });
    expect(changes[0]!.summary).toContain('stop, disable and mask companion.service');
    const outcome = await portFreeProvider.apply(host, s, changes, (await progressContext()).ctx);
    expect(outcome?.error).toBeUndefined();
    const order = calls.map((c) => c.args[0]).filter((v) => v === 'stop' || v === 'mask');
    expect(order).toEqual(['mask', 'stop']);
    expect(new Set((await readListeners(host)).map((l) => l.port)).has(a.port)).toBe(false);
  });

  it('a unit holding a port that also listens on others (inetd) is left to an operator naming them, and stopped with them named under stop_shared_holders', async () => {
    const wanted = await listen('0.0.0.0');
    const served = await listen('0.0.0.0');
    const { runner } = recorder();
    const host = new Host({ runner });
    const s = spec([wanted.port]);
    // The other listener is read from /proc/net/tcp and this process's fds, as the wanted one is.
    const plain = live(await portFreeProvider.observe(host, s));
    const sockets = plain.busy[0]!.holders[0]!.otherSockets!;
    expect(sockets).toContainEqual({ proto: 'tcp', address: '0.0.0.0', port: served.port });
    expect(sockets.map((k) => k.port)).not.toContain(wanted.port);
    const o = await observedAsService(host, s, () => 'inetd.service');
    const [kept] = portFreeProvider.diff(s, o, { live: true });
    expect(kept!.action).toBe('operator');
    expect(kept!.operator).toContain(`stopping inetd.service to free ${wanted.port} also ends its other sockets: `);
    expect(kept!.operator).toContain(`0.0.0.0:${served.port}/tcp`);
    expect(kept!.operator).toContain('Or set stop_shared_holders: true to stop and disable inetd.service anyway');
    const optIn = spec([wanted.port], { stop_shared_holders: true });
    const [c] = portFreeProvider.diff(optIn, o, { live: true });
    expect(c!.action).toBe('stop');
    expect(c!.summary).toContain(`0.0.0.0:${served.port}/tcp`);
    expect(c!.summary).toContain('(stop_shared_holders: true)');
    expect((c!.op as { ends?: { unit: string }[] }).ends?.map((e) => e.unit)).toEqual(['inetd.service']);
  });

  it('a systemctl failure is reported with its command, and the other port still converges', async () => {
    const a = await listen('127.0.0.1');
    const b = await listen('127.0.0.1');
    const { runner } = recorder(async ({ args }) => {
      if (args[0] === 'show') return { exitCode: 0, stdout: '0\n' };
      if (args[0] === 'stop' && args[1] === 'broken.service') return { exitCode: 5 };
      if (args[0] === 'stop') await close(b.server);
      return { exitCode: 0 };
    });
    const host = new Host({ runner });
    const s = spec([a.port, b.port]);
    const o = await observedAsService(host, s, (p) => (p === a.port ? 'broken.service' : 'fine.service'));
    const changes = portFreeProvider.diff(s, o, { live: true });
    const outcome = await portFreeProvider.apply(host, s, changes, (await progressContext()).ctx);
    expect(outcome?.error).toMatch(
      new RegExp(`port ${a.port} \\(broken.service\\): systemctl stop broken.service exited 5.*freed: ${b.port} from fine.service`),
    );
    // What was freed is still reported, so ports.json is not lost with the failure.
    expect(outcome?.reports?.['ports.json']).toMatchObject({ port: b.port, unit: 'fine.service', freed: [{ port: b.port, unit: 'fine.service' }] });
    expect(await connects('127.0.0.1', a.port)).toBe(true);
  });

  it('one unit holding two ports is stopped once; a unit still static after disable is warned about', async () => {
    const a = await listen('127.0.0.1');
    const b = await listen('::1');
    const { calls, runner } = recorder(async ({ args }) => {
      if (args[0] === 'show') return { exitCode: 0, stdout: '100ms\n' };
      if (args[0] === 'is-enabled') return { exitCode: 0, stdout: 'static\n' };
      if (args[0] === 'stop') await Promise.all([close(a.server), close(b.server)]);
      return { exitCode: 0 };
    });
    const host = new Host({ runner });
    const s = spec([a.port, b.port]);
    const o = await observedAsService(host, s, () => 'etcd.service');
    const changes = portFreeProvider.diff(s, o, { live: true });
    expect(changes.map((c) => c.action)).toEqual(['stop', 'stop']);
    const p = await progressContext();
    const outcome = await portFreeProvider.apply(host, s, changes, p.ctx);
    expect(calls.filter((c) => c.args[0] === 'stop').map((c) => c.args.join(' '))).toEqual(['stop etcd.service']);
    expect((outcome as { reports: Record<string, { freed: unknown[] }> }).reports['ports.json']!.freed).toHaveLength(2);
    expect(p.lines.some((l) => /warning: etcd.service is "static" after disable/.test(l))).toBe(true);
  });

  it('socket activation: PID 1 holds the port; socket and service are stopped together, service PID reported', async () => {
    const a = await listen('::', true);
    const { calls, runner } = recorder(async ({ args }) => {
      if (args[0] === 'show' && args[2] === 'RestartUSec') return { exitCode: 0, stdout: args[4]!.endsWith('.socket') ? '\n' : '100ms\n' };
      if (args[0] === 'stop') await close(a.server);
      return { exitCode: 0 };
    });
    const host = new Host({ runner });
    const s = spec([a.port]);
    const o = live(await portFreeProvider.observe(host, s));
    // Re-attribute as systemd would show it: PID 1 in init.scope holds the listener for lazy.socket.
    const b = o.busy[0]!;
    b.holders = [{ pid: 1, comm: 'systemd', placement: parseCgroup('0::/init.scope\n'), ancestry: null, mainHoldsSocket: null }];
    b.activation = { socket: 'lazy.socket', service: 'lazy.service', servicePid: 4242, source: 'systemctl list-sockets' };
    const changes = portFreeProvider.diff(s, { ...o, selfUnit: null }, { live: true });
    expect(changes).toHaveLength(1);
    expect(changes[0]!.op).toMatchObject({ kind: 'stop', units: ['lazy.socket', 'lazy.service'], unit: 'lazy.service', pid: 4242, socket: 'lazy.socket' });
    const outcome = await portFreeProvider.apply(host, s, changes, (await progressContext()).ctx);
    expect(calls.filter((c) => c.args[0] !== 'show').map((c) => c.args.join(' '))).toEqual([
      'stop lazy.socket lazy.service',
      'disable lazy.socket lazy.service',
      'is-enabled lazy.socket',
    ]);
    expect(outcome).toEqual({
      reports: {
        'ports.json': {
          port: a.port,
          unit: 'lazy.service',
          pid: 4242,
          socket: 'lazy.socket',
          freed: [{ port: a.port, unit: 'lazy.service', pid: 4242, socket: 'lazy.socket' }],
        },
      },
    });
  });

  it('socket activation of a protected unit (ssh.socket) is operator-only', async () => {
    const a = await listen('127.0.0.1');
    const host = new Host({ runner: recorder().runner });
    const s = spec([a.port]);
    const o = live(await portFreeProvider.observe(host, s));
    o.busy[0]!.holders = [{ pid: 1, comm: 'systemd', placement: parseCgroup('0::/init.scope\n'), ancestry: null, mainHoldsSocket: null }];
    o.busy[0]!.activation = { socket: 'ssh.socket', service: 'ssh.service', servicePid: null, source: 'unit files' };
    const [c] = portFreeProvider.diff(s, { ...o, selfUnit: null }, { live: true });
    expect(c!.action).toBe('operator');
    expect(c!.operator).toMatch(/ssh.socket is protected by the built-in list/);
  });

  /** A Host whose fd scan sees this process's fd table as PID 1's, with PID 1 reading as `comm` in `cgroup`. */
  function asPid1(host: Host, comm: string, cgroup: string): Host {
    const realLinks = host.readLinksIn.bind(host);
    host.readLinksIn = async (dir: string) => {
      if (dir === '/proc/1/fd') return realLinks(`/proc/${process.pid}/fd`);
      if (dir === `/proc/${process.pid}/fd`) return new Map();
      return realLinks(dir);
    };
    const realKernel = host.readKernel.bind(host);
    host.readKernel = async (t: string) => (t === '/proc/1/comm' ? `${comm}\n` : t === '/proc/1/cgroup' ? cgroup : realKernel(t));
    return host;
  }

  it('socket activation is looked up through systemctl list-sockets when systemd (PID 1) holds the port', async () => {
    const a = await listen('127.0.0.1');
    const { calls, runner } = recorder(({ args }) => {
      if (args[0] === 'list-sockets') return { exitCode: 0, stdout: `127.0.0.1:${a.port}  probe.socket  probe.service\n` };
      if (args[0] === 'show' && args[2] === 'MainPID') return { exitCode: 0, stdout: '0\n' };
      return { exitCode: 1 };
    });
    const host = asPid1(new Host({ runner }), 'systemd', '0::/init.scope\n');
    const o = live(await portFreeProvider.observe(host, spec([a.port])));
    expect(o.busy[0]!.holders.map((h) => [h.pid, h.comm, h.placement?.unit])).toEqual([[1, 'systemd', 'init.scope']]);
    expect(o.busy[0]!.activation).toEqual({ socket: 'probe.socket', service: 'probe.service', servicePid: null, source: 'systemctl list-sockets' });
    // Reads only: the socket lookup, the service's MainPID, then what depends on the socket and the service.
    const reverse = '-p WantedBy -p RequiredBy -p UpheldBy -p BoundBy -p PartOf -p TriggeredBy -p ConsistsOf';
    expect(calls.map((c) => c.args.join(' '))).toEqual([
      '--show-types --full --no-legend --no-pager'.replace(/^/, 'list-sockets '),
      'show -p MainPID --value probe.service',
      `show ${reverse} probe.socket`,
      `show ${reverse} probe.service`,
    ]);
  });

  it('a PID 1 that is not systemd (a container init) is never taken for socket activation', async () => {
    const a = await listen('127.0.0.1');
    const { calls, runner } = recorder();
    const host = asPid1(new Host({ runner }), 'tini', '0::/\n');
    const s = spec([a.port]);
    const o = live(await portFreeProvider.observe(host, s));
    expect(o.busy[0]!.activation).toBeNull();
    const [c] = portFreeProvider.diff(s, o, { live: true });
    expect(c!.action).toBe('operator');
    expect(c!.operator).toBe('PID 1 (tini) holds the socket and is not systemd, so no unit can be stopped for it');
    expect(calls).toEqual([]);
  });
});
