// Shorewall's IP_FORWARDING (src/boot-scripts/shorewall.ts), against
// Shorewall's own compiler: each shorewall.conf below is compiled by
// Debian's installed shorewall 5.2.8 (`compiler.pl --export`, with a
// capabilities file so it probes no kernel) around the package's
// one-interface example, and the values the compiled firewall script echoes
// into /proc/sys/net/ipv4/ip_forward are what the reader must say: none
// (Keep), 1 or 0; a configuration the compiler refuses is one shorewall
// never starts with, which the reader must call unknown. The reader may
// also say unknown for what it declares it does not evaluate (compiler
// directives, $variables), never a confident wrong value. Then the scan and
// the plan on a root with the package's unit and files (byte for byte:
// test/fixtures/debian-packages/shorewall_5.2.8-2).
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTree } from '../helpers/tree.js';
import { snapshot } from '../helpers/snapshot.js';
import { ipForwarding, readShorewallConf } from '../../src/boot-scripts/shorewall.js';
import { scanBootScripts } from '../../src/boot-scripts/scan.js';
import { Host } from '../../src/host.js';

const PKG = path.resolve('test/fixtures/debian-packages/shorewall_5.2.8-2');
const EXAMPLE = path.join(PKG, 'usr/share/doc/shorewall/examples/one-interface');
const STOCK = readFileSync(path.join(PKG, 'etc/shorewall/shorewall.conf'), 'utf8');
const COMPILER = '/usr/share/shorewall/compiler.pl';
const BUNDLE = path.resolve('dist/reconcile.mjs');
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** Every capability the compiler knows, as present: read from its own table (Config.pm %capdesc). */
function capabilities(): string {
  const pm = readFileSync('/usr/share/shorewall/Shorewall/Config.pm', 'utf8');
  const table = pm.slice(pm.indexOf('our %capdesc = ('), pm.indexOf(');', pm.indexOf('our %capdesc = (')));
  const names = [...table.matchAll(/(\w+)\s*=>/g)].map((m) => m[1]!).filter((n) => !/^(CAPVERSION|KERNELVERSION|OLD_|IPSET_V5|KLUDGEFREE)/.test(n));
  return [...new Set(names)].map((n) => `${n}=Yes\n`).join('') + 'CAPVERSION=50208\nKERNELVERSION=60100\n';
}

