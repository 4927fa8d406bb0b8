// The program that runs inside the rehearsal's private mount + network
// namespace (`unshare -m -n --propagation private -- node -e HELPER`). It is
// constant text: every input (file contents, keys, program paths) arrives as
// JSON on stdin and is used only as file data or as one element of an
// argument array; nothing is ever handed to a shell.
//
// What it does, refusing to go on if it is not in namespaces of its own:
// 1. a tmpfs on /tmp (in this mount namespace only) holds one directory per
//    sysctl.d directory and one file per single file (/etc/sysctl.conf);
// 2. each is bind-mounted read-only over the real path, so the programs
//    read only what the rehearsal laid out;
// 3. per trial: the layout is rewritten under /tmp, a fresh network
//    namespace is made (`unshare --net=FILE true`, kept alive by the bind
//    on FILE), and inside it (`nsenter --net=FILE`):
//    start values unlike the wanted ones are written, systemd-sysctl runs,
//    the keys are read, the seed values are written
//    (what the running kernel holds after apply), `sysctl --system` runs,
//    and the keys are read again. Every key read or written is under
//    /proc/sys/net, which belongs to that namespace alone.
export const REHEARSAL_HELPER = String.raw`
'use strict';
const fs = require('node:fs');
const cp = require('node:child_process');
const input = JSON.parse(fs.readFileSync(0, 'utf8'));
const fail = (m) => { process.stderr.write('rehearsal: ' + m + '\n'); process.exit(3); };
if (fs.readlinkSync('/proc/self/ns/net') === input.outer.net) fail('not in a network namespace of its own');
if (fs.readlinkSync('/proc/self/ns/mnt') === input.outer.mnt) fail('not in a mount namespace of its own');
const run = (cmd, args, opts = {}) => {
  const r = cp.spawnSync(cmd, args, { encoding: 'utf8', env: { PATH: process.env.PATH || '/usr/sbin:/usr/bin:/sbin:/bin', SYSTEMD_LOG_LEVEL: 'warning', SYSTEMD_LOG_TARGET: 'console', LC_ALL: 'C' }, ...opts });
  if (r.error) fail(cmd + ': ' + r.error.message);
  return r;
};
const must = (cmd, args) => {
  const r = run(cmd, args);
  if (r.status !== 0) fail(cmd + ' ' + args.join(' ') + ' exited ' + r.status + ': ' + (r.stderr || '').trim());
  return r;
};
const NET = '/proc/sys/net/';
for (const k of input.keys) if (!k.path.startsWith(NET) || k.path.includes('/../')) fail('refusing key outside /proc/sys/net: ' + k.path);
for (const s of input.sources) if (s.kind !== 'dir' && s.kind !== 'file') fail('bad source');
must('mount', ['-t', 'tmpfs', '-o', 'mode=0700,size=16m', 'k8s-host-reconcile-rehearsal', '/tmp']);
const stage = (i) => '/tmp/s' + i;
// A directory missing on this machine (/run/sysctl.d, say) appears through an
// overlay on its nearest existing ancestor, in this mount namespace only.
input.sources.forEach((s, i) => {
  if (!s.create) return;
  const base = '/tmp/o' + i;
  fs.mkdirSync(base + '/u', { recursive: true });
  fs.mkdirSync(base + '/w', { recursive: true });
  must('mount', ['-t', 'overlay', 'k8s-host-reconcile-rehearsal', '-o', 'lowerdir=' + s.create.ancestor + ',upperdir=' + base + '/u,workdir=' + base + '/w', s.create.ancestor]);
  fs.mkdirSync(s.path, { recursive: true });
});
input.sources.forEach((s, i) => {
  if (s.kind === 'dir') fs.mkdirSync(stage(i), { mode: 0o755 });
  else fs.writeFileSync(stage(i), '');
  // util-linux mount applies ro to a bind by remounting it (since 2.27).
  must('mount', ['-o', 'bind,ro', stage(i), s.path]);
});
const lay = (trial) => {
  input.sources.forEach((s, i) => {
    const at = stage(i);
    const want = trial.sources[i];
    if (s.kind === 'file') { fs.writeFileSync(at, Buffer.from(want.content || '', 'base64')); return; }
    for (const name of fs.readdirSync(at)) fs.rmSync(at + '/' + name, { force: true });
    for (const e of want.entries) {
      if (e.name.includes('/') || e.name === '.' || e.name === '..') fail('bad entry name');
      if (e.link !== undefined) fs.symlinkSync(e.link, at + '/' + e.name);
      else fs.writeFileSync(at + '/' + e.name, Buffer.from(e.content, 'base64'), { mode: 0o644 });
    }
  });
};
const read = (ns) => {
  const r = run('nsenter', ['--net=' + ns, '--', 'grep', '-H', '', ...input.keys.map((k) => k.path)]);
  const out = {};
  for (const k of input.keys) {
    const line = r.stdout.split('\n').find((l) => l.startsWith(k.path + ':'));
    out[k.key] = line === undefined ? null : line.slice(k.path.length + 1).trim().replace(/\s+/g, ' ');
  }
  return out;
};
const results = input.trials.map((trial, t) => {
  lay(trial);
  const ns = '/tmp/net' + t;
  fs.writeFileSync(ns, '');
  must('unshare', ['--net=' + ns, 'true']);
  // A start value unlike the wanted one, so a key no file writes shows as not set.
  const assign = (pairs, what) => {
    if (pairs.length === 0) return;
    for (const [key] of pairs) if (!input.keys.some((x) => x.key === key)) fail(what + ' for an unknown key');
    run('nsenter', ['--net=' + ns, '--', input.programs.sysctl, '-q', '-w', ...pairs.map(([key, value]) => key + '=' + value)]);
  };
  assign(trial.start, 'start value');
  const boot = run('nsenter', ['--net=' + ns, '--', ...input.programs.boot]);
  const atBoot = read(ns);
  assign(trial.seed, 'seed');
  const system = run('nsenter', ['--net=' + ns, '--', ...input.programs.system]);
  const afterSystem = read(ns);
  must('umount', [ns]);
  return {
    boot: atBoot, system: afterSystem,
    status: { boot: boot.status, system: system.status },
    warnings: { boot: (boot.stderr || '').trim(), system: (system.stderr || '').trim() },
  };
});
process.stdout.write(JSON.stringify({ net: fs.readlinkSync('/proc/self/ns/net'), mnt: fs.readlinkSync('/proc/self/ns/mnt'), trials: results }));
`;
