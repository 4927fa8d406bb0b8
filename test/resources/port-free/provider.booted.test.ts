// PortFree on a booted Debian 12 (systemd as PID 1 in a container with a
// private network, test/helpers/nspawn.ts): setups an admin writes, applied
// with the bundle, then the same root file system booted again. Every
// expectation is systemd's own word inside the container (`ss`,
// `systemctl is-enabled/is-active`) or the bytes on disk, never our output.
//
// - api.service: the admin's unit file in /etc/systemd/system, wanted by an
//   enabled stack.target: only a mask keeps it down, and `systemctl mask`
//   refuses ("File ... already exists").
// - watch.service, started by watch.path whose PathExists=/etc/passwd always
//   holds: stopped before its trigger, it is back at once.
// - tick.service, started by tick.timer (OnUnitInactiveSec=1s).
// - ctl.service, enabled, also triggered by ctl.socket (a unix socket).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { boot, freshRootfs, listeningOn, nspawnAvailable, waitListening, type Booted } from '../../helpers/nspawn.js';
import { lsbInitScript } from '../../helpers/sysv-script.js';

const DIST = path.resolve('dist');
const ETC = 'etc/systemd/system';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const API = `[Unit]
Description=Admin's own API server

[Service]
ExecStart=/usr/bin/python3 -m http.server 6443
Restart=always
RestartSec=1
`;
const STACK = `[Unit]
Description=Admin's stack
Wants=api.service

[Install]
WantedBy=multi-user.target
`;
const listener = (port: number) => `[Service]\nExecStart=/usr/bin/python3 -m http.server ${port}\n`;
const PLANT: Record<string, string | { link: string }> = {
  [`${ETC}/api.service`]: API,
  [`${ETC}/stack.target`]: STACK,
  [`${ETC}/multi-user.target.wants/stack.target`]: { link: '/etc/systemd/system/stack.target' },
  [`${ETC}/watch.service`]: listener(10250),
  [`${ETC}/watch.path`]: '[Path]\nPathExists=/etc/passwd\n\n[Install]\nWantedBy=paths.target\n',
  [`${ETC}/paths.target.wants/watch.path`]: { link: '/etc/systemd/system/watch.path' },
  [`${ETC}/tick.service`]: listener(10257),
  [`${ETC}/tick.timer`]: '[Timer]\nOnBootSec=1s\nOnUnitInactiveSec=1s\nAccuracySec=100ms\n\n[Install]\nWantedBy=timers.target\n',
  [`${ETC}/timers.target.wants/tick.timer`]: { link: '/etc/systemd/system/tick.timer' },
  [`${ETC}/ctl.service`]: `${listener(10259)}\n[Install]\nWantedBy=multi-user.target\n`,
  [`${ETC}/multi-user.target.wants/ctl.service`]: { link: '/etc/systemd/system/ctl.service' },
  [`${ETC}/ctl.socket`]: '[Socket]\nListenStream=/run/ctl.sock\n\n[Install]\nWantedBy=sockets.target\n',
  [`${ETC}/sockets.target.wants/ctl.socket`]: { link: '/etc/systemd/system/ctl.socket' },
  'root/ds.yaml':
    'reports_dir: /root/ks/preflight\nresources:\n  - type: PortFree\n    ports: [6443, 10250, 10257, 10259]\n    mask: auto\n    timeout_seconds: 20\n',
};
const PORTS = [6443, 10250, 10257, 10259];

function plant(root: string): void {
  for (const [rel, v] of Object.entries(PLANT)) {
    const p = path.join(root, rel);
    mkdirSync(path.dirname(p), { recursive: true });
    if (typeof v === 'string') writeFileSync(p, v);
    else symlinkSync(v.link, p);
  }
}

const skip = nspawnAvailable();
if (skip !== null) throw new Error(`port-free-boot needs a booted container: ${skip}`);

const listening = (h: Booted) => listeningOn(h, PORTS);
const state = async (h: Booted, verb: string, unit: string) => (await h.run(['systemctl', verb, unit])).stdout.trim();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits until every wanted port listens (the setups start on their own at boot), or the time is up. */
const settle = (h: Booted, want: number[], ms?: number) => waitListening(h, PORTS, want, ms);

