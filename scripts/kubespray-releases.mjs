// The kubespray audit over every release in a kubespray git mirror (the
// held-out check of issue 28): each tag's roles and inventory/sample are
// extracted, node1 is put in kube_control_plane, etcd and kube_node of the
// sample's group_vars, and the memory preflight and who-fixes audit run as
// the plan runs them, for a 1978 MB Debian 12 host booted by systemd (the facts setup gives there, which src/facts/native.ts computes). Prints one line per tag and the
// unknowns by cause; `--json` prints them as data.
//
//   node scripts/kubespray-releases.mjs [--json] [--memory MB] /path/to/kubespray.git [tag ...]
//
// --memory sets the host's memtotal_mb (default 1978): the four verdicts and
// sysctl_file must not change with it, while the memory asserts do (issue 44).
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const argv = process.argv.slice(2);
const memAt = argv.indexOf('--memory');
const memoryMb = memAt >= 0 ? Number(argv.splice(memAt, 2)[1]) : 1978;
if (!Number.isInteger(memoryMb) || memoryMb <= 0) {
  console.error('--memory takes a whole number of MB');
  process.exit(2);
}
const asJson = argv.includes('--json');
const [mirror, ...wanted] = argv.filter((a) => a !== '--json');
if (!mirror) {
  console.error('usage: node scripts/kubespray-releases.mjs KUBESPRAY_GIT_DIR [TAG ...]');
  process.exit(2);
}
const git = (...a) => execFileSync('git', ['-C', mirror, ...a], { encoding: 'latin1', maxBuffer: 1 << 28 });
const tags =
  wanted.length > 0
    ? wanted
    : [
        ...git('tag', '-l', 'v2.*.0')
          .split('\n')
          .filter((t) => /^v2\.(2\d|3\d)\.0$/.test(t))
          .sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1])),
        'master',
      ];

