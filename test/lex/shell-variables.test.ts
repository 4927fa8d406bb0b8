// A script's variables as a reader resolves them: the value of $NAME at an
// offset, put into the words of a later command. Oracle: /bin/sh itself runs
// each script that ends in `printf '%s\n' WORDS...`, and the words the reader
// resolves must be the lines sh prints. Where the value is known only at run
// time (read, for, a sourced file, two different values, a field-split
// value), the reader says null: those cases are argued by hand, from POSIX sh.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellSimpleCommandsAt, shellTokens } from '../../src/lex/shell.js';
import { ShellVariables } from '../../src/lex/shell-variables.js';

/** The words after printf's format in the script's last command, as the reader resolves them. */
function resolved(script: string, index = -1): (string | null)[] {
  const cmds = shellSimpleCommandsAt(script, shellTokens(script));
  const vars = new ShellVariables(cmds);
  const last = cmds.at(index)!;
  return (last.wordTokens ?? []).slice(2).map((t) => vars.word(t, last.at));
}
/** What sh prints for the same script: one line per word. */
function bySh(script: string): string[] {
  const r = spawnSync('/bin/sh', ['-c', script], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split('\n').slice(0, -1);
}
const P = "printf '%s\\n'";

describe('ShellVariables.word: values sh would give', () => {
  const cases: [string, string][] = [
    ['plain and braced', `A=1\nB=net.ipv4\n${P} $A \${B}.ip_forward "/proc/sys/$B"`],
    ['a value built from another, resolved in turn', `K=ip_forward\nF=/proc/sys/net/ipv4/$K\n${P} "$F"`],
    ['export and readonly assign too', `export X=swap\nreadonly Y=/dev/sda2\n${P} $X $Y`],
    ['assigned twice to the same value', `A=1\nA=1\n${P} $A`],
    ['a quoted value with a space, quoted where used', `M="br netfilter"\n${P} "$M"`],
    ['a value with a space in an assignment is not split', `M="a b"\nN=$M\n${P} "$N"`],
  ];
  for (const [what, script] of cases) {
    it(what, () => {
      expect(resolved(script)).toEqual(bySh(script));
    });
  }
});

describe('ShellVariables.word: values known only at run time are null', () => {
  it("used before it is assigned (sh would give the environment's value)", () => {
    expect(resolved(`${P} $A\nA=1\n${P} $A`)).toEqual(['1']);
    expect(resolved(`${P} $A\nA=1`, 0)).toEqual([null]);
  });
  it('two different values: which one holds depends on the path taken', () => {
    expect(resolved(`if x; then A=1; else A=2; fi\n${P} $A`)).toEqual([null]);
  });
  it('read, for, getopts, unset, local without a value: run-time', () => {
    for (const s of [
      `read A\n${P} $A`,
      `for A in 1 2; do :; done\n${P} $A`,
      `getopts ab A\n${P} $A`,
      `A=1\nunset A\n${P} $A`,
      `f() { local A; }\nA=1\n${P} $A`,
    ])
      expect(resolved(s), s).toEqual([null]);
  });
  it('a sourced file or eval between the assignment and the use may change it', () => {
    expect(resolved(`A=1\n. /etc/default/x\n${P} $A`)).toEqual([null]);
    expect(resolved(`A=1\neval "$B"\n${P} $A`)).toEqual([null]);
    // Before the assignment, a barrier changes nothing.
    expect(resolved(`. /etc/default/x\nA=1\n${P} $A`)).toEqual(['1']);
  });
  it('unquoted, a value with a space or a glob character, or an empty one, would be split or globbed: null; quoted it is kept', () => {
    expect(resolved(`A="a b"\n${P} $A`)).toEqual([null]);
    expect(resolved(`A='*'\n${P} $A`)).toEqual([null]);
    expect(resolved(`A=\n${P} $A`)).toEqual([null]);
    expect(resolved(`A=\n${P} "$A"`)).toEqual(bySh(`A=\n${P} "$A"`));
  });
  it('a value from a command substitution is not known', () => {
    expect(resolved(`A=$(cat /x)\n${P} $A`)).toEqual([null]);
  });
  it('a variable defined in terms of itself does not loop', () => {
    expect(resolved(`A=$A\n${P} $A`)).toEqual([null]);
  });
});

describe('ShellVariables.value and pattern', () => {
  it('value at an offset before and after the assignment', () => {
    const s = `A=1\n${P} $A`;
    const vars = new ShellVariables(shellSimpleCommandsAt(s, shellTokens(s)));
    expect(vars.value('A', s.length)).toBe('1');
    expect(vars.value('A', 0)).toBeNull();
    expect(vars.value('B', s.length)).toBeNull();
  });
  it('pattern: known pieces kept, "*" for an unknown variable; null for a word with another expansion', () => {
    const s = `D=ipv4\n${P} /proc/sys/net/$D/$K /x/$(echo y)`;
    const cmds = shellSimpleCommandsAt(s, shellTokens(s));
    const vars = new ShellVariables(cmds);
    const [a, b] = cmds[1]!.wordTokens!.slice(2);
    expect(vars.pattern(a!, cmds[1]!.at)).toBe('/proc/sys/net/ipv4/*');
    expect(vars.pattern(b!, cmds[1]!.at)).toBeNull();
  });
});
