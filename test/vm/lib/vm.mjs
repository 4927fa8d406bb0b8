// One scenario's VM: root file system from the cached base, the project's bits
// and the scenario's faults copied in, an ext4 image, a qemu boot (two boots:
// the stage reboots once), results read back with debugfs.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { run, say } from './util.mjs';

const VM_DIR = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const REPO = path.resolve(VM_DIR, '../..');

export const BOOT_TIMEOUT_S = Number(process.env.VMTEST_TIMEOUT_S ?? 900);
// A boot whose stage has not started this long after qemu started (or after
// the guest's reboot line) is stuck in the kernel, before any code of ours ran:
// a CI run saw a crypto self-test spin for 900 s under software emulation.
// The stage normally starts 25 s in.
export const STAGE_DEADLINE_S = Number(process.env.VMTEST_STAGE_DEADLINE_S ?? 300);

// The bundle shipped into the VM; VMTEST_BUNDLE lets a deliberately broken
// build be run to show the suite catches it.
export const BUNDLE = path.resolve(process.env.VMTEST_BUNDLE ?? path.join(REPO, 'dist/reconcile.mjs'));

function write(root, target, content, mode = 0o644) {
  const p = path.join(root, target);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content, { mode });
  fs.chmodSync(p, mode);
}

function symlink(root, target, linkTo) {
  const p = path.join(root, target);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.rmSync(p, { force: true });
  fs.symlinkSync(linkTo, p);
}

// The desired state shipped into the VM keeps only resources whose provider is
// registered, so expectations grow as providers land instead of every run
// failing on a type the CLI does not know yet. A scenario may adjust it
// (`export function desired(doc)` in expect.mjs, given and returning the plain
// object); the repo's file with its comments is shipped when none does.
async function desiredState(landedTypes, transform) {
  const text = fs.readFileSync(path.join(REPO, 'desired-state.yaml'), 'utf8');
  const YAML = await import('yaml');
  const doc = YAML.parse(text);
  // Every resource of the desired state must be one the bundle has: dropping
  // one would let its checks pass on nothing.
  const missing = [...new Set(doc.resources.map((r) => r.type))].filter((t) => !landedTypes.includes(t));
  if (missing.length > 0) throw new Error(`the bundle has no provider for ${missing.join(', ')} (reconcile --providers: ${landedTypes.join(', ')})`);
  return transform ? YAML.stringify(transform(doc)) : text;
}

