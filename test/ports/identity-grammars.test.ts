// The grammars a holder's origin is read with: /proc/PID/stat and cmdline
// (against processes this test starts), shell simple commands (against what
// /bin/sh really runs), systemd's ExecStart= syntax and crontab(5), against
// the examples of their manuals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseCmdline, parseStat, parseStatusUid } from '../../src/ports/proc.js';
import { argvMatches } from '../../src/ports/argv.js';
import { parseExecLine } from '../../src/systemd/exec-command.js';
import { shebangShell, shellScriptOf, shellSimpleCommands } from '../../src/lex/shell.js';
import { cronDName, cronShellCommand, parseCrontab } from '../../src/ports/crontab.js';
import { parseSupervisorConf } from '../../src/ports/supervisor.js';
import { shlexSplit } from '../../src/lex/shlex.js';

let dir: string;
const kids: ChildProcess[] = [];
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'identity-parse-'));
});
afterAll(() => {
  for (const k of kids) k.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function procText(pid: number, file: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const t = readFileSync(`/proc/${pid}/${file}`, 'latin1');
    // Until exec, the child still shows node's own command line.
    if (file !== 'cmdline' || !t.startsWith(process.argv[0]!) || t.includes('setInterval')) return t;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('process never exec’d');
}

describe('/proc/PID/stat, cmdline, status of processes this test starts', () => {
  it('a comm with spaces and parentheses, and the parent PID', async () => {
    const exe = path.join(dir, 'a (b) c');
    symlinkSync('/bin/sleep', exe);
    const k = spawn(exe, ['30'], { stdio: 'ignore' });
    kids.push(k);
    let st = await procText(k.pid!, 'stat');
    for (let i = 0; i < 50 && !st.includes('(a (b) c)'); i++) {
      await new Promise((r) => setTimeout(r, 20));
      st = await procText(k.pid!, 'stat');
    }
    expect(parseStat(st)).toEqual({ pid: k.pid, comm: 'a (b) c', ppid: process.pid });
    expect(parseStatusUid(readFileSync(`/proc/${k.pid}/status`, 'utf8'))).toBe(process.getuid!());
  });

  it('arguments with spaces and an empty one survive the NUL split', async () => {
    const args = ['-e', 'setInterval(() => {}, 1000)', '', 'a b', "it's"];
    const k = spawn(process.execPath, args, { stdio: 'ignore' });
    kids.push(k);
    expect(parseCmdline(await procText(k.pid!, 'cmdline'))).toEqual([process.execPath, ...args]);
    expect(parseCmdline('')).toBeNull();
  });
});

describe('shell simple commands, against /bin/sh', () => {
  // Each command word the scripts use is a shell function that records its
  // arguments, so the shell itself says which commands run with which words.
  // A record is appended by one printf (one write): the sides of a pipeline
  // run at once, and two writes each could interleave under load.
  const NAMES = ['python3', 'cd', 'tee', 'logger', 'true'];
  function shellRuns(script: string): string[][] {
    const out = path.join(dir, `rec-${Math.random().toString(16).slice(2)}`);
    const defs = NAMES.map((n) => `${n}() { r=$(printf '%s\\037' ${n} "$@"); printf '%s\\036' "$r" >>${out}; }`).join('\n');
    const r = spawnSync('/bin/sh', ['-c', `${defs}\n${script}`], { encoding: 'latin1' });
    expect(r.status).toBe(0);
    return readFileSync(out, 'latin1')
      .split('\x1e')
      .filter(Boolean)
      .map((c) => c.split('\x1f').slice(0, -1));
  }
  const scripts = [
    'python3 -m http.server 2379',
    `cd /tmp && python3 'a b' "c d" e\\ f >/dev/null 2>&1`,
    'FOO=bar python3 -x; python3 -y | tee /dev/null',
    'if true; then python3 "x\\"y" \'$HOME\'; fi',
    'python3 one &&\n  python3 two # a comment\n',
    'python3 3<&0 -a 2> /dev/null -b',
  ];
  for (const script of scripts) {
    it(`reads ${JSON.stringify(script)} as the shell runs it`, () => {
      // The sides of a pipeline run concurrently, so the shell's order of records is not fixed.
      const byText = (a: unknown[], b: unknown[]) => JSON.stringify(a).localeCompare(JSON.stringify(b));
      expect([...shellSimpleCommands(script)].sort(byText)).toEqual(shellRuns(script).sort(byText));
    });
  }
  it('expansions are unknown words, and exec is dropped', () => {
    expect(shellSimpleCommands('exec python3 "$PORT" *.py ~/x')).toEqual([['python3', null, null, null]]);
  });
  it('the script of SHELL -c, and nothing for other programs', () => {
    expect(shellScriptOf(['/bin/sh', '-c', 'a b'])).toBe('a b');
    expect(shellScriptOf(['bash', '-ec', 'a'])).toBe('a');
    expect(shellScriptOf(['-sh', '-c', 'a'])).toBe('a');
    expect(shellScriptOf(['/bin/sh', 'script.sh', '-c'])).toBeNull();
    expect(shellScriptOf(['python3', '-c', 'print(1)'])).toBeNull();
  });
  it('shell "#!" lines, directly or through env', () => {
    expect(
      ['#!/bin/sh', '#! /bin/bash -e', '#!/usr/bin/env bash', '#!/usr/bin/env -S sh -e', '#!/usr/bin/python3', '#!/usr/bin/env node', 'echo'].map(shebangShell),
    ).toEqual(['/bin/sh', '/bin/bash', 'bash', 'sh', null, null, null]);
  });
  it('argv matches a command by its words, the program by path or base name', () => {
    expect(argvMatches(['python3', '-m', 'x'], ['python3', '-m', 'x'])).toBe(true);
    expect(argvMatches(['/usr/bin/python3', '-m', 'x'], ['python3', '-m', 'x'])).toBe(true);
    expect(argvMatches(['/opt/python3', '-m', 'x'], ['/usr/bin/python3', '-m', 'x'])).toBe(false);
    expect(argvMatches(['python3', '-m', 'x'], ['python3', '-m', null])).toBe(false);
    expect(argvMatches(['python3', '-m'], ['python3', '-m', 'x'])).toBe(false);
  });
});

describe('ExecStart= command lines (systemd.service(5) examples)', () => {
  it('quotes, prefixes and @', () => {
    expect(parseExecLine(`/bin/sh -c 'dmesg | tac'`)).toEqual({ prefixes: '', path: '/bin/sh', argv: ['/bin/sh', '-c', 'dmesg | tac'] });
    expect(parseExecLine(`-/usr/bin/foo "two words" x\\ty`)).toEqual({ prefixes: '-', path: '/usr/bin/foo', argv: ['/usr/bin/foo', 'two words', 'x\ty'] });
    expect(parseExecLine('@/usr/sbin/daemon my-daemon --flag')).toEqual({ prefixes: '@', path: '/usr/sbin/daemon', argv: ['my-daemon', '--flag'] });
    // "+", "!" and "!!" exclude each other: systemd 252 reads "+!/usr/bin/x" as "+" and the executable "!/usr/bin/x", which it refuses.
    expect(parseExecLine('!!-/usr/bin/x')?.prefixes).toBe('!!-');
    expect(parseExecLine('+!/usr/bin/x')).toBeNull();
  });
  it('environment variables and specifiers are unknown; %% and the ":" prefix are literal', () => {
    expect(parseExecLine('/usr/sbin/cron -f $EXTRA_OPTS')?.argv).toEqual(['/usr/sbin/cron', '-f', null]);
    expect(parseExecLine('/usr/bin/echo ${ONE} %n 100%%')?.argv).toEqual(['/usr/bin/echo', null, null, '100%']);
    expect(parseExecLine(':/usr/bin/echo $ONE')?.argv).toEqual(['/usr/bin/echo', '$ONE']);
    expect(parseExecLine('')).toBeNull();
  });
});

describe('crontab(5)', () => {
  it("the manual's user crontab: environment lines, five time fields, the % rule", () => {
    const text = [
      '# use /bin/bash to run commands, instead of the default /bin/sh',
      'SHELL=/bin/bash',
      'MAILTO = paul',
      '5 0 * * *       $HOME/bin/daily.job >> $HOME/tmp/out 2>&1',
      '0 22 * * 1-5    mail -s "It\'s 10pm" joe%Joe,%%Where are your kids?%',
      '23 0-23/2 * * * echo "run 23 minutes after midn, 2am, 4am ..., everyday"',
      '5 4 * * sun     echo "run at 5 after 4 every sunday"',
      '  @reboot   date +\\%F',
    ].join('\n');
    const { entries, problems } = parseCrontab(text, '/var/spool/cron/crontabs/paul', 'paul');
    expect(problems).toEqual([]);
    expect(entries.map((e) => [e.line, e.schedule, e.user, e.shellCommand])).toEqual([
      [4, '5 0 * * *', 'paul', '$HOME/bin/daily.job >> $HOME/tmp/out 2>&1'],
      [5, '0 22 * * 1-5', 'paul', 'mail -s "It\'s 10pm" joe'],
      [6, '23 0-23/2 * * *', 'paul', 'echo "run 23 minutes after midn, 2am, 4am ..., everyday"'],
      [7, '5 4 * * sun', 'paul', 'echo "run at 5 after 4 every sunday"'],
      [8, '@reboot', 'paul', 'date +%F'],
    ]);
  });
  it('a system crontab names the user; bad lines are problems, not entries', () => {
    const text = [
      '17 *\t* * *\troot    cd / && run-parts --report /etc/cron.hourly',
      '@reboot root python3 -m http.server 2379',
      '@often root true',
      '5 0 * * root',
      '5 0 * *',
      '@daily',
    ].join('\n');
    const { entries, problems } = parseCrontab(text, '/etc/crontab', null);
    expect(entries.map((e) => [e.line, e.schedule, e.user, e.command])).toEqual([
      [1, '17 * * * *', 'root', 'cd / && run-parts --report /etc/cron.hourly'],
      [2, '@reboot', 'root', 'python3 -m http.server 2379'],
    ]);
    expect(problems.map((p) => p.line)).toEqual([3, 4, 5, 6]);
  });
  it('% handling and /etc/cron.d names (run-parts rules)', () => {
    expect(cronShellCommand('a\\%b%stdin%more')).toBe('a%b');
    expect(['legacy-etcd', 'e2scrub_all', 'x.dpkg-old', 'a~', '.hidden'].filter(cronDName)).toEqual(['legacy-etcd', 'e2scrub_all']);
  });
});

describe('supervisord configuration, against Python (shlex.split, configparser)', () => {
  const py = (code: string, ...args: string[]) => {
    const r = spawnSync('/usr/bin/python3', ['-c', code, ...args], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as unknown;
  };
  const commands = [`/usr/bin/python3 -m http.server 2379`, `/bin/sh -c "exec python3 'a b' \\"q\\""`, `node "/opt/my app/x.js" --name=it\\'s  --empty ""`];
  for (const c of commands) {
    it(`splits ${JSON.stringify(c)} as shlex.split does`, () => {
      expect(shlexSplit(c).tokens).toEqual(py('import json, shlex, sys; print(json.dumps(shlex.split(sys.argv[1])))', c));
    });
  }
  it('program command= values, inline comments and continuation lines as configparser reads them', () => {
    const text = [
      '; supervisor config',
      '[program:etcd-standin]',
      'command = /usr/bin/python3 -m http.server 2379 ; stand-in for etcd',
      'autorestart=true',
      '',
      '[program:multi]',
      'command: /usr/bin/node',
      '   /opt/x.js --port 6443',
      '# a comment',
      '[include]',
      'files = conf.d/*.conf other.ini',
    ].join('\n');
    const file = path.join(dir, 'supervisord.conf');
    writeFileSync(file, text);
    const expected = py(
      `import configparser, json, sys
c = configparser.RawConfigParser(inline_comment_prefixes=(';', '#'))
c.read(sys.argv[1])
print(json.dumps({s[8:]: c.get(s, 'command') for s in c.sections() if s.startswith('program:')}))`,
      file,
    ) as Record<string, string>;
    const conf = parseSupervisorConf(text, '/etc/supervisor/supervisord.conf');
    expect(Object.fromEntries(conf.programs.map((p) => [p.name, p.command]))).toEqual(expected);
    expect(conf.programs.map((p) => p.line)).toEqual([3, 7]);
    expect(conf.programs[1]!.argv).toEqual(['/usr/bin/node', '/opt/x.js', '--port', '6443']);
    expect(conf.includes).toEqual(['/etc/supervisor/conf.d/*.conf', '/etc/supervisor/other.ini']);
    expect(parseSupervisorConf('[program:t]\ncommand=/bin/x --name %(program_name)s\n', 'f').programs[0]!.argv).toEqual(['/bin/x', '--name', null]);
  });
});
