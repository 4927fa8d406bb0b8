#!/usr/bin/env node
// The fleet test (issue 30): FLEET_HOSTS (default 20) Debian hosts booted
// with systemd as PID 1 in systemd-nspawn (the boot farm's rootfs, one
// overlay per host), each with its faults (faults.mjs), reachable over SSH on
// a bridge inside a network namespace this test creates (so nothing is added
// to this machine's own network). The Ansible collection, built and installed
// offline, runs over SSH with --check (plan) for each FLEET_FORKS value, timed,
// then once for real (apply). Every host's verdict in the fleet report must be
// the one its faults imply, and on every host the report calls ready, ss and
// sysctl inside the container must show the ports free and ip_forward = 1.
// Last, this machine's swap, modules and sysctls must be as they were.
//
//   node test/fleet/run.mjs                       20 hosts, forks 10 (the CI variant)
//   FLEET_FORKS=1,5,10,20 node test/fleet/run.mjs the scaling measurement
//   FLEET_HOSTS=4 FLEET_KEEP=1                    fewer hosts; keep the work directory
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FarmHost, writeFiles } from '../boot/lib/boot.mjs';
import { ownCgroup } from '../helpers/own-cgroup.mjs';
import { CACHE_DIR, ensureRootfsTar, rootfsKey } from '../boot/lib/rootfs.mjs';
import { hostState, stateDiff } from '../boot/lib/host-state.mjs';
import { FLEET_DESIRED, RECIPES, expectedVerdict, recipeFiles } from './faults.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const say = (m) => process.stdout.write(`${m}\n`);
const NSPAWN_ENV = { ...process.env, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '1' };
const BRIDGE = 'fleet0';
const ip = (i) => `10.30.0.${10 + i}`;

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status}): ${(r.stderr || r.stdout || '').trim()}`);
  return r.stdout;
}

/** As the boot farm: the extracted rootfs next to its tarball, the read-only layer of every host. */
function lowerDir() {
  const tar = ensureRootfsTar();
  const dir = path.join(CACHE_DIR, `rootfs-${rootfsKey()}.d`);
  if (fs.existsSync(path.join(dir, '.extracted'))) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['-C', dir, '--numeric-owner', '-xpf', tar]);
  fs.writeFileSync(path.join(dir, '.extracted'), '');
  return dir;
}

/**
 * The containers' links are a bridge and veth pairs. The test never loads a
 * module: on a kernel where bridge or veth are modules, they must be loaded
 * already (.ci/run does it before the tests; docs/fleets.md).
 */
function networkPreflight() {
  if (!fs.existsSync('/proc/modules')) return; // no loadable modules: all built in
  const builtin = (() => {
    try {
      return fs.readFileSync(`/lib/modules/${execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim()}/modules.builtin`, 'utf8');
    } catch {
      return '';
    }
  })();
  const missing = ['bridge', 'veth'].filter((m) => !fs.existsSync(`/sys/module/${m}`) && !new RegExp(`/${m}\\.ko`).test(builtin));
  if (missing.length > 0) throw new Error(`kernel modules ${missing.join(', ')} are not loaded, and this test loads none on this machine: modprobe -a ${missing.join(' ')} first`);
}

/**
 * inotify instances are counted per user of this machine (fs.inotify.max_user_instances, 128 on Debian),
 * and every container's root is this machine's root: 20 booted systemd hosts use about 6 each, and a
 * host that gets none stalls at boot. Units that only wait for a person at a console (password
 * prompts) and root's user manager (started by each SSH login) are masked: 4 per host remain. None of
 * them holds a port or writes a sysctl.
 */
const INOTIFY_SPARING = Object.fromEntries(
  ['systemd-ask-password-console.path', 'systemd-ask-password-wall.path', 'user@0.service'].map((u) => [`/etc/systemd/system/${u}`, { link: '/dev/null' }]),
);

// --- inside the private network namespace -----------------------------------------------------------------

const children = new Map();
const mounted = [];
function cleanup() {
  for (const c of children.values()) c.kill('SIGKILL');
  for (const h of mounted) spawnSync('umount', ['--lazy', h.root]);
}

/** Asks every container to power off (nspawn turns SIGTERM into a halt for systemd), then forces what is left. */
async function stopAll(graceMs) {
  for (const c of children.values()) c.kill('SIGTERM');
  const t = Date.now();
  while (children.size > 0 && Date.now() - t < graceMs) await new Promise((res) => setTimeout(res, 250));
  cleanup();
}

function boot(host, i) {
  const console_ = fs.openSync(path.join(host.dir, 'console.log'), 'w');
  // Each host in a cgroup of its own: side by side in one, their units would share directories (own-cgroup.mjs).
  const cg = ownCgroup(`fleet-${i}`);
  const [cmd, args] = cg.wrap('systemd-nspawn', [
    '-q', '-b', '-D', host.root, '--register=no', '--keep-unit', '--private-network', `--network-bridge=${BRIDGE}`,
    `--machine=fleet-${i}`, '--console=pipe',
  ]);
  const child = spawn(cmd, args, { env: NSPAWN_ENV, stdio: ['ignore', console_, console_] });
  children.set(i, child);
  child.on('exit', () => {
    children.delete(i);
    fs.closeSync(console_);
    cg.dispose();
  });
  return child;
}

function run(cmd, args, timeoutMs) {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d) => (err += d));
    const t = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
    c.on('exit', (code) => {
      clearTimeout(t);
      resolve({ code, err });
    });
  });
}

/** Up when SSH answers and systemd has no job left (is-system-running --wait returns on running or degraded). */
async function waitSsh(addr, key, deadline) {
  for (;;) {
    const r = await run('ssh', [...sshOpts(key), '-o', 'ConnectTimeout=2', `root@${addr}`, 'systemctl is-system-running --wait >/dev/null 2>&1; true'], 120_000);
    if (r.code === 0) return;
    if (Date.now() > deadline) throw new Error(`${addr}: no SSH after boot: ${r.err.trim()}`);
    await new Promise((res) => setTimeout(res, 1000));
  }
}
const sshOpts = (key) => ['-i', key, '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-o', 'BatchMode=yes'];

function ansible(work, args, env = {}) {
  const t0 = Date.now();
  const r = spawnSync('ansible-playbook', args, {
    cwd: work, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024,
    env: {
      ...process.env,
      ANSIBLE_CONFIG: path.join(work, 'ansible.cfg'), ANSIBLE_HOME: path.join(work, 'ansible-home'),
      ANSIBLE_COLLECTIONS_PATH: path.join(work, 'collections'), ANSIBLE_HOST_KEY_CHECKING: 'False',
      ANSIBLE_PIPELINING: 'True', ANSIBLE_RETRY_FILES_ENABLED: '0', ANSIBLE_NOCOLOR: '1', ANSIBLE_STDOUT_CALLBACK: 'json',
      ...env,
    },
  });
  const seconds = (Date.now() - t0) / 1000;
  let doc;
  try {
    doc = JSON.parse(r.stdout);
  } catch {
    throw new Error(`ansible-playbook printed no JSON (exit ${r.status}): ${r.stdout.slice(-2000)}${r.stderr.slice(-2000)}`);
  }
  return { status: r.status, seconds, stats: doc.stats };
}

/** The fleet report over the fetched documents: verdict per host, from its JSON output. */
function report(work, fetched) {
  const r = spawnSync(process.execPath, [path.join(REPO, 'dist/reconcile.mjs'), 'report', '--json', '-o', path.join(work, 'report'), fetched], { encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 2) throw new Error(`reconcile report failed (exit ${r.status}): ${r.stderr}`);
  return new Map(JSON.parse(r.stdout).hosts.map((h) => [h.host, h]));
}

async function inNamespace() {
  const n = Number(process.env.FLEET_HOSTS ?? 20);
  const forksList = (process.env.FLEET_FORKS ?? '10').split(',').map(Number);
  const work = fs.mkdtempSync(path.join(process.env.FLEET_WORK_DIR ?? '/var/tmp', 'k8s-host-reconcile-fleet-'));
  let failed = 0;
  let passed = 0;
  const check = (ok, line) => {
    if (ok) passed++;
    else failed++;
    say(`${ok ? 'ok  ' : 'FAIL'} ${line}`);
  };
  try {
    sh('ip', ['link', 'set', 'lo', 'up']);
    sh('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
    sh('ip', ['addr', 'add', '10.30.0.1/24', 'dev', BRIDGE]);
    sh('ip', ['link', 'set', BRIDGE, 'up']);

    // The collection, built and installed as docs/fleets.md says (no network: this namespace has none outside).
    const tarball = sh(process.execPath, [path.join(REPO, 'scripts/collection.mjs'), '--output', path.join(work, 'dist')]).trim();
    sh('ansible-galaxy', ['collection', 'install', '-p', path.join(work, 'collections'), tarball], { env: { ...process.env, ANSIBLE_HOME: path.join(work, 'ansible-home') } });
    const key = path.join(work, 'id_ed25519');
    sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    fs.writeFileSync(path.join(work, 'desired.yaml'), FLEET_DESIRED);
    fs.writeFileSync(path.join(work, 'ansible.cfg'), '');

    const lower = lowerDir();
    const hosts = [];
    const t0 = Date.now();
    for (let i = 1; i <= n; i++) {
      const recipe = RECIPES[(i - 1) % RECIPES.length];
      const host = new FarmHost(path.join(work, `h${i}`), lower, `fleet-${i}`);
      mounted.push(host);
      writeFiles(host.root, {
        ...recipeFiles(recipe),
        '/etc/hostname': `fleet-${String(i).padStart(2, '0')}\n`,
        '/etc/network/interfaces.d/host0': `auto host0\niface host0 inet static\n    address ${ip(i)}/24\n`,
        '/root/.ssh/authorized_keys': { content: fs.readFileSync(`${key}.pub`, 'utf8'), mode: 0o600 },
        ...INOTIFY_SPARING,
      });
      fs.chmodSync(path.join(host.root, 'root/.ssh'), 0o700);
      hosts.push({ i, name: `fleet-${String(i).padStart(2, '0')}`, addr: ip(i), recipe, host });
      boot(host, i);
    }
    const deadline = Date.now() + 300_000;
    await Promise.all(hosts.map((h) => waitSsh(h.addr, key, deadline)));
    say(`booted ${n} hosts, all reachable over SSH, in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    fs.writeFileSync(path.join(work, 'inventory.ini'), [
      '[k8s_cluster]',
      ...hosts.map((h) => `${h.name} ansible_host=${h.addr}`),
      '',
      '[k8s_cluster:vars]',
      'ansible_user=root',
      `ansible_ssh_private_key_file=${key}`,
      "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'",
      'ansible_python_interpreter=/usr/bin/python3',
      `reconcile_desired_state=${path.join(work, 'desired.yaml')}`,
      '',
    ].join('\n'));
    fs.writeFileSync(path.join(work, 'site.yml'), '- ansible.builtin.import_playbook: k8s_host_reconcile.k8s_host_reconcile.prepare\n');

    const judge = (mode, fetched, run) => {
      const got = report(work, fetched);
      for (const h of hosts) {
        const want = expectedVerdict(h.recipe, mode);
        const r = got.get(h.name);
        const failedByPlay = (run.stats[h.name]?.failures ?? 0) > 0;
        // The play fails exactly the hosts a person must look at.
        const wantFailed = want !== 'changes' && want !== 'ready';
        check(r?.verdict === want && failedByPlay === wantFailed,
          `${mode} ${h.name} [${h.recipe.join(' ')}]: verdict ${r?.verdict ?? 'none'} (implied: ${want}), play ${failedByPlay ? 'failed' : 'ok'} the host`
          + (r && r.verdict !== want ? `\n       operator: ${r.operator.map((o) => `${o.resource}: ${o.summary}`).join(' | ')}\n       unknowns: ${r.unknowns.join(' | ')}\n       errors: ${r.errors.join(' | ')}` : ''));
      }
      return got;
    };

    const times = [];
    for (const forks of forksList) {
      const fetched = path.join(work, `fetched-check-f${forks}`);
      const run = ansible(work, ['-i', 'inventory.ini', 'site.yml', '--check', '--forks', String(forks), '-e', `reconcile_fetch_dir=${fetched}`]);
      times.push([forks, run.seconds]);
      say(`time: --check on ${n} hosts with forks ${forks}: ${run.seconds.toFixed(1)} s`);
      judge('plan', fetched, run);
    }
    const applyForks = forksList[forksList.length - 1];
    const fetched = path.join(work, 'fetched-apply');
    const run = ansible(work, ['-i', 'inventory.ini', 'site.yml', '--forks', String(applyForks), '-e', `reconcile_fetch_dir=${fetched}`]);
    say(`time: apply on ${n} hosts with forks ${applyForks}: ${run.seconds.toFixed(1)} s`);
    const got = judge('apply', fetched, run);
    // The real state, read inside each host the report calls ready: the promise kept, not just claimed.
    for (const h of hosts.filter((x) => got.get(x.name)?.verdict === 'ready')) {
      const out = spawnSync('ssh', [...sshOpts(key), `root@${h.addr}`, 'sysctl -n net.ipv4.ip_forward; ss -ltnH'], { encoding: 'utf8' }).stdout;
      const [fwd, ...listen] = out.trim().split('\n');
      const held = listen.map((l) => Number(l.trim().split(/\s+/)[3]?.split(':').pop())).filter((p) => [2379, 2380, 6443, 10250, 10257, 10259].includes(p));
      check(fwd === '1' && held.length === 0, `${h.name} after apply: ip_forward=${fwd}, control-plane ports listening: [${held.join(', ')}]`);
    }
    if (times.length > 1) say(`time: forks -> seconds for ${n} hosts: ${times.map(([f, s]) => `${f}: ${s.toFixed(1)}`).join(', ')}`);
  } finally {
    await stopAll(60_000);
    for (const h of mounted) h.dispose(process.env.FLEET_KEEP === '1');
    if (process.env.FLEET_KEEP !== '1') fs.rmSync(work, { recursive: true, force: true });
    else say(`kept ${work}`);
  }
  return { passed, failed };
}

