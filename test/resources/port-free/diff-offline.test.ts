// PortFree on an unbooted image (--root): no sockets exist, so it finds the
// units that would take a wanted port at boot and disables them in the tree.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyContext } from '../../helpers/door.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host, type CommandRunner } from '../../../src/host.js';
import type { PortFreeSpec } from '../../../src/resources/port-free/spec.js';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';
import type { OfflinePortsObserved, PortFreeObserved } from '../../../src/ports/observed.js';

let root: string;
const commands: string[] = [];
const refuse: CommandRunner = async (cmd, args) => {
  commands.push([cmd, ...args].join(' '));
  throw new Error(`offline PortFree ran ${cmd}`);
};

async function put(p: string, text: string): Promise<void> {
  await fs.mkdir(path.dirname(path.join(root, p)), { recursive: true });
  await fs.writeFile(path.join(root, p), text);
}

async function link(target: string, at: string): Promise<void> {
  await fs.mkdir(path.dirname(path.join(root, at)), { recursive: true });
  await fs.symlink(target, path.join(root, at));
}

async function isLink(at: string): Promise<boolean> {
  try {
    return (await fs.lstat(path.join(root, at))).isSymbolicLink();
  } catch {
    return false;
  }
}

const LIB = '/usr/lib/systemd/system';
const ETC = '/etc/systemd/system';

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'portfree-offline-'));
  commands.length = 0;
  // The monitoring agent, socket-activated on 10250 and enabled.
  await put(`${LIB}/agent.socket`, '[Unit]\nDescription=Agent socket\n\n[Socket]\nListenStream=10250\n\n[Install]\nWantedBy=sockets.target\n');
  await put(`${LIB}/agent.service`, '[Unit]\nDescription=Agent\n\n[Service]\nExecStart=/usr/bin/agent\nRestart=always\n');
  await link(`${LIB}/agent.socket`, `${ETC}/sockets.target.wants/agent.socket`);
  // A second agent that binds 10250 itself: only a candidate.
  await put(
    `${LIB}/node-monitor.service`,
    '[Service]\nEnvironment=LOG=info\nExecStart=/usr/bin/node-monitor --port 10250 --verbose\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n',
  );
  await link(`${LIB}/node-monitor.service`, `${ETC}/multi-user.target.wants/node-monitor.service`);
  // Not enabled: cannot start at boot, so no change.
  await put(`${LIB}/idle.service`, '[Service]\nExecStart=/usr/bin/idle --listen [::]:6443\n');
  // Enabled, but on a port nobody wants.
  await put(`${LIB}/web.socket`, '[Socket]\nListenStream=0.0.0.0:8080\n[Install]\nWantedBy=sockets.target\n');
  await link(`${LIB}/web.socket`, `${ETC}/sockets.target.wants/web.socket`);
  // Enabled IPv6 socket on 10259, overridden by a drop-in to another port.
  await put(`${LIB}/sched.socket`, '[Socket]\nListenStream=[::]:10259\n[Install]\nWantedBy=sockets.target\n');
  await put(`${ETC}/sched.socket.d/override.conf`, '[Socket]\nListenStream=\nListenStream=[::]:19259\n');
  await link(`${LIB}/sched.socket`, `${ETC}/sockets.target.wants/sched.socket`);
});

afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

function spec(extra: Partial<PortFreeSpec> = {}): PortFreeSpec {
  return {
    type: 'PortFree',
    ports: [2379, 2380, 6443, 10250, 10257, 10259],
    protected_units: [],
    stop_spawner_units: [],
    mask: false,
    timeout_seconds: 30,
    disable_units: [],
    ...extra,
  };
}

function host(): Host {
  return new Host({ root, runner: refuse });
}

function offline(o: PortFreeObserved): OfflinePortsObserved {
  if (o.mode !== 'offline') throw new Error('expected an offline observation');
  return o;
}

