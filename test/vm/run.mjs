// VM suite entry: `node test/vm/run.mjs [scenario...]` (all scenarios by default).
// For each scenario: base rootfs (cached) -> planted rootfs -> image -> qemu
// (two boots) -> results -> checks. Prints one line per check, the pending
// count, then `N passed, N failed` last. Exits non-zero on any failure or on a
// harness error (missing qemu, failed image build, boot timeout).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { basePath, ensureBase } from './lib/base.mjs';
import { prepareRoot, buildImage, bootOnceMore, readResults, hostReconcile, extraDisksIn, BUNDLE, BOOT_TIMEOUT_S } from './lib/vm.mjs';
import { containerDesired, containerLower, lackedPackages, mountOverlay, unmountOverlay, bootContainer, copyResults, guardChecks } from './lib/nspawn.mjs';
import { hostState, stateDiff } from '../boot/lib/host-state.mjs';
import { loadResults, runChecks } from './lib/checks.mjs';
import { say } from './lib/util.mjs';

const VM_DIR = path.dirname(new URL(import.meta.url).pathname);
const KEEP = process.env.VMTEST_KEEP === '1';
const JOBS = Math.max(1, Number(process.env.VMTEST_JOBS ?? 2) || 1);

function print(line) {
  process.stdout.write(line + '\n');
}