// The bundle run on this machine (not in the VM), for scenarios that converge
// the root tree before it is imaged (`hostApply` in expect.mjs). Never throws:
// the exit code and output are results the scenario checks.
export function hostReconcile(args) {
  say(`host: node ${path.relative(REPO, BUNDLE) || BUNDLE} ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8', timeout: 300_000, cwd: REPO });
  say(`host: exit ${r.status}${r.signal ? ` signal ${r.signal}` : ''}`);
  return { args, exit: r.status, signal: r.signal, error: r.error ? String(r.error.message) : undefined, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** The kubespray-shaped tree the VM gets at /opt/ks/kubespray (the scenarios' checks read the same). */
export function kubesprayFixture() {
  // Prefer the shared fixture tree when another suite provides one.
  const shared = path.join(REPO, 'test/fixtures');
  if (fs.existsSync(shared)) {
    const dirs = fs
      .readdirSync(shared)
      .filter((d) => d.startsWith('kubespray-'))
      .sort();
    const lab = dirs.find((d) => /lab|default|main/.test(d)) ?? dirs[0];
    if (lab && fs.existsSync(path.join(shared, lab, 'roles/kubernetes/preinstall/defaults/main.yml'))) return path.join(shared, lab);
  }
  return path.join(VM_DIR, 'fixtures/kubespray');
}

// `baseTar`: extracted into `root` first; null for the nspawn tier, whose root
// is already an overlay on the farm's extracted tree.
// `disks` (qemu tier): a directory plant.sh may fill with raw disk images
// (NAME.img), attached after the root disk in name order (vdb, vdc, ...).
export async function prepareRoot({ baseTar, root, scenarioDir, guest, landedTypes, desired, disks }) {
  fs.mkdirSync(root, { recursive: true });
  if (baseTar) {
    say('extracting base rootfs');
    await run('tar', ['--xattrs', '--xattrs-include=*', '--numeric-owner', '-xpf', baseTar, '-C', root]);
  }

  // Boot plumbing: root on the virtio disk (a container has its root
  // already), a fixed machine-id so the first boot does not run first-boot
  // presets, a quiet serial console.
  if (guest.tier !== 'nspawn') write(root, 'etc/fstab', '/dev/vda / ext4 rw,errors=remount-ro 0 1\n');
  write(root, 'etc/hostname', 'node1\n');
  write(root, 'etc/hosts', '127.0.0.1 localhost\n127.0.1.1 node1\n');
  write(root, 'etc/machine-id', 'c0ffee00c0ffee00c0ffee00c0ffee00\n', 0o444);
  symlink(root, 'etc/systemd/system/serial-getty@ttyS0.service', '/dev/null');
  symlink(root, 'etc/systemd/system/getty@tty1.service', '/dev/null');
  write(root, 'etc/systemd/journald.conf.d/vmtest.conf', '[Journal]\nForwardToConsole=no\nStorage=volatile\n');

  // The project: the bundle, the desired state, kubespray, the inventory. Node
  // is Debian's own nodejs from the base (no binary of this machine is copied).
  // A scenario whose bake installs the bundle itself ships none (`ship_bundle: false`).
  if (!fs.existsSync(path.join(root, 'usr/bin/node'))) throw new Error('the base has no /usr/bin/node: nodejs missing from BASE_PACKAGES');
  if (guest.ship_bundle === false) say('no bundle shipped: the bake installs its own');
  else if (fs.existsSync(BUNDLE)) write(root, 'usr/local/lib/k8s-host-reconcile/reconcile.mjs', fs.readFileSync(BUNDLE), 0o755);
  else say(`${BUNDLE} missing: the stage will record failed reconcile commands`);
  write(root, 'root/ks/desired-state.yaml', await desiredState(landedTypes, desired));
  fs.mkdirSync(path.join(root, 'opt/ks'), { recursive: true });
  await run('cp', ['-a', kubesprayFixture(), path.join(root, 'opt/ks/kubespray')]);
  write(
    root,
    'root/ks/inventory/lab/inventory.ini',
    [
      '[all]',
      'node1 ansible_connection=local',
      '',
      '[kube_control_plane]',
      'node1',
      '',
      '[etcd]',
      'node1',
      '',
      '[kube_node]',
      'node1',
      '',
      '[k8s_cluster:children]',
      'kube_control_plane',
      'kube_node',
      '',
    ].join('\n'),
  );

  // The stage.
  write(root, 'usr/local/lib/vmtest/stage.mjs', fs.readFileSync(path.join(VM_DIR, 'guest/stage.mjs')));
  write(root, 'etc/systemd/system/vmtest-stage.service', fs.readFileSync(path.join(VM_DIR, 'guest/vmtest-stage.service')));
  symlink(root, 'etc/systemd/system/multi-user.target.wants/vmtest-stage.service', '/etc/systemd/system/vmtest-stage.service');
  write(root, 'etc/vmtest/scenario.json', JSON.stringify(guest, null, 2));
  fs.mkdirSync(path.join(root, 'var/lib/vmtest/results'), { recursive: true });

  say('planting faults');
  if (disks) fs.mkdirSync(disks, { recursive: true });
  await run('bash', [path.join(scenarioDir, 'plant.sh'), root, ...(disks ? [disks] : [])], { prefix: 'plant' });
}

export async function buildImage(root, work) {
  const img = path.join(work, 'disk.img');
  const size = process.env.VMTEST_DISK_SIZE ?? '3G';
  say(`mkfs.ext4 -d (${size} sparse)`);
  await run('mkfs.ext4', ['-q', '-F', '-L', 'vmroot', '-d', root, img, size]);
  const boot = fs.readdirSync(path.join(root, 'boot'));
  const vmlinuz = boot.find((f) => f.startsWith('vmlinuz-'));
  const initrd = boot.find((f) => f.startsWith('initrd.img-'));
  if (!vmlinuz || !initrd) throw new Error(`no kernel/initrd in rootfs /boot: ${boot.join(' ')}`);
  fs.copyFileSync(path.join(root, 'boot', vmlinuz), path.join(work, 'vmlinuz'));
  fs.copyFileSync(path.join(root, 'boot', initrd), path.join(work, 'initrd.img'));
  return { img, kernel: path.join(work, 'vmlinuz'), initrd: path.join(work, 'initrd.img') };
}

export class BootError extends Error {}
/** The kernel never handed over to the stage: nothing of ours ran, so the boot may be tried again from a fresh image. */
export class BootStall extends BootError {}

// Boots until the guest powers off (the two-boot flow reboots once in between).
// Progress: `[stage]` lines and boot milestones are echoed; everything goes to
// console.log. A timeout or kernel panic kills qemu and throws with the tail.
export function boot({ img, kernel, initrd, consoleLog, kernelArgs = [], extraDisks = [] }) {
  const args = [
    '-machine',
    'q35',
    '-accel',
    'tcg,thread=multi',
    '-cpu',
    'max',
    '-m',
    '2048',
    '-smp',
    '2',
    '-display',
    'none',
    '-monitor',
    'none',
    '-serial',
    'stdio',
    '-nic',
    'none',
    '-no-user-config',
    '-kernel',
    kernel,
    '-initrd',
    initrd,
    '-append',
    // cryptomgr.notests: the kernel's crypto self-tests prove nothing about
    // the host under test, and under TCG one of them spun past the boot timeout.
    ['root=/dev/vda rw rootfstype=ext4 console=ttyS0 net.ifnames=0 quiet loglevel=3 systemd.show_status=false panic=-1 cryptomgr.notests', ...kernelArgs].join(' '),
    '-drive',
    `file=${img},format=raw,if=virtio`,
    ...extraDisks.flatMap((d) => ['-drive', `file=${d},format=raw,if=virtio`]),
  ];
  say(`qemu-system-x86_64 (timeout ${BOOT_TIMEOUT_S} s)`);
  return new Promise((resolve, reject) => {
    const out = fs.createWriteStream(consoleLog);
    const child = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const t0 = Date.now();
    let boots = 0;
    let fatal = null;
    let stalled = false;
    const tail = [];
    // Armed at qemu's start and at each reboot line, disarmed when the stage announces the boot.
    let stageTimer = null;
    const armStage = () => {
      clearTimeout(stageTimer);
      stageTimer = setTimeout(() => {
        if (fatal) return;
        stalled = true;
        fatal = `the kernel did not start the stage of boot ${boots + 1} within ${STAGE_DEADLINE_S} s`;
        child.kill('SIGKILL');
      }, STAGE_DEADLINE_S * 1000);
    };
    const onLine = (line) => {
      const clean = line.replace(/\r/g, '');
      out.write(clean + '\n');
      tail.push(clean);
      if (tail.length > 60) tail.shift();
      const secs = ((Date.now() - t0) / 1000).toFixed(0);
      // The kernel is quiet (loglevel=3); the stage announces each boot.
      const b = /\[stage\] boot (\d+):/.exec(clean);
      if (b) {
        boots = Math.max(boots, Number(b[1]));
        clearTimeout(stageTimer);
      }
      if (/reboot: Restarting system/.test(clean)) armStage();
      if (/reboot: (Restarting system|Power down)/.test(clean)) say(`+${secs}s ${clean.replace(/^\[[^\]]*\]\s*/, '')}`);
      const m = clean.indexOf('[stage]');
      if (m >= 0) process.stderr.write(`[vm +${secs}s] ${clean.slice(m)}\n`);
      if (/Kernel panic|end Kernel panic|Gave up waiting for root|ALERT!/.test(clean)) {
        fatal = `guest failure: ${clean}`;
        child.kill('SIGKILL');
      }
    };
    readline.createInterface({ input: child.stdout }).on('line', onLine);
    readline.createInterface({ input: child.stderr }).on('line', (l) => onLine(`[qemu] ${l}`));
    const timer = setTimeout(() => {
      fatal = `timeout after ${BOOT_TIMEOUT_S} s`;
      child.kill('SIGKILL');
    }, BOOT_TIMEOUT_S * 1000);
    armStage();
    child.on('error', (e) => {
      clearTimeout(timer);
      clearTimeout(stageTimer);
      reject(new BootError(`qemu-system-x86_64 could not start: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(stageTimer);
      out.end();
      const secs = ((Date.now() - t0) / 1000).toFixed(0);
      if (fatal || code !== 0) {
        const Failure = stalled ? BootStall : BootError;
        reject(new Failure(`${fatal ?? `qemu exit ${code} ${signal ?? ''}`} (after ${secs} s)\n--- console tail (${consoleLog}) ---\n${tail.join('\n')}`));
      } else {
        say(`guest powered off after ${secs} s (${boots} boots reached the stage)`);
        resolve({ seconds: Number(secs), boots });
      }
    });
  });
}

