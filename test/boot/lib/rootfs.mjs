// The farm's root file system: one mmdebstrap tarball of Debian bookworm with
// systemd as PID 1 and what the catalogue's entries run (cron, at,
// supervisor, ifupdown, openssh-server, a user bus), cached by a hash of the
// recipe like the VM suite's base (test/vm/lib/base.mjs). A run extracts it
// once (read-only lower layer); each host is an overlay on it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { buildOnce } from '../../vm/lib/util.mjs';

export const CACHE_DIR = process.env.BOOT_CACHE_DIR ?? '/var/cache/k8s-host-reconcile/boot';

export const PACKAGES = [
  'systemd-sysv', 'dbus', 'libpam-systemd', 'procps', 'iproute2', 'kmod', 'nodejs', 'python3',
  // starters and holders the catalogue uses
  'cron', 'at', 'supervisor', 'ifupdown', 'openssh-server', 'wireguard-tools',
  'openvpn', // its postinst enables only openvpn.service (ExecStart=/bin/true); openvpn-generator starts each /etc/openvpn/*.conf
  // its preinst writes an /etc/inetd.conf with every line commented out: on a stock host inetd.service serves nothing;
  // netbase's /etc/services names the services (openbsd-inetd's dependencies bring it too: named, since inetd needs it)
  'openbsd-inetd', 'netbase',
  // firewalls the acceptance entries turn on (ufw brings iptables); as installed they drop nothing
  'ufw', 'nftables',
  // a user bus for lingering users; the "minimal server" entries take it out again (dpkg -r)
  'dbus-user-session',
];

// Bump when the recipe changes in a way the arguments do not show.
const RECIPE_VERSION = 1;

function mmdebstrapArgs(target) {
  return ['--variant=apt', `--include=${PACKAGES.join(',')}`, 'bookworm', target];
}

export function rootfsKey() {
  return createHash('sha256').update(JSON.stringify({ version: RECIPE_VERSION, args: mmdebstrapArgs('TARGET') })).digest('hex').slice(0, 16);
}

export function rootfsTar() {
  return path.join(CACHE_DIR, `rootfs-${rootfsKey()}.tar`);
}

/** The cached tarball, built first when absent (a cold cache takes minutes; another process's build is waited for). Never blocks the event loop: a VM suite run keeps reading its consoles meanwhile. */
export async function ensureRootfsTar(say = (m) => process.stderr.write(`boot: ${m}\n`)) {
  const tar = rootfsTar();
  if (fs.existsSync(tar)) return tar;
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  return buildOnce(tar, async () => {
    const partial = `${tar}.partial-${process.pid}.tar`;
    say(`building ${tar} with mmdebstrap (cold cache)`);
    const t0 = Date.now();
    try {
      await run('mmdebstrap', mmdebstrapArgs(partial), 30 * 60_000);
      fs.renameSync(partial, tar);
    } finally {
      fs.rmSync(partial, { force: true });
    }
    say(`rootfs built in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }, say);
}

function run(cmd, args, timeout) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 2, 2] });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${cmd} failed (exit ${code}${signal ? `, ${signal}` : ''})`));
    });
  });
}

/**
 * The extracted root file system, kept next to its tarball: the read-only
 * lower layer of every overlay (the farm's hosts, the VM suite's nspawn-tier
 * scenarios). Extracted into a directory of this process and renamed into
 * place, so two runs starting at once never see a half-extracted tree.
 */
export async function ensureLower(say) {
  const tar = await ensureRootfsTar(say);
  const dir = path.join(CACHE_DIR, `rootfs-${rootfsKey()}.d`);
  if (fs.existsSync(path.join(dir, '.extracted'))) return dir;
  // A tree left by an interrupted run of the old recipe (extracted in place, no marker).
  if (fs.existsSync(dir)) fs.rmSync(dir, { recursive: true, force: true });
  const partial = `${dir}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  fs.mkdirSync(partial, { recursive: true });
  try {
    await run('tar', ['-C', partial, '--numeric-owner', '-xpf', tar], 10 * 60_000);
    fs.writeFileSync(path.join(partial, '.extracted'), '');
    try {
      fs.renameSync(partial, dir);
    } catch (e) {
      // Another run renamed its copy first: use that one.
      if (!fs.existsSync(path.join(dir, '.extracted'))) throw e;
    }
  } finally {
    fs.rmSync(partial, { recursive: true, force: true });
  }
  return dir;
}
