// The nspawn tier of the VM suite: a scenario whose faults are units,
// triggers, user managers, listeners and net.* sysctls (`guest.tier:
// 'nspawn'`) boots the boot farm's root file system (test/boot/lib/rootfs.mjs,
// an overlay on its extracted tree) with systemd as PID 1 in systemd-nspawn
// instead of a qemu VM: the same stage, the same two boots, the same checks,
// in about a tenth of the time (qemu without KVM runs node ten times slower).
//
// The container shares this machine's kernel, so it must never reach its
// swap, modules or sysctls: --private-network (net.* sysctls are the
// container's own namespace's, the rest of /proc/sys is read-only), a desired
// state without SwapOff and ModulesLoad and with only net.ipv4.ip_forward
// (`containerDesired`), no dummy link (creating one would make this
// machine's kernel load the dummy module: the stage puts its address on lo),
// and nspawn's own guard, which the stage probes at boot 1 and the checks
// assert (`guardChecks`): swapon/swapoff and the module calls are refused.
// The run also compares this machine's swap, modules and sysctls before and
// after (test/boot/lib/host-state.mjs).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ownCgroup } from '../../helpers/own-cgroup.mjs';
import readline from 'node:readline';
import { ensureLower, PACKAGES } from '../../boot/lib/rootfs.mjs';
import { say } from './util.mjs';

const NSPAWN_ENV = { ...process.env, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '1' };

/** What the container may not change on this machine: swap, modules, the bridge keys (a module's). */
export function containerDesired(doc) {
  doc.resources = doc.resources
    .filter((r) => r.type !== 'SwapOff' && r.type !== 'ModulesLoad')
    .map((r) => (r.type === 'SysctlFile'
      ? { ...r, settings: Object.fromEntries(Object.entries(r.settings).filter(([k]) => k.startsWith('net.') && !k.startsWith('net.bridge.'))) }
      : r));
  return doc;
}

/** The scenario's packages (guest.packages) the farm's root file system lacks: a harness failure. */
export function lackedPackages(packages = []) {
  return packages.filter((p) => !PACKAGES.includes(p));
}

/** The extracted farm root file system (built and extracted once, cached). */
export function containerLower() {
  return ensureLower((m) => say(`farm rootfs: ${m}`));
}

