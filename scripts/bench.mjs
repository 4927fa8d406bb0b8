#!/usr/bin/env node
// npm run bench: every row of BENCHMARKS.md, each a ratio against a yardstick
// measured in the same run (hyperfine, median), plus the machine line. Writes
// BENCHMARKS.md and prints it. Fixtures (large sysctl trees, many processes, a
// lab-like image) are generated here and removed at the end; the processes are
// the bench's own. Reads this machine only (live --plan), never changes it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { profile, profilingBundle, topEntries } from './bench/profile.mjs';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BUNDLE = path.join(repo, 'dist/reconcile.mjs');
const NODE = process.execPath;
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const work = mkdtempSync(path.join(os.tmpdir(), 'bench-'));
const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`; // hyperfine takes command lines
const say = (m) => process.stderr.write(`[bench] ${m}\n`);

function need(tool) {
  if (spawnSync('sh', ['-c', 'command -v "$1"', 'sh', tool]).status !== 0) throw new Error(`${tool} is missing (apt-get install ${tool === 'hyperfine' ? 'hyperfine' : tool})`);
}

/** Median seconds of each command, all measured in one hyperfine run. */
function hyperfine(commands, opts) {
  return hyperfineFull(commands, opts).map((x) => x.median);
}

/** Per command: median wall seconds, and mean CPU seconds (user + system), which a loaded machine disturbs less. */
function hyperfineFull(commands, { prepare, runs = RUNS } = {}) {
  const out = path.join(work, `hf-${Math.random().toString(16).slice(2)}.json`);
  // -i: --plan exits 2 when changes are pending, which is what the bench plans against.
  const args = ['--style', 'none', '--warmup', '1', '--runs', String(runs), '--export-json', out, '-i', '-N'];
  if (prepare) args.push('--prepare', prepare);
  const r = spawnSync('hyperfine', [...args, ...commands], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) {
    // -N (no shell) needs hyperfine >= 1.13; commands with a prepare step need a shell.
    const r2 = spawnSync('hyperfine', [...args.filter((a) => a !== '-N'), ...commands], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (r2.status !== 0) throw new Error(`hyperfine failed: ${r2.stderr}`);
  }
  return JSON.parse(readFileSync(out, 'utf8')).results.map((x) => ({ median: x.median, cpu: x.user + x.system }));
}

/**
 * Median peak RSS of `node BUNDLE ...args` (args null: `node -e 0`). v8Flags
 * only take a mechanism out to attribute memory to it in the profile text;
 * the row itself is always measured without any.
 */
function peakRssMiB(args, v8Flags = []) {
  const samples = [];
  for (let i = 0; i < 5; i++) {
    const r = spawnSync('/usr/bin/time', ['-f', '%M', NODE, ...v8Flags, ...(args === null ? ['-e', '0'] : [BUNDLE, ...args])], { encoding: 'utf8' });
    samples.push(Number(r.stderr.trim().split('\n').pop()) / 1024);
  }
  return samples.sort((a, b) => a - b)[2];
}

function desired(name, text) {
  const p = path.join(work, name);
  writeFileSync(p, text);
  return p;
}

const LIVE_DESIRED = `reports_dir: /tmp/bench-never-written
facts:
  source: native
resources:
  - type: SwapOff
  - type: ModulesLoad
    file: /etc/modules-load.d/k8s.conf
    modules: [overlay, br_netfilter]
  - type: SysctlFile
    file: /etc/sysctl.d/k8s.conf
    settings:
      net.ipv4.ip_forward: 1
      net.bridge.bridge-nf-call-iptables: 1
      net.bridge.bridge-nf-call-ip6tables: 1
  - type: PortFree
    ports: [2379, 2380, 6443, 10250, 10257, 10259]