describe('PortFree on a booted host: admin units in /etc, and units started by their triggers', () => {
  let root = '';
  let h: Booted;
  const seen: Record<string, unknown> = {};
  const originalApi = Buffer.from(API);

  beforeAll(async () => {
    if (!existsSync(path.join(DIST, 'reconcile.mjs'))) throw new Error('run npm run -s bundle first');
    root = freshRootfs();
    plant(root);
    h = await boot(root, { [DIST]: '/opt/khr' });
    seen.before = await settle(h, PORTS);
    seen.plan = await h.run(['node', '/opt/khr/reconcile.mjs', '--plan', '-f', '/root/ds.yaml'], { timeoutMs: 120_000 });
    const apply = await h.run(['node', '/opt/khr/reconcile.mjs', '--apply', '-f', '/root/ds.yaml'], { timeoutMs: 180_000 });
    seen.apply = apply;
    // Something that knocks on the trigger's door once the stop is done.
    await h.run(['python3', '-c', 'import socket\ntry:\n s=socket.socket(socket.AF_UNIX); s.connect("/run/ctl.sock")\nexcept OSError: pass']);
    await sleep(2500); // past the timer's OnUnitInactiveSec= and the API's RestartSec=
    seen.afterApply = await listening(h);
    seen.enabled = Object.fromEntries(
      await Promise.all(
        ['api.service', 'watch.path', 'watch.service', 'tick.timer', 'tick.service', 'ctl.socket', 'ctl.service'].map(async (u) => [
          u,
          await state(h, 'is-enabled', u),
        ]),
      ),
    );
    seen.apiEntry = lstatSync(path.join(root, ETC, 'api.service')).isSymbolicLink()
      ? readFileSync(path.join(root, ETC, 'api.service'), { encoding: null }).length
      : 'file';
    const aside = path.join(root, 'var/lib/k8s-host-reconcile/set-aside/etc/systemd/system/api.service');
    seen.aside = existsSync(aside) ? sha(readFileSync(aside)) : null;
    await h.poweroff();
    h = await boot(root, { [DIST]: '/opt/khr' });
    await sleep(4000); // the timer fires at OnBootSec=1s, the path at once, the target's wants at boot
    seen.afterReboot = await listening(h);
    seen.planAfterReboot = (await h.run(['node', '/opt/khr/reconcile.mjs', '--plan', '-f', '/root/ds.yaml'], { timeoutMs: 120_000 })).exitCode;
    seen.rollback = await h.run(['node', '/opt/khr/reconcile.mjs', '--rollback', '-f', '/root/ds.yaml'], { timeoutMs: 120_000 });
    seen.afterRollback = await settle(h, PORTS);
    seen.apiAfterRollback = state(h, 'is-enabled', 'api.service');
  }, 600_000);

  afterAll(async () => {
    await h?.poweroff().catch(() => undefined);
    if (root) rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it('the planted setups hold their ports at boot', () => {
    expect(seen.before).toEqual(PORTS);
  });

  it('the plan says where the admin file goes, and that the triggers go first', () => {
    const out = (seen.plan as { stdout: string }).stdout.split('\n');
    const line = (port: number) => out.find((l) => l.includes(`port ${port} `)) ?? '';
    expect(line(6443)).toContain('/etc/systemd/system/api.service is moved to /var/lib/k8s-host-reconcile/set-aside/etc/systemd/system/api.service');
    expect(line(10250)).toContain('watch.path triggers watch.service, so it goes first');
    expect(line(10257)).toContain('tick.timer triggers tick.service, so it goes first');
    expect(line(10259)).toContain('ctl.socket triggers ctl.service, so it goes first');
  });

  it('apply exits 0 and every port stays free, a unix-socket knock and the timer notwithstanding', () => {
    const a = seen.apply as { exitCode: number; stdout: string; stderr: string };
    expect(a.exitCode, `${a.stdout}\n${a.stderr}`).toBe(0);
    expect(seen.afterApply).toEqual([]);
  });

  it('the admin unit in /etc is masked (systemd says so) and its file is kept outside the search path', () => {
    const e = seen.enabled as Record<string, string>;
    expect(e['api.service']).toBe('masked');
    expect(seen.apiEntry).toBe(0); // the entry reads as /dev/null
    expect(seen.aside).toBe(sha(originalApi));
  });

  it('the triggers are disabled, so nothing starts their units at boot', () => {
    const e = seen.enabled as Record<string, string>;
    for (const u of ['watch.path', 'tick.timer', 'ctl.socket', 'ctl.service']) expect(['disabled', 'masked'], u).toContain(e[u]);
  });

  it('after the reboot every port is still free, and a plan finds nothing to do', () => {
    expect(seen.afterReboot).toEqual([]);
    expect(seen.planAfterReboot).toBe(0);
  });

  it('--rollback puts the admin file back byte for byte with its mode, and the units listen again', async () => {
    const r = seen.rollback as { exitCode: number; stdout: string; stderr: string };
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const p = path.join(root, ETC, 'api.service');
    expect(lstatSync(p).isFile()).toBe(true);
    expect(sha(readFileSync(p))).toBe(sha(originalApi));
    expect(lstatSync(p).mode & 0o7777).toBe(0o644);
    expect(await seen.apiAfterRollback).toBe('static');
    expect(seen.afterRollback).toEqual(PORTS);
  });
});

// A lingering user's service on a minimal server: dbus and libpam-systemd
// (logind, linger) but no dbus-user-session, so `systemctl --user -M alice@`
// has no bus to reach. Her unit file is in ~/.config/systemd/user, where
// the mask link must go, and her dev-stack.target wants it.
const ALICE_API = `[Unit]
Description=Alice's API test server

[Service]
ExecStart=/usr/bin/python3 -m http.server 6443
Restart=always
RestartSec=1

[Install]
WantedBy=default.target
`;
const CONF = 'home/alice/.config/systemd/user';

function plantAlice(root: string): void {
  const add = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text, { flag: 'a' });
  };
  add('etc/passwd', 'alice:x:1000:1000:Alice:/home/alice:/bin/bash\n');
  add('etc/shadow', 'alice:!:19000:0:99999:7:::\n');
  add('etc/group', 'alice:x:1000:\n');
  add('var/lib/systemd/linger/alice', '');
  add(`${CONF}/api-server.service`, ALICE_API);
  add(`${CONF}/dev-stack.target`, "[Unit]\nDescription=Alice's stack\nWants=api-server.service\n\n[Install]\nWantedBy=default.target\n");
  mkdirSync(path.join(root, CONF, 'default.target.wants'), { recursive: true });
  symlinkSync('/home/alice/.config/systemd/user/api-server.service', path.join(root, CONF, 'default.target.wants/api-server.service'));
  symlinkSync('/home/alice/.config/systemd/user/dev-stack.target', path.join(root, CONF, 'default.target.wants/dev-stack.target'));
  spawnSync('chown', ['-R', '1000:1000', path.join(root, 'home/alice')]);
  add('root/ds.yaml', 'reports_dir: /root/ks/preflight\nresources:\n  - type: PortFree\n    ports: [6443]\n    mask: auto\n    timeout_seconds: 20\n');
}