// A boot stuck in the kernel before the stage started ran nothing of ours;
// it is booted once more from a copy of the images as they were built, and
// says so. A second stall, or any other failure, is the scenario's failure.
export async function bootOnceMore({ name, disk, disks, consoleLog, kernelArgs }) {
  const images = [disk.img, ...extraDisksIn(disks)];
  for (const img of images) await run('cp', ['--sparse=always', img, `${img}.built`]);
  const attempt = () => boot({ ...disk, consoleLog, kernelArgs, extraDisks: extraDisksIn(disks) });
  try {
    return await attempt();
  } catch (e) {
    if (!(e instanceof BootStall)) throw e;
    fs.copyFileSync(consoleLog, `${consoleLog}.stalled`);
    say(`scenario ${name}: ${e.message.split('\n')[0]}; console kept in ${consoleLog}.stalled; booting once more from the images as built`);
    for (const img of images) fs.renameSync(`${img}.built`, img);
    return await attempt();
  } finally {
    for (const img of images) fs.rmSync(`${img}.built`, { force: true });
  }
}

/** The images plant.sh left in `dir` (NAME.img), in name order: the VM's vdb, vdc, ... */
export function extraDisksIn(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.img'))
    .sort()
    .map((f) => path.join(dir, f));
}

export async function readResults(img, outDir) {
  fs.mkdirSync(outDir, { recursive: true });
  await run('debugfs', ['-R', `rdump /var/lib/vmtest/results ${outDir}`, img]);
  return path.join(outDir, 'results');
}