`;

function sysctlTree(n) {
  const root = path.join(work, `sysctl-${n}`);
  const dirs = ['etc/sysctl.d', 'usr/lib/sysctl.d', 'run/sysctl.d'];
  for (const d of dirs) mkdirSync(path.join(root, d), { recursive: true });
  for (let i = 0; i < n; i++) {
    writeFileSync(path.join(root, dirs[i % dirs.length], `${String(i).padStart(5, '0')}-bench.conf`), `# bench ${i}\nnet.ipv4.conf.lo${i}.log_martians = ${i % 2}\nvm.bench_${i} = ${i}\n`);
  }
  writeFileSync(path.join(root, 'etc/fstab'), '');
  return root;
}

async function labTree() {
  const helper = path.join(work, 'lab-image.mjs');
  await build({ entryPoints: [path.join(repo, 'test/helpers/lab-image.ts')], bundle: true, platform: 'node', format: 'esm', outfile: helper, logLevel: 'warning' });
  const { buildLabImage } = await import(helper);
  const master = path.join(work, 'lab-master');
  mkdirSync(master);
  return { master, desired: buildLabImage(master) };
}

/** n processes of our own, each holding `fds` open descriptors; resolved once all are up. */
async function manyProcesses(n, fds) {
  const redirs = Array.from({ length: fds }, (_, i) => `${i + 3}</dev/null`).join(' ');
  const kids = [];
  for (let i = 0; i < n; i++) {
    kids.push(spawn('sh', ['-c', `exec ${redirs} sleep 600`], { stdio: 'ignore', detached: false }));
  }
  await new Promise((r) => setTimeout(r, 1500));
  return () => kids.forEach((k) => k.kill('SIGKILL'));
}