// The audit's own modules, bundled once for this run.
const work = mkdtempSync(path.join(tmpdir(), 'ks-releases-'));
const entry = path.join(work, 'entry.ts');
writeFileSync(
  entry,
  [
    `export { Host } from ${JSON.stringify(path.join(repo, 'src/host.ts'))};`,
    `export { KubesprayCheckout } from ${JSON.stringify(path.join(repo, 'src/kubespray/checkout.ts'))};`,
    `export { parseInventory } from ${JSON.stringify(path.join(repo, 'src/kubespray/inventory.ts'))};`,
    `export { targetVarsReader } from ${JSON.stringify(path.join(repo, 'src/kubespray/report.ts'))};`,
    `export { auditMemory } from ${JSON.stringify(path.join(repo, 'src/kubespray/preflight.ts'))};`,
    `export { auditWhoFixes } from ${JSON.stringify(path.join(repo, 'src/kubespray/who-fixes.ts'))};`,
    `export { buildVarContext, roleDefaultsOf, roleVarsOf, sharedDefaultsRole } from ${JSON.stringify(path.join(repo, 'src/kubespray/vars.ts'))};`,
  ].join('\n'),
);
const out = path.join(work, 'audit.mjs');
await build({
  entryPoints: [entry],
  outfile: out,
  bundle: true,
  platform: 'node',
  format: 'esm',
  logLevel: 'error',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
const A = await import(out);

const FACTS = {
  memtotal_mb: memoryMb,
  processor_vcpus: 2,
  distribution: 'Debian',
  distribution_version: '12.11',
  distribution_major_version: '12',
  kernel: '6.1.0-31-amd64',
  os_family: 'Debian',
  distribution_release: 'bookworm',
  service_mgr: 'systemd',
  pkg_mgr: 'apt',
  system: 'Linux',
  architecture: 'x86_64',
  machine: 'x86_64',
};
const INI = '[kube_control_plane]\nnode1\n\n[etcd]\nnode1\n\n[kube_node]\nnode1\n\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n';

/** Which class of issue 28 an unknown's reason belongs to. */
function cause(reason) {
  if (/filter not found|filter \S+ .*not modelled|test not found|test \S+ is not modelled/.test(reason)) return 'filter/test';
  if (/lookup plugin/.test(reason)) return 'lookup';
  if (/YAML|boolean/.test(reason)) return 'yaml';
  if (/is only known at run time|registered|at run time/.test(reason)) return 'run time';
  if (/is undefined/.test(reason)) return 'undefined';
  return 'other';
}

const rows = [];
for (const tag of tags) {
  const root = path.join(work, tag);
  const ks = path.join(root, 'ks');
  mkdirSync(ks, { recursive: true });
  execFileSync('sh', [
    '-c',
    `git -C "$1" archive "$2" roles inventory/sample $(git -C "$1" ls-tree --name-only "$2" cluster.yml playbooks) | tar -x -C "$3"`,
    'sh',
    mirror,
    tag,
    ks,
  ]);
  mkdirSync(path.join(root, 'inv'), { recursive: true });
  execFileSync('cp', ['-a', path.join(ks, 'inventory/sample/group_vars'), path.join(root, 'inv/group_vars')]);
  writeFileSync(path.join(root, 'inv/inventory.ini'), INI);
  const host = new A.Host({ root });
  const ck = new A.KubesprayCheckout(host, '/ks');
  const inv = A.parseInventory(INI, '/inv/inventory.ini');
  const opts = { facts: FACTS, host: { inventory: inv, inventoryDir: '/inv', host: 'node1' }, reader: A.targetVarsReader(host) };
  const unknowns = [];
  const row = { tag, verdicts: {}, sysctl_file: null, minimal_master_memory_mb: null, unknowns };
  try {
    const memory = await A.auditMemory(ck, opts);
    row.minimal_master_memory_mb = memory.minimalMasterMemoryMb?.value ?? null;
    if (!memory.minimalMasterMemoryMb) unknowns.push({ what: 'minimal_master_memory_mb', reason: memory.minimalReason });
    for (const v of memory.verdicts) {
      if (v.status.runs === 'unknown') unknowns.push({ what: `memory assert ${v.assert.ref.file}:${v.assert.ref.line}`, reason: v.status.reason });
      else if (v.status.runs === 'yes' && v.passes === null)
        unknowns.push({ what: `memory assert ${v.assert.ref.file}:${v.assert.ref.line}`, reason: v.reason ?? v.assert.minimumReason ?? '' });
    }
    // Every preflight assert as ansible-playbook would run it on this host.
    row.asserts = { pass: 0, fail: 0, skipped: 0, unknown: 0 };
    for (const a of memory.asserts) {
      row.asserts[a.result]++;
      if (a.result === 'unknown') unknowns.push({ what: `assert ${a.ref.file}:${a.ref.line}`, reason: a.reason ?? '' });
      if (a.result === 'fail')
        unknowns.push({ what: `assert FAILS ${a.ref.file}:${a.ref.line}`, reason: `${a.failed?.that}: ${a.failed?.msg} ${a.failed?.values.join(', ')}` });
    }
  } catch (e) {
    unknowns.push({ what: 'memory', reason: e.message });
  }
  try {
    const who = await A.auditWhoFixes(ck, opts);
    for (const p of ['swap', 'br_netfilter', 'ip_forward', 'port_10250']) {
      row.verdicts[p] = who[p].who;
      if (who[p].who === 'unknown') unknowns.push({ what: p, reason: who[p].reason });
    }
    row.sysctl_file = who.sysctl_file?.path ?? null;
    for (const w of who.warnings) unknowns.push({ what: `warning ${w.file}:${w.line}`, reason: w.message });
  } catch (e) {
    unknowns.push({ what: 'who-fixes', reason: e.message });
  }
  // Every variable the audited roles can see (kubespray_defaults' and the role's
  // defaults and vars), evaluated for node1: the evaluator's coverage of real
  // kubespray, whether or not a verdict needs the variable today.
  row.sweep = { evaluated: 0, failed: {} };
  for (const role of ['kubernetes/preinstall', 'kubernetes/node']) {
    const ctx = await A.buildVarContext({ ...opts, ck, role });
    const shared = await A.sharedDefaultsRole(ck);
    const names = new Set();
    for (const r of [shared, role].filter(Boolean)) for (const d of [...(await A.roleDefaultsOf(ck, r)), ...(await A.roleVarsOf(ck, r))]) names.add(d.name);
    for (const n of names) {
      const r = ctx.template(`{{ ${n} }}`);
      row.sweep.evaluated++;
      if (r.ok) continue;
      const c = cause(r.reason);
      (row.sweep.failed[c] ??= []).push(`${role} ${n}: ${r.reason}`);
    }
  }
  for (const u of unknowns) u.cause = cause(u.reason ?? '');
  rows.push(row);
  rmSync(root, { recursive: true, force: true });
}
rmSync(work, { recursive: true, force: true });

if (asJson) console.log(JSON.stringify(rows, null, 2));
else {
  for (const r of rows) {
    const by = {};
    for (const u of r.unknowns) by[u.cause] = (by[u.cause] ?? 0) + 1;
    console.log(
      `${r.tag.padEnd(8)} asserts=${JSON.stringify(r.asserts)} ${Object.entries(r.verdicts)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')} sysctl_file=${r.sysctl_file} min_mem=${r.minimal_master_memory_mb} unknowns=${r.unknowns.length} ${JSON.stringify(by)}`,
    );
    for (const u of r.unknowns) console.log(`    [${u.cause}] ${u.what}: ${u.reason}`);
    console.log(
      `    variables evaluated: ${r.sweep.evaluated}; failed by cause: ${JSON.stringify(Object.fromEntries(Object.entries(r.sweep.failed).map(([k, v]) => [k, v.length])))}`,
    );
    for (const f of r.sweep.failed['filter/test'] ?? []) console.log(`      [filter/test] ${f}`);
    if (process.env.VERBOSE) for (const [k, v] of Object.entries(r.sweep.failed)) if (k !== 'filter/test') for (const f of v) console.log(`      [${k}] ${f}`);
  }
}
