#!/usr/bin/env node
// The boot farm (issue 27): hosts generated from seeds, each 3-6 catalogue
// entries, booted for real with systemd as PID 1 in systemd-nspawn. Boot 1
// plants the recipe, runs --plan --json and --apply with the farm's desired
// state; boot 2 is the reboot, observed. The judge holds the state against
// the plan's own promises (lib/judge.mjs); a broken promise fails the host and
// is shrunk to a minimal recipe. Last, this machine's own swap, modules and
// sysctls must be as they were.
//
//   node test/boot/run.mjs            enough seeds to use every entry 3 times
//   BOOT_SEEDS=N                      seeds 1..N
//   BOOT_SEED=S                       seed S only
//   BOOT_ENTRIES=id,id,...            that recipe only
//   BOOT_JOBS=2  BOOT_SHRINK=0  BOOT_KEEP=1 (keep each host's directory)
import { containerDesired } from './lib/desired.mjs';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NSPAWN, byId } from './catalogue/index.mjs';
import { compose, hosts, seedsFor } from './lib/generate.mjs';
import { FarmHost, writeFiles } from './lib/boot.mjs';
import { judge } from './lib/judge.mjs';
import { ensureLower } from './lib/rootfs.mjs';
import { ensureLayer } from './lib/layer.mjs';
import { hostState, stateDiff } from './lib/host-state.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const say = (m) => process.stdout.write(`${m}\n`);

// The default desired state, adapted: the container shares this machine's kernel, so no SwapOff (swapoff would reach
// this machine's swap) and no ModulesLoad (modprobe); the bridge keys need br_netfilter, so only ip_forward, which is
// the container's own network namespace's.
const KEYS = ['net.ipv4.ip_forward'];
export const DESIRED = containerDesired('/var/lib/farm-reports');

function preflight() {
  if (process.getuid?.() !== 0) throw new Error('the boot farm needs root (overlay mounts, systemd-nspawn)');
  for (const cmd of ['systemd-nspawn', 'mmdebstrap']) {
    if (spawnSync('sh', ['-c', `command -v ${cmd}`]).status !== 0) throw new Error(`${cmd} is missing (apt-get install systemd-container mmdebstrap)`);
  }
  if (!fs.existsSync(path.resolve(HERE, '../../dist/reconcile.mjs'))) throw new Error('dist/reconcile.mjs is missing: npm run -s bundle');
}

const TINYD = fs.readFileSync(path.join(HERE, 'lib/tinyd.py'), 'utf8');
let workDir;
let lower;
let hostCount = 0;
const bootTimes = [];

async function runRecipe(entries, label) {
  const recipe = compose(entries);
  recipe.files['/usr/local/sbin/tinyd'] = { mode: 0o755, content: TINYD };
  const layers = [];
  for (const name of recipe.layers) layers.push(await ensureLayer(lower, name));
  const host = new FarmHost(path.join(workDir, `h${++hostCount}`), [...layers, lower].join(':'), `${hostCount}`, recipe.nspawn);
  mounted.add(host.root);
  const t0 = Date.now();
  try {
    host.plant(recipe, recipe.desired.length + Object.keys(recipe.portFree).length > 0 ? containerDesired('/var/lib/farm-reports', recipe.desired, recipe.portFree) : DESIRED);
    const common = { KEYS: KEYS.join(' '), LISTENS: recipe.listens.join(' '), AFTER: 3 };
    const b1 = await host.boot('boot1', { ...common, LATE: 0.5 });
    const b2 = await host.boot('boot2', { ...common, LATE: Math.max(recipe.late, 1) });
    // Entries with `rollback: true`: a third boot runs --rollback of boot 1's apply (judge.mjs rollbackProblems).
    const b3 = recipe.rollback ? await host.boot('rollback', { ...common, LATE: Math.max(recipe.late, 1) }) : null;
    bootTimes.push(b1, b2, ...(b3 === null ? [] : [b3]));
    const verdict = judge(host.out, recipe.listens, entries, recipe.parts);
    // Judged on what the tool ends with: a withdrawal its own apply removed (the unit running an unread script is masked) is none.
    verdict.broken.push(...needlessWithdrawals(entries, recipe, verdict.final));
    // Ports move when entries are dropped: a port promise is named by the entry holding the port.
    const holder = (id) => recipe.parts.find((p) => p.port !== undefined && `port:${p.port}` === id)?.id;
    for (const b of verdict.broken) {
      b.holder = holder(b.promise);
      b.sig = `${b.holder ? `${b.holder}'s port` : b.promise} ${b.kind ?? b.phase}`;
    }
    return { ...verdict, recipe, seconds: (Date.now() - t0) / 1000, boots: b3 === null ? [b1, b2] : [b1, b2, b3], dir: host.dir };
  } catch (e) {
    return { broken: [], problems: [`${label}: ${e.message}`], recipe, seconds: (Date.now() - t0) / 1000, boots: [], dir: host.dir };
  } finally {
    host.dispose(process.env.BOOT_KEEP === '1');
    mounted.delete(host.root);
  }
}

