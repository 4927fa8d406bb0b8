// The grammars a holder's origin is read with: shell simple commands (against
// what /bin/sh really runs) and systemd's ExecStart= syntax (the examples of
// systemd.service(5)). /proc's files, crontab(5) and supervisord's
// configuration have their modules' own files (test/ports/proc, crontab,
// supervisor).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseExecLine } from '../../src/systemd/exec-command.js';
import { shebangShell, shellScriptOf, shellSimpleCommands } from '../../src/lex/shell.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'identity-parse-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
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
