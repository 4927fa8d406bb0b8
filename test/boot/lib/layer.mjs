// Package layers: packages only some entries need (docker.io), installed once
// on top of the farm's root file system into an overlay upper directory of
// their own, cached next to the root by a hash of the root and the layer's
// recipe. An entry that names a layer boots on lowerdir=LAYER:ROOT; every
// other host boots on the root alone, as fast as before and without the
// layer's units or rules.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { CACHE_DIR, rootfsKey } from './rootfs.mjs';
import { buildOnce } from '../../vm/lib/util.mjs';

export const LAYERS = {
  // Debian's docker.io (dockerd, docker-proxy, containerd, runc, tini) and busybox-static, whose /bin/busybox is the
  // entries' image (docker import of a one-file tar: no registry is reachable). The postinsts enable docker.service,
  // docker.socket and containerd.service: disabled here, so the layer alone starts nothing; an entry enables them.
  // vfs: overlay2 cannot mount on the farm's overlay root (dockerd would fall back to vfs after logging the errors).
  docker: {
    packages: ['docker.io', 'busybox-static'],
    after: [
      'systemctl disable docker.service docker.socket containerd.service',
      'mkdir -p /etc/docker',
      `printf '{"storage-driver": "vfs"}\\n' > /etc/docker/daemon.json`,
    ],
  },
  // Debian 12's podman 4.3.1 (conmon; crun and runc: runc is the one that runs here) and busybox-static for the
  // image (podman import). No quadlet: its generator came with podman 4.4 and Debian 12 has none (nor backports).
  // The postinst enables podman.service, podman.socket, podman-restart.service and podman-auto-update.timer:
  // disabled here, an entry enables them. What the farm's nspawn needs, in podman's own configuration files: vfs
  // (overlay cannot mount on the overlay root), runc (crun 1.8 raises RLIMIT_MEMLOCK for its eBPF device filter,
  // and the farm has no CAP_SYS_RESOURCE: "setrlimit (RLIM_MEMLOCK): Operation not permitted"), pids_limit 0 (the
  // farm's cgroup delegates no pids controller: runc's "openat2 .../pids.max: no such file or directory").
  podman: {
    packages: ['podman', 'runc', 'busybox-static'],
    after: [
      'systemctl disable podman.service podman.socket podman-restart.service podman-auto-update.timer',
      `printf '[storage]\\ndriver = "vfs"\\nrunroot = "/run/containers/storage"\\ngraphroot = "/var/lib/containers/storage"\\n' > /etc/containers/storage.conf`,
      `printf '[containers]\\npids_limit = 0\\n\\n[engine]\\nruntime = "runc"\\n' > /etc/containers/containers.conf`,
    ],
  },
};

// Bump when the build below changes in a way the recipe does not show.
const LAYER_VERSION = 1;

export function layerKey(name) {
  return createHash('sha256')
    .update(JSON.stringify({ version: LAYER_VERSION, root: rootfsKey(), name, recipe: LAYERS[name] }))
    .digest('hex')
    .slice(0, 16);
}

function nspawnScript(root, script, timeoutMs) {
  return new Promise((resolve, reject) => {
    // Not booted and not --private-network: apt needs the network; no daemon starts (invoke-rc.d finds no running systemd).
    const args = ['-q', '-D', root, '--register=no', '--keep-unit', `--machine=farm-layer-${process.pid}`, '/bin/sh', '-c', script];
    const child = spawn('systemd-nspawn', args, { stdio: ['ignore', 2, 2], env: { ...process.env, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '1' } });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`layer build failed (nspawn exit ${code})`));
    });
  });
}

// Hosts booted side by side (BOOT_JOBS) ask for a layer at once: one build per process, the others wait for it.
const building = new Map();

/** The layer's directory (an overlay upper), built first when absent; renamed into place, so a half-built layer is never used. */
export function ensureLayer(lower, name, say = (m) => process.stderr.write(`boot: ${m}\n`)) {
  const key = `${lower}\0${name}`;
  if (!building.has(key))
    building.set(
      key,
      buildLayer(lower, name, say).finally(() => building.delete(key)),
    );
  return building.get(key);
}

async function buildLayer(lower, name, say) {
  const spec = LAYERS[name];
  if (!spec) throw new Error(`no package layer ${name}`);
  const dir = path.join(CACHE_DIR, `layer-${name}-${layerKey(name)}.d`);
  if (fs.existsSync(dir)) return dir;
  // Another process's build (CI's test/prebuild-rootfs.mjs) is waited for.
  return buildOnce(dir, () => buildInto(dir, lower, name, spec, say), say);
}

async function buildInto(dir, lower, name, spec, say) {
  const partial = `${dir}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  for (const d of ['upper', 'work', 'root']) fs.mkdirSync(path.join(partial, d), { recursive: true });
  const root = path.join(partial, 'root');
  const m = spawnSync('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${partial}/upper,workdir=${partial}/work`, root], {
    encoding: 'utf8',
  });
  if (m.status !== 0) throw new Error(`overlay mount for layer ${name} failed: ${m.stderr}`);
  const t0 = Date.now();
  say(`building package layer ${name} (${spec.packages.join(', ')})`);
  try {
    const script = [
      'set -e',
      'apt-get update -qq',
      `DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${spec.packages.join(' ')} >/dev/null`,
      'apt-get clean',
      'rm -rf /var/lib/apt/lists/*',
      ...spec.after,
    ].join('\n');
    await nspawnScript(root, script, 15 * 60_000);
  } finally {
    spawnSync('umount', [root]);
  }
  try {
    fs.renameSync(path.join(partial, 'upper'), dir);
  } catch (e) {
    if (!fs.existsSync(dir)) throw e;
  } finally {
    fs.rmSync(partial, { recursive: true, force: true });
  }
  say(`package layer ${name} built in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return dir;
}