/**
 * Issue 27: a defect "passes because the code was fixed, not because the
 * promise was withdrawn". A `kept` entry's promise (its port; ip_forward when
 * every sysctl entry of the host is kept) taken back by any line is a failure.
 */
// Lines that take promises back on the stock host (no entries): a false alarm on stock Debian, failed once by the stock
// host itself, not again by every host it shows on.
const stockLines = new Set();
const TINYD_PATH = '/usr/local/sbin/tinyd';
const lineKey = (w) => `${w.by}\0${w.resource}\0${w.line}`;
/** A withdrawal's line in one line: an unknown's own text ("unknown: FILE:LINE: ..."), an operator line's id, a failure of apply. */
const describeLine = (w) => (w.by === 'unknown' ? w.line.replace(/;.*$/, '') : w.by === 'failure' ? `apply failed: ${w.resource}: ${w.line}` : `operator ${w.resource} ${w.line}`);

function needlessWithdrawals(entries, recipe, promises) {
  const out = [];
  // The farm's own listener (/usr/local/sbin/tinyd, a python script) is an admin's program the scan cannot read: an
  // unknown about it is honest, and the harness's doing, not the kept entry's; every other line counts.
  const own = (p) => p.withdrawn_by.filter((w) => !stockLines.has(lineKey(w)) && !(w.by === 'unknown' && w.line.includes(`runs ${TINYD_PATH}, a `)));
  const withdrawn = (id) => promises.find((p) => p.id === id && own(p).length > 0);
  const describe = (p) => own(p).map(describeLine).join(' | ');
  for (const part of recipe.parts) {
    const e = entries.find((x) => x.id === part.id);
    if (!e?.kept || part.port === undefined) continue;
    const p = withdrawn(`port:${part.port}`);
    if (p) out.push({ promise: p.id, phase: `withdrawn, though ${e.id} needs no person`, kind: 'withdrawn', observed: describe(p) });
  }
  const sysctlEntries = entries.filter((e) => !e.port);
  if (sysctlEntries.length > 0 && sysctlEntries.every((e) => e.kept)) {
    for (const k of KEYS) {
      const p = withdrawn(`sysctl:${k}`);
      if (p) out.push({ promise: p.id, phase: `withdrawn, though ${sysctlEntries.map((e) => e.id).join(', ')} need${sysctlEntries.length === 1 ? 's' : ''} no person`, kind: 'withdrawn', observed: describe(p) });
    }
  }
  return out;
}

const sig = (b) => b.sig;
const failedRun = (r) => r.broken.length > 0 || r.problems.length > 0;

