// A shell script cut into statements (one per logical line, a pipeline or
// && || list continued over a newline kept whole) with the nesting depth of
// compound commands, worked out by hand from the POSIX grammar (2.9.4); and
// here-document bodies blanked, whose extent is checked against /bin/sh: the
// text blanked is exactly what sh feeds the command (`cat` prints it).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellTokens } from '../../src/lex/shell.js';
import { blankHeredocs, statements } from '../../src/lex/shell-statements.js';

/** Each statement as [its text, depth, compound]. */
const stmts = (s: string) => statements(shellTokens(s)).map((x) => [s.slice(x.at, x.end), x.depth, x.compound]);

describe('statements', () => {
  it('one per line; a trailing && || or | continues the statement on the next line', () => {
    expect(stmts('a\nb c\nd &&\n  e\nf |\ng\n')).toEqual([
      ['a', 0, false],
      ['b c', 0, false],
      ['d &&\n  e', 0, false],
      ['f |\ng', 0, false],
    ]);
  });
  it('if/then/fi, while/do/done and { } open and close compound commands; the body is one level deeper', () => {
    expect(stmts('if true\nthen\n  sysctl -w a=1\nfi\nwhile x\ndo\n  y\ndone\n{\n  z\n}\n')).toEqual([
      ['if true', 0, true],
      ['then', 1, true],
      ['sysctl -w a=1', 1, false],
      ['fi', 1, true],
      ['while x', 0, true],
      ['do', 1, true],
      ['y', 1, false],
      ['done', 1, true],
      ['{', 0, true],
      ['z', 1, false],
      ['}', 1, true],
    ]);
  });
  it('a reserved word only counts as a command name: "echo if" and "for if in" open nothing', () => {
    expect(stmts('echo if fi\nfor x in if done; do\n  a\ndone\nb\n')).toEqual([
      ['echo if fi', 0, false],
      ['for x in if done; do', 0, true],
      ['a', 1, false],
      ['done', 1, true],
      ['b', 0, false],
    ]);
  });
  it('a quoted reserved word is a plain command, an assignment before a command keeps the name position', () => {
    expect(stmts('"if" x\nA=1 if true; then :; fi\n')).toEqual([
      ['"if" x', 0, false],
      ['A=1 if true; then :; fi', 0, true],
    ]);
  });
  it('a subshell is compound; ! and time do not make a statement compound', () => {
    expect(stmts('(cd /x; y)\n! a\ntime b\n')).toEqual([
      ['(cd /x; y)', 0, true],
      ['! a', 0, false],
      ['time b', 0, false],
    ]);
  });
  it('case ... esac nests its arms', () => {
    expect(stmts('case $1 in\n  start) a ;;\nesac\nb\n')).toEqual([
      ['case $1 in', 0, true],
      ['start) a ;;', 1, true],
      ['esac', 1, true],
      ['b', 0, false],
    ]);
  });
  it('no tokens, no statements', () => {
    expect(statements([])).toEqual([]);
  });
});

describe('blankHeredocs', () => {
  /** The original text of the blanked stretches (every non-space changed to a space), line by line. */
  function blanked(script: string): string {
    const b = blankHeredocs(script);
    expect(b.length).toBe(script.length);
    expect([...b].filter((c) => c === '\n').length).toBe([...script].filter((c) => c === '\n').length);
    let out = '';
    for (let i = 0; i < script.length; i++) if (b[i] !== script[i]) out += script[i];
    return out;
  }
  /** What sh's cat prints from the here-documents, its non-blank characters only (as blanked() collects them). */
  const bySh = (script: string) => {
    const r = spawnSync('/bin/sh', ['-c', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout.replace(/[ \n]/g, '');
  };
  const cases: [string, string][] = [
    ['plain', 'cat <<EOF\nsysctl -w net.ipv4.ip_forward=0\nswapon -a\nEOF\necho after >/dev/null\n'],
    ['quoted delimiter', "cat <<'END'\nmodprobe -r br_netfilter\nEND\n"],
    ['<<- strips leading tabs from the delimiter line', 'cat <<-EOF\n\tline one\n\tEOF\n'],
    ['a delimiter word inside a line does not end it', 'cat <<EOF\nEOF not yet\n EOF\nEOF\n'],
    ['two in a row', 'cat <<A\nfirst\nA\ncat <<B\nsecond\nB\n'],
  ];
  for (const [what, script] of cases)
    it(`${what}: the blanked text is what sh feeds the command`, () => {
      expect(blanked(script).replace(/[ \n\t]/g, '')).toBe(bySh(script).replace(/\t/g, ''));
    });
  it('the command and the lines after the body stay as they are', () => {
    const s = 'cat <<EOF\nswapon -a\nEOF\nswapoff -a\n';
    expect(blankHeredocs(s)).toBe('cat <<EOF\n         \nEOF\nswapoff -a\n');
  });
  it('no here-document, or one without a body line: unchanged', () => {
    for (const s of ['echo <<', 'a\nb\n', 'cat <<EOF']) expect(blankHeredocs(s)).toBe(s);
  });
  it('a body without its delimiter runs to the end of the script (sh warns and takes it all)', () => {
    expect(blankHeredocs('cat <<EOF\nswapon -a\nmore')).toBe('cat <<EOF\n         \n    ');
  });
});
