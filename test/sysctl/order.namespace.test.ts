// Kernel-facing checks, run inside namespaces the test creates so this
// machine's own sysctls are never written:
// 1. the provider's runtime path writes net.ipv4.ip_forward in a fresh
//    network namespace (`unshare -n`; the key is per-namespace) and reads it
//    back there, while the machine's own value stays as it was;
// 2. the ordering engine agrees with the real programs: systemd-sysctl and
//    procps `sysctl --system` run in a fresh network + private mount
//    namespace (`unshare -n -m`) over fixture trees bind-mounted onto
//    /etc/sysctl.d, /etc/sysctl.conf, /run, /usr/local/lib and
//    /usr/lib/sysctl.d. Fixtures use only per-namespace net.ipv4 keys, and the
//    programs are limited to them (--prefix / --pattern) as a second guard.
// No skipping: we run as root here and in CI, so a missing unshare is a failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { build } from 'esbuild';
import { execa } from 'execa';
import { Host } from '../../src/host.js';
import { observeSysctlTree } from '../../src/sysctl/observe.js';
import { verdict } from '../../src/sysctl/order.js';
import type { SysctlModel } from '../../src/sysctl/order.js';
import { diffCases, globCases } from '../helpers/sysctl-cases.js';
import type { DiffCase } from '../helpers/sysctl-cases.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Where node finds execa from here (not repo/node_modules: a mutation sandbox has none of its own and finds the
// project's by walking up).
const execaEntry = createRequire(import.meta.url).resolve('execa');
const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';

let work = '';
beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'sysctl-netns-'));
});
afterAll(async () => {
  if (work) await fs.rm(work, { recursive: true, force: true });
});