/** Delta debugging over entries: drop one at a time while the same promise still breaks. */
async function shrink(entries, target, holderId) {
  const want = new Set([target]);
  let current = entries;
  let progress = true;
  // A port's promise names its entry: that entry alone is the likeliest minimal recipe, tried first.
  const alone = entries.filter((e) => e.id === holderId);
  if (alone.length === 1 && entries.length > 1) {
    const r = await runRecipe(alone, 'shrink');
    if (r.broken.some((b) => want.has(sig(b)))) return alone;
  }
  const jobs = Number(process.env.BOOT_JOBS ?? 2);
  while (progress && current.length > 1) {
    progress = false;
    // Candidates boot `jobs` at a time; the first (in entry order) that still breaks the promise wins.
    const candidates = current.map((e) => current.filter((x) => x !== e));
    for (let i = 0; i < candidates.length && !progress; i += jobs) {
      const batch = candidates.slice(i, i + jobs);
      const runs = await Promise.all(batch.map((c) => runRecipe(c, 'shrink')));
      const k = runs.findIndex((r) => r.broken.some((b) => want.has(sig(b))));
      if (k >= 0) {
        current = batch[k];
        progress = true;
      }
    }
  }
  return current;
}

function describeRecipe(entries) {
  const r = compose(entries);
  const lines = [`    entries: ${entries.map((e) => e.id).join(', ')}${r.parts.some((p) => p.port) ? `  (ports: ${r.parts.filter((p) => p.port).map((p) => `${p.id}=${p.port}`).join(', ')})` : ''}`];
  for (const [p, c] of Object.entries(r.files)) {
    if (typeof c === 'object' && c.link !== undefined) lines.push(`    ${p} -> ${c.link}`);
    else lines.push(`    ${p}:`, ...String(typeof c === 'string' ? c : c.content).trimEnd().split('\n').map((l) => `      | ${l}`));
  }
  for (const s of r.setup) lines.push(`    setup: ${s}`);
  return lines.join('\n');
}

async function pool(items, jobs, fn) {
  const results = new Array(items.length);
  let i = 0;
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, async () => {
    while (i < items.length) {
      const k = i++;
      results[k] = await fn(items[k], k);
    }
  }));
  return results;
}

// Interrupted: unmount what is mounted (the containers power off by themselves), then stop.
const mounted = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const root of mounted) spawnSync('umount', ['--lazy', root]);
    process.exit(130);
  });
}