describe('PortFree offline (--root)', () => {
  it('plans: disable the enabled socket on 10250, flag the service that names 10250; ignore disabled, other-port and overridden units', async () => {
    const h = host();
    expect(h.live).toBe(false);
    const s = spec();
    const o = offline(await portFreeProvider.observe(h, s));
    expect(o.sockets.map((x) => [x.socket.name, x.ports, x.enablement.links])).toEqual([
      ['agent.socket', [10250], [`${ETC}/sockets.target.wants/agent.socket`]],
    ]);
    const changes = portFreeProvider.diff(s, o, { live: false });
    expect(changes.map((c) => [c.id, c.action])).toEqual([
      ['disable-agent.socket', 'disable'],
      ['candidate-node-monitor.service', 'operator'],
    ]);
    expect(changes[0]!.summary).toContain(`ListenStream=10250 (${LIB}/agent.socket:5)`);
    expect(changes[0]!.runtime).toBeFalsy();
    const cand = changes[1]!;
    expect(cand.summary).toContain(`ExecStart= at ${LIB}/node-monitor.service:3 mentions 10250`);
    expect(cand.operator).toMatch(/add node-monitor.service to disable_units/);
    expect(commands).toEqual([]);
  });

  it('apply removes the socket enablement link (backed up) and nothing else; the plan then only flags the candidate', async () => {
    const h = host();
    const s = spec();
    const changes = portFreeProvider.diff(s, await portFreeProvider.observe(h, s), { live: false });
    const outcome = await portFreeProvider.apply(h, s, changes, await applyContext(h, '/var/backups/reconcile/run1'));
    expect(outcome).toBeUndefined();
    expect(await isLink(`${ETC}/sockets.target.wants/agent.socket`)).toBe(false);
    expect(await isLink(`/var/backups/reconcile/run1/backup${ETC}/sockets.target.wants/agent.socket`)).toBe(true);
    expect(await isLink(`${ETC}/sockets.target.wants/web.socket`)).toBe(true);
    expect(await isLink(`${ETC}/sockets.target.wants/sched.socket`)).toBe(true);
    expect(await isLink(`${ETC}/multi-user.target.wants/node-monitor.service`)).toBe(true);
    await fs.access(path.join(root, LIB, 'agent.socket'));
    const again = portFreeProvider.diff(s, await portFreeProvider.observe(host(), s), { live: false });
    expect(again.map((c) => c.id)).toEqual(['candidate-node-monitor.service']);
    expect(commands).toEqual([]);
  });

  it('disable_units disables the candidate too, and the second plan is empty', async () => {
    const s = spec({ disable_units: ['node-monitor.service'] });
    const changes = portFreeProvider.diff(s, await portFreeProvider.observe(host(), s), { live: false });
    expect(changes.map((c) => [c.id, c.action])).toEqual([
      ['disable-agent.socket', 'disable'],
      ['disable-node-monitor.service', 'disable'],
    ]);
    const hh = host();
    await portFreeProvider.apply(hh, s, changes, await applyContext(hh));
    expect(await isLink(`${ETC}/multi-user.target.wants/node-monitor.service`)).toBe(false);
    expect(portFreeProvider.diff(s, await portFreeProvider.observe(host(), s), { live: false })).toEqual([]);
  });

  it('a built-in spawner (cron.service) in disable_units is not disabled unless stop_spawner_units names it', async () => {
    await put(`${LIB}/cron.service`, '[Service]\nExecStart=/usr/sbin/cron -f\n\n[Install]\nWantedBy=multi-user.target\n');
    await link(`${LIB}/cron.service`, `${ETC}/multi-user.target.wants/cron.service`);
    const held = spec({ disable_units: ['cron.service'] });
    const c = portFreeProvider.diff(held, await portFreeProvider.observe(host(), held), { live: false }).find((x) => x.id === 'disable-cron.service')!;
    expect(c.action).toBe('operator');
    expect(c.operator).toContain('cron.service is protected by the built-in list of spawners: it is the cron daemon');
    const released = spec({ disable_units: ['cron.service'], stop_spawner_units: ['cron.service'] });
    const changes = portFreeProvider.diff(released, await portFreeProvider.observe(host(), released), { live: false });
    expect(changes.find((x) => x.id === 'disable-cron.service')).toMatchObject({
      action: 'disable',
      op: { links: [`${ETC}/multi-user.target.wants/cron.service`] },
    });
    const hh = host();
    await portFreeProvider.apply(hh, released, changes, await applyContext(hh));
    expect(await isLink(`${ETC}/multi-user.target.wants/cron.service`)).toBe(false);
  });

  it('a candidate listed in protected_units is acknowledged, not flagged', async () => {
    const s = spec({ protected_units: ['node-monitor.service'] });
    const changes = portFreeProvider.diff(s, await portFreeProvider.observe(host(), s), { live: false });
    expect(changes.map((c) => c.id)).toEqual(['disable-agent.socket']);
  });

  it('mask: true also masks in /etc, and a socket enabled only by vendor links needs it', async () => {
    // A vendor-enabled socket: disable cannot remove /usr/lib links.
    await put(`${LIB}/etcd-proxy.socket`, '[Socket]\nListenStream=127.0.0.1:2379\n');
    await link('../etcd-proxy.socket', `${LIB}/sockets.target.wants/etcd-proxy.socket`);
    const plain = spec();
    const unmasked = portFreeProvider.diff(plain, await portFreeProvider.observe(host(), plain), { live: false });
    const vendor = unmasked.find((c) => c.id === 'disable-etcd-proxy.socket-vendor')!;
    expect(vendor.action).toBe('operator');
    expect(vendor.operator).toMatch(/vendor links .*set mask: true/);

    const s = spec({ mask: true, disable_units: ['node-monitor.service'] });
    const changes = portFreeProvider.diff(s, await portFreeProvider.observe(host(), s), { live: false });
    expect(changes.map((c) => [c.id, c.action])).toEqual([
      ['disable-agent.socket', 'disable'],
      ['mask-agent.socket', 'mask'],
      ['mask-etcd-proxy.socket', 'mask'],
      ['disable-node-monitor.service', 'disable'],
      ['mask-node-monitor.service', 'mask'],
    ]);
    const hh = host();
    await portFreeProvider.apply(hh, s, changes, await applyContext(hh));
    expect(await fs.readlink(path.join(root, ETC, 'agent.socket'))).toBe('/dev/null');
    expect(await fs.readlink(path.join(root, ETC, 'etcd-proxy.socket'))).toBe('/dev/null');
    expect(portFreeProvider.diff(s, await portFreeProvider.observe(host(), s), { live: false })).toEqual([]);
    expect(commands).toEqual([]);
  });

  it('the service a socket starts is disabled with it when it is enabled on its own', async () => {
    await put(`${LIB}/agent.service`, '[Service]\nExecStart=/usr/bin/agent\n[Install]\nWantedBy=multi-user.target\n');
    await link(`${LIB}/agent.service`, `${ETC}/multi-user.target.wants/agent.service`);
    const s = spec();
    const changes = portFreeProvider.diff(s, await portFreeProvider.observe(host(), s), { live: false });
    expect(changes.filter((c) => c.action === 'disable').map((c) => c.id)).toEqual(['disable-agent.socket', 'disable-agent.service']);
    const hh = host();
    await portFreeProvider.apply(hh, s, changes, await applyContext(hh));
    expect(await isLink(`${ETC}/multi-user.target.wants/agent.service`)).toBe(false);
  });

  it('never reads /proc offline', async () => {
    await expect(new Host({ root }).readKernel('/proc/net/tcp')).rejects.toThrow(/offline/);
    // observe succeeds without it: it is a pure unit-file read.
    await expect(portFreeProvider.observe(host(), spec())).resolves.toMatchObject({ mode: 'offline' });
  });
});
