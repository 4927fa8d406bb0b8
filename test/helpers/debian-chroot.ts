// A fresh Debian root file system from mmdebstrap with Debian's own nodejs
// (and systemd, for systemd-analyze verify), cached as a tarball keyed by its
// recipe like the VM suite's base (test/vm/lib/base.mjs): a warm run only
// extracts it. Needs root and mmdebstrap (scripts/ensure-debian-packages.sh).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const CACHE_DIR = process.env.DEB_TEST_CACHE_DIR ?? '/var/cache/k8s-host-reconcile/deb-test';
const RECIPE_VERSION = 1;

function mmdebstrapArgs(suite: string, target: string): string[] {
  return ['--variant=apt', '--include=nodejs,systemd', suite, target];
}

export function chrootTarball(suite = 'bookworm'): string {
  const key = createHash('sha256')
    .update(JSON.stringify({ version: RECIPE_VERSION, args: mmdebstrapArgs(suite, 'TARGET') }))
    .digest('hex')
    .slice(0, 16);
  return path.join(CACHE_DIR, `${suite}-nodejs-${key}.tar`);
}

function must(cmd: string, args: string[], what: string, timeout = 60_000): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0)
    throw new Error(`${what}: ${cmd} ${args.join(' ')} exited ${r.status}${r.signal ? ` (${r.signal})` : ''}\n${(r.stderr ?? '').slice(-2000)}`);
  return r.stdout;
}

/** Extracts a fresh chroot (building the cached tarball first when absent); returns its directory. */
export function freshChroot(suite = 'bookworm'): string {
  if (process.getuid?.() !== 0) throw new Error('the packaging test needs root (mmdebstrap, dpkg -i in a chroot); run the unit tests as root');
  const tar = chrootTarball(suite);
  if (!existsSync(tar)) {
    mkdirSync(CACHE_DIR, { recursive: true });
    const partial = `${tar}.partial-${process.pid}.tar`;
    try {
      must('mmdebstrap', mmdebstrapArgs(suite, partial), `building the ${suite} chroot`, 30 * 60_000);
      renameSync(partial, tar);
    } finally {
      rmSync(partial, { force: true });
    }
  }
  const dir = mkdtempSync(path.join(tmpdir(), `deb-chroot-${suite}-`));
  must('tar', ['--numeric-owner', '-xpf', tar, '-C', dir], 'extracting the chroot', 10 * 60_000);
  return dir;
}