async function main() {
  preflight();
  const t0 = Date.now();
  const before = hostState();
  lower = await ensureLower();
  workDir = fs.mkdtempSync(path.join(process.env.BOOT_WORK_DIR ?? '/var/tmp', 'k8s-host-reconcile-boot-'));
  let plan;
  if (process.env.BOOT_ENTRIES) plan = [{ seed: 'entries', entries: process.env.BOOT_ENTRIES.split(',').map(byId) }];
  else if (process.env.BOOT_SEED) {
    const s = Number(process.env.BOOT_SEED);
    plan = hosts(NSPAWN, s).slice(s - 1);
  } else {
    const n = process.env.BOOT_SEEDS ? Number(process.env.BOOT_SEEDS) : seedsFor(NSPAWN, 3);
    plan = hosts(NSPAWN, n);
  }
  // The package layers the planned hosts boot on start building now, beside the stock host's boots (a failed build is
  // reported by the host that needs it, which asks again).
  for (const name of new Set(plan.flatMap((h) => h.entries.flatMap((e) => e.layers ?? [])))) ensureLayer(lower, name).catch(() => {});
  // The stock host first: nothing planted, so no promise may be taken back.
  const stock = await runRecipe([], 'stock');
  const stockWithdrawn = (stock.promises ?? []).filter((p) => p.withdrawn_by.length > 0);
  for (const p of stockWithdrawn) for (const w of p.withdrawn_by) stockLines.add(lineKey(w));
  const stockOk = !failedRun(stock) && stockWithdrawn.length === 0;
  const stockHead = `stock host (no entries) ${stock.seconds.toFixed(1)} s (boots ${stock.boots.map((b) => b.toFixed(1)).join(' + ')} s)`;
  if (stockOk) say(`ok   ${stockHead}`);
  else {
    say(`FAIL ${stockHead}`);
    for (const b of stock.broken) say(`  broken promise: ${b.promise} ${b.phase}: ${b.observed}`);
    for (const p of stock.problems) say(`  problem: ${p}`);
    for (const p of stockWithdrawn) say(`  withdrawn on a stock host: ${p.id}: ${p.withdrawn_by.map(describeLine).join(' | ')}`);
  }
  say(`boot farm: ${plan.length} host${plan.length === 1 ? '' : 's'} from ${NSPAWN.length} catalogue entries, ${process.env.BOOT_JOBS ?? 2} at a time; work in ${workDir}`);
  const jobs = Number(process.env.BOOT_JOBS ?? 2);
  let passed = stockOk ? 1 : 0;
  let failed = stockOk ? 0 : 1;
  const minimal = [];
  const results = await pool(plan, jobs, async (h) => {
    const r = await runRecipe(h.entries, `seed ${h.seed}`);
    const head = `seed ${h.seed} [${h.entries.map((e) => e.id).join(' ')}] ${r.seconds.toFixed(1)} s (boots ${r.boots.map((b) => b.toFixed(1)).join(' + ')} s)`;
    if (!failedRun(r)) {
      say(`ok   ${head}`);
      return { h, r, ok: true };
    }
    const lines = [`FAIL ${head}`];
    for (const b of r.broken) lines.push(`  broken promise: ${b.promise} ${b.phase}: ${b.observed}`);
    for (const p of r.problems) lines.push(`  problem: ${p}`);
    say(lines.join('\n'));
    return { h, r, ok: false };
  });
  for (const { h, r, ok } of results) {
    if (ok) {
      passed++;
      continue;
    }
    failed++;
    if (r.broken.length === 0 || process.env.BOOT_SHRINK === '0') continue;
    // Each broken promise is shrunk on its own, unless a known minimal recipe inside this host breaks it already.
    for (const target of [...new Set(r.broken.map(sig))]) {
      const known = minimal.find((m) => m.sig === target && m.entries.every((e) => h.entries.includes(e)));
      if (known) {
        say(`seed ${h.seed}: ${target}: as minimal recipe #${minimal.indexOf(known) + 1} (${known.entries.map((e) => e.id).join(', ')})`);
        continue;
      }
      const small = await shrink(h.entries, target, r.broken.find((b) => sig(b) === target)?.holder);
      minimal.push({ entries: small, sig: target });
      say(`minimal recipe #${minimal.length} (from seed ${h.seed}): ${target}:\n${describeRecipe(small)}`);
    }
  }
  // What took promises back, over all hosts: an unknown on a stock file shows on every host (a false alarm to fix).
  const lines = new Map();
  for (const { r } of results) for (const p of r.promises ?? []) for (const w of p.withdrawn_by) {
    // An unknown's line starts "unknown:" already.
    const key = `${describeLine(w)} (withdraws ${p.id})`;
    lines.set(key, (lines.get(key) ?? 0) + 1);
  }
  if (lines.size > 0) say(`withdrawals (hosts):\n${[...lines].sort((a, b) => b[1] - a[1]).map(([k, n]) => `  ${String(n).padStart(3)}  ${k}`).join('\n')}`);
  if (process.env.BOOT_REPORT) {
    fs.writeFileSync(process.env.BOOT_REPORT, JSON.stringify(results.map(({ h, r, ok }) => ({ seed: h.seed, entries: h.entries.map((e) => e.id), ok, broken: r.broken, problems: r.problems, seconds: r.seconds, boots: r.boots, planRc: r.planRc, applyRc: r.applyRc })), null, 2));
  }
  // This machine's kernel state: the containers must not have touched it.
  const changed = stateDiff(before, hostState());
  if (changed.length === 0) {
    passed++;
    say('ok   this machine\'s swap (/proc/swaps), modules (/sys/module) and sysctls (net.*, vm.*) are unchanged');
  } else {
    failed++;
    say(`FAIL this machine's kernel state changed during the farm run:\n  ${changed.join('\n  ')}`);
  }
  if (process.env.BOOT_KEEP !== '1') fs.rmSync(workDir, { recursive: true, force: true });
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  say(`time: ${((Date.now() - t0) / 1000).toFixed(0)} s; ${bootTimes.length} boots, ${mean(bootTimes).toFixed(1)} s per boot; ${mean(results.map((x) => x.r.seconds)).toFixed(1)} s per seed (plant, two boots, judge)`);
  say(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

main().then((code) => process.exit(code), (e) => {
  say(`boot farm: ${e.message}`);
  say('0 passed, 1 failed');
  process.exit(1);
});
