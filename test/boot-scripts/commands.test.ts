// What one simple command of a boot script does to swap, sysctls and modules.
// Wrappers are checked against the real programs (env, nice, nohup, setsid,
// ionice, timeout run a recording stub, and the stub says which argv it got);
// the text echo and printf print against dash and bash; swapon(8),
// sysctl(8) (procps-ng 4.0) and modprobe(8)/rmmod(8) forms are hand-read
// from their manuals. A whole script is shell-lines.test.ts's subject.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commandActions, printedText, unwrap, type ScriptAction } from '../../src/boot-scripts/commands.js';

let dir: string;
let rec: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'commands-'));
  rec = path.join(dir, 'rec');
  // Records its argv, NUL-separated, as the kernel handed it over ($0 is the path it was run by).
  writeFileSync(rec, `#!/bin/sh\nprintf '%s\\0' "$0" "$@" > ${dir}/argv\n`);
  chmodSync(rec, 0o755);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a wrapper really runs: the argv the stub got, run by /bin/sh (so `command`, a builtin, works too). */
function really(words: string[]): string[] {
  rmSync(path.join(dir, 'argv'), { force: true });
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const r = spawnSync('/bin/sh', ['-c', quoted], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return readFileSync(path.join(dir, 'argv'), 'utf8').split('\0').slice(0, -1);
}

describe('unwrap: the command a wrapper runs, as the wrapper itself runs it', () => {
  const forms = [
    ['env'],
    ['env', '-i', 'A=1', 'B=2'],
    ['env', '-u', 'HOME'],
    ['nice'],
    ['nice', '-n', '5'],
    ['nohup'],
    ['setsid'],
    ['setsid', '-f'],
    ['ionice', '-c', '3'],
    ['timeout', '5'],
    ['timeout', '-s', 'KILL', '5'],
    ['timeout', '--kill-after=1', '5'],
    ['command'],
    ['nice', '-n', '1', 'env', 'X=1', 'nohup'],
  ];
  for (const wrapper of forms) {
    it(`${wrapper.join(' ')} runs what the stub records`, () => {
      const words = [...wrapper, '@REC@', 'a b', '-x'];
      const argv = really(words.map((w) => (w === '@REC@' ? rec : w)));
      expect(unwrap(words.map((w) => (w === '@REC@' ? rec : w)))).toEqual(argv);
    });
  }
  it('no wrapper: the words unchanged; `command -v` only looks the name up; a wrapped program known at run time is [null]', () => {
    const w = ['swapon', '-a'];
    expect(unwrap(w)).toBe(w);
    expect(unwrap(['command', '-v', 'swapon'])).toBeNull();
    expect(unwrap(['env', null, '-a'])).toEqual([null]);
  });
});

describe('printedText: what echo and printf print, against dash and bash', () => {
  const argvs = [
    ['echo', '0'],
    ['echo', '-n', '1'],
    ['echo', 'a', 'b'],
    ['printf', '1'],
    ['printf', '1\\n'],
    ['printf', '%s', '0'],
    ['printf', '%s\\n', 'x y'],
    ['printf', '%d', '1'],
    ['printf', '%d', '010'],
    ['printf', '%i', 'abc'],
  ];
  for (const argv of argvs) {
    it(`${JSON.stringify(argv)}: the text both shells print, without its last newline, or null`, () => {
      const outs = ['dash', 'bash'].map((sh) => spawnSync(sh, ['-c', '"$@"', 'sh', ...argv], { encoding: 'utf8' }).stdout.replace(/\n$/, ''));
      const mine = printedText(argv, undefined);
      if (mine !== null) expect([mine, mine]).toEqual(outs);
      else expect(['echo', 'printf']).toContain(argv[0]);
    });
  }
  it('null where the shells differ or the words are not known: backslashes in echo, an option-like word, a run-time word', () => {
    expect(printedText(['echo', 'a\\tb'], undefined)).toBeNull();
    expect(printedText(['echo', '-e', '1'], undefined)).toBeNull();
    expect(printedText(['echo', null], undefined)).toBeNull();
    expect(printedText(['printf'], undefined)).toBeNull();
  });
  it('cat prints its piped input; with a file operand, or no pipe, it is not known', () => {
    expect(printedText(['cat'], '1\n')).toBe('1\n');
    expect(printedText(['cat'], undefined)).toBeNull();
    expect(printedText(['cat', '/etc/x'], '1')).toBeNull();
  });
});

describe('commandActions', () => {
  const kinds = (words: Array<string | null>): ScriptAction[] => commandActions(words);
  it('reads sysctl keys in either separator and keeps the value', () => {
    expect(kinds(['sysctl', '-w', 'net/bridge/bridge-nf-call-iptables=0'])).toEqual([
      { kind: 'sysctl-write', key: 'net.bridge.bridge-nf-call-iptables', value: '0' },
    ]);
  });
  it('names module removals canonically (- and _ are one module)', () => {
    expect(kinds(['rmmod', 'br-netfilter'])).toEqual([{ kind: 'module-remove', module: 'br_netfilter', program: 'rmmod' }]);
  });
  it('is unknown, not silent, when the program or an argument is known only at run time', () => {
    expect(kinds([null, '-a'])).toEqual([{ kind: 'unknown', what: 'program', why: expect.stringContaining('run time') }]);
    expect(kinds(['sh', '-c', null])).toEqual([{ kind: 'unknown', what: 'program', why: expect.stringContaining('sh -c') }]);
    expect(kinds(['sysctl', '-w', null])).toEqual([{ kind: 'unknown', what: 'sysctl', why: expect.any(String) }]);
    // A file named only at run time stays unknown; a named one is loaded and judged (test/boot-scripts/sysctl-writes.test.ts).
    expect(kinds(['sysctl', '-p', null])).toEqual([{ kind: 'unknown', what: 'sysctl', why: expect.stringContaining('run time') }]);
    expect(kinds(['sysctl', '-p', '/etc/other.conf'])).toEqual([{ kind: 'sysctl-load', files: ['/etc/other.conf'] }]);
  });
  it('command -v only looks the name up', () => {
    expect(kinds(['command', '-v', 'swapon'])).toEqual([]);
  });

  it('swapon(8): -a alone is judged against fstab; a device, or -T FSTAB, is not; --show turns nothing on', () => {
    expect(kinds(['swapon', '-a'])).toEqual([{ kind: 'swapon', argv: ['swapon', '-a'], fstabOnly: true }]);
    expect(kinds(['swapon', '-a', '-T', '/etc/fstab2'])).toEqual([{ kind: 'swapon', argv: ['swapon', '-a', '-T', '/etc/fstab2'] }]);
    expect(kinds(['swapon', '/swapfile'])).toEqual([{ kind: 'swapon', argv: ['swapon', '/swapfile'] }]);
    expect(kinds(['swapon', '--show'])).toEqual([]);
  });
  it('sysctl(8): KEY=VALUE with or without -w, several at once; a bare key only reads; -p alone loads /etc/sysctl.conf', () => {
    expect(kinds(['sysctl', 'net.ipv4.ip_forward=0'])).toEqual([{ kind: 'sysctl-write', key: 'net.ipv4.ip_forward', value: '0' }]);
    expect(kinds(['sysctl', '-q', '-w', 'a.b=1', 'c/d=2'])).toEqual([
      { kind: 'sysctl-write', key: 'a.b', value: '1' },
      { kind: 'sysctl-write', key: 'c.d', value: '2' },
    ]);
    expect(kinds(['sysctl', 'net.ipv4.ip_forward'])).toEqual([]);
    expect(kinds(['sysctl', '-p'])).toEqual([{ kind: 'sysctl-load', files: ['/etc/sysctl.conf'] }]);
  });
  it('modprobe(8) -r removes every module named (-r combined with other flags too); modprobe without -r loads; rmmod -f removes', () => {
    expect(kinds(['modprobe', '-r', 'a-b', 'c'])).toEqual([
      { kind: 'module-remove', module: 'a_b', program: 'modprobe -r' },
      { kind: 'module-remove', module: 'c', program: 'modprobe -r' },
    ]);
    expect(kinds(['modprobe', '-rv', 'br_netfilter'])).toEqual([{ kind: 'module-remove', module: 'br_netfilter', program: 'modprobe -r' }]);
    expect(kinds(['modprobe', 'br_netfilter'])).toEqual([]);
    expect(kinds(['rmmod', '-f', 'overlay'])).toEqual([{ kind: 'module-remove', module: 'overlay', program: 'rmmod' }]);
  });
  it('a write into /proc/sys by redirection or tee is a sysctl write; tee of a run-time pipe is unknown with the path', () => {
    const to = (target: string) => ({ op: '>', fd: 1, target, prefix: target, pattern: null });
    expect(commandActions(['echo', '0'], { redirects: [to('/proc/sys/net/ipv4/ip_forward')] })).toEqual([
      { kind: 'sysctl-write', key: 'net.ipv4.ip_forward', value: '0', how: 'echo > /proc/sys/net/ipv4/ip_forward' },
    ]);
    expect(commandActions(['echo', '0'], { redirects: [to('/tmp/x')] })).toEqual([]);
    expect(commandActions(['tee', '/proc/sys/net/ipv4/ip_forward'], { stdin: '1\n' })).toEqual([
      { kind: 'sysctl-write', key: 'net.ipv4.ip_forward', value: '1', how: 'tee /proc/sys/net/ipv4/ip_forward' },
    ]);
    expect(commandActions(['tee', '-a', '/proc/sys/net/ipv4/ip_forward'], { stdin: null })).toEqual([
      {
        kind: 'unknown',
        what: 'sysctl',
        why: 'tee /proc/sys/net/ipv4/ip_forward: what it writes is known only at run time',
        path: '/proc/sys/net/ipv4/ip_forward',
      },
    ]);
  });
  it('sh -c SCRIPT is handed to the reader; without one it is unknown, never nothing', () => {
    const read = (script: string): ScriptAction[] => [{ kind: 'unknown', what: 'program', why: `read ${script}` }];
    expect(commandActions(['sh', '-c', 'swapon -a'], {}, read)).toEqual([{ kind: 'unknown', what: 'program', why: 'read swapon -a' }]);
    expect(commandActions(['sh', '-c', 'swapon -a'])).toEqual([{ kind: 'unknown', what: 'program', why: 'sh -c runs a script this caller does not read' }]);
  });
});
