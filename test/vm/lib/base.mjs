// The base root file system: one mmdebstrap tarball, cached by a hash of what
// goes into it, so a warm run only extracts it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildOnce, run, say } from './util.mjs';

export const CACHE_DIR = process.env.VMTEST_CACHE_DIR ?? '/var/cache/k8s-host-reconcile/vm';

export const BASE_PACKAGES = [
  'systemd-sysv', 'udev', 'kmod', 'procps', 'iproute2',
  'linux-image-cloud-amd64', 'initramfs-tools', 'python3', 'ansible-core',
  // cron: the port-cron scenario's listener is started by an @reboot line.
  'cron',
  // The guest runs the bundle with Debian's own node (18 on bookworm, 20 on trixie), as a real host would.
  'nodejs',
];

// Bump when the recipe changes in a way the arguments below do not show.
const RECIPE_VERSION = 1;

// The Debian suite a scenario boots (expect.guest.suite); bookworm unless it says.
export const DEFAULT_SUITE = 'bookworm';
export const SUITES = ['bookworm', 'trixie'];

// `extra`: a scenario's own packages on top (expect.guest.packages); they make a base of their own.
function mmdebstrapArgs(target, suite = DEFAULT_SUITE, extra = []) {
  if (!SUITES.includes(suite)) throw new Error(`unknown Debian suite ${suite}; have ${SUITES.join(', ')}`);
  if (extra.some((p) => !/^[a-z0-9][a-z0-9+.-]+$/.test(p))) throw new Error(`not a Debian package name in guest.packages: ${JSON.stringify(extra)}`);
  return ['--variant=apt', `--include=${[...BASE_PACKAGES, ...extra].join(',')}`, suite, target];
}

// The key of a bookworm base is what it was before suites existed, so a warm cache stays warm.
export function baseKey(suite = DEFAULT_SUITE, extra = []) {
  const recipe = JSON.stringify({ version: RECIPE_VERSION, args: mmdebstrapArgs('TARGET', suite, extra) });
  return createHash('sha256').update(recipe).digest('hex').slice(0, 16);
}

export function basePath(suite = DEFAULT_SUITE, extra = []) {
  return path.join(CACHE_DIR, `base-${baseKey(suite, extra)}.tar`);
}

// Returns the cached tarball, building it first when absent (or waiting for
// another process building it). Throws on failure.
export async function ensureBase(suite = DEFAULT_SUITE, extra = []) {
  const tar = basePath(suite, extra);
  if (fs.existsSync(tar)) {
    say(`base rootfs: cached ${tar}`);
    return tar;
  }
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  return buildOnce(tar, async () => {
    const partial = `${tar}.partial-${process.pid}.tar`;
    say(`base rootfs: building ${tar} (${suite}${extra.length ? ` + ${extra.join(' ')}` : ''}) with mmdebstrap (cold cache)`);
    const t0 = Date.now();
    try {
      await run('mmdebstrap', mmdebstrapArgs(partial, suite, extra), { prefix: 'mmdebstrap', timeout: 30 * 60_000 });
      fs.renameSync(partial, tar);
    } finally {
      fs.rmSync(partial, { force: true });
    }
    say(`base rootfs: built in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  });
}
