// The "#!" line reader against the kernel itself: each line heads a script
// whose interpreter is a tiny program that prints the argv it was given, so
// what binfmt_script made of the line is read back, not written by hand.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseShebang, programKind } from '../../src/lex/shebang.js';

let dir = '';
let show = '';
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'shebang-'));
  // An interpreter that is itself a shell script may not head another "#!" line on every kernel; /bin/sh runs this one.
  show = path.join(dir, 'show');
  writeFileSync(show, '#!/bin/sh\nprintf "shown\\0"; for a in "$0" "$@"; do printf "%s\\0" "$a"; done\n');
  chmodSync(show, 0o755);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** argv as the kernel hands it to the interpreter, minus the script path and the caller's own arguments. */
function kernelWords(line: string): string[] | null {
  const script = path.join(dir, `s${Math.random().toString(16).slice(2)}`);
  writeFileSync(script, `${line}\n`);
  chmodSync(script, 0o755);
  const r = spawnSync(script, ['caller-arg'], { encoding: 'utf8' });
  // The kernel refuses a line without an interpreter (ENOEXEC); libc's execvp then hands the file to /bin/sh, which is not the kernel's reading.
  if (r.error || r.status !== 0 || !r.stdout.startsWith('shown\0')) return null;
  const argv = r.stdout.split('\0').slice(1, -1);
  expect(argv.slice(-2)).toEqual([script, 'caller-arg']);
  return argv.slice(0, -2);
}

describe('a "#!" line, as binfmt_script reads it', () => {
  const lines = (s: string) => [`#!${s}`, `#! ${s}`, `#!\t${s}`, `#!${s} `, `#!${s}\t-e`, `#!${s}  -e  `, `#!${s} -e -x`, `#! ${s}   a  b\t`, `#!${s} -e\r`];
  it('gives the interpreter and the one optional argument the kernel gives', () => {
    for (const line of lines('SHOW')) {
      const real = line.replace('SHOW', show);
      const got = parseShebang(real);
      const kernel = kernelWords(real);
      expect(kernel, real).not.toBeNull();
      expect(got === null ? null : [got.interpreter, ...(got.arg === null ? [] : [got.arg])], JSON.stringify(real)).toEqual(kernel);
    }
  });

  it('a line that names no interpreter is none, and the kernel refuses to run it', () => {
    for (const line of ['#!', '#! ', '#!\t\t']) {
      expect(parseShebang(line)).toBeNull();
      expect(kernelWords(line)).toBeNull();
    }
    expect(parseShebang('echo hi')).toBeNull();
  });

  it('tells ELF, POSIX shell and other scripts apart, env NAME by NAME', () => {
    expect(programKind(Buffer.from('\x7fELF\x02\x01'))).toEqual({ kind: 'elf' });
    expect(programKind(Buffer.from('#!/bin/sh -e\nexit 0\n'))).toEqual({ kind: 'shell', interpreter: '/bin/sh' });
    expect(programKind(Buffer.from('#!/usr/bin/env bash\n'))).toEqual({ kind: 'shell', interpreter: 'bash' });
    expect(programKind(Buffer.from('#!/usr/bin/python3\n'))).toEqual({ kind: 'script', interpreter: '/usr/bin/python3' });
    expect(programKind(Buffer.from('#!/usr/bin/env -S python3 -u\n'))).toEqual({ kind: 'script', interpreter: '/usr/bin/env -S python3 -u' });
    expect(programKind(Buffer.from('plain text\n'))).toEqual({ kind: 'no-shebang' });
  });
});
