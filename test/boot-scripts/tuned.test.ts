// tuned's [sysctl] at boot (src/boot-scripts/tuned.ts, tuned-profile.ts),
// against tuned's own profile code: each generated set of profiles is loaded
// by Debian's installed tuned 2.20 (tuned.profiles Locator, Loader, Merger
// and Variables, pointed at the test's root; no daemon), the units it keeps
// ordered as units/manager.py create orders them and each sysctl option's
// value unquoted and expanded as plugins/plugin_sysctl.py does; what that
// leaves for the three keys Kubernetes needs is what the reader must say.
// The reader may say unknown only where it declares it does not evaluate
// (an expansion, a "<"/">" modifier, a unit conditioned on cpuinfo/uname),
// never a confident wrong value. Then the scan and the plan on a root with
// the package's unit and files (test/fixtures/debian-packages/tuned_2.20.0-1).
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTree, type Tree } from '../helpers/tree.js';
import { snapshot } from '../helpers/snapshot.js';
import { pick, random } from '../helpers/random.js';
import { tunedAtBoot, tunedWrites } from '../../src/boot-scripts/tuned.js';
import { scanBootScripts } from '../../src/boot-scripts/scan.js';
import { Host } from '../../src/host.js';
import { otherWriters } from '../../src/resources/sysctl-file/rehearse.js';

const PKG = path.resolve('test/fixtures/debian-packages/tuned_2.20.0-1');
const BUNDLE = path.resolve('dist/reconcile.mjs');
const KEYS = ['net.ipv4.ip_forward', 'net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables'];
const procPath = (k: string) => `/proc/sys/${k.replace(/\./g, '/')}`;
const STOCK = readdirSync(path.join(PKG, 'usr/lib/tuned')).filter((n) => n !== 'recommend.d');
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

// tuned's own loader, merger and variables; the manager's ordering and the sysctl plugin's value handling, as in the
// package (units/manager.py create, plugins/plugin_sysctl.py _instance_apply_static, plugins/base.py modifiers).
const ORACLE = String.raw`
import sys, json, os
import tuned.profiles as profiles, tuned.profiles.variables
from tuned.utils.commands import commands
root, names = sys.argv[1], sys.argv[2].split()
loc = profiles.Locator([os.path.join(root, 'usr/lib/tuned'), os.path.join(root, 'etc/tuned')])
v = tuned.profiles.variables.Variables()
loader = profiles.Loader(loc, profiles.Factory(), profiles.Merger(), None, v)
if any(n not in loc.get_known_names() for n in names):
    print(json.dumps({'refused': 'unknown profile name'})); sys.exit(0)
try:
    p = loader.load(names)
except Exception as e:
    print(json.dumps({'refused': repr(e)})); sys.exit(0)
units = []
for name, u in p.units.items():
    if not u.enabled: continue
    u.options.setdefault('priority', 0)
    try:
        units.append((int(u.options.pop('priority')), u))
    except ValueError as e:
        print(json.dumps({'refused': repr(e)})); sys.exit(0)
units.sort(key=lambda x: x[0])
writes = {}
for _, u in units:
    if u.type != 'sysctl': continue
    for k, val in u.options.items():
        path = '/proc/sys/' + k.replace('.', '/')
        if u.cpuinfo_regex is not None or u.uname_regex is not None:
            writes[path] = {'conditional': True}; continue
        nv = str(v.expand(commands().unquote(val)))
        writes[path] = {'modifier': nv} if len(nv) > 1 and nv[0] in '<>' else {'value': nv}
print(json.dumps({'writes': writes}))
`;

type Theirs = { refused: string } | { writes: Record<string, { value?: string; modifier?: string; conditional?: boolean }> };

