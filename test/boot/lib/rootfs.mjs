// The farm's root file system: one mmdebstrap tarball of Debian bookworm with
// systemd as PID 1 and what the catalogue's entries run (cron, at,
// supervisor, ifupdown, openssh-server, a user bus), cached by a hash of the
// recipe like the VM suite's base (test/vm/lib/base.mjs). A run extracts it
// once (read-only lower layer); each host is an overlay on it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';

export const CACHE_DIR = process.env.BOOT_CACHE_DIR ?? '/var/cache/k8s-host-reconcile/boot';

export const PACKAGES = [
  'systemd-sysv', 'dbus', 'libpam-systemd', 'procps', 'iproute2', 'kmod', 'nodejs', 'python3',
  // starters and holders the catalogue uses
  'cron', 'at', 'supervisor', 'ifupdown', 'openssh-server',
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

/** The cached tarball, built first when absent (a cold cache takes minutes). */
export function ensureRootfsTar(say = (m) => process.stderr.write(`boot: ${m}\n`)) {
  const tar = rootfsTar();
  if (fs.existsSync(tar)) return tar;
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${tar}.partial-${process.pid}.tar`;
  say(`building ${tar} with mmdebstrap (cold cache)`);
  const t0 = Date.now();
  try {
    const r = spawnSync('mmdebstrap', mmdebstrapArgs(partial), { stdio: ['ignore', 'inherit', 'inherit'], timeout: 30 * 60_000 });
    if (r.status !== 0) throw new Error(`mmdebstrap failed (exit ${r.status})`);
    fs.renameSync(partial, tar);
  } finally {
    fs.rmSync(partial, { force: true });
  }
  say(`rootfs built in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return tar;
}

/** Extracts the tarball into DIR/lower once per run (the overlays' read-only layer). */
export function extractLower(tar, dir) {
  const lower = path.join(dir, 'lower');
  if (fs.existsSync(path.join(lower, 'etc/os-release')) || fs.existsSync(path.join(lower, 'usr/lib/os-release'))) return lower;
  fs.mkdirSync(lower, { recursive: true });
  execFileSync('tar', ['-C', lower, '--numeric-owner', '-xpf', tar], { stdio: 'inherit' });
  return lower;
}