// --- outside: this machine's state before and after, the namespace around the run ----------------------------

async function main() {
  if (process.env.FLEET_IN_NETNS === '1') {
    for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => void stopAll(30_000).then(() => process.exit(130)));
    const { passed, failed } = await inNamespace();
    fs.writeFileSync(process.env.FLEET_RESULT, JSON.stringify({ passed, failed }));
    return;
  }
  if (process.getuid?.() !== 0) throw new Error('the fleet test needs root (overlay mounts, systemd-nspawn, a network namespace)');
  for (const cmd of ['systemd-nspawn', 'mmdebstrap', 'ansible-playbook', 'ansible-galaxy', 'ssh', 'unshare', 'ip']) {
    if (spawnSync('sh', ['-c', `command -v ${cmd}`]).status !== 0) throw new Error(`${cmd} is missing: bash scripts/ensure-debian-packages.sh`);
  }
  if (!fs.existsSync(path.join(REPO, 'dist/reconcile.mjs'))) throw new Error('dist/reconcile.mjs is missing: npm run -s bundle');
  networkPreflight();
  const t0 = Date.now();
  const before = hostState();
  const result = path.join(fs.mkdtempSync('/tmp/fleet-result-'), 'result.json');
  // A network namespace of our own: the bridge, the veths and the SSH traffic live and die in it.
  const r = spawnSync('unshare', ['--net', process.execPath, fileURLToPath(import.meta.url)], {
    stdio: 'inherit', env: { ...process.env, FLEET_IN_NETNS: '1', FLEET_RESULT: result },
  });
  let { passed, failed } = fs.existsSync(result) ? JSON.parse(fs.readFileSync(result, 'utf8')) : { passed: 0, failed: 1 };
  fs.rmSync(path.dirname(result), { recursive: true, force: true });
  if (r.status !== 0 && failed === 0) failed++;
  const changed = stateDiff(before, hostState());
  if (changed.length === 0) {
    passed++;
    say("ok   this machine's swap (/proc/swaps), modules (/sys/module) and sysctls (net.*, vm.*) are unchanged");
  } else {
    failed++;
    say(`FAIL this machine's kernel state changed during the fleet run:\n  ${changed.join('\n  ')}`);
  }
  say(`time: ${((Date.now() - t0) / 1000).toFixed(0)} s in all`);
  say(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

main().then((code) => process.exit(code ?? 0), (e) => {
  say(`fleet: ${e.message}`);
  if (process.env.FLEET_IN_NETNS !== '1') say('0 passed, 1 failed');
  else cleanup();
  process.exit(1);
});