// The features the bundle reports (`--providers`). A bundle that cannot say
// is a harness failure: the suite must not run on nothing.
function landedProviders() {
  if (!fs.existsSync(BUNDLE)) throw new Error(`no bundle at ${BUNDLE} (npm run bundle)`);
  const r = spawnSync(process.execPath, [BUNDLE, '--providers'], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${BUNDLE} --providers exited ${r.status}: ${r.stderr.trim()}`);
  let v;
  try {
    v = JSON.parse(r.stdout);
  } catch {
    throw new Error(`${BUNDLE} --providers printed no JSON array: ${r.stdout.slice(0, 200)}`);
  }
  if (!Array.isArray(v) || v.length === 0) throw new Error(`${BUNDLE} --providers lists nothing`);
  return v.map(String);
}

function requireTools() {
  const missing = ['qemu-system-x86_64', 'mmdebstrap', 'mkfs.ext4', 'debugfs', 'tar', 'mkswap', 'systemd-nspawn']
    .filter((t) => spawnSync('sh', ['-c', 'command -v "$1"', 'sh', t]).status !== 0);
  if (missing.length) throw new Error(`missing tools: ${missing.join(', ')} (install qemu-system-x86 mmdebstrap e2fsprogs systemd-container)`);
  if (process.getuid?.() !== 0) throw new Error('the VM suite must run as root (mmdebstrap, tar -p, mkfs.ext4 -d ownership)');
}

// One base build per suite (and extra package list) even when scenarios run in parallel.
const bases = new Map();
function baseFor(suite, extra = []) {
  const key = basePath(suite, extra);
  if (!bases.has(key)) bases.set(key, ensureBase(suite, extra));
  return bases.get(key);
}

// 'qemu' (default): a VM with its own kernel, for swap, modules and the
// kernel; 'nspawn': units, triggers, user managers, listeners and net.*
// sysctls, in a container on this machine's kernel (lib/nspawn.mjs).
const tierOf = (expect) => expect.guest.tier ?? 'qemu';

// The farm's root file system, for the nspawn tier: built (cold) or found once.
let lowerOnce;
const containerLowerOnce = () => (lowerOnce ??= containerLower());

// What one qemu scenario costs, roughly: the reconcile runs under TCG (a plan
// about 50 s, an apply about 120 s), the boots, ansible. Used only to start the
// longest first, so two workers finish together instead of one idling while
// the other runs a long scenario last.
function qemuCost(guest) {
  // A scenario whose time the model misjudges says what it measured, in the same units (lab, cost 9, took 458 s).
  if (typeof guest.cost === 'number') return guest.cost;
  const flow = guest.flow ?? 'two-boot';
  let runs;
  if (flow === 'image') runs = 1;
  else if (flow === 'image-two-boot') runs = 3;
  else if (guest.rollback) runs = 7;
  else if (guest.json) runs = 3;
  else runs = 5 + (guest.verdicts ? 2 : 0);
  return runs + (flow === 'image' ? 1 : 2) + (guest.ansible ? 2 : 0);
}

async function runScenario(name, landed) {
  const scenarioDir = path.join(VM_DIR, 'scenarios', name);
  const expect = await import(path.join(scenarioDir, 'expect.mjs'));
  const nspawn = tierOf(expect) === 'nspawn';
  if (nspawn && lackedPackages(expect.guest.packages).length) throw new Error(`the nspawn tier boots the boot farm's root file system, which lacks ${lackedPackages(expect.guest.packages).join(', ')} (test/boot/lib/rootfs.mjs PACKAGES)`);
  // Each scenario boots the Debian suite it names (bookworm unless it says);
  // the nspawn tier boots the boot farm's bookworm root file system.
  const baseTar = nspawn ? null : await baseFor(expect.guest.suite, expect.guest.packages ?? []);
  const lower = nspawn ? await containerLowerOnce() : null;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `vmtest-${name}-`));
  const t0 = Date.now();
  say(`scenario ${name}: ${nspawn ? 'nspawn tier, ' : ''}work dir ${work}`);
  try {
    const root = nspawn ? mountOverlay(lower, work) : path.join(work, 'root');
    // 'two-boot' (default): the stage applies at first boot and reboots once.
    // 'image': the tree is converged here (hostApply) and booted once.
    // 'image-two-boot': converged here, booted twice (its first boot finishes the job).
    const flow = expect.guest.flow ?? 'two-boot';
    const desired = nspawn ? (doc) => containerDesired(expect.desired ? expect.desired(doc) : doc) : expect.desired;
    const disks = nspawn ? undefined : path.join(work, 'disks');
    await prepareRoot({ baseTar, root, scenarioDir, guest: expect.guest, landedTypes: landed, desired, disks });
    let host;
    if (expect.hostApply) {
      host = await expect.hostApply({ root, desired: path.join(root, 'root/ks/desired-state.yaml'), reconcile: hostReconcile });
      fs.writeFileSync(path.join(work, 'host.json'), JSON.stringify(host, null, 2));
    }
    const consoleLog = path.join(work, 'console.log');
    let b;
    let results;
    if (nspawn) {
      b = await bootContainer({ root, machine: `vmtest-${process.pid}-${name}`.slice(0, 60), consoleLog, timeoutS: BOOT_TIMEOUT_S });
      results = copyResults(root, path.join(work, 'out'));
      unmountOverlay(work);
    } else {
      const disk = await buildImage(root, work);
      fs.rmSync(root, { recursive: true, force: true });
      // A scenario's kernel_args go on every boot's command line, as a boot loader's configuration would put them.
      b = await bootOnceMore({ name, disk, disks, consoleLog, kernelArgs: expect.guest.kernel_args ?? [] });
      results = await readResults(disk.img, path.join(work, 'out'));
      if (!KEEP) fs.rmSync(disk.img, { force: true });
    }
    say(`scenario ${name}: ${nspawn ? 'container' : 'VM'} done in ${((Date.now() - t0) / 1000).toFixed(0)} s; results in ${results}`);
    const r = { ...loadResults(results), host };
    const bootChecks = flow === 'image'
      ? [{ name: `${name}: stage finished its only boot (no reboot)`, check: () => (b.boots === 1 && r.boot1?.snapshot && !r.boot2 ? true : `boots reaching the stage: ${b.boots}, boot1 snapshot ${r.boot1?.snapshot ? 'present' : 'missing'}, boot2 results ${r.boot2 ? 'present' : 'absent'}`) }]
      : [
        { name: `${name}: stage finished boot 1`, check: () => (r.boot1?.snapshot ? true : 'no boot1 snapshot') },
        { name: `${name}: stage finished boot 2 (rebooted once)`, check: () => (b.boots === 2 && r.boot2?.snapshot ? true : `boots reaching the stage: ${b.boots}, boot2 snapshot ${r.boot2?.snapshot ? 'present' : 'missing'}`) },
      ];
    const checks = [
      ...bootChecks,
      ...(nspawn ? guardChecks(r, name) : []),
      ...expect.checks(r, { landed }).map((c) => ({ ...c, name: `${name}: ${c.name}` })),
    ];
    const tally = runChecks(checks, landed, print);
    say(`scenario ${name}: ${tally.passed} passed, ${tally.failed} failed, ${tally.pending} pending in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    if (tally.failed === 0 && !KEEP) fs.rmSync(work, { recursive: true, force: true });
    else say(`scenario ${name}: console log and results kept in ${work}`);
    return tally;
  } catch (e) {
    say(`scenario ${name}: console log kept in ${work}`);
    throw e;
  } finally {
    if (nspawn) unmountOverlay(work);
    // The root tree and the image are large; keep them only on request.
    if (!KEEP) {
      fs.rmSync(path.join(work, 'root'), { recursive: true, force: true });
      fs.rmSync(path.join(work, 'disk.img'), { force: true });
      fs.rmSync(path.join(work, 'disks'), { recursive: true, force: true });
    }
  }
}

async function main() {
  const dirs = fs.readdirSync(path.join(VM_DIR, 'scenarios'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  // A scenario folder missing a part is a failure, not a silently skipped scenario.
  const incomplete = dirs.filter((d) => !['expect.mjs', 'plant.sh'].every((f) => fs.existsSync(path.join(VM_DIR, 'scenarios', d, f))));
  const all = dirs.filter((d) => !incomplete.includes(d));
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !all.includes(w));
  const total = { passed: 0, failed: 0, pending: 0 };
  const t0 = Date.now();
  try {
    for (const d of incomplete) {
      total.failed += 1;
      print(`FAIL ${d}: scenarios/${d} lacks expect.mjs or plant.sh`);
    }
    if (unknown.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; have ${all.join(', ')}`);
    requireTools();
    const landed = landedProviders();
    say(`bundle ${BUNDLE}`);
    say(`landed providers: ${landed.length ? landed.join(', ') : '(none: CLI missing or --providers unsupported)'}`);
    // Scenarios are independent VMs: JOBS of them at a time (qemu without KVM
    // spends much of a boot waiting, so two on two cores finish well before
    // two in a row). Each check line names its scenario. The longest qemu
    // scenarios start first, the short container ones fill in at the end.
    const chosen = wanted.length ? wanted : all;
    const expects = new Map();
    for (const name of chosen) {
      try {
        expects.set(name, await import(path.join(VM_DIR, 'scenarios', name, 'expect.mjs')));
      } catch {
        // runScenario imports it again and reports the failure as the scenario's.
      }
    }
    const cost = (name) => {
      const e = expects.get(name);
      if (!e) return 0;
      return tierOf(e) === 'nspawn' ? -1 : qemuCost(e.guest);
    };
    const queue = [...chosen].sort((a, b) => cost(b) - cost(a) || a.localeCompare(b));
    // Every root file system the run needs is built at once, before the
    // first boot: on a cold cache the builds overlap each other (and the
    // first VMs) instead of each holding up the scenario that needs it.
    for (const e of expects.values()) {
      if (tierOf(e) === 'nspawn') containerLowerOnce().catch(() => {});
      else baseFor(e.guest.suite, e.guest.packages ?? []).catch(() => {});
    }
    // The containers share this machine's kernel: its swap, modules and sysctls must end as they began.
    const containers = [...expects.values()].some((e) => tierOf(e) === 'nspawn');
    const before = containers ? hostState() : null;
    const took = [];
    const worker = async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        const ts = Date.now();
        try {
          const t = await runScenario(name, landed);
          if (t.passed + t.failed + t.pending === 0) {
            t.failed += 1;
            print(`FAIL ${name}: no checks ran`);
          }
          for (const k of Object.keys(total)) total[k] += t[k];
        } catch (e) {
          total.failed += 1;
          print(`FAIL ${name}: ${e.message}`);
        }
        took.push(`${name} ${((Date.now() - ts) / 1000).toFixed(0)} s`);
      }
    };
    say(`running ${JOBS} scenario${JOBS === 1 ? '' : 's'} at a time: ${queue.join(', ')}`);
    await Promise.all(Array.from({ length: JOBS }, worker));
    say(`scenario times (load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}): ${took.join(', ')}`);
    if (before) {
      const changed = stateDiff(before, hostState());
      if (changed.length === 0) {
        total.passed += 1;
        print("PASS nspawn tier: this machine's swap (/proc/swaps), modules (/sys/module) and sysctls are unchanged");
      } else {
        total.failed += 1;
        print(`FAIL nspawn tier: this machine's kernel state changed during the run: ${changed.join('; ')}`);
      }
    }
  } catch (e) {
    total.failed += 1;
    print(`FAIL harness: ${e.message}`);
  }
  say(`total ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  print(`${total.pending} pending`);
  print(`${total.passed} passed, ${total.failed} failed`);
  process.exitCode = total.failed > 0 || total.passed === 0 ? 1 : 0;
}

await main();
