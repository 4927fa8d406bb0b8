// A wanted port that is free when the live plan looks, on a booted Debian 12
// (test/helpers/nspawn.ts), while something starts a unit that takes it:
//
// - late.service (ExecStart= names 6443), started by late.timer, which has not
//   fired yet (OnBootSec=75s): the boot farm's seed 475 under load;
// - paused.service (10250), enabled, stopped by an admin for now;
// - cp.socket (ListenStream=10259), enabled, stopped by an admin for now;
// - ep@2380.socket, an instance of a template whose ListenStream=%i, enabled,
//   stopped by an admin for now;
// - client.service, enabled and running, names 10257 in Environment= but binds
//   nothing; the desired state lists it in protected_units.
//
// The expectations are systemd's own doing, read with `ss` inside: the timer
// fires and 6443 listens; after a reboot 2380, 10250 and 10259 listen and 10257
// stays free. The plan must not have promised any of the three ports it
// loses, and must name each unit and line; it must keep 10257's promise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { boot, freshRootfs, listeningOn, nspawnAvailable, waitListening, type Booted } from '../../helpers/nspawn.js';

const DIST = path.resolve('dist');
const ETC = 'etc/systemd/system';
const PORTS = [2380, 6443, 10250, 10257, 10259];

const LATE = '[Unit]\nDescription=Starts late\n\n[Service]\nExecStart=/usr/bin/python3 -m http.server 6443\n';
const PAUSED = '[Service]\nExecStart=/usr/bin/python3 -m http.server 10250\n\n[Install]\nWantedBy=multi-user.target\n';
const CP_SOCKET = '[Socket]\nListenStream=10259\n\n[Install]\nWantedBy=sockets.target\n';
const EP_SOCKET = '[Unit]\nDescription=etcd peer proxy %i\n\n[Socket]\nListenStream=%i\n\n[Install]\nWantedBy=sockets.target\n';
const CLIENT = '[Service]\nEnvironment=APISERVER=https://127.0.0.1:10257\nExecStart=/usr/bin/sleep infinity\n\n[Install]\nWantedBy=multi-user.target\n';
const PLANT: Record<string, string | { link: string }> = {
  [`${ETC}/late.service`]: LATE,
  [`${ETC}/late.timer`]: '[Timer]\nOnBootSec=75s\nAccuracySec=1s\n\n[Install]\nWantedBy=timers.target\n',
  [`${ETC}/timers.target.wants/late.timer`]: { link: '/etc/systemd/system/late.timer' },
  [`${ETC}/paused.service`]: PAUSED,
  [`${ETC}/multi-user.target.wants/paused.service`]: { link: '/etc/systemd/system/paused.service' },
  [`${ETC}/cp.socket`]: CP_SOCKET,
  [`${ETC}/cp.service`]: '[Service]\nExecStart=/usr/bin/sleep infinity\n',
  [`${ETC}/sockets.target.wants/cp.socket`]: { link: '/etc/systemd/system/cp.socket' },
  [`${ETC}/ep@.socket`]: EP_SOCKET,
  [`${ETC}/ep@.service`]: '[Service]\nExecStart=/usr/bin/sleep infinity\n',
  [`${ETC}/sockets.target.wants/ep@2380.socket`]: { link: '/etc/systemd/system/ep@.socket' },
  [`${ETC}/client.service`]: CLIENT,
  [`${ETC}/multi-user.target.wants/client.service`]: { link: '/etc/systemd/system/client.service' },
  'root/ds.yaml': `reports_dir: /root/ks/preflight\nresources:\n  - type: PortFree\n    ports: [${PORTS.join(', ')}]\n    protected_units: [client.service]\n`,
  'root/ds-unprotected.yaml': `reports_dir: /root/ks/preflight\nresources:\n  - type: PortFree\n    ports: [${PORTS.join(', ')}]\n`,
};

/** 1-based line of the first line of `text` that starts with `prefix`: where systemd reads the directive. */
const lineOf = (text: string, prefix: string) => text.split('\n').findIndex((l) => l.startsWith(prefix)) + 1;

const skip = nspawnAvailable();
if (skip !== null) throw new Error(`port-free.boot-starters needs a booted container: ${skip}`);

const listening = (h: Booted) => listeningOn(h, PORTS);
const state = async (h: Booted, verb: string, unit: string) => (await h.run(['systemctl', verb, unit])).stdout.trim();
const until = (h: Booted, want: number[], ms: number) => waitListening(h, PORTS, want, ms);

interface PlanDoc {
  promises: Array<{ id: string; after_apply: boolean; at_boot: boolean; withdrawn_by: Array<{ by: string; from: string; line: string }> }>;
}

