// One host of the farm: an overlay on the extracted root file system, the
// recipe planted in it, and real boots with systemd as PID 1 in
// systemd-nspawn. The container shares this machine's kernel: always
// --private-network (net.* sysctls are its own namespace's), never swap or
// module loading (the bounding set has no CAP_SYS_MODULE; the farm's desired
// state has no SwapOff or ModulesLoad, and no recipe runs swapon).
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ownCgroup } from '../../helpers/own-cgroup.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const STEPS = fs.readFileSync(path.join(HERE, 'steps.sh'), 'utf8');
const BUNDLE = path.resolve(HERE, '../../../dist/reconcile.mjs');

const NSPAWN_ENV = { ...process.env, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '1' };

function nspawnArgs(root, machine, extra) {
  return ['-q', '-D', root, '--register=no', '--keep-unit', '--private-network', `--machine=${machine}`, '--console=pipe', ...extra];
}

/** Inside the root only: the recipe's paths are absolute in the host it builds. */
function inRoot(root, p) {
  const full = path.join(root, p);
  if (!full.startsWith(root + '/')) throw new Error(`recipe path ${p} escapes the root`);
  return full;
}

export function writeFiles(root, files) {
  for (const [p, spec] of Object.entries(files)) {
    const full = inRoot(root, p);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.rmSync(full, { force: true });
    if (typeof spec === 'string') fs.writeFileSync(full, spec, { mode: 0o644 });
    else if (spec.link !== undefined) fs.symlinkSync(spec.link, full);
    else {
      fs.writeFileSync(full, spec.content, { mode: spec.mode ?? 0o644 });
      fs.chmodSync(full, spec.mode ?? 0o644);
    }
  }
}

export class FarmHost {
  /**
   * `dir`: a fresh directory of this host; `lower`: the extracted root file system (or package layers on it,
   * "LAYER:ROOT", lib/layer.mjs); `nspawn`: options the recipe's runtime needs (docker's runc: keyctl and bpf).
   */
  constructor(dir, lower, id, nspawn = []) {
    this.dir = dir;
    this.nspawn = nspawn;
    this.lower = lower;
    this.machine = `farm-${id}`.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 60);
    this.root = path.join(dir, 'root');
    this.out = path.join(dir, 'out');
    for (const d of ['upper', 'work', 'root', 'out']) fs.mkdirSync(path.join(dir, d), { recursive: true });
    const r = spawnSync('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${dir}/upper,workdir=${dir}/work`, this.root], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`overlay mount failed: ${r.stderr}`);
  }

  /** Files, then the recipe's setup commands run in the root (no boot: useradd, systemctl enable, dpkg -r). */
  plant(recipe, desiredYaml) {
    writeFiles(this.root, recipe.files);
    writeFiles(this.root, {
      '/farm/steps.sh': { content: STEPS, mode: 0o755 },
      '/farm/desired.yaml': desiredYaml,
      '/etc/systemd/system/farm-steps.service': [
        '[Unit]', 'Description=boot farm steps (test/boot)', 'After=multi-user.target', '',
        '[Service]', 'Type=oneshot', 'ExecStart=/farm/steps.sh', 'TimeoutStartSec=infinity', '',
      ].join('\n'),
      '/etc/systemd/system/multi-user.target.wants/farm-steps.service': { link: '/etc/systemd/system/farm-steps.service' },
    });
    if (recipe.setup.length > 0) {
      const script = ['set -e', ...recipe.setup].join('\n');
      const cg = ownCgroup(`${this.machine}-setup`);
      const [cmd, args] = cg.wrap('systemd-nspawn', nspawnArgs(this.root, this.machine, [...this.nspawn, '/bin/sh', '-c', script]));
      const r = spawnSync(cmd, args, { env: NSPAWN_ENV, encoding: 'utf8', timeout: 120_000 });
      cg.dispose();
      if (r.status !== 0) throw new Error(`recipe setup failed (exit ${r.status}): ${r.stdout}${r.stderr}`);
    }
  }

  /** One boot: PHASE boot1 (plan + apply) or boot2 (observe). Resolves with seconds taken. */
  boot(phase, env) {
    const lines = Object.entries({ PHASE: phase, ...env }).map(([k, v]) => `${k}='${String(v).replace(/'/g, '')}'`);
    fs.writeFileSync(path.join(this.root, 'farm/env'), lines.join('\n') + '\n');
    const t0 = Date.now();
    const console_ = fs.openSync(path.join(this.dir, `${phase}.console.log`), 'w');
    return new Promise((resolve, reject) => {
      // BOOT_JOBS hosts boot side by side: each in a cgroup of its own, or their units would share directories.
      const cg = ownCgroup(`${this.machine}-${phase}`);
      const [cmd, args] = cg.wrap('systemd-nspawn', nspawnArgs(this.root, this.machine, [...this.nspawn, '-b', `--bind-ro=${BUNDLE}:/farm/reconcile.mjs`, `--bind=${this.out}:/farm/out`]));
      const child = spawn(cmd, args, { env: NSPAWN_ENV, stdio: ['ignore', console_, console_] });
      child.on('exit', () => cg.dispose());
      const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
      child.on('error', reject);
      child.on('exit', (code) => {
        clearTimeout(timer);
        fs.closeSync(console_);
        const done = fs.existsSync(path.join(this.out, phase, 'done'));
        if (!done) reject(new Error(`${phase} did not finish (nspawn exit ${code}); see ${this.dir}/${phase}.console.log`));
        else resolve((Date.now() - t0) / 1000);
      });
    });
  }

  dispose(keep = false) {
    spawnSync('umount', [this.root]);
    if (!keep) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
