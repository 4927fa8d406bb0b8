// judgeInstallCommand decides whether `install MODULE COMMAND` in modprobe.d
// loads MODULE. The oracle is the real /bin/sh running each command in a user
// and mount namespace (unshare -rm) where modprobe and insmod are bind-mounted
// over by a recorder: a command loads the module when the shell called
// modprobe or insmod for it.
import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ANY_MODULE, judgeInstallCommand, tokenize } from '../../src/modprobe/install-command.js';

const work = mkdtempSync(path.join(tmpdir(), 'install-command-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const fake = path.join(work, 'fake-modprobe');
const log = path.join(work, 'calls.log');
writeFileSync(fake, `#!/bin/sh\nif [ "$1" = --is-fake ]; then echo fake; exit 0; fi\necho "$0 $*" >> "${log}"\nexit 0\n`);
chmodSync(fake, 0o755);

function unshareWorks(): boolean {
  const r = spawnSync('unshare', ['-rm', 'true']);
  return r.status === 0;
}

/** What /bin/sh does with `command`: the modprobe/insmod calls it made, or null when the sandbox did not hold. */
function shellCalls(command: string): string[] {
  rmSync(log, { force: true });
  const script = [
    'set -e',
    `mount --bind ${fake} /usr/sbin/modprobe`,
    `mount --bind ${fake} /usr/sbin/insmod`,
    // Refuse to run anything unless both names now reach the recorder.
    '[ "$(/usr/sbin/modprobe --is-fake)" = fake ] && [ "$(/sbin/modprobe --is-fake)" = fake ] && [ "$(/usr/sbin/insmod --is-fake)" = fake ] || exit 99',
    'set +e',
    'PATH=/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c "$1" >/dev/null 2>&1',
    'exit 0',
  ].join('\n');
  const r = spawnSync('unshare', ['-rm', '/bin/sh', '-c', script, 'sandbox', command], { encoding: 'utf8', timeout: 10_000 });
  expect(r.status, r.stderr).toBe(0);
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
}

/** The recorder saw `modprobe ... MODULE` (loading: no -r/-n) or `insmod .../MODULE.ko`. */
function loadedBy(calls: string[], module: string): boolean {
  return calls.some((c) => {
    const [prog, ...args] = c.split(' ');
    const words = args.filter((a) => !a.startsWith('-'));
    if (prog!.endsWith('insmod'))
      return words.some(
        (w) =>
          path
            .basename(w)
            .replace(/\.ko.*$/, '')
            .replace(/-/g, '_') === module,
      );
    if (args.some((a) => /^-[a-zA-Z]*[rn]/.test(a) || a === '--remove' || a === '--dry-run')) return false;
    return (args.includes('-a') ? words : words.slice(0, 1)).some((w) => w.replace(/-/g, '_') === module);
  });
}

const COMMANDS: Array<[string, string]> = [
  ['br_netfilter', '/bin/sh -c "exit 0"'],
  ['overlay', ':'],
  ['overlay', '/bin/true'],
  ['overlay', '/bin/false'],
  ['overlay', 'true'],
  ['overlay', 'false'],
  ['overlay', '/usr/bin/true'],
  ['overlay', '/bin/sh -c "exit 0" $CMDLINE_OPTS'],
  ['overlay', "/bin/sh -c 'echo overlay is disabled'"],
  ['overlay', 'echo "overlay disabled" >/dev/null 2>&1'],
  ['overlay', 'exit 0'],
  ['overlay', 'exit 1; /sbin/modprobe --ignore-install overlay'],
  ['overlay', 'false && /sbin/modprobe --ignore-install overlay'],
  ['overlay', 'false || /sbin/modprobe --ignore-install overlay'],
  ['overlay', 'true && /sbin/modprobe --ignore-install overlay'],
  ['overlay', 'true || /sbin/modprobe --ignore-install overlay'],
  ['overlay', '/sbin/modprobe --ignore-install overlay $CMDLINE_OPTS'],
  ['overlay', '/sbin/modprobe --ignore-install overlay; /bin/true'],
  ['overlay', '/usr/sbin/modprobe -i overlay && echo loaded'],
  ['overlay', 'modprobe -i over-lay'],
  ['over_lay', 'modprobe -i over-lay'],
  ['overlay', '/sbin/modprobe -r overlay'],
  ['overlay', '/sbin/modprobe -n -i overlay'],
  ['overlay', '/sbin/modprobe -i bridge overlay'],
  ['overlay', '/sbin/modprobe -a -i bridge overlay'],
  ['overlay', 'sh -c "/sbin/modprobe --ignore-install overlay"'],
  ['overlay', "sh -c 'exit 0' && /sbin/modprobe -i overlay"],
  ['overlay', "sh -c 'exit 3' && /sbin/modprobe -i overlay"],
  ['overlay', '/bin/sh -c \'sh -c "exit 0"\''],
  ['overlay', 'insmod /lib/modules/6.1.0/kernel/fs/overlayfs/overlay.ko'],
  ['overlay', 'insmod /lib/modules/6.1.0/kernel/net/bridge/bridge.ko'],
  ['br_netfilter', '/sbin/modprobe --ignore-install br_netfilter; echo 1 > /dev/null'],
  ['br_netfilter', 'false; /sbin/modprobe --ignore-install br_netfilter'],
  ['br_netfilter', '/bin/true | /sbin/modprobe --ignore-install br_netfilter'],
  ['br_netfilter', 'FOO=1 /sbin/modprobe --ignore-install br_netfilter'],
  ['br_netfilter', '/sbin/modprobe -q -i br_netfilter || /bin/true'],
  ['br_netfilter', ': ; : ; exit'],
  ['br_netfilter', '/bin/false || /bin/false || exit 1'],
];

describe('install commands judged by what they do, against /bin/sh', () => {
  it('the sandbox works here (the oracle must run, not be skipped)', () => {
    expect(unshareWorks()).toBe(true);
  });

  for (const [module, command] of COMMANDS) {
    it(`install ${module} ${command}`, () => {
      const verdict = judgeInstallCommand(module, command);
      expect(verdict.loads, JSON.stringify(verdict)).not.toBe('unknown');
      expect(verdict.loads === 'yes').toBe(loadedBy(shellCalls(command), module));
    });
  }

  it('commands of unknown effect are unknown, never guessed', () => {
    for (const c of [
      '/usr/local/bin/load-bridge.sh',
      'test -e /etc/x && modprobe -i overlay',
      '$LOADER overlay',
      'if true; then :; fi',
      'modprobe -i $(echo overlay)',
      'bash /root/x.sh',
      '/bin/true\r',
    ]) {
      expect(judgeInstallCommand('overlay', c).loads, c).toBe('unknown');
    }
  });
});

describe('the exit status a verdict names is the one /bin/sh exits with', () => {
  /** The status of `command` under /bin/sh with modprobe and insmod replaced by the recorder (which exits 0). */
  function shellStatus(command: string): number {
    const script = [
      'set -e',
      `mount --bind ${fake} /usr/sbin/modprobe`,
      `mount --bind ${fake} /usr/sbin/insmod`,
      '[ "$(/usr/sbin/modprobe --is-fake)" = fake ] || exit 99',
      'set +e',
      'PATH=/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c "$1" >/dev/null 2>&1',
      'echo "status=$?"',
    ].join('\n');
    const r = spawnSync('unshare', ['-rm', '/bin/sh', '-c', script, 'sandbox', command], { encoding: 'utf8', timeout: 10_000 });
    expect(r.status, r.stderr).toBe(0);
    const m = /status=(\d+)/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    return Number(m![1]);
  }

  // Commands whose status does not depend on whether a real modprobe would succeed.
  const KNOWN_STATUS = [
    '/bin/false',
    ':',
    'exit 3',
    'exit 256',
    'false || true',
    'true && false',
    '/bin/false || /bin/false || exit 1',
    "sh -c 'exit 7'",
    'echo x | false',
    'false | echo x',
    'exit 0; false',
    'false; true',
  ];
  for (const command of KNOWN_STATUS) {
    it(command, () => {
      const verdict = judgeInstallCommand('overlay', command);
      expect(verdict.status, JSON.stringify(verdict)).not.toBe('?');
      expect(verdict.status === 0).toBe(shellStatus(command) === 0);
    });
  }

  it('a status that depends on modprobe succeeding is "?", not a guess', () => {
    // The recorder exits 0, a real modprobe may not: libkmod only sees the status.
    expect(judgeInstallCommand('overlay', '/sbin/modprobe --ignore-install overlay').status).toBe('?');
    expect(judgeInstallCommand('overlay', 'modprobe -i overlay; exit').status).toBe('?');
    // A bare exit exits with the last status: after false the shell exits 1, so 0 would be wrong (libkmod would stop the probe).
    expect(shellStatus('false; exit')).toBe(1);
    expect(judgeInstallCommand('overlay', 'false; exit').status).not.toBe(0);
  });
});

describe('verdicts and their reasons', () => {
  it('a command that never loads the module says so, naming the command and the module', () => {
    expect(judgeInstallCommand('br-netfilter', ' /bin/true ')).toEqual({ loads: 'no', status: 0, reason: '`/bin/true` never loads br-netfilter' });
  });
  it('an unknown verdict names the construct it could not judge', () => {
    const v = judgeInstallCommand('overlay', '/usr/local/bin/load-bridge.sh');
    expect(v.loads).toBe('unknown');
    expect(v.loads === 'unknown' && v.reason).toBe(
      'cannot tell whether `/usr/local/bin/load-bridge.sh` loads overlay: the program /usr/local/bin/load-bridge.sh',
    );
    const sub = judgeInstallCommand('overlay', 'modprobe -i $(echo overlay)');
    expect(sub.loads === 'unknown' && sub.reason).toMatch(/the command uses command substitution$/);
  });
  it('ANY_MODULE asks whether the command loads anything at all', () => {
    expect(judgeInstallCommand(ANY_MODULE, '/sbin/modprobe -i bridge').loads).toBe('yes');
    expect(judgeInstallCommand(ANY_MODULE, 'insmod /x/y/veth.ko.zst').loads).toBe('yes');
    expect(judgeInstallCommand(ANY_MODULE, '/bin/true; echo no').loads).toBe('no');
    expect(judgeInstallCommand(ANY_MODULE, '/sbin/modprobe -r bridge').loads).toBe('no');
  });
});

describe('tokenize (the shell subset judged)', () => {
  it('removes quotes in the word and keeps them in raw; a redirection with & stays one word', () => {
    expect(tokenize(`modprobe "a b"'c' x\\ y 2>&1 | logger && : || false # note\nexit`)).toEqual([
      { word: 'modprobe', raw: 'modprobe' },
      { word: 'a bc', raw: `"a b"'c'` },
      { word: 'x y', raw: 'x\\ y' },
      { word: '2>&1', raw: '2>&1' },
      { op: '|' },
      { word: 'logger', raw: 'logger' },
      { op: '&&' },
      { word: ':', raw: ':' },
      { op: '||' },
      { word: 'false', raw: 'false' },
      { op: ';' },
      { word: 'exit', raw: 'exit' },
    ]);
  });
  it('inside double quotes a backslash escapes only $ ` " \\ and newline, as POSIX says', () => {
    expect(tokenize('echo "a\\"b\\nc\\\\"')).toEqual([
      { word: 'echo', raw: 'echo' },
      { word: 'a"b\\nc\\', raw: '"a\\"b\\nc\\\\"' },
    ]);
  });
  it('refuses what it does not model: subshells, command substitution, case, unterminated quotes', () => {
    expect(() => tokenize('(true)')).toThrow('"("');
    expect(() => tokenize('echo $(id)')).toThrow('command substitution');
    expect(() => tokenize('echo "`id`"')).toThrow('command substitution');
    expect(() => tokenize('a;;b')).toThrow('case syntax');
    expect(() => tokenize("echo 'open")).toThrow('an unterminated quote');
    expect(() => tokenize('echo "open')).toThrow('an unterminated quote');
  });
});
