// No false alarms on stock Debian servers. A Debian 12 and a
// Debian 13 root, installed by mmdebstrap from Debian's packages with what
// such servers carry (test/helpers/stock-rootfs.ts), planned offline with
// the project's desired-state.yaml: the boot-time scripts of those packages
// (networking.service's `sh -c 'if [ -f ... ]; then ifup ...; fi'`,
// ifupdown-pre.service, /etc/network/if-*.d/resolved, chrony's hooks, the
// units of cron, ssh, containerd, NetworkManager, ...) turn no swap
// on, write no sysctl and remove no module, so the plan has no warning and
// no boot-script line. The desired state's `kubespray:` block is left out:
// no kubespray checkout is installed, and its warning is about the desired
// state, not the host.
//
// Below that, the same packages' scripts as text (test/helpers/debian-scripts.ts),
// read by the shell reader: no action and no unknown, while a swapon put into
// the same compound commands is still found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ownCgroup } from '../helpers/own-cgroup.mjs';
import { parse, stringify } from 'yaml';
import { freshStockRoot, type StockSuite } from '../helpers/stock-rootfs.js';
import { readShellScript, execActions } from '../../src/boot-scripts/shell-lines.js';
import { parseExecLine } from '../../src/systemd/exec-command.js';
import {
  IF_DOWN_RESOLVED_0_8_41,
  IF_UP_RESOLVED_0_8_41,
  IF_UP_RESOLVED_0_8_44,
  IFUPDOWN_PRE_SERVICE_EXEC,
  NETWORKING_SERVICE_EXEC_0_8_41,
  NETWORKING_SERVICE_EXEC_0_8_44,
} from '../helpers/debian-scripts.js';

const BUNDLE = path.resolve('dist/reconcile.mjs');
const SUITES: StockSuite[] = ['bookworm', 'trixie'];
const roots = new Map<StockSuite, string>();
let desired: string;
let scratch: string;

beforeAll(async () => {
  const doc = parse(readFileSync('desired-state.yaml', 'utf8')) as Record<string, unknown>;
  delete doc.kubespray;
  const dirs = await Promise.all(SUITES.map((s) => freshStockRoot(s)));
  SUITES.forEach((s, i) => roots.set(s, dirs[i]!));
  scratch = mkdtempSync(path.join(tmpdir(), 'stock-desired-'));
  desired = path.join(scratch, 'desired-state.yaml');
  writeFileSync(desired, stringify(doc));
}, 30 * 60_000);
afterAll(() => {
  for (const r of [...roots.values(), scratch]) if (r) rmSync(r, { recursive: true, force: true });
}, 5 * 60_000);

