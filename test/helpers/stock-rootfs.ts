// A stock Debian server's root file system, as mmdebstrap installs it from
// Debian's own packages: the packages a server usually carries (ifupdown,
// NetworkManager, systemd-resolved, cron, supervisor, a container runtime,
// openssh-server, unattended-upgrades, chrony, ...), with their maintainer
// scripts run. Cached as a tarball keyed by its recipe, like the VM suite's
// base (test/vm/lib/base.mjs); a warm run only extracts it. Needs root and
// mmdebstrap (scripts/ensure-debian-packages.sh). Documentation, man pages
// and translations are left out: no scan reads them, and they are most of
// the unpacking time.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';

const CACHE_DIR = process.env.STOCK_ROOTFS_CACHE_DIR ?? '/var/cache/k8s-host-reconcile/stock-rootfs';
const RECIPE_VERSION = 1;

/**
 * What such hosts carry. The container runtime is containerd: docker.io (its
 * dockerd unit runs one known program) adds half the download and
 * unpacking time, and CI builds both roots cold.
 */
export const STOCK_PACKAGES: Record<'bookworm' | 'trixie', string[]> = {
  bookworm: [
    'systemd-sysv',
    'kmod',
    'procps',
    'iproute2',
    'ifupdown',
    'isc-dhcp-client',
    'network-manager',
    'systemd-resolved',
    'cron',
    'supervisor',
    'containerd',
    'openssh-server',
    'unattended-upgrades',
    'chrony',
    'apparmor',
    'rsyslog',
    'logrotate',
    'sudo',
  ],
  trixie: [
    'systemd-sysv',
    'kmod',
    'procps',
    'iproute2',
    'ifupdown',
    'network-manager',
    'systemd-resolved',
    'cron',
    'supervisor',
    'containerd',
    'openssh-server',
    'unattended-upgrades',
    'chrony',
    'apparmor',
    'rsyslog',
    'logrotate',
    'sudo',
  ],
};

export type StockSuite = keyof typeof STOCK_PACKAGES;

function mmdebstrapArgs(suite: StockSuite, target: string): string[] {
  return [
    '--variant=apt',
    `--include=${STOCK_PACKAGES[suite].join(',')}`,
    '--dpkgopt=path-exclude=/usr/share/man/*',
    '--dpkgopt=path-exclude=/usr/share/doc/*',
    '--dpkgopt=path-exclude=/usr/share/locale/*',
    suite,
    target,
  ];
}

export function stockTarball(suite: StockSuite): string {
  const key = createHash('sha256')
    .update(JSON.stringify({ version: RECIPE_VERSION, args: mmdebstrapArgs(suite, 'TARGET') }))
    .digest('hex')
    .slice(0, 16);
  return path.join(CACHE_DIR, `stock-${suite}-${key}.tar`);
}

function runAsync(cmd: string, args: string[], what: string, timeout: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    const timer = setTimeout(() => p.kill('SIGTERM'), timeout);
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${what}: ${cmd} ${args.join(' ')} exited ${code}${signal ? ` (${signal})` : ''}\n${err}`));
    });
  });
}

/** Builds the cached tarball when absent (several suites can build at once). */
export async function ensureStockTarball(suite: StockSuite): Promise<string> {
  if (process.getuid?.() !== 0) throw new Error('the stock-rootfs test needs root (mmdebstrap); run the unit tests as root');
  const tar = stockTarball(suite);
  if (existsSync(tar)) return tar;
  mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${tar}.partial-${process.pid}.tar`;
  try {
    await runAsync('mmdebstrap', mmdebstrapArgs(suite, partial), `building the stock ${suite} root`, 30 * 60_000);
    renameSync(partial, tar);
  } finally {
    rmSync(partial, { force: true });
  }
  return tar;
}

/** A fresh copy of the stock root in a temporary directory; the caller removes it. */
export async function freshStockRoot(suite: StockSuite): Promise<string> {
  const tar = await ensureStockTarball(suite);
  const dir = mkdtempSync(path.join(tmpdir(), `stock-${suite}-`));
  const r = spawnSync('tar', ['--numeric-owner', '-xpf', tar, '-C', dir], { encoding: 'utf8', timeout: 10 * 60_000 });
  if (r.status !== 0) throw new Error(`extracting ${tar}: ${r.stderr}`);
  return dir;
}
