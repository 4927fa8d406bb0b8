// What the kernel's binfmt_script does with a "#!" line (Documentation/admin-guide/binfmt-misc and
// fs/binfmt_script.c): the interpreter, then everything after it on the line as ONE argument, then
// the path the caller passed to execve, then the caller's arguments.
import { describe, expect, it } from 'vitest';
import { parseShebang, scriptCommand } from '../../src/ports/shebang.js';

describe('"#!" scripts', () => {
  it('reads the interpreter and its single optional argument', () => {
    expect(parseShebang('#!/usr/bin/python3\nprint(1)\n')).toEqual(['/usr/bin/python3']);
    expect(parseShebang('#! /bin/sh -e\n')).toEqual(['/bin/sh', '-e']);
    // The rest of the line is one argument, spaces kept (unlike a shell).
    expect(parseShebang('#!/usr/bin/env -S python3 -u\n')).toEqual(['/usr/bin/env', '-S python3 -u']);
    expect(parseShebang('\x7fELF...')).toBeNull();
    expect(parseShebang('#!\n')).toBeNull();
    expect(parseShebang(`#!/bin/sh ${'x'.repeat(300)}\n`)).toBeNull();
  });

  it('takes the interpreter off an argv the kernel made, and nothing else', () => {
    expect(scriptCommand(['/usr/bin/python3', '/usr/local/sbin/tinyd', '2379'], '/usr/local/sbin/tinyd', ['/usr/bin/python3'])).toEqual([
      '/usr/local/sbin/tinyd',
      '2379',
    ]);
    expect(scriptCommand(['/bin/sh', '-e', '/opt/run', 'a'], '/opt/run', ['/bin/sh', '-e'])).toEqual(['/opt/run', 'a']);
    // env execs NAME: its argv starts with NAME.
    expect(scriptCommand(['python3', '/opt/app', '1'], '/opt/app', ['/usr/bin/env', 'python3'])).toEqual(['/opt/app', '1']);
    // Another interpreter than the script's own line: not that script run by the kernel.
    expect(scriptCommand(['/usr/bin/perl', '/usr/local/sbin/tinyd', '2379'], '/usr/local/sbin/tinyd', ['/usr/bin/python3'])).toBeNull();
    expect(scriptCommand(['/usr/bin/python3', '/other', '2379'], '/usr/local/sbin/tinyd', ['/usr/bin/python3'])).toBeNull();
  });
});