describe("PortFree on a booted host: a lingering user's service without a user D-Bus", () => {
  let root = '';
  let h: Booted;
  const seen: Record<string, unknown> = {};
  const asAlice = ['setpriv', '--reuid=1000', '--regid=1000', '--init-groups', 'env', '-i', 'XDG_RUNTIME_DIR=/run/user/1000', 'systemctl', '--user'];

  beforeAll(async () => {
    root = freshRootfs();
    plantAlice(root);
    h = await boot(root, { [DIST]: '/opt/khr' });
    seen.before = await settle(h, [6443]);
    seen.busRoute = await h.run(['systemctl', '--user', '-M', 'alice@', 'is-active', 'api-server.service']);
    seen.apply = await h.run(['node', '/opt/khr/reconcile.mjs', '--apply', '-f', '/root/ds.yaml'], { timeoutMs: 180_000 });
    await sleep(2000); // past RestartSec=
    seen.afterApply = await listening(h);
    seen.enabled = (await h.run([...asAlice, 'is-enabled', 'api-server.service'])).stdout.trim();
    await h.poweroff();
    h = await boot(root, { [DIST]: '/opt/khr' });
    await settle(h, [6443], 4000);
    seen.manager = await state(h, 'is-active', 'user@1000.service');
    seen.afterReboot = await listening(h);
    seen.rollback = await h.run(['node', '/opt/khr/reconcile.mjs', '--rollback', '-f', '/root/ds.yaml'], { timeoutMs: 120_000 });
    seen.afterRollback = await settle(h, [6443]);
    seen.enabledAfterRollback = (await h.run([...asAlice, 'is-enabled', 'api-server.service'])).stdout.trim();
  }, 600_000);

  afterAll(async () => {
    await h?.poweroff().catch(() => undefined);
    if (root) rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it('the premise: her service holds 6443 at boot, and systemctl --user -M alice@ cannot reach her manager', () => {
    expect(seen.before).toEqual([6443]);
    const b = seen.busRoute as { exitCode: number; stderr: string };
    expect(b.exitCode).not.toBe(0);
    expect(b.stderr).toContain('Transport endpoint is not connected');
  });

  it('apply exits 0; the port stays free; her manager says the unit is masked', () => {
    const a = seen.apply as { exitCode: number; stdout: string; stderr: string };
    expect(a.exitCode, `${a.stdout}\n${a.stderr}`).toBe(0);
    expect(seen.afterApply).toEqual([]);
    expect(seen.enabled).toBe('masked');
  });

  it('after the reboot her manager runs again (linger) and 6443 is still free', () => {
    expect(seen.manager).toBe('active');
    expect(seen.afterReboot).toEqual([]);
  });

  it('--rollback takes the same route: her unit file is back byte for byte and listens again', () => {
    const r = seen.rollback as { exitCode: number; stdout: string; stderr: string };
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const p = path.join(root, CONF, 'api-server.service');
    expect(lstatSync(p).isFile()).toBe(true);
    expect(sha(readFileSync(p))).toBe(sha(Buffer.from(ALICE_API)));
    expect(lstatSync(p).uid).toBe(1000);
    expect(seen.enabledAfterRollback).toBe('enabled');
    expect(seen.afterRollback).toEqual([6443]);
  });
});

// An old daemon started by its SysV init script, linked into /etc/rc?.d by
// Debian's own update-rc.d: systemd-sysv-generator runs it in
// legacy-api.service (Type=forking, GuessMainPID=no, so MainPID=0).
const INIT = lsbInitScript(
  'legacy-api',
  'Legacy API server',
  `PIDFILE=/run/legacy-api.pid
case "$1" in
  start) start-stop-daemon --start --background --make-pidfile --pidfile $PIDFILE --exec /usr/bin/python3 -- -m http.server 10250 ;;
  stop) start-stop-daemon --stop --pidfile $PIDFILE --remove-pidfile --retry 5 ;;
  restart) $0 stop; $0 start ;;
  *) echo "Usage: $0 {start|stop|restart}"; exit 2 ;;
esac
`,
);

/** Every /etc/rc?.d link to the script, as "rc2.d/S01legacy-api". */
function rcLinks(root: string): string[] {
  const out: string[] = [];
  for (const l of ['0', '1', '2', '3', '4', '5', '6', 'S']) {
    const d = path.join(root, 'etc', `rc${l}.d`);
    if (!existsSync(d)) continue;
    for (const n of readdirSync(d)) if (n.endsWith('legacy-api')) out.push(`rc${l}.d/${n}`);
  }
  return out.sort();
}

describe('PortFree on a booted host: a daemon started by a SysV init script', () => {
  let root = '';
  let h: Booted;
  const seen: Record<string, unknown> = {};

  beforeAll(async () => {
    root = freshRootfs();
    writeFileSync(path.join(root, 'etc/init.d/legacy-api'), INIT, { mode: 0o755 });
    const u = spawnSync('chroot', [root, 'update-rc.d', 'legacy-api', 'defaults'], { encoding: 'utf8' });
    if (u.status !== 0) throw new Error(`update-rc.d: ${u.stderr}`);
    writeFileSync(
      path.join(root, 'root/ds.yaml'),
      'reports_dir: /root/ks/preflight\nresources:\n  - type: PortFree\n    ports: [10250]\n    mask: auto\n    timeout_seconds: 20\n',
    );
    seen.linksBefore = rcLinks(root);
    h = await boot(root, { [DIST]: '/opt/khr' });
    seen.before = await settle(h, [10250]);
    seen.unit = (await h.run(['systemctl', 'show', '-p', 'MainPID', '-p', 'SourcePath', 'legacy-api.service'])).stdout;
    seen.plan = await h.run(['node', '/opt/khr/reconcile.mjs', '--plan', '-f', '/root/ds.yaml'], { timeoutMs: 120_000 });
    seen.apply = await h.run(['node', '/opt/khr/reconcile.mjs', '--apply', '-f', '/root/ds.yaml'], { timeoutMs: 180_000 });
    seen.afterApply = await listening(h);
    seen.linksAfter = rcLinks(root);
    seen.enabled = await state(h, 'is-enabled', 'legacy-api.service');
    await h.poweroff();
    h = await boot(root, { [DIST]: '/opt/khr' });
    await sleep(2000);
    seen.afterReboot = await listening(h);
    seen.planAfterReboot = (await h.run(['node', '/opt/khr/reconcile.mjs', '--plan', '-f', '/root/ds.yaml'], { timeoutMs: 120_000 })).exitCode;
    seen.rollback = await h.run(['node', '/opt/khr/reconcile.mjs', '--rollback', '-f', '/root/ds.yaml'], { timeoutMs: 120_000 });
    seen.afterRollback = await settle(h, [10250]);
    seen.linksAfterRollback = rcLinks(root);
  }, 600_000);

  afterAll(async () => {
    await h?.poweroff().catch(() => undefined);
    if (root) rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it('the premise: the script holds 10250 from the generated unit, which has no main PID', () => {
    expect(seen.before).toEqual([10250]);
    expect(seen.unit).toContain('MainPID=0');
    expect(seen.unit).toContain('SourcePath=/etc/init.d/legacy-api');
    expect((seen.linksBefore as string[]).filter((l) => /\/S\d\d/.test(l))).toEqual([
      'rc2.d/S01legacy-api',
      'rc3.d/S01legacy-api',
      'rc4.d/S01legacy-api',
      'rc5.d/S01legacy-api',
    ]);
  });

  it('the plan names the script and stops its unit', () => {
    const p = seen.plan as { exitCode: number; stdout: string };
    expect(p.exitCode).toBe(2);
    const line = p.stdout.split('\n').find((l) => l.includes('port 10250')) ?? '';
    expect(line).toContain('/etc/init.d/legacy-api');
    expect(line).toContain('stop and disable legacy-api.service');
  });

  it('apply exits 0, the port is free, and the rc?.d links are what update-rc.d disable leaves: every S link a K link', () => {
    const a = seen.apply as { exitCode: number; stdout: string; stderr: string };
    expect(a.exitCode, `${a.stdout}\n${a.stderr}`).toBe(0);
    expect(seen.afterApply).toEqual([]);
    const expected = (seen.linksBefore as string[]).map((l) => l.replace(/\/S(\d\d)/, '/K$1')).sort();
    expect(seen.linksAfter).toEqual([...new Set(expected)].sort());
    expect(seen.enabled).toBe('disabled');
  });

  it('after the reboot 10250 is still free and a plan finds nothing to do', () => {
    expect(seen.afterReboot).toEqual([]);
    expect(seen.planAfterReboot).toBe(0);
  });

  it('--rollback puts the S links back and the script runs again', () => {
    const r = seen.rollback as { exitCode: number; stdout: string; stderr: string };
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(seen.linksAfterRollback).toEqual(seen.linksBefore);
    expect(seen.afterRollback).toEqual([10250]);
  });
});