describe('PortFree on a booted host: a free port that a timer, an enabled service or an enabled socket takes later', () => {
  let root = '';
  let h: Booted | undefined;
  const seen: Record<string, unknown> = {};

  beforeAll(async () => {
    if (!existsSync(path.join(DIST, 'reconcile.mjs'))) throw new Error('run npm run -s bundle first');
    root = freshRootfs();
    for (const [rel, v] of Object.entries(PLANT)) {
      const p = path.join(root, rel);
      mkdirSync(path.dirname(p), { recursive: true });
      if (typeof v === 'string') writeFileSync(p, v);
      else symlinkSync(v.link, p);
    }
    h = await boot(root, { [DIST]: '/opt/khr' });
    // The admin's "for now".
    await h.run(['systemctl', 'stop', 'paused.service', 'cp.socket', 'ep@2380.socket']);
    seen.before = await listening(h);
    seen.lateBefore = await state(h, 'is-active', 'late.service');
    seen.plan = await h.run(['node', '/opt/khr/reconcile.mjs', '--plan', '--json', '-f', '/root/ds.yaml'], { timeoutMs: 120_000 });
    seen.lateAfterPlan = await state(h, 'is-active', 'late.service');
    seen.unprotected = await h.run(['node', '/opt/khr/reconcile.mjs', '--plan', '--json', '-f', '/root/ds-unprotected.yaml'], { timeoutMs: 120_000 });
    // A drop-in nobody can read as a file (a fifo an admin left): the graph is not whole, so no free port is promised for the boot.
    await h.run(['sh', '-c', 'mkdir -p /etc/systemd/system/client.service.d && mkfifo /etc/systemd/system/client.service.d/port.conf']);
    seen.fifo = await h.run(['node', '/opt/khr/reconcile.mjs', '--plan', '--json', '-f', '/root/ds.yaml'], { timeoutMs: 120_000 });
    await h.run(['rm', '/etc/systemd/system/client.service.d/port.conf']);
    seen.timerFired = await until(h, [6443], 120_000);
    await h.poweroff();
    h = await boot(root, { [DIST]: '/opt/khr' });
    seen.afterReboot = await until(h, [2380, 10250, 10259], 30_000);
  }, 600_000);

  afterAll(async () => {
    await h?.poweroff().catch(() => undefined);
    if (root) rmSync(root, { recursive: true, force: true });
  }, 60_000);

  const plan = () => {
    const r = seen.plan as { exitCode: number; stdout: string; stderr: string };
    return { r, doc: JSON.parse(r.stdout) as PlanDoc };
  };
  const promise = (port: number) => plan().doc.promises.find((p) => p.id === `port:${port}`)!;

  it('the premise: when the plan looks, every port is free and the timer has not fired', () => {
    expect(seen.before).toEqual([]);
    expect([seen.lateBefore, seen.lateAfterPlan]).toEqual(['inactive', 'inactive']);
  });

  it('what systemd does: the timer takes 6443; after the reboot the enabled service and sockets take 2380, 10250 and 10259, 10257 stays free', () => {
    expect(seen.timerFired).toContain(6443);
    expect(seen.afterReboot).toEqual([2380, 10250, 10259]);
  });

  it('--plan exits 2 and takes back each port something takes later: 6443 from apply on (a timer), 10250 and 10259 from the next boot', () => {
    const { r } = plan();
    expect(r.exitCode, r.stderr).toBe(2);
    expect([promise(6443).after_apply, promise(6443).at_boot]).toEqual([false, false]);
    expect([promise(10250).after_apply, promise(10250).at_boot]).toEqual([true, false]);
    expect([promise(10259).after_apply, promise(10259).at_boot]).toEqual([true, false]);
    expect([promise(2380).after_apply, promise(2380).at_boot]).toEqual([true, false]);
  });

  it('each takes-back line is an unknown naming the unit and the file and line that names the port', () => {
    const by = (port: number) => promise(port).withdrawn_by.map((w) => [w.by, w.from, w.line]);
    expect(by(6443)).toEqual([
      ['unknown', 'apply', expect.stringContaining(`late.service may listen on it (ExecStart= at /${ETC}/late.service:${lineOf(LATE, 'ExecStart=')}`)],
    ]);
    expect(by(6443)[0]![2]).toContain('late.timer');
    expect(by(10250)).toEqual([
      ['unknown', 'boot', expect.stringContaining(`paused.service may listen on it (ExecStart= at /${ETC}/paused.service:${lineOf(PAUSED, 'ExecStart=')}`)],
    ]);
    expect(by(10259)).toEqual([
      ['unknown', 'boot', expect.stringContaining(`cp.socket would listen on it (ListenStream= at /${ETC}/cp.socket:${lineOf(CP_SOCKET, 'ListenStream=')}`)],
    ]);
    // The template's line, read with the instance's name: %i is 2380.
    expect(by(2380)).toEqual([
      [
        'unknown',
        'boot',
        expect.stringContaining(`ep@2380.socket would listen on it (ListenStream= at /${ETC}/ep@.socket:${lineOf(EP_SOCKET, 'ListenStream=')}: %i)`),
      ],
    ]);
  });

  it('unprotected, the client that names 10257 is a candidate: an unknown for the next boot, which protected_units clears', () => {
    const doc = JSON.parse((seen.unprotected as { stdout: string }).stdout) as PlanDoc;
    const p = doc.promises.find((x) => x.id === 'port:10257')!;
    expect(p.withdrawn_by.map((w) => [w.by, w.from, w.line])).toEqual([
      ['unknown', 'boot', expect.stringContaining(`client.service may listen on it (Environment= at /${ETC}/client.service:${lineOf(CLIENT, 'Environment=')}`)],
    ]);
    expect(p.withdrawn_by[0]!.line).toContain('or list it in protected_units if it does not');
  });

  it('no false alarm: the protected client that only names 10257 leaves its promise standing, and systemd agrees', () => {
    expect(promise(10257)).toMatchObject({ after_apply: true, at_boot: true, withdrawn_by: [] });
    expect(plan().r.stdout).not.toContain('client.service');
    expect(seen.afterReboot).not.toContain(10257);
  });

  it('a fifo where a drop-in goes: the graph is not read whole, so 10257 (free, protected client) loses its boot promise, naming the file', () => {
    const r = seen.fifo as { exitCode: number; stdout: string; stderr: string };
    expect(r.exitCode, r.stderr).toBe(2);
    const p = (JSON.parse(r.stdout) as PlanDoc).promises.find((x) => x.id === 'port:10257')!;
    expect([p.after_apply, p.at_boot]).toEqual([true, false]);
    expect(p.withdrawn_by).toEqual([
      expect.objectContaining({ by: 'unknown', from: 'boot', line: expect.stringContaining(`/${ETC}/client.service.d/port.conf`) }),
    ]);
  });
});
