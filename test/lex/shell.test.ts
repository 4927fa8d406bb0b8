// Backquoted command substitutions (XCU 2.6.3) are one piece of their word,
// spaces and operators included. /bin/sh is the oracle for where words end:
// each script calls a function that prints its argument count, and every
// substitution prints exactly one field, so sh's count is the number of words.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellSimpleCommands, shellTokens } from '../../src/lex/shell.js';

const SCRIPTS = [
  'count `echo a` b',
  'count `printf %s x  ` b c',
  'count x`echo a; echo -n`y z',
  'count "`echo a b | tr -d " "`" z',
  'count `echo \\`echo q\\`` r',
  'count `echo "a  b" | tr -d " "` && true',
];

function shCount(script: string): number {
  const r = spawnSync('/bin/sh', ['-c', `count() { echo $#; }\n${script}`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sh: ${r.stderr}`);
  return Number(r.stdout.trim().split('\n')[0]);
}

describe('backquoted substitutions', () => {
  for (const script of SCRIPTS) {
    it(`${script}: the words sh gives the first command`, () => {
      expect(shellSimpleCommands(script)[0]!.length - 1).toBe(shCount(script));
    });
  }

  it('keep the commands they run, unescaped as the shell reads them', () => {
    const subs = (s: string) => shellTokens(s).flatMap((t) => t.substitutions ?? []);
    expect(subs('echo `swapoff -a`')).toEqual(['swapoff -a']);
    expect(subs('X=`cat /etc/x` y')).toEqual(['cat /etc/x']);
    expect(subs('echo "`echo \\"q\\"`"')).toEqual(['echo "q"']);
    expect(subs('echo `echo \\`id\\``')).toEqual(['echo `id`']);
  });

  it('an unclosed one makes the rest of the script unknown, as sh refuses it', () => {
    expect(spawnSync('/bin/sh', ['-n', '-c', 'echo `date'], { encoding: 'utf8' }).status).not.toBe(0);
    expect(shellTokens('echo `date').some((t) => t.unterminated)).toBe(true);
  });
});