function listen(port) {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

const fmt = (x, d = 3) => x.toFixed(d);
const rows = [];
function row(measure, now, target, ok, note = '') {
  const r = { measure, now, target, ok, note };
  rows.push(r);
  say(`${measure}: ${now} (target ${target}) ${ok ? 'ok' : 'OVER'}`);
  return r;
}
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

async function main() {
  need('hyperfine');
  const loadBefore = load();
  if (!readFileSync(BUNDLE)) throw new Error('run npm run bundle first');
  const live = desired('live.yaml', LIVE_DESIRED);
  const facts = desired('facts.yaml', 'reports_dir: /tmp/bench-never-written\nfacts:\n  source: native\nresources: []\n');

  say('start-up and live plan');
  const startup = hyperfineFull([`${NODE} -e 0`, `${NODE} ${BUNDLE} --version`, `${NODE} ${BUNDLE} --plan -f ${live}`]);
  const [n0, ver, plan] = startup.map((x) => x.median);
  // CPU time (user + system, this process and its children) beside the wall time: on a shared machine the wall ratio carries the others' load.
  const cpuRatio = (x) => `CPU ${fmt(x.cpu / startup[0].cpu, 2)}×: ${fmt(x.cpu)} s vs ${fmt(startup[0].cpu)} s`;
  const planRow = row('live `--plan` / `node -e 0`', `${fmt(plan / n0, 2)}× (${fmt(plan)} s vs ${fmt(n0)} s; ${cpuRatio(startup[2])})`, '≤ 2×', plan / n0 <= 2);
  const versionRow = row('`--version` / `node -e 0`', `${fmt(ver / n0, 2)}× (${fmt(ver)} s; ${cpuRatio(startup[1])})`, '≤ 1.3×', ver / n0 <= 1.3);
  let rehearsal = null;

  say('boot rehearsal');
  // SysctlFile's rehearsal inside the live plan (its own wall time, from --json), net keys only.
  if (process.getuid?.() !== 0) row('boot rehearsal in live `--plan` (SysctlFile)', 'not root', '≤ 0.5 s', false, 'not measured');
  else {
    const ms = [];
    for (let i = 0; i < RUNS; i++) {
      const r = spawnSync(NODE, [BUNDLE, '--plan', '--json', '-f', live], { encoding: 'utf8' });
      const reh = JSON.parse(r.stdout).resources.find((x) => x.type === 'SysctlFile')?.observed?.rehearsal;
      if (reh?.status !== 'ran') throw new Error(`the rehearsal did not run: ${reh?.reason ?? 'no record'}`);
      ms.push(reh.ms);
    }
    const med = ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)] / 1000;
    rehearsal = med;
    row('boot rehearsal in live `--plan` (SysctlFile, `observed.rehearsal.ms`)', `${fmt(med)} s (${fmt(med / plan * 100, 0)}% of the live plan)`, '≤ 0.5 s', med <= 0.5);
  }

  say('sysctl trees');
  const t100 = sysctlTree(100);
  const t10k = sysctlTree(10_000);
  const sysctlOnly = desired('sysctl.yaml', `reports_dir: /bench-reports\nresources:\n  - type: SysctlFile\n    file: /etc/sysctl.d/k8s.conf\n    settings:\n      net.ipv4.ip_forward: 1\n`);
  const trees = hyperfineFull([`${NODE} ${BUNDLE} --plan -f ${sysctlOnly} --root ${t100}`, `${NODE} ${BUNDLE} --plan -f ${sysctlOnly} --root ${t10k}`], { runs: 3 });
  const [s100, s10k] = trees.map((x) => x.median);
  const treeRow = row('`--plan --root`, 10,000 files in sysctl.d dirs', `${fmt(s10k, 2)} s (100 files: ${fmt(s100, 2)} s; per file ${fmt(((s10k - s100) / 9900) * 1e6, 0)} µs; CPU ${fmt(trees[1].cpu, 2)} s)`, '≤ 1 s, linear', s10k <= 1);

  say('process scan');
  const server = await listen(2379).catch(() => null);
  if (!server) row('live `--plan`, busy port + 3,000 processes × 20 fds', 'port 2379 is taken on this machine', '≤ +0.3 s', false, 'not measured');
  else {
    const [quiet] = hyperfine([`${NODE} ${BUNDLE} --plan -f ${live}`], { runs: 5 });
    const stop = await manyProcesses(3000, 20);
    let busy;
    try {
      [busy] = hyperfine([`${NODE} ${BUNDLE} --plan -f ${live}`], { runs: 5 });
    } finally {
      stop();
      server.close();
    }
    row('live `--plan`, busy port + 3,000 processes × 20 fds', `${busy >= quiet ? '+' : '−'}${fmt(Math.abs(busy - quiet), 2)} s (${fmt(busy, 2)} s vs ${fmt(quiet, 2)} s)`, '≤ +0.3 s', busy - quiet <= 0.3);
  }

  say('facts');
  let factsRow = null;
  let ansibleTime = null;
  if (spawnSync('sh', ['-c', 'command -v ansible']).status === 0) {
    const both = hyperfineFull([`ansible localhost -m setup`, `${NODE} ${BUNDLE} --facts -f ${facts} --json`], { runs: 3 });
    const [ans, nat] = both.map((x) => x.median);
    ansibleTime = ans;
    factsRow = row('`ansible localhost -m setup` / `reconcile --facts`', `${fmt(ans / nat, 1)}× (${fmt(ans, 2)} s vs ${fmt(nat, 3)} s; CPU ${fmt(both[0].cpu / both[1].cpu, 1)}×)`, '≥ 20×', ans / nat >= 20);
  } else row('`ansible localhost -m setup` / `reconcile --facts`', 'ansible not installed', '≥ 20×', false, 'not measured');

  say('memory');
  const rss = peakRssMiB(['--plan', '-f', live]);
  const memoryRow = row('peak memory, live `--plan`', `${fmt(rss, 1)} MiB`, '≤ 60 MiB', rss <= 60);

  say('apply on a lab-like image');
  const lab = await labTree();
  const img = path.join(work, 'lab');
  const prep = `rm -rf ${q(img)} && cp -a ${q(lab.master)} ${q(img)}`;
  const d = path.join(img, 'root/desired-state.yaml');
  const [apply] = hyperfine([`${NODE} ${BUNDLE} --apply -f ${q(d)} --root ${q(img)}`], { prepare: prep, runs: 5 });
  const prep2 = `${prep} && ${q(NODE)} ${q(BUNDLE)} --apply -f ${q(d)} --root ${q(img)} >/dev/null 2>&1`;
  const [noop] = hyperfine([`${NODE} ${BUNDLE} --apply -f ${q(d)} --root ${q(img)}`], { prepare: prep2, runs: 5 });
  row('`--apply --root`, lab-like image / `node -e 0`', `${fmt(apply / n0, 2)}× (${fmt(apply, 3)} s)`, 'reference', true);
  row('second (no-op) `--apply --root` / `node -e 0`', `${fmt(noop / n0, 2)}× (${fmt(noop, 3)} s)`, 'reference', true);

  // What stands in the way of each start-up row still over its target: where the time goes (node --cpu-prof).
  const why = [];
  if (!versionRow.ok || !planRow.ok || (factsRow && !factsRow.ok) || !memoryRow.ok || !treeRow.ok) {
    say('profiles of the rows over target');
    const bundle = await profilingBundle(work);
    const kb = (bundle.bytes / 1024).toFixed(0);
    if (!versionRow.ok) {
      const p = profile(bundle, ['--version'], { runs: 5 });
      const compile = p.by.get('V8: parse and compile the bundle (compileSourceTextModule)') ?? 0;
      why.push(`### ${versionRow.measure}

--version initialises nothing but the CLI edge (the engine is imported lazily), yet node parses and compiles the whole single-file bundle (${kb} KB) before it runs a line: ${fmt(compile, 1)} ms in the profile, against ${fmt((startup[1].cpu - startup[0].cpu) * 1000, 0)} ms of CPU over \`node -e 0\`. Reaching 1.3× needs a bundle of roughly a third of the size, or a second file loaded on demand, which the one-bundle rule excludes. \`node --cpu-prof\` (self time, profiled run of ${fmt(p.totalMs, 0)} ms):

${topEntries(p).join('\n')}`);
    }
    if (!planRow.ok) {
      const p = profile(bundle, ['--plan', '-f', live], { runs: 3 });
      why.push(`### ${planRow.measure}

The live plan runs commands: the SysctlFile boot rehearsal${rehearsal !== null ? ` (${fmt(rehearsal, 3)} s of the ${fmt(plan, 3)} s)` : ''} starts a second node inside \`unshare -m -n\`, which mounts and runs the host's systemd-sysctl and sysctl --system (about a dozen processes); the facts run \`ip -4 route get\`. Time spent in those shows as idle below; the rest is start-up (the bundle's compile) and the plan itself. \`node --cpu-prof\` (self time, profiled run of ${fmt(p.totalMs, 0)} ms):

${topEntries(p).join('\n')}`);
    }
    if (factsRow && !factsRow.ok) {
      const p = profile(bundle, ['--facts', '-f', facts, '--json'], { runs: 3 });
      why.push(`### ${factsRow.measure}

20× needs \`--facts\` under ${fmt((ansibleTime / 20) * 1000, 0)} ms; \`node -e 0\` alone takes ${fmt(n0 * 1000, 0)} ms here and parsing the bundle ${fmt(p.by.get('V8: parse and compile the bundle (compileSourceTextModule)') ?? 0, 0)} ms more, so the floor is node's start-up plus the bundle's compile, the facts' own reads and \`ip -4 route get\`; python is no longer started (the ansible-core version and lsb_release's output are read from their files). \`node --cpu-prof\` (self time, profiled run of ${fmt(p.totalMs, 0)} ms):

${topEntries(p).join('\n')}`);
    }
    if (!treeRow.ok) {
      why.push(`### ${treeRow.measure}\n\nThe 10,000-file plan took ${fmt(s10k, 2)} s of wall time but ${fmt(trees[1].cpu, 2)} s of CPU (user + system)${trees[1].cpu <= 1 ? ', within the target: the rest is waiting for a CPU on this shared machine (see the load average above)' : ''}; per file ${fmt(((trees[1].cpu - trees[0].cpu) / 9900) * 1e6, 0)} µs of CPU.`);
    }
    if (!memoryRow.ok) {
      const base = peakRssMiB(null);
      const verRss = peakRssMiB(['--version']);
      const planArgs = ['--plan', '-f', live];
      const noOpt = peakRssMiB(planArgs, ['--no-opt']);
      const smallYoung = peakRssMiB(planArgs, ['--max-semi-space-size=1']);
      const bare = peakRssMiB(['--plan', '-f', facts]);
      why.push(`### ${memoryRow.measure}

\`node -e 0\` peaks at ${fmt(base, 1)} MiB here; loading the bundle (its source and compiled code, --version) brings it to ${fmt(verRss, 1)} MiB; the plan's own work adds the rest (${fmt(rss - verRss, 1)} MiB). A plan of no resources (facts and reports only) peaks at ${fmt(bare, 1)} MiB. Two V8 mechanisms, each taken out for this attribution only (the row above runs the tool as shipped), account for most of the plan's share:

  - ${fmt(rss - noOpt, 1)} MiB: the optimising compiler (\`--no-opt\`: ${fmt(noOpt, 1)} MiB). Its first compile pages in its own code (~3.5 MiB of node's binary) and compile-zone memory; it compiles what runs hot in the unit graph's load: path.join/normalize per directory entry, the unit-file parser over every unit file, node's fs wrappers (one call per sync fs call), Dirent per listed entry.
  - ${fmt(rss - smallYoung, 1)} MiB: the young generation's growth (\`--max-semi-space-size=1\`: ${fmt(smallYoung, 1)} MiB). V8 doubles the semi-space each time the bytes surviving scavenges since the last growth exceed it; what survives them here is mostly the unit graph's load (unit-file texts and parsed directives), the desired state's parse (yaml) and execa's runs.`);
    }
  }

  const cpu = (os.cpus()[0]?.model ?? 'unknown cpu').trim();
  const machine = `${os.cpus().length} × ${cpu}, ${fmt(os.totalmem() / 2 ** 30, 0)} GiB, Node.js ${process.version}, ${os.release()}, ${new Date().toISOString().slice(0, 10)}`;
  const table = [
    '| measure | now | target | |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.measure} | ${r.now} | ${r.target} | ${r.ok ? 'ok' : `**over**${r.note ? ` (${r.note})` : ''}`} |`),
  ].join('\n');
  const loadLine = `Load average (1, 5, 15 min; the machine is shared): ${loadBefore} at the start, ${load()} at the end.`;
  const inTheWay = why.length ? `\n## What stands in the way\n\n${why.join('\n\n')}\n` : '';
  const md = `# Benchmarks\n\nWritten by \`npm run bench\` (medians of hyperfine runs; each ratio's yardstick measured in the same run).\n\nMachine: ${machine}\n\n${loadLine}\n\n${table}\n${inTheWay}`;
  writeFileSync(path.join(repo, 'BENCHMARKS.md'), md);
  // docs/performance.md carries the same table between its markers.
  const readme = path.join(repo, 'docs/performance.md');
  const text = readFileSync(readme, 'utf8');
  const start = '<!-- bench:table -->';
  const end = '<!-- /bench:table -->';
  if (text.includes(start) && text.includes(end)) {
    writeFileSync(readme, text.slice(0, text.indexOf(start) + start.length) + `\n${loadLine}\n\n${table}\n` + text.slice(text.indexOf(end)));
  }
  process.stdout.write(md);
}

main()
  .catch((e) => {
    process.stderr.write(`bench: ${e.message}\n`);
    process.exitCode = 1;
  })
  .finally(() => rmSync(work, { recursive: true, force: true }));