function tunedSays(root: string, names: string[]): Theirs {
  const r = spawnSync('/usr/bin/python3', ['-c', ORACLE, root, names.join(' ')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tuned's loader did not run (is Debian's tuned installed? scripts/ensure-debian-packages.sh unit): ${r.stderr}`);
  return JSON.parse(r.stdout) as Theirs;
}

function stockRoot(files: Tree): string {
  const root = mkdtempSync(path.join(tmpdir(), 'tuned-'));
  roots.push(root);
  for (const d of ['lib', 'etc', 'usr']) cpSync(path.join(PKG, d), path.join(root, d), { recursive: true });
  buildTree(root, files);
  return root;
}

/** Profiles an admin writes: include chains (cycles, stock names, /etc overrides of them), units of every shape, values of every form. */
function generated(seed: number): { files: Tree; names: string[] } {
  const r = random(seed);
  const own = ['p0', 'p1', 'p2', 'throughput-performance', 'openshift'];
  const value = () => pick(r, ['0', '1', '"0"', '"1"', ' 0', '2', '>0', '<1', '${fwd}', '0 # off', '0#x', '"0']);
  const key = () => pick(r, [...KEYS, 'net/ipv4/ip_forward', 'vm.swappiness', 'NET.ipv4.ip_forward']);
  const files: Tree = {};
  for (const name of own.slice(0, 2 + Math.floor(r() * 4))) {
    const lines = ['[main]', `summary=${name}`];
    if (r() < 0.7)
      lines.push(
        `include=${[pick(r, [...own, 'network-latency', 'virtual-guest', '-gone']), ...(r() < 0.3 ? [pick(r, own)] : [])].join(pick(r, [',', ' ; ']))}`,
      );
    if (r() < 0.3) lines.push('', '[variables]', `fwd=${pick(r, ['0', '1'])}`);
    const section = pick(r, ['sysctl', 'sysctl', 'sysctl', 'my_sysctl', 'DEFAULT', 'sysctl.gated']);
    lines.push('', `[${section}]`);
    if (section === 'my_sysctl' || section === 'sysctl.gated') lines.push('type=sysctl');
    if (section === 'sysctl.gated') lines.push('uname_regex=x86_64');
    if (r() < 0.15) lines.push(`enabled=${pick(r, ['false', 'true', '0'])}`);
    if (r() < 0.15) lines.push('replace=true');
    if (r() < 0.15) lines.push(`drop=${pick(r, KEYS)}`);
    if (r() < 0.15) lines.push(`priority=${pick(r, ['5', '-5', '0'])}`);
    for (let i = 0; i < 1 + Math.floor(r() * 3); i++) lines.push(`${pick(r, ['', '  '])}${key()}${pick(r, ['=', ' = '])}${value()}`);
    files[`etc/tuned/${name}/tuned.conf`] = lines.join('\n') + '\n';
  }
  const names = [pick(r, Object.keys(files)).split('/')[2]!, ...(r() < 0.3 ? [pick(r, [...STOCK, 'p1'])] : [])];
  return { files, names };
}

async function oursFor(root: string, names: string[]) {
  return tunedWrites(new Host({ root }), names, 0, []);
}

type Tally = { unknown: number; zero: number; other: number; refused: number };

/** Ours against tuned's for the three keys; what was compared, for the tally. */
async function compare(root: string, names: string[], files: Tree): Promise<Tally> {
  const tally: Tally = { unknown: 0, zero: 0, other: 0, refused: 0 };
  const theirs = tunedSays(root, names);
  const ours = await oursFor(root, names);
  if ('refused' in theirs) {
    expect(Array.isArray(ours), `tuned refuses (${theirs.refused}), the reader judged it`).toBe(false);
    return { ...tally, refused: 1 };
  }
  expect(Array.isArray(ours), `tuned loads it, the reader says: ${JSON.stringify(ours)}`).toBe(true);
  for (const k of KEYS) {
    const t = theirs.writes[procPath(k)];
    const o = (ours as Array<{ key: string; value?: string; unknown?: string; file: string; line: number }>).find((w) => procPath(w.key) === procPath(k));
    if (o?.unknown !== undefined) {
      // Unknown only for what the reader declares it does not evaluate (a value over several lines is one).
      const raw = readFileSync(path.join(root, o.file), 'utf8').split('\n')[o.line - 1] ?? '';
      expect(
        t?.modifier !== undefined || t?.conditional === true || t?.value?.includes('\n') === true || raw.includes('${'),
        `${k}: ${o.unknown} (${JSON.stringify(files)})`,
      ).toBe(true);
      tally.unknown++;
      continue;
    }
    expect(o?.value, `${k} in ${names.join(' ')}: ${JSON.stringify(files)}`).toBe(t?.value);
    if (t?.value?.trim() === '0') tally.zero++;
    else if (t?.value !== undefined) tally.other++;
  }
  return tally;
}

describe("the reader says what tuned's own loader makes of the profiles", () => {
  it.each(STOCK)("the shipped profile %s writes none of the three keys but openshift*'s ip_forward = 1", async (name) => {
    const root = stockRoot({});
    expect(await compare(root, [name], {})).toMatchObject({ unknown: 0, refused: 0 });
    const ours = await oursFor(root, [name]);
    const mine = (ours as Array<{ key: string; value?: string }>).filter((w) => KEYS.includes(w.key));
    expect(mine).toEqual(name.startsWith('openshift') ? [expect.objectContaining({ key: 'net.ipv4.ip_forward', value: '1' })] : []);
  });

  it('a byte order mark, bytes that are not UTF-8, a missing include: tuned refuses, and so does the reader', async () => {
    for (const text of ['\ufeff[main]\nsummary=x\n\n[sysctl]\nnet.ipv4.ip_forward=0\n', '[main]\nsummary=\xff\n', '[main]\ninclude=gone\n']) {
      const root = stockRoot({ 'etc/tuned/odd/tuned.conf': '' });
      writeFileSync(path.join(root, 'etc/tuned/odd/tuned.conf'), text.includes('\xff') ? Buffer.from(text, 'latin1') : text);
      expect(await compare(root, ['odd'], {})).toMatchObject({ refused: 1 });
    }
  });

  it('300 generated profile sets agree with tuned, and the unknowns are few', async () => {
    const sum: Tally = { unknown: 0, zero: 0, other: 0, refused: 0 };
    for (let seed = 1; seed <= 300; seed++) {
      const { files, names } = generated(seed);
      const root = stockRoot(files);
      const t = await compare(root, names, files);
      for (const k of Object.keys(sum) as Array<keyof Tally>) sum[k] += t[k];
      rmSync(root, { recursive: true, force: true });
    }
    // The cases reach every outcome: a key written 0 (the hit), another value, tuned refusing, and few unknowns.
    expect(sum.zero).toBeGreaterThan(30);
    expect(sum.other).toBeGreaterThan(30);
    expect(sum.refused).toBeGreaterThan(5);
    expect(sum.unknown).toBeLessThan((300 * KEYS.length) / 4);
  }, 600_000);
});

const ENABLED: Tree = { 'etc/systemd/system/multi-user.target.wants/tuned.service': { link: '/lib/systemd/system/tuned.service' } };
const MAIN = readFileSync(path.join(PKG, 'etc/tuned/tuned-main.conf'), 'utf8');
const NO_REAPPLY = MAIN.replace('reapply_sysctl = 1', 'reapply_sysctl = 0');
const BAD = '[main]\nsummary=an admin profile\ninclude=throughput-performance\n\n[sysctl]\nvm.swappiness=5\nnet.ipv4.ip_forward=0\n';
/** A host whose admin made a profile that turns forwarding off, as `tuned-adm profile k8s-bad` leaves the state files. */
function badRoot(extra: Tree = {}): string {
  return stockRoot({
    ...ENABLED,
    'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n',
    'etc/tuned/k8s-bad/tuned.conf': BAD,
    'etc/tuned/active_profile': 'k8s-bad\n',
    'etc/tuned/profile_mode': 'manual\n',
    ...extra,
  });
}
const scan = (root: string) => scanBootScripts(new Host({ root }));
const KEY_PATHS = KEYS.map(procPath);

describe('tuned.service at boot', () => {
  it('the package as installed (enabled by its postinst, no profile chosen: the recommendation): no line for the three keys', async () => {
    const s = await scan(stockRoot(ENABLED));
    expect(s.hits).toEqual([]);
    // Recommended candidates' other keys (vm.swappiness ...) are unknowns naming their key, which no SysctlFile of the three concerns.
    expect(s.unknown.filter((u) => u.path === undefined || KEY_PATHS.includes(u.path))).toEqual([]);
    expect(s.unknown.length).toBeGreaterThan(0);
  });

  it('each shipped profile chosen by name: no hit', async () => {
    for (const name of STOCK) {
      const s = await scan(stockRoot({ ...ENABLED, 'etc/tuned/active_profile': `${name}\n`, 'etc/tuned/profile_mode': 'manual\n' }));
      expect(
        s.hits.filter((h) => h.action.kind === 'sysctl-write' && KEYS.includes(h.action.key) && h.action.value !== '1'),
        name,
      ).toEqual([]);
      expect(
        s.unknown.filter((u) => u.path === undefined || KEY_PATHS.includes(u.path)),
        name,
      ).toEqual([]);
    }
  });

  it('an /etc profile with net.ipv4.ip_forward=0: a write of 0 at that line, by tuned.service, with the files tuned re-applies after it', async () => {
    const hits = (await scan(badRoot())).hits.filter((h) => h.action.kind === 'sysctl-write' && h.action.key === 'net.ipv4.ip_forward');
    expect(hits).toEqual([
      expect.objectContaining({
        file: '/etc/tuned/k8s-bad/tuned.conf',
        line: 7,
        text: 'net.ipv4.ip_forward=0',
        unit: 'tuned.service',
        neutralisable: true,
        action: expect.objectContaining({ value: '0' }),
        reapplied: expect.objectContaining({ dirs: ['/run/sysctl.d', '/etc/sysctl.d'], last: '/etc/sysctl.conf' }),
      }),
    ]);
  });

  it("the rehearsal's other writers name the line and what tuned re-applies after it", async () => {
    expect(otherWriters('net.ipv4.ip_forward', await scan(badRoot()))).toBe(
      '/etc/tuned/k8s-bad/tuned.conf:7 sets net.ipv4.ip_forward = 0, then re-applies /run/sysctl.d, /etc/sysctl.d, /etc/sysctl.conf',
    );
  });

  it('not enabled, masked, or reapply_sysctl = 0 changes only what the hit carries', async () => {
    expect((await scan(badRoot({ 'etc/systemd/system/tuned.service': { link: '/dev/null' } }))).hits).toEqual([]);
    const off = (await scan(badRoot({ 'etc/tuned/tuned-main.conf': NO_REAPPLY }))).hits.find((h) => h.line === 7);
    expect(off?.reapplied).toBeUndefined();
    const notEnabled = stockRoot({ 'etc/tuned/k8s-bad/tuned.conf': BAD, 'etc/tuned/active_profile': 'k8s-bad\n' });
    expect((await scan(notEnabled)).hits).toEqual([]);
  });

  it('`tuned-adm off` (no profile, manual mode): nothing', async () => {
    const s = await scan(badRoot({ 'etc/tuned/active_profile': '', 'etc/tuned/profile_mode': 'manual\n' }));
    expect(s.hits).toEqual([]);
    expect(s.unknown).toEqual([]);
  });

  it('a variable in the value: unknown naming the file, the line and the key', async () => {
    const conf = BAD.replace('net.ipv4.ip_forward=0', 'net.ipv4.ip_forward=${fwd}');
    const s = await scan(badRoot({ 'etc/tuned/k8s-bad/tuned.conf': conf }));
    expect(s.hits.filter((h) => h.line === 7)).toEqual([]);
    expect(s.unknown).toContainEqual(
      expect.objectContaining({ file: '/etc/tuned/k8s-bad/tuned.conf', line: 7, what: 'sysctl', path: '/proc/sys/net/ipv4/ip_forward' }),
    );
  });

  it('a later tuned (its profiles in /usr/lib/tuned/profiles, or profile_dirs in tuned-main.conf): unknown as a whole, not judged', async () => {
    const moved = await scan(badRoot({ 'usr/lib/tuned/profiles/balanced/tuned.conf': '[main]\nsummary=b\n' }));
    expect(moved.hits).toEqual([]);
    expect(moved.unknown.filter((u) => u.file === '/usr/lib/tuned/profiles' && u.what === 'sysctl' && u.path === undefined)).toHaveLength(1);
    const dirs = await scan(badRoot({ 'etc/tuned/tuned-main.conf': `${MAIN}profile_dirs = /usr/lib/tuned,/etc/tuned\n` }));
    expect(dirs.hits).toEqual([]);
    expect(dirs.unknown).toContainEqual(expect.objectContaining({ file: '/etc/tuned/tuned-main.conf', line: MAIN.split('\n').length, what: 'sysctl' }));
  });

  it('a profile of /usr/lib: the fix names reapply_sysctl, never an edit of the package file', async () => {
    const root = stockRoot({
      ...ENABLED,
      'usr/lib/tuned/vendor-router/tuned.conf': '[main]\nsummary=a vendor profile\n\n[sysctl]\nnet.ipv4.ip_forward = 0\n',
      'etc/tuned/active_profile': 'vendor-router\n',
    });
    const h = (await scan(root)).hits.find((x) => x.file === '/usr/lib/tuned/vendor-router/tuned.conf');
    expect(h?.neutralisable).toContain('set reapply_sysctl = 1 in /etc/tuned/tuned-main.conf');
    // The same through a link in /etc/tuned: still the package's bytes, never commented out.
    const linked = badRoot({
      'etc/tuned/k8s-bad/tuned.conf': { link: '/usr/lib/tuned/vendor-router/tuned.conf' },
      'usr/lib/tuned/vendor-router/tuned.conf': BAD,
    });
    const l = (await scan(linked)).hits.find((x) => x.action.kind === 'sysctl-write' && x.action.key === 'net.ipv4.ip_forward');
    expect(l?.neutralisable).toContain('is not a file of /etc/tuned');
  });
});

type PlanDoc = {
  promises: Array<{ id: string; at_boot: boolean; withdrawn_by: Array<{ line: string }> }>;
  resources: Array<{ changes: Array<{ id: string; action: string; summary: string; operator: string | null }> }>;
};

function plan(root: string, extra = ''): { doc: PlanDoc; run: (args: string[]) => ReturnType<typeof spawnSync> } {
  const f = path.join(root, 'desired.yaml');
  writeFileSync(f, `reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SysctlFile\n${extra}`);
  const run = (args: string[]) =>
    spawnSync(process.execPath, [BUNDLE, ...args, '-f', f, '--root', root], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  const r = run(['--plan', '--json']);
  return { doc: JSON.parse(String(r.stdout)) as PlanDoc, run };
}

const promise = (d: PlanDoc, k: string) => d.promises.find((p) => p.id === `sysctl:${k}`)!;

describe('the plan', () => {
  it("a value tuned's reader cannot judge, on a key tuned then re-applies from k8s.conf: no unknown; with reapply_sysctl = 0 the promise is taken back", () => {
    const conf = BAD.replace('net.ipv4.ip_forward=0', 'net.ipv4.ip_forward=${fwd}');
    const on = plan(badRoot({ 'etc/tuned/k8s-bad/tuned.conf': conf })).doc;
    for (const k of KEYS) expect(promise(on, k).at_boot, k).toBe(true);
    const off = plan(badRoot({ 'etc/tuned/k8s-bad/tuned.conf': conf, 'etc/tuned/tuned-main.conf': NO_REAPPLY })).doc;
    expect(promise(off, 'net.ipv4.ip_forward').at_boot).toBe(false);
  });

  it('reapply_sysctl = 1 (the default): tuned re-applies /etc/sysctl.d/k8s.conf after its 0, so every promise holds and no line is added', () => {
    const { doc } = plan(badRoot());
    for (const k of KEYS) expect(promise(doc, k).at_boot, k).toBe(true);
    expect(doc.resources.flatMap((r) => r.changes).filter((c) => c.id.startsWith('boot-script'))).toEqual([]);
  });

  it('reapply_sysctl = 0: ip_forward is not promised at the next boot, and the operator line names the file, the line and the fix', () => {
    const { doc } = plan(badRoot({ 'etc/tuned/tuned-main.conf': NO_REAPPLY }));
    const id = 'boot-script:/etc/tuned/k8s-bad/tuned.conf:7';
    const line = doc.resources.flatMap((r) => r.changes).find((c) => c.id === id);
    expect(line).toMatchObject({ action: 'operator' });
    expect(line!.summary).toContain('tuned.service writes 0 to /proc/sys/net/ipv4/ip_forward when it starts at boot');
    expect(line!.summary).toContain(`reapply_sysctl is off at /etc/tuned/tuned-main.conf:${NO_REAPPLY.split('\n').indexOf('reapply_sysctl = 0') + 1}`);
    expect(line!.operator).toContain('/etc/tuned/k8s-bad/tuned.conf:7: remove or comment out that line');
    expect(promise(doc, 'net.ipv4.ip_forward')).toMatchObject({ at_boot: false, withdrawn_by: [{ line: id }] });
    expect(promise(doc, 'net.bridge.bridge-nf-call-iptables').at_boot).toBe(true);
  });

  it("neutralise_scripts: true comments the line out (tuned's loader then sets no ip_forward), the promise holds, and --rollback restores every byte", () => {
    const root = badRoot({ 'etc/tuned/tuned-main.conf': NO_REAPPLY });
    const { doc, run } = plan(root, '    neutralise_scripts: true\n');
    expect(promise(doc, 'net.ipv4.ip_forward').at_boot).toBe(true);
    const notReports = (rel: string) => rel === 'root' || rel.startsWith('desired');
    const before = snapshot(root, notReports);
    const applied = run(['--apply']);
    expect(applied.status, String(applied.stdout) + String(applied.stderr)).toBe(0);
    const after = readFileSync(path.join(root, 'etc/tuned/k8s-bad/tuned.conf'), 'utf8');
    expect(after.split('\n').filter((l) => l.startsWith('net.ipv4.ip_forward'))).toEqual([]);
    const theirs = tunedSays(root, ['k8s-bad']);
    expect('writes' in theirs && theirs.writes['/proc/sys/net/ipv4/ip_forward']).toBeUndefined();
    expect('writes' in theirs && theirs.writes['/proc/sys/vm/swappiness']).toEqual({ value: '5' });
    const again = plan(root, '    neutralise_scripts: true\n').doc;
    expect(again.resources.flatMap((r) => r.changes).filter((c) => c.id.startsWith('boot-script'))).toEqual([]);
    const back = run(['--rollback']);
    expect(back.status, String(back.stdout) + String(back.stderr)).toBe(0);
    expect(snapshot(root, notReports)).toEqual(before);
  });
});