const work = mkdtempSync(path.join(tmpdir(), 'shorewall-oracle-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let caps: string | null = null;

/** What Shorewall's compiler makes of `conf`: the values its script writes to ip_forward, or null when it refuses the configuration. */
function compiled(conf: string, n: number): Set<string> | null {
  const dir = path.join(work, `c${n}`);
  cpSync(EXAMPLE, dir, { recursive: true });
  writeFileSync(path.join(dir, 'shorewall.conf'), conf);
  writeFileSync(path.join(dir, 'capabilities'), (caps ??= capabilities()));
  const out = path.join(dir, 'firewall');
  const r = spawnSync(
    'perl',
    [COMPILER, '--export', '--shorewallrc=/usr/share/shorewall/shorewallrc', `--directory=${dir}`, `--config_path=${dir}:/usr/share/shorewall/`, out],
    { encoding: 'utf8' },
  );
  if (r.error)
    throw new Error(`shorewall's compiler did not run (is Debian's shorewall installed? scripts/ensure-debian-packages.sh unit): ${r.error.message}`);
  if (r.status !== 0) return null;
  const script = readFileSync(out, 'utf8');
  return new Set([...script.matchAll(/echo (\S+) > \/proc\/sys\/net\/ipv4\/ip_forward/g)].map((m) => m[1]!));
}

const STOCK_LINE = 'IP_FORWARDING=Keep';
const VALUES = ['On', 'Off', 'Keep', 'on', 'OFF', 'Yes', 'no', 'keep', '', '"Off"', '"On"', "'Off'", 'Bogus', '0'];
/** Ways admins write the line: as is, with a comment, indented, split by a continuation, set twice (the later wins), or removed. */
const LAYOUTS: Array<{ name: string; put: (v: string) => string }> = [
  { name: 'plain', put: (v) => `IP_FORWARDING=${v}` },
  { name: 'comment', put: (v) => `IP_FORWARDING=${v}\t# set by the admin` },
  { name: 'indented', put: (v) => `   IP_FORWARDING=${v}` },
  { name: 'continued', put: (v) => `IP_FORWARDING=\\\n${v}` },
  { name: 'twice', put: (v) => `IP_FORWARDING=On\nIP_FORWARDING=${v}` },
];

describe("the reader says what Shorewall's compiler writes to ip_forward", () => {
  const cases = [
    ...VALUES.flatMap((v) => LAYOUTS.map((l) => ({ name: `${l.name} ${JSON.stringify(v)}`, conf: STOCK.replace(STOCK_LINE, l.put(v)) }))),
    { name: 'no IP_FORWARDING line', conf: STOCK.replace(`${STOCK_LINE}\n`, '') },
    { name: 'commented out', conf: STOCK.replace(STOCK_LINE, `#IP_FORWARDING=Off`) },
    { name: 'the example one-interface file', conf: readFileSync(path.join(EXAMPLE, 'shorewall.conf'), 'utf8') },
    { name: 'the example two-interfaces file', conf: readFileSync(path.join(PKG, 'usr/share/doc/shorewall/examples/two-interfaces/shorewall.conf'), 'utf8') },
    { name: 'a stray line', conf: STOCK.replace(STOCK_LINE, `${STOCK_LINE}\nip forwarding off`) },
    { name: 'a directive', conf: STOCK.replace(STOCK_LINE, `?IF 1\nIP_FORWARDING=Off\n?ENDIF`), declared: true },
    { name: 'a variable', conf: STOCK.replace(STOCK_LINE, `IP_FORWARDING=$FWD`), declared: true },
  ];

  it.each(cases.map((c, i) => ({ declared: false, ...c, i })))('$name', ({ conf, i, declared }) => {
    const theirs = compiled(conf, i);
    const ours = ipForwarding(readShorewallConf(conf));
    if ('unknown' in ours) {
      // Unknown where the compiler refuses the file, or for the two things the reader declares it does not evaluate.
      if (!declared) expect(theirs, `the compiler accepts it, the reader says: ${ours.unknown}`).toBeNull();
      return;
    }
    expect(declared, 'a case the reader must call unknown').toBe(false);
    expect(theirs, 'the compiler refuses this file, the reader must not judge it').not.toBeNull();
    expect([...theirs!]).toEqual(ours.writes === null ? [] : [ours.writes]);
  });
});

/** A root with the package's unit and files; shorewall.conf as given; enabled as `systemctl enable shorewall` leaves it. */
function shorewallRoot(conf: string, enabled: boolean): string {
  const root = mkdtempSync(path.join(tmpdir(), 'shorewall-'));
  roots.push(root);
  cpSync(path.join(PKG, 'lib'), path.join(root, 'lib'), { recursive: true });
  cpSync(path.join(PKG, 'etc'), path.join(root, 'etc'), { recursive: true });
  buildTree(root, {
    'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n',
    'etc/shorewall/shorewall.conf': conf,
    ...(enabled ? { 'etc/systemd/system/basic.target.wants/shorewall.service': { link: '/lib/systemd/system/shorewall.service' } } : {}),
  });
  return root;
}

const lineOf = (text: string, s: string) => text.split('\n').indexOf(s) + 1;
const OFF = STOCK.replace(STOCK_LINE, 'IP_FORWARDING=Off');

describe('shorewall.service at boot', () => {
  it('enabled with IP_FORWARDING=Off: a write of 0 at that line, by shorewall.service', async () => {
    const hits = (await scanBootScripts(new Host({ root: shorewallRoot(OFF, true) }))).hits;
    expect(hits).toEqual([
      expect.objectContaining({
        file: '/etc/shorewall/shorewall.conf',
        line: lineOf(OFF, 'IP_FORWARDING=Off'),
        unit: 'shorewall.service',
        text: 'IP_FORWARDING=Off',
        action: expect.objectContaining({ kind: 'sysctl-write', key: 'net.ipv4.ip_forward', value: '0' }),
      }),
    ]);
  });

  it('not enabled, or the stock Keep: nothing', async () => {
    expect((await scanBootScripts(new Host({ root: shorewallRoot(OFF, false) }))).hits).toEqual([]);
    expect((await scanBootScripts(new Host({ root: shorewallRoot(STOCK, true) }))).hits).toEqual([]);
  });

  it("unset: shorewall's default On writes 1, shown at the unit's ExecStart= line", async () => {
    const hits = (await scanBootScripts(new Host({ root: shorewallRoot(STOCK.replace(`${STOCK_LINE}\n`, ''), true) }))).hits;
    const unit = readFileSync(path.join(PKG, 'lib/systemd/system/shorewall.service'), 'utf8');
    expect(hits).toEqual([
      expect.objectContaining({
        file: '/lib/systemd/system/shorewall.service',
        line: lineOf(unit, 'ExecStart=/sbin/shorewall $OPTIONS start $STARTOPTIONS'),
        action: expect.objectContaining({ kind: 'sysctl-write', key: 'net.ipv4.ip_forward', value: '1' }),
      }),
    ]);
  });

  it('a directive: unknown, loudly, naming the file and line', async () => {
    const conf = STOCK.replace(STOCK_LINE, '?IF __IPV4\nIP_FORWARDING=Off\n?ENDIF');
    const scan = await scanBootScripts(new Host({ root: shorewallRoot(conf, true) }));
    expect(scan.hits).toEqual([]);
    expect(scan.unknown).toEqual([expect.objectContaining({ file: '/etc/shorewall/shorewall.conf', line: lineOf(conf, '?IF __IPV4'), what: 'sysctl' })]);
  });

  it('the plan: ip_forward is not promised at the next boot, and the operator line names the file, the line and the fix', () => {
    const root = shorewallRoot(OFF, true);
    const f = path.join(root, 'desired.yaml');
    writeFileSync(f, 'reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SysctlFile\n');
    const r = spawnSync(process.execPath, [BUNDLE, '--plan', '--json', '-f', f, '--root', root], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    const d = JSON.parse(r.stdout) as {
      promises: Array<{ id: string; at_boot: boolean; withdrawn_by: Array<{ line: string }> }>;
      resources: Array<{ type: string; changes: Array<{ id: string; action: string; summary: string }> }>;
    };
    const id = `boot-script:/etc/shorewall/shorewall.conf:${lineOf(OFF, 'IP_FORWARDING=Off')}`;
    const line = d.resources.flatMap((x) => x.changes).find((c) => c.id === id);
    expect(line, r.stdout + r.stderr).toMatchObject({ action: 'operator' });
    expect(line!.summary).toContain('shorewall.service writes 0 to /proc/sys/net/ipv4/ip_forward when it starts at boot');
    expect(d.promises.find((p) => p.id === 'sysctl:net.ipv4.ip_forward')).toMatchObject({ at_boot: false, withdrawn_by: [{ line: id }] });
    expect(d.promises.find((p) => p.id === 'sysctl:net.bridge.bridge-nf-call-iptables')!.at_boot).toBe(true);
  });

  it("neutralise_scripts: true comments the line out (Shorewall's default On then writes 1), the promise holds, and --rollback restores every byte", () => {
    const root = shorewallRoot(OFF, true);
    const f = path.join(root, 'desired-n.yaml');
    writeFileSync(f, 'reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SysctlFile\n    neutralise_scripts: true\n');
    const run = (args: string[]) =>
      spawnSync(process.execPath, [BUNDLE, ...args, '-f', f, '--root', root], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    const plan = JSON.parse(run(['--plan', '--json']).stdout) as { promises: Array<{ id: string; at_boot: boolean }> };
    expect(plan.promises.find((p) => p.id === 'sysctl:net.ipv4.ip_forward')!.at_boot).toBe(true);
    const notReports = (rel: string) => rel === 'root' || rel.startsWith('desired');
    const before = snapshot(root, notReports);
    const applied = run(['--apply']);
    expect(applied.status, applied.stdout + applied.stderr).toBe(0);
    const conf = readFileSync(path.join(root, 'etc/shorewall/shorewall.conf'), 'utf8');
    expect(conf.split('\n').filter((l) => /^\s*IP_FORWARDING=/.test(l))).toEqual([]);
    expect([...compiled(conf, 999)!]).toEqual(['1']);
    const again = JSON.parse(run(['--plan', '--json']).stdout) as { resources: Array<{ changes: Array<{ id: string }> }> };
    expect(again.resources.flatMap((r) => r.changes).filter((c) => c.id.startsWith('boot-script'))).toEqual([]);
    const back = run(['--rollback']);
    expect(back.status, back.stdout + back.stderr).toBe(0);
    expect(snapshot(root, notReports)).toEqual(before);
  });
});
