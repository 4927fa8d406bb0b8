// parseShAssignments reads an os-release file as `. FILE` would, accepting
// only what needs no evaluation. The oracle is /bin/sh sourcing the same
// text: every value we accept is the one sh assigns; what we refuse names
// the line.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseShAssignments } from '../../src/facts/os-release-sh.js';

const work = mkdtempSync(path.join(tmpdir(), 'os-release-sh-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The values sh gives `names` after sourcing `text` (in an empty environment). */
function shValues(text: string, names: string[]): string[] {
  const file = path.join(work, 'os-release');
  writeFileSync(file, text);
  const script = `. "$1"; for n in ${names.join(' ')}; do eval "printf '%s\\\\0' \\"\\$$n\\""; done`;
  const out = execFileSync('sh', ['-c', script, 'sh', file], { encoding: 'utf8', env: {} });
  return out.split('\0').slice(0, -1);
}

const ACCEPTED: string[] = [
  'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\nHOME_URL="https://www.debian.org/"\n',
  'NAME=\'Rocky Linux\'\nID="rocky"\nID_LIKE="rhel centos fedora"\n',
  '  # a comment\n\nA=plain # trailing comment\nB=a\\ b\\"c\nC="x\\$y\\`z\\"w\\\\v\\n"\n',
  "D=one'two'\"three\"\nE=\nF=''\nG=a=b\n",
  'H="tab\there"\n',
];

describe('parseShAssignments against sh', () => {
  for (const text of ACCEPTED) {
    it(JSON.stringify(text).slice(0, 70), () => {
      const r = parseShAssignments(text);
      expect(r.ok, JSON.stringify(r)).toBe(true);
      const vars = r.ok ? r.vars : new Map<string, string>();
      const names = [...vars.keys()];
      expect(names.length).toBeGreaterThan(0);
      expect(names.map((n) => vars.get(n))).toEqual(shValues(text, names));
    });
  }
});

describe('what needs evaluating is refused, naming the line', () => {
  it.each([
    ['ID=debian\nNAME=$HOSTNAME\n', 2, 'an unquoted $'],
    ['NAME="$(id)"\n', 1, 'an expansion inside double quotes'],
    ['NAME=`id`\n', 1, 'an unquoted `'],
    ['A=1\nNAME=a b\n', 2, 'more than one word on the line (a command)'],
    ['NAME="open\n', 1, 'a quote runs past the end of the line'],
    ["NAME='open\n", 1, 'a quote runs past the end of the line'],
    ['NAME=a\\\nb\n', 1, 'a line continuation'],
    ['export NAME=x\n', 1, 'not a NAME=value assignment'],
    ['1NAME=x\n', 1, 'not a NAME=value assignment'],
    ['HOME=~/x\n', 1, 'an unquoted ~'],
    ['A=x;B=y\n', 1, 'an unquoted ;'],
  ])('%j', (text, line, reason) => {
    expect(parseShAssignments(text)).toEqual({ ok: false, line, reason });
  });
});