/** Bundles a TypeScript entry (which may import ../src) into one .mjs that plain node runs. */
async function bundle(name: string, source: string): Promise<string> {
  const entry = path.join(work, `${name}.ts`);
  const out = path.join(work, `${name}.mjs`);
  await fs.writeFile(entry, source);
  await build({
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    // execa's CommonJS dependencies call require(); give the ESM bundle one.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  return out;
}

async function inNamespaces(flags: string[], script: string, args: string[]): Promise<unknown> {
  const r = await execa('unshare', [...flags, '--', process.execPath, script, ...args], { reject: false });
  if (r.exitCode !== 0) throw new Error(`unshare ${flags.join(' ')} node ${path.basename(script)} exited ${r.exitCode}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe('runtime write inside a new network namespace', () => {
  it('sets net.ipv4.ip_forward through the provider there, and only there', async () => {
    const script = await bundle(
      'runtime',
      `
import { mkdtempSync, readFileSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Host } from ${JSON.stringify(path.join(repo, 'src/host.ts'))};
import { WriteDoor } from ${JSON.stringify(path.join(repo, 'src/door/door.ts'))};
import { sysctlFileProvider } from ${JSON.stringify(path.join(repo, 'src/resources/sysctl-file/provider.ts'))};

const KEY = 'net.ipv4.ip_forward';
const host = new Host({ root: '/' });
const read = () => readFileSync('${IP_FORWARD}', 'utf8').trim();
const spec = (v) => ({ type: 'SysctlFile', file: '/etc/sysctl.d/k8s.conf', settings: { [KEY]: v }, conflict_policy: 'resolve' });
// Observe only what the runtime path needs: no file tree of this machine is involved.
const observed = async (v) => ({
  live: true, owned: { path: '/etc/sysctl.d/k8s.conf', content: null, link: null },
  tree: { files: [], sysctlConf: null }, dirs: [], issues: [], verdicts: { boot: [], system: [] },
  runtime: { [KEY]: read() },
});
async function setTo(v) {
  const changes = sysctlFileProvider.diff(spec(v), await observed(v), { live: true }).filter((c) => c.runtime);
  if (changes.some((c) => c.op.kind !== 'runtime' || c.op.key !== KEY)) throw new Error('unexpected change ' + JSON.stringify(changes));
  // apply performs exactly these (runtime) changes, then verifies them.
  // The journal of the runtime step goes to a scratch root, never to this machine's /etc.
  const scratch = new Host({ root: mkdtempSync(join(tmpdir(), 'netns-door-')) });
  const door = await WriteDoor.open(scratch, { runDir: '/runs/r' + v, runId: 'r' + v, mode: 'apply', tool: 'test' });
  await sysctlFileProvider.apply(host, spec(v), changes, { progress() {}, door });
  return { changes: changes.map((c) => c.id), now: read() };
}
const netns = readlinkSync('/proc/self/ns/net');
const initial = read();
const flipped = initial === '1' ? '0' : '1';
const first = await setTo(Number(flipped));
const back = await setTo(Number(initial));
const again = sysctlFileProvider.diff(spec(Number(initial)), await observed(), { live: true }).filter((c) => c.runtime);
process.stdout.write(JSON.stringify({ netns, initial, flipped, first, back, again: again.length }));
`,
    );
    const ownNetns = await fs.readlink('/proc/self/ns/net');
    const hostBefore = await fs.readFile(IP_FORWARD, 'utf8');

    const r = (await inNamespaces(['-n'], script, [])) as {
      netns: string;
      initial: string;
      flipped: string;
      first: { changes: string[]; now: string };
      back: { changes: string[]; now: string };
      again: number;
    };

    expect(r.netns).not.toBe(ownNetns);
    expect(r.first).toEqual({ changes: ['runtime:net.ipv4.ip_forward'], now: r.flipped });
    expect(r.back).toEqual({ changes: ['runtime:net.ipv4.ip_forward'], now: r.initial });
    expect(r.again).toBe(0);
    expect(await fs.readFile(IP_FORWARD, 'utf8')).toBe(hostBefore);
  });
});

// ---------------------------------------------------------------------------

const FIXTURE_DIRS = ['/etc/sysctl.d', '/run/sysctl.d', '/usr/local/lib/sysctl.d', '/usr/lib/sysctl.d'];

async function writeCase(c: DiffCase): Promise<string> {
  const root = path.join(work, 'cases', c.name);
  for (const d of FIXTURE_DIRS) {
    await fs.mkdir(path.join(root, d), { recursive: true });
    // Not *.conf, so neither program reads it; the inner script checks it before running them.
    await fs.writeFile(path.join(root, d, 'FIXTURE'), c.name);
  }
  for (const [p, v] of Object.entries(c.tree)) {
    const at = path.join(root, p);
    await fs.mkdir(path.dirname(at), { recursive: true });
    if (typeof v === 'string') await fs.writeFile(at, v);
    else await fs.symlink(v.link, at);
  }
  return root;
}

const DIFF_DRIVER = `
import { readFileSync, writeFileSync, readlinkSync, existsSync } from 'node:fs';
import { execa } from ${JSON.stringify(execaEntry)};

const [root, name, keysJson, outerNet, outerMnt] = process.argv.slice(2);
const keys = JSON.parse(keysJson);
if (keys.some((k) => !/^net\\.ipv4\\./.test(k))) throw new Error('only per-namespace net.ipv4 keys');
if (readlinkSync('/proc/self/ns/net') === outerNet) throw new Error('not in a new network namespace');
if (readlinkSync('/proc/self/ns/mnt') === outerMnt) throw new Error('not in a new mount namespace');
const mount = (src, dst) => execa('mount', ['--bind', src, dst]);
await mount(root + '/etc/sysctl.d', '/etc/sysctl.d');
await mount(existsSync(root + '/etc/sysctl.conf') ? root + '/etc/sysctl.conf' : '/dev/null', '/etc/sysctl.conf');
await mount(root + '/run', '/run');
await mount(root + '/usr/local/lib', '/usr/local/lib');
await mount(root + '/usr/lib/sysctl.d', '/usr/lib/sysctl.d');
for (const d of ${JSON.stringify(FIXTURE_DIRS)}) {
  if (readFileSync(d + '/FIXTURE', 'utf8') !== name) throw new Error(d + ' is not the fixture');
}
const proc = (k) => '/proc/sys/' + k.replace(/\\./g, '/');
const read = () => Object.fromEntries(keys.map((k) => [k, readFileSync(proc(k), 'utf8').trim()]));
const setAll = (v) => keys.forEach((k) => writeFileSync(proc(k), v + '\\n'));
const programs = {
  boot: ['/lib/systemd/systemd-sysctl', ['--prefix=net/ipv4']],
  system: ['sysctl', ['-q', '--system', '--pattern', '^-?net[./]ipv4[./]']],
};
const out = {};
for (const [model, [cmd, args]] of Object.entries(programs)) {
  const runs = [];
  for (const sentinel of ['0', '1']) {
    setAll(sentinel);
    await execa(cmd, args, { reject: false, env: { SYSTEMD_LOG_TARGET: 'console', SYSTEMD_LOG_LEVEL: 'err' } });
    runs.push(read());
  }
  // Same result whatever the key held before: that value was written. Otherwise it was left alone.
  out[model] = Object.fromEntries(keys.map((k) => [k, runs[0][k] === runs[1][k] ? runs[0][k] : runs[0][k] === '0' && runs[1][k] === '1' ? null : 'inconsistent']));
}
process.stdout.write(JSON.stringify(out));
`;

describe('engine verdicts match systemd-sysctl 252 and procps 4.0.2 in a private net+mount namespace', () => {
  let driver = '';
  beforeAll(async () => {
    driver = await bundle('differential', DIFF_DRIVER);
  });

  // Entries neither program can read: a directory, a dangling link and a link loop where a vendor file has the same name.
  const K8S = { '/etc/sysctl.d/k8s.conf': 'net.ipv4.ip_forward = 1\n' };
  const unreadable: DiffCase[] = [
    {
      name: 'dir-named-conf',
      tree: { ...K8S, '/etc/sysctl.d/50-x.conf/inner': 'net.ipv4.ip_forward = 0\n', '/usr/lib/sysctl.d/50-x.conf': 'net.ipv4.conf.lo.rp_filter = 2\n' },
      keys: ['net.ipv4.ip_forward', 'net.ipv4.conf.lo.rp_filter'],
    },
    {
      name: 'dangling-link',
      tree: {
        ...K8S,
        '/etc/sysctl.d/50-x.conf': { link: '/nonexistent-sysctl-fixture.conf' },
        '/usr/lib/sysctl.d/50-x.conf': 'net.ipv4.conf.lo.rp_filter = 2\n',
      },
      keys: ['net.ipv4.ip_forward', 'net.ipv4.conf.lo.rp_filter'],
    },
    {
      name: 'link-loop',
      tree: {
        ...K8S,
        '/etc/sysctl.d/50-x.conf': { link: '50-x.conf' },
        '/usr/lib/sysctl.d/50-x.conf': 'net.ipv4.conf.lo.rp_filter = 2\n',
        '/etc/sysctl.d/60-y.conf': 'net.ipv4.conf.lo.rp_filter = 1\n',
      },
      keys: ['net.ipv4.ip_forward', 'net.ipv4.conf.lo.rp_filter'],
    },
  ];
  for (const c of [...diffCases, ...unreadable, ...globCases]) {
    it(c.name, async () => {
      const root = await writeCase(c);
      const tree = (await observeSysctlTree(new Host({ root }))).tree;
      const predicted: Record<SysctlModel, Record<string, string | null>> = { boot: {}, system: {} };
      for (const model of ['boot', 'system'] as SysctlModel[]) {
        for (const k of c.keys) predicted[model][k] = verdict(tree, k, model).value;
      }
      const hostBefore = await fs.readFile(IP_FORWARD, 'utf8');
      const actual = await inNamespaces(['-n', '-m', '--propagation', 'private'], driver, [
        root,
        c.name,
        JSON.stringify(c.keys),
        await fs.readlink('/proc/self/ns/net'),
        await fs.readlink('/proc/self/ns/mnt'),
      ]);
      expect(actual).toEqual(predicted);
      expect(await fs.readFile(IP_FORWARD, 'utf8')).toBe(hostBefore);
    });
  }
});
