// wg-quick's PreUp and PostUp, read as wg-quick reads them. The oracle is
// wg-quick itself: its own parse_options (wireguard-tools' /usr/bin/wg-quick,
// run by bash with the functions it calls) over generated configurations,
// each snippet as execute_hooks evals it ("%i" replaced). Then a root with
// Debian's wg-quick@.service enabled for wg0 and a PostUp that turns
// forwarding off: the plan names that line and takes the promise back.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { wgConfigFile, wgQuickUpHooks } from '../../src/boot-scripts/wg-quick.js';
import { runCli } from '../helpers/run-cli.js';

const WG_QUICK = '/usr/bin/wg-quick';
const PACKAGE = path.resolve('test/fixtures/debian-packages/wireguard-tools_1.0.20210914-1+b1');
const dir = mkdtempSync(path.join(tmpdir(), 'wg-quick-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The snippets wg-quick's own parse_options collects for `up`, in the order execute_hooks runs them. */
function oracle(text: string): string[] {
  const conf = path.join(dir, 'wg0.conf');
  writeFileSync(conf, text, { mode: 0o600 });
  const script = [
    'shopt -s extglob',
    `eval "$(sed -n '/^parse_options() {/,/^}/p' ${WG_QUICK})"`,
    'die() { echo "$*" >&2; exit 1; }',
    'read_bool() { :; }',
    'parse_options "$1"',
    'for h in "${PRE_UP[@]}" "${POST_UP[@]}"; do printf "%s\\0" "${h//%i/$INTERFACE}"; done',
  ].join('\n');
  const out = execFileSync('bash', ['-c', script, 'oracle', conf], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return out.split('\0').slice(0, -1);
}

/** A seeded generator (mulberry32), so a failing case can be rerun. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEADERS = ['[Interface]', '[interface]', '  [INTERFACE]  ', '[Peer]', '[peer]', '[Interface] # main', '[Interfaces]'];
const KEYS = ['PostUp', 'PreUp', 'postup', 'PREUP', 'PostDown', 'PreDown', 'Address', 'PostUp ', '\tPreUp', 'Post Up'];
const VALUES = [
  'sysctl -w net.ipv4.ip_forward=0',
  ' iptables -A FORWARD -i %i -j ACCEPT ',
  'echo 0 > /proc/sys/net/ipv4/ip_forward # no routing',
  'sysctl -q net.ipv4.conf.%i.forwarding=1; ip link set %i up',
  'a=b=c',
  '',
  '\t',
  'logger "up on %i"\r',
];

function generated(r: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const lines: string[] = [];
  const n = 1 + Math.floor(r() * 9);
  for (let i = 0; i < n; i++) {
    const x = r();
    if (x < 0.2) lines.push(pick(HEADERS));
    else if (x < 0.3) lines.push(pick(['# a comment', '', '   ', 'PrivateKey = abc=', 'PostUp']));
    else lines.push(`${pick(KEYS)}${pick(['=', ' = ', '\t=\t', ' =', '= '])}${pick(VALUES)}`);
  }
  return lines.join(pick(['\n', '\r\n'])) + (r() < 0.7 ? '\n' : '');
}

describe('wg-quick PreUp/PostUp, read as wg-quick reads them', () => {
  it('names /etc/wireguard/NAME.conf for an interface name, nothing for a path', () => {
    expect(wgConfigFile('wg0')).toBe('/etc/wireguard/wg0.conf');
    expect(wgConfigFile('a_b=c+d.e-f')).toBe('/etc/wireguard/a_b=c+d.e-f.conf');
    expect(wgConfigFile('sixteen-chars-xx')).toBeNull();
    expect(wgConfigFile('-etc-wireguard-x.conf')).toBeNull();
  });

  it('hand-picked lines: the same snippets as wg-quick, in its order', () => {
    const text = '[Interface]\nPostUp = sysctl -w net.ipv4.ip_forward=0 # off\npreup=ip link set %i mtu 1420\n[Peer]\nPostUp = never run\n';
    expect(wgQuickUpHooks(text, 'wg0').map((h) => h.script)).toEqual(oracle(text));
    expect(wgQuickUpHooks(text, 'wg0')).toEqual([
      { line: 3, key: 'preup', script: 'ip link set wg0 mtu 1420' },
      { line: 2, key: 'PostUp', script: 'sysctl -w net.ipv4.ip_forward=0' },
    ]);
  });

  it('400 generated configurations: the same snippets as wg-quick, in its order', () => {
    const r = rng(20261206);
    for (let i = 0; i < 400; i++) {
      const text = generated(r);
      expect(
        wgQuickUpHooks(text, 'wg0').map((h) => h.script),
        JSON.stringify(text),
      ).toEqual(oracle(text));
    }
  });
});

describe('a root where wg-quick@wg0.service is enabled', () => {
  function root(postUp: string, instance = 'wg0'): string {
    const r = mkdtempSync(path.join(dir, 'root-'));
    const unitDir = path.join(r, 'lib/systemd/system');
    mkdirSync(unitDir, { recursive: true });
    writeFileSync(path.join(unitDir, 'wg-quick@.service'), readFileSync(path.join(PACKAGE, 'lib/systemd/system/wg-quick@.service')));
    writeFileSync(path.join(unitDir, 'multi-user.target'), '[Unit]\nDescription=Multi-User System\n');
    mkdirSync(path.join(r, 'etc/systemd/system/multi-user.target.wants'), { recursive: true });
    // What `systemctl enable wg-quick@wg0` makes.
    symlinkSync('/lib/systemd/system/wg-quick@.service', path.join(r, `etc/systemd/system/multi-user.target.wants/wg-quick@${instance}.service`));
    symlinkSync('/lib/systemd/system/multi-user.target', path.join(r, 'etc/systemd/system/default.target'));
    mkdirSync(path.join(r, 'etc/wireguard'), { recursive: true });
    writeFileSync(path.join(r, 'etc/wireguard/wg0.conf'), `[Interface]\nAddress = 10.8.0.1/24\nPrivateKey = AAAA\n${postUp}\n`);
    chmodSync(path.join(r, 'etc/wireguard/wg0.conf'), 0o600);
    writeFileSync(path.join(r, 'etc/fstab'), 'UUID=1 / ext4 defaults 0 1\n');
    writeFileSync(
      path.join(r, 'desired.yaml'),
      'reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SysctlFile\n    file: /etc/sysctl.d/k8s.conf\n    settings:\n      net.ipv4.ip_forward: 1\n',
    );
    return r;
  }

  it('a PostUp that turns forwarding off is an operator line at its line, and takes the promise back at boot', async () => {
    const r = root('PostUp = sysctl -w net.ipv4.ip_forward=0');
    const out = await runCli(['plan', '--json', '-f', path.join(r, 'desired.yaml'), '--root', r]);
    const doc = JSON.parse(out.stdout);
    const line = doc.resources[0].changes.find((c: { operator: string | null }) => c.operator !== null);
    expect(line?.summary).toContain('/etc/wireguard/wg0.conf:4');
    expect(line?.summary).toContain('wg-quick@wg0.service runs PostUp of /etc/wireguard/wg0.conf when it starts at boot');
    // neutralise_scripts would not comment out a snippet wg-quick runs whole, so the fix does not offer it.
    expect(line?.operator).toContain(
      '/etc/wireguard/wg0.conf:4: it is PostUp of /etc/wireguard/wg0.conf:4, which wg-quick runs whole: edit or remove that line',
    );
    expect(line?.operator).not.toContain('neutralise_scripts');
    const p = doc.promises.find((x: { id: string }) => x.id === 'sysctl:net.ipv4.ip_forward');
    expect(p).toMatchObject({ after_apply: true, at_boot: false });
  });

  it('a PostUp that sets the wanted value, or a PostDown, takes nothing back', async () => {
    for (const hook of ['PostUp = sysctl -w net.ipv4.ip_forward=1', 'PostDown = sysctl -w net.ipv4.ip_forward=0']) {
      const r = root(hook);
      const out = await runCli(['plan', '--json', '-f', path.join(r, 'desired.yaml'), '--root', r]);
      const doc = JSON.parse(out.stdout);
      expect(
        doc.resources[0].changes.filter((c: { operator: string | null }) => c.operator !== null),
        hook,
      ).toEqual([]);
      expect(
        doc.promises.find((x: { id: string }) => x.id === 'sysctl:net.ipv4.ip_forward'),
        hook,
      ).toMatchObject({ at_boot: true });
    }
  });

  it('an instance that is no interface name (wg-quick reads it as a path) is a loud unknown at the unit line, not a silent skip', async () => {
    // 16 characters: over wg-quick's 15, so `wg-quick up` takes it as a configuration path.
    const r = root('PostUp = sysctl -w net.ipv4.ip_forward=0', 'office-vpn-tunnel');
    const out = await runCli(['plan', '--json', '-f', path.join(r, 'desired.yaml'), '--root', r]);
    const doc = JSON.parse(out.stdout);
    const text = JSON.stringify(doc);
    expect(text).toContain('wg-quick@office-vpn-tunnel.service runs wg-quick up with \\"office-vpn-tunnel\\", which is no interface name');
    expect(text).toContain('/lib/systemd/system/wg-quick@.service:');
    const p = doc.promises.find((x: { id: string }) => x.id === 'sysctl:net.ipv4.ip_forward');
    expect(p.at_boot).not.toBe(true);
  });
});