describe('a stock Debian server with the packages such servers carry', () => {
  for (const suite of SUITES) {
    it(`${suite}: the plan has no warning, no "unknown" and no boot-script line`, () => {
      const root = roots.get(suite)!;
      const text = spawnSync(process.execPath, [BUNDLE, '--plan', '-f', desired, '--root', root], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
      expect(text.status, text.stderr).toBe(2);
      expect(text.stdout.split('\n').filter((l) => /warning|unknown/i.test(l))).toEqual([]);
      const doc = JSON.parse(spawnSync(process.execPath, [BUNDLE, '--plan', '--json', '-f', desired, '--root', root], { encoding: 'utf8' }).stdout) as {
        resources: Array<{ changes: Array<{ id: string }> }>;
        findings: Array<{ level: string; message: string }>;
      };
      expect(doc.findings.filter((f) => f.level === 'warning')).toEqual([]);
      expect(doc.resources.flatMap((r) => r.changes.map((c) => c.id)).filter((id) => id.startsWith('boot-script:'))).toEqual([]);
      // The scripts the issue names are there and were read.
      expect(readFileSync(path.join(root, 'usr/lib/systemd/system/networking.service'), 'utf8')).toContain("sh -c 'if [ -f /run/network/restart-hotplug ]");
      expect(readFileSync(path.join(root, 'etc/network/if-up.d/resolved'), 'utf8')).toContain('case "$ADDRFAM" in');
    });
  }
});

/** ExecStart=VALUE as the scan reads it. */
const exec = (line: string) => {
  const cmd = parseExecLine(line.slice(line.indexOf('=') + 1))!;
  return execActions([cmd.path, ...cmd.argv.slice(1)]);
};

describe("Debian packages' own scripts, as text", () => {
  it('networking.service and ifupdown-pre.service (ifupdown 0.8.41, 0.8.44+deb13u1): ifup, ifquery, udevadm and the test builtin, nothing this tool keeps', () => {
    for (const line of [...NETWORKING_SERVICE_EXEC_0_8_41, ...NETWORKING_SERVICE_EXEC_0_8_44, ...IFUPDOWN_PRE_SERVICE_EXEC])
      expect(exec(line), line).toEqual([]);
  });

  it('/etc/network/if-up.d/resolved and if-down.d/resolved (ifupdown 0.8.41, 0.8.44+deb13u1): case patterns, if/fi, heredocs, variables from literals', () => {
    for (const script of [IF_UP_RESOLVED_0_8_41, IF_UP_RESOLVED_0_8_44, IF_DOWN_RESOLVED_0_8_41]) {
      const r = readShellScript(script);
      expect(r.problems).toEqual([]);
      expect(r.commands).toEqual([]);
    }
  });

  it('the same compound commands with a swapon, a sysctl write and a $PROGRAM put in: found, and the unknown program stays unknown', () => {
    const lines = IF_UP_RESOLVED_0_8_41.split('\n');
    // Line 8 is "    *) exit 0 ;;", line 25 "    mkdir -p $mystatedir" inside the if.
    expect(lines[7]).toBe('    *) exit 0 ;;');
    expect(lines[24]).toBe('    mkdir -p $mystatedir');
    lines[7] = '    *) swapon -a; exit 0 ;;';
    lines[24] = '    mkdir -p $mystatedir; echo 0 > /proc/sys/net/ipv4/ip_forward; $HOOK';
    const r = readShellScript(lines.join('\n'));
    expect(r.commands.map((c) => [c.line, c.actions.map((a) => a.kind)])).toEqual([
      [8, ['swapon']],
      [25, ['sysctl-write']],
      [25, ['unknown']],
    ]);
  });
});

describe('ExecStart= words as systemd passes them (the stock Debian 12 root booted in systemd-nspawn, private network)', () => {
  // systemd.service(5): ${NAME} is replaced anywhere in a word, $NAME only as a whole word (split at whitespace), $$ is "$".
  const VALUE = `/usr/bin/printf "<%%s>\\n" plain $FOO \${FOO} x\${FOO}y x$FOOy $$FOO "$BAR" \${BAR} '$FOO' "a$FOO b" 'if [ "$X" ]; then :; fi'`;
  it('a word the scan reads as known is the argument the program gets; one it calls unknown is expanded by the manager', () => {
    const root = roots.get('bookworm')!;
    const unit = [
      '[Unit]',
      'Description=argv probe',
      '[Service]',
      'Type=oneshot',
      'Environment=FOO=foo "BAR=b c"',
      `ExecStart=${VALUE}`,
      'StandardOutput=file:/argv.out',
      'ExecStartPost=/bin/systemctl --no-block poweroff',
      '',
    ].join('\n');
    writeFileSync(path.join(root, 'etc/systemd/system/argv-probe.service'), unit);
    mkdirSync(path.join(root, 'etc/systemd/system/multi-user.target.wants'), { recursive: true });
    symlinkSync('/etc/systemd/system/argv-probe.service', path.join(root, 'etc/systemd/system/multi-user.target.wants/argv-probe.service'));
    const cg = ownCgroup('argv-probe');
    const [cmd, args] = cg.wrap('systemd-nspawn', ['-q', '-b', '-D', root, '--register=no', '--keep-unit', '--private-network', '--console=pipe']);
    const boot = spawnSync(cmd, args, {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '1' },
    });
    cg.dispose();
    const out = readFileSync(path.join(root, 'argv.out'), 'utf8');
    const actual = [...out.matchAll(/<([^>]*)>\n/g)].map((m) => m[1]!);
    expect(actual.length, boot.stdout + boot.stderr).toBeGreaterThan(5);
    // printf's format is argv[1]; the printed arguments start at argv[2].
    const words = parseExecLine(VALUE)!.argv.slice(2);
    const raw = ['plain', '$FOO', '${FOO}', 'x${FOO}y', 'x$FOOy', '$$FOO', '$BAR', '${BAR}', '$FOO', 'a$FOO b', 'if [ "$X" ]; then :; fi'];
    expect(words).toHaveLength(raw.length);
    // Walk both: a known word is the next argument; a run of unknown ones takes the arguments up to the next known word, none of them equal to their text as written.
    let i = 0;
    let k = 0;
    while (k < words.length) {
      const w = words[k];
      if (w !== null) {
        expect(actual[i], `word ${k} ${raw[k]}`).toBe(w);
        i++;
        k++;
        continue;
      }
      let end = k;
      while (end < words.length && words[end] === null) end++;
      const next = words[end];
      const taken: string[] = [];
      while (i < actual.length && (next === undefined || actual[i] !== next)) taken.push(actual[i++]!);
      for (const r of raw.slice(k, end)) expect(taken, `unknown ${r}`).not.toContain(r);
      expect(taken.length, raw.slice(k, end).join(' ')).toBeGreaterThan(0);
      k = end;
    }
    expect(i).toBe(actual.length);
  }, 180_000);
});
