// OpenVPN's up / route-up / ipchange / tls-verify commands, read as openvpn
// reads them. The oracle is the installed openvpn itself: each generated
// configuration runs in a user and network namespace made for it (`unshare
// -rn`, `--dev null`: no tun device), with an `up` command naming a recorder
// that writes the argv it was exec'd with and exits 1 (openvpn then stops).
// What the reader predicts (ran or not, and the argv) must be what openvpn
// did. openvpn-generator is run as shipped, its two paths pointed at a
// directory of the test's. Then roots with Debian's units: a script that
// turns forwarding off is named and takes the promise back.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { argvParseCmd, parseLine, readOpenvpnOptions } from '../../src/boot-scripts/openvpn.js';
import { runCli } from '../helpers/run-cli.js';

const OPENVPN = '/usr/sbin/openvpn';
const PACKAGE = path.resolve('test/fixtures/debian-packages/openvpn_2.6.14-0+deb12u2');
const dir = mkdtempSync(path.join(tmpdir(), 'openvpn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RECORDER = '#!/bin/sh\nprintf \'%s\\0\' "$0" "$@" > "$(dirname "$0")/rec.out"\nexit 1\n';

/** Runs openvpn on `files` (main: t.conf) in a namespace; the argv the recorder got (openvpn's own trailing args cut), or null when nothing ran. */
function oracle(work: string, files: Record<string, string>): string[] | null {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(path.join(work, 'sub'), { recursive: true });
  for (const d of [work, path.join(work, 'sub')]) {
    writeFileSync(path.join(d, 'rec.sh'), RECORDER);
    chmodSync(path.join(d, 'rec.sh'), 0o755);
  }
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(work, name), text, 'latin1');
  spawnSync('unshare', ['-rn', OPENVPN, '--dev', 'null', '--verb', '0', '--cd', work, '--config', path.join(work, 't.conf')], {
    stdio: 'ignore',
    timeout: 10000,
  });
  const out = [path.join(work, 'rec.out'), path.join(work, 'sub', 'rec.out')].find((f) => existsSync(f));
  if (out === undefined) return null;
  const argv = readFileSync(out, 'latin1').split('\0').slice(0, -1);
  // run_up_down appends: device, tun MTU, 0, local, remote, "init".
  return argv.slice(0, -6);
}

/** What the reader predicts for the same files: the up command's argv when openvpn runs it, else null. */
async function predicted(work: string, files: Record<string, string>): Promise<string[] | null> {
  const reader = {
    read: async (f: string) => (existsSync(f) ? readFileSync(f, 'latin1') : null),
    executable: async (f: string) => existsSync(f) && statSync(f).isFile() && (statSync(f).mode & 0o111) !== 0,
  };
  const r = await readOpenvpnOptions(['--dev', 'null', '--verb', '0', '--cd', work, '--config', path.join(work, 't.conf')], '/', reader);
  if (!('options' in r)) return null;
  if ((r.options.scriptSecurity?.level ?? 1) < 2) return null;
  const up = r.options.scripts.find((s) => s.option === 'up');
  if (up === undefined) return null;
  const argv = argvParseCmd(up.command);
  const prog = path.posix.resolve(r.options.runDir, argv[0]!);
  if (!existsSync(prog) || !/\/rec\.sh$/.test(prog)) return null;
  return argv;
}

function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Words of a command string, in the command's own syntax.
const ARGS = ['x', "'a b'", '"c d"', 'e\\ f', 'k=v', 'g#h', 'i;j', 'p,q', '\\"', '\\\\', "'s\\t'", '""', "''", 'x', 'y z'];
// Words openvpn refuses or keeps whole (a bad backslash, an unclosed quote), rarer.
const BAD_ARGS = ['\\q', '"u', "it's"];

/** A command string quoted as a config parameter, in one of the ways admins write it (some of them wrong). */
function quoted(cmd: string, r: () => number): string {
  const x = r();
  if (x < 0.4) return `"${cmd.replace(/[\\"]/g, (c) => '\\' + c)}"`;
  if (x < 0.55 && !cmd.includes("'")) return `'${cmd}'`;
  if (x < 0.75) return cmd.replace(/[\\"' \t]/g, (c) => '\\' + c);
  if (x < 0.8) return `"${cmd}"`;
  return cmd;
}

function generated(r: () => number, work: string): Record<string, string> {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const prog = pick([path.join(work, 'rec.sh'), path.join(work, 'rec.sh'), 'rec.sh', './rec.sh', 'sub/rec.sh', '/nonexistent/rec.sh']);
  const lines: string[] = r() < 0.6 ? ['script-security 2'] : [];
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) {
    const words = Array.from({ length: Math.floor(r() * 4) }, () => (r() < 0.08 ? pick(BAD_ARGS) : pick(ARGS)));
    const cmd = [prog, ...words].join(pick([' ', '\t', '  ']));
    const x = r();
    if (x < 0.45) lines.push(`${pick(['', ' ', '\t', '--'])}up ${quoted(cmd, r)}${r() < 0.1 ? ' extra' : pick(['', ' # note', ' ;note', '\t', '\r'])}`);
    else if (x < 0.65) lines.push(`script-security ${pick(['2', '3', '1', '0', '2x', '+2', ' 2'])}`);
    else if (x < 0.72) lines.push(pick(['# up x', '; up x', '', '   ', '#']));
    else if (x < 0.8) lines.push(pick(['cd sub', `cd ${work}`]));
    else if (x < 0.9) lines.push('config inc.conf');
    else lines.push(`up ${quoted(cmd, r)}`.padEnd(pick([10, 254, 255, 256, 300]), 'z'));
  }
  const inc = [`script-security ${pick(['2', '1'])}`, `up ${quoted(`${path.join(work, 'rec.sh')} inc`, r)}`].slice(0, 1 + Math.floor(r() * 2));
  return { 't.conf': lines.join(pick(['\n', '\r\n'])) + (r() < 0.8 ? '\n' : ''), 'inc.conf': inc.join('\n') + '\n' };
}

describe('openvpn options, read as openvpn reads them', () => {
  it('parse_line: hand-picked lines', () => {
    expect(parseLine('up "/bin/a b" # c\n')).toEqual(['up', '/bin/a b']);
    expect(parseLine("up '/bin/a \\b'\n")).toEqual(['up', '/bin/a \\b']);
    expect(parseLine('up /bin/a\\ b;c\n')).toEqual(['up', '/bin/a b;c']);
    expect(parseLine('  ;comment\n')).toEqual([]);
    expect(parseLine('up "a\n')).toHaveProperty('refused');
    expect(parseLine('up a\\q\n')).toHaveProperty('refused');
    expect(argvParseCmd('/bin/x a\\q')).toEqual(['/bin/x a\\q']);
  });

  it('120 generated configurations: openvpn runs what the reader predicts, with the same argv', async () => {
    const r = rng(20261208);
    const work = path.join(dir, 'gen');
    let ran = 0;
    for (let i = 0; i < 120; i++) {
      const files = generated(r, work);
      const want = oracle(work, files);
      if (want !== null) ran++;
      expect(await predicted(work, files), JSON.stringify(files)).toEqual(want);
    }
    // The generator must reach both outcomes, or the comparison proves little.
    expect(ran).toBeGreaterThan(15);
    expect(ran).toBeLessThan(100);
  }, 400000);
});

describe('a root with Debian openvpn installed', () => {
  function root(conf: Record<string, string>, opts: { enable?: string; script?: string } = {}): string {
    const r = mkdtempSync(path.join(dir, 'root-'));
    const unitDir = path.join(r, 'lib/systemd/system');
    mkdirSync(unitDir, { recursive: true });
    for (const u of readdirSync(path.join(PACKAGE, 'lib/systemd/system')))
      writeFileSync(path.join(unitDir, u), readFileSync(path.join(PACKAGE, 'lib/systemd/system', u)));
    mkdirSync(path.join(r, 'lib/systemd/system-generators'), { recursive: true });
    writeFileSync(
      path.join(r, 'lib/systemd/system-generators/openvpn-generator'),
      readFileSync(path.join(PACKAGE, 'lib/systemd/system-generators/openvpn-generator')),
    );
    chmodSync(path.join(r, 'lib/systemd/system-generators/openvpn-generator'), 0o755);
    // The init script and ifupdown hooks the package ships (the hook runs at boot; the init script's restart runs "$0").
    for (const f of ['etc/init.d/openvpn', 'etc/network/if-up.d/openvpn', 'etc/network/if-down.d/openvpn']) {
      mkdirSync(path.dirname(path.join(r, f)), { recursive: true });
      writeFileSync(path.join(r, f), readFileSync(path.join(PACKAGE, f)));
      chmodSync(path.join(r, f), 0o755);
    }
    writeFileSync(path.join(r, 'etc/network/interfaces'), 'auto lo\niface lo inet loopback\n');
    mkdirSync(path.join(r, 'etc/default'), { recursive: true });
    writeFileSync(path.join(r, 'etc/default/openvpn'), readFileSync(path.join(PACKAGE, 'etc/default/openvpn')));
    writeFileSync(path.join(unitDir, 'multi-user.target'), '[Unit]\nDescription=Multi-User System\n');
    const wants = path.join(r, 'etc/systemd/system/multi-user.target.wants');
    mkdirSync(wants, { recursive: true });
    // The postinst's `deb-systemd-helper enable openvpn.service`.
    symlinkSync('/lib/systemd/system/openvpn.service', path.join(wants, 'openvpn.service'));
    if (opts.enable) symlinkSync(`/lib/systemd/system/${opts.enable.replace(/@.*/, '@.service')}`, path.join(wants, opts.enable));
    symlinkSync('/lib/systemd/system/multi-user.target', path.join(r, 'etc/systemd/system/default.target'));
    for (const d of ['etc/openvpn/server', 'etc/openvpn/client', 'usr/sbin']) mkdirSync(path.join(r, d), { recursive: true });
    // A stand-in for procps' sysctl: openvpn only checks that argv[0] is an executable file.
    writeFileSync(path.join(r, 'usr/sbin/sysctl'), '\x7fELF');
    chmodSync(path.join(r, 'usr/sbin/sysctl'), 0o755);
    for (const [f, text] of Object.entries(conf)) writeFileSync(path.join(r, f), text);
    if (opts.script) {
      writeFileSync(path.join(r, 'etc/openvpn/up.sh'), opts.script);
      chmodSync(path.join(r, 'etc/openvpn/up.sh'), 0o755);
    }
    writeFileSync(path.join(r, 'etc/fstab'), 'UUID=1 / ext4 defaults 0 1\n');
    writeFileSync(
      path.join(r, 'desired.yaml'),
      'reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SysctlFile\n    file: /etc/sysctl.d/k8s.conf\n    settings:\n      net.ipv4.ip_forward: 1\n',
    );
    return r;
  }
  async function plan(r: string) {
    const out = await runCli(['plan', '--json', '-f', path.join(r, 'desired.yaml'), '--root', r]);
    const doc = JSON.parse(out.stdout);
    const lines = doc.resources[0].changes.filter((c: { operator: string | null }) => c.operator !== null);
    const p = doc.promises.find((x: { id: string }) => x.id === 'sysctl:net.ipv4.ip_forward');
    return { doc, lines, p, text: JSON.stringify(doc) };
  }
  const P2P = 'dev null\nifconfig-noexec\n';

  it('stock (no configuration): no line, the promise stands', async () => {
    const { lines, p } = await plan(root({}));
    expect(lines).toEqual([]);
    expect(p).toMatchObject({ at_boot: true });
  });

  it('/etc/openvpn/office.conf (started by the generator) with script-security 2 and an up script turning forwarding off: named at the script line', async () => {
    const r = root(
      { 'etc/openvpn/office.conf': `${P2P}script-security 2\nup up.sh\n` },
      { script: '#!/bin/sh\nip link set "$1" up\nsysctl -w net.ipv4.ip_forward=0\n' },
    );
    const { lines, p } = await plan(r);
    expect(lines).toHaveLength(1);
    expect(lines[0].summary).toContain('/etc/openvpn/up.sh:3');
    expect(lines[0].summary).toContain('openvpn@office.service runs --up of /etc/openvpn/office.conf:4');
    expect(lines[0].summary).toContain('openvpn-generator');
    expect(p).toMatchObject({ after_apply: true, at_boot: false });
  });

  it('the same without script-security 2 (openvpn runs no script), or writing 1: no line', async () => {
    for (const [conf, script] of [
      [`${P2P}up up.sh\n`, '#!/bin/sh\nsysctl -w net.ipv4.ip_forward=0\n'],
      [`${P2P}script-security 1\nup up.sh\n`, '#!/bin/sh\nsysctl -w net.ipv4.ip_forward=0\n'],
      [`${P2P}script-security 2\nup up.sh\n`, '#!/bin/sh\nsysctl -w net.ipv4.ip_forward=1\n'],
      [`${P2P}script-security 2\n# up up.sh\n`, '#!/bin/sh\nsysctl -w net.ipv4.ip_forward=0\n'],
    ]) {
      const { lines, p } = await plan(root({ 'etc/openvpn/office.conf': conf! }, { script: script! }));
      expect(lines, conf).toEqual([]);
      expect(p, conf).toMatchObject({ at_boot: true });
    }
  });

  it('openvpn-server@vpn enabled, the up command a sysctl itself (no shell): named at the config line', async () => {
    const r = root(
      { 'etc/openvpn/server/vpn.conf': `${P2P}script-security 2\nup "/usr/sbin/sysctl -w net.ipv4.ip_forward=0"\n` },
      { enable: 'openvpn-server@vpn.service' },
    );
    const { lines, p } = await plan(r);
    expect(lines).toHaveLength(1);
    expect(lines[0].summary).toContain('/etc/openvpn/server/vpn.conf:4');
    expect(lines[0].operator).toContain('which openvpn runs whole: edit or remove that line');
    expect(p).toMatchObject({ at_boot: false });
  });

  it('AUTOSTART="none" and no enabled instance: the configuration does not start, no line', async () => {
    const r = root({
      'etc/openvpn/office.conf': `${P2P}script-security 2\nup "/usr/sbin/sysctl -w net.ipv4.ip_forward=0"\n`,
      'etc/default/openvpn': 'AUTOSTART="none"\n',
    });
    const { lines, p } = await plan(r);
    expect(lines).toEqual([]);
    expect(p).toMatchObject({ at_boot: true });
  });

  it('an include loop is a loud unknown at the include line; the promise is not claimed', async () => {
    const r = root({ 'etc/openvpn/office.conf': `${P2P}script-security 2\nconfig /etc/openvpn/office.conf\n` });
    const { p, text } = await plan(r);
    expect(text).toContain('an include loop');
    expect(text).toContain('/etc/openvpn/office.conf:4');
    expect(p.at_boot).not.toBe(true);
  });
});