// Interrupted: unmount what is mounted (the containers end with nspawn), then stop.
const mounted = new Set();
let onSignal;
function unmountOnSignal() {
  if (onSignal) return;
  onSignal = (sig) => {
    for (const root of mounted) spawnSync('umount', ['--lazy', root]);
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
}

/** An overlay on `lower` at WORK/root; returns the merged root. */
export function mountOverlay(lower, work) {
  const root = path.join(work, 'root');
  for (const d of ['upper', 'ovl-work', 'root']) fs.mkdirSync(path.join(work, d), { recursive: true });
  unmountOnSignal();
  const r = spawnSync('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${work}/upper,workdir=${work}/ovl-work`, root], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`overlay mount failed: ${r.stderr}`);
  mounted.add(root);
  return root;
}

export function unmountOverlay(work) {
  const root = path.join(work, 'root');
  if (spawnSync('mountpoint', ['-q', root]).status === 0) spawnSync('umount', [root]);
  if (spawnSync('mountpoint', ['-q', root]).status !== 0) mounted.delete(root);
}

// systemd-nspawn exits 133 when the container's manager reboots
// (systemd-nspawn@.service restarts on it): the stage's reboot.
const REBOOT_EXIT = 133;

/**
 * Boots the root until the stage powers it off: each reboot ends nspawn with
 * 133 and the same root is booted again. Resolves with { seconds, boots } like
 * the qemu boot (boots: the boots the stage's own log reached); a timeout or any other exit throws with the console's tail.
 */
export async function bootContainer({ root, machine, consoleLog, timeoutS }) {
  const out = fs.createWriteStream(consoleLog);
  const t0 = Date.now();
  const tail = [];
  let boots = 0;
  let echoed = 0;
  const deadline = t0 + timeoutS * 1000;
  try {
    for (let start = 1; start <= 3; start++) {
      const code = await new Promise((resolve, reject) => {
        const args = ['-q', '-b', '-D', root, '--register=no', '--keep-unit', '--private-network', `--machine=${machine}`, '--console=pipe'];
        // A cgroup of its own: a container started beside another from this process would share its units' cgroups.
        const cg = ownCgroup(`${machine}-${start}`);
        const [cmd, wrapped] = cg.wrap('systemd-nspawn', args);
        const child = spawn(cmd, wrapped, { env: NSPAWN_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
        child.on('exit', () => cg.dispose());
        const onLine = (line) => {
          out.write(line + '\n');
          tail.push(line);
          if (tail.length > 60) tail.shift();
        };
        readline.createInterface({ input: child.stdout }).on('line', onLine);
        readline.createInterface({ input: child.stderr }).on('line', (l) => onLine(`[nspawn] ${l}`));
        const timer = setTimeout(() => child.kill('SIGKILL'), Math.max(1, deadline - Date.now()));
        child.on('error', (e) => { clearTimeout(timer); reject(new Error(`systemd-nspawn could not start: ${e.message}`)); });
        child.on('close', (c, signal) => { clearTimeout(timer); resolve(signal ? signal : c); });
      });
      const secs = ((Date.now() - t0) / 1000).toFixed(0);
      // The stage's console lines do not reach nspawn's pipe; its own log does.
      const stage = stageLog(root);
      for (const line of stage.slice(echoed)) process.stderr.write(`[nspawn] ${line}\n`);
      echoed = stage.length;
      boots = Math.max(0, ...stage.map((l) => Number(/\[stage\] boot (\d+):/.exec(l)?.[1] ?? 0)));
      if (code === REBOOT_EXIT) {
        say(`+${secs}s container rebooted (nspawn exit ${REBOOT_EXIT}); booting the same root again`);
        continue;
      }
      if (code === 0) {
        say(`container powered off after ${secs} s (${boots} boots reached the stage)`);
        return { seconds: Number(secs), boots };
      }
      throw new Error(`${Date.now() >= deadline ? `timeout after ${timeoutS} s` : `systemd-nspawn exit ${code}`} (after ${secs} s)\n--- console tail (${consoleLog}) ---\n${tail.join('\n')}`);
    }
    throw new Error(`the container rebooted three times; the stage reboots once\n--- console tail (${consoleLog}) ---\n${tail.join('\n')}`);
  } finally {
    out.end();
  }
}

function stageLog(root) {
  try {
    return fs.readFileSync(path.join(root, 'var/lib/vmtest/results/stage.log'), 'utf8').split('\n').filter((l) => l.includes('[stage]'));
  } catch {
    return [];
  }
}

/** The results the stage left in the container's root, copied out before the overlay goes. */
export function copyResults(root, outDir) {
  fs.mkdirSync(outDir, { recursive: true });
  const r = spawnSync('cp', ['-a', path.join(root, 'var/lib/vmtest/results'), outDir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`copying the results out: ${r.stderr}`);
  return path.join(outDir, 'results');
}

/**
 * nspawn's guard, as the stage probed it inside the booted container at boot
 * 1 (guard.json): swapon and swapoff of a path that does not exist, and
 * finit_module and delete_module of nothing, must be refused with EPERM
 * (allowed, they would fail with ENOENT or EBADF instead), and
 * CAP_SYS_MODULE must be outside the bounding set.
 */
export function guardChecks(r, name) {
  const guard = () => {
    const g = r.boot1?.guard;
    if (!g) throw new Error('boot1 guard.json missing from the container results');
    return g;
  };
  return [
    { name: `${name}: container: swapon and swapoff refused (EPERM), so no swap of this machine is reachable`, check: () => {
      const g = guard();
      return g.swapon === 'EPERM' && g.swapoff === 'EPERM' ? { ok: true, detail: `swapon ${g.swapon}, swapoff ${g.swapoff}` } : `swapon ${g.swapon}, swapoff ${g.swapoff}`;
    } },
    { name: `${name}: container: finit_module and delete_module refused (EPERM), CAP_SYS_MODULE not in the bounding set`, check: () => {
      const g = guard();
      const ok = g.finit_module === 'EPERM' && g.delete_module === 'EPERM' && g.cap_sys_module_in_bounding_set === false;
      const detail = `finit_module ${g.finit_module}, delete_module ${g.delete_module}, CAP_SYS_MODULE in CapBnd: ${g.cap_sys_module_in_bounding_set}, ${g.seccomp}`;
      return ok ? { ok: true, detail } : detail;
    } },
  ];
}
