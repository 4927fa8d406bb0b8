// The boot-script scan's reading of shell scripts and crontabs, checked
// against the shells themselves: each script runs under bash (and dash) in a
// private mount namespace where swapon, sysctl, modprobe and rmmod are
// bind-mounted stubs that record their argv and the line bash was on (a
// DEBUG trap writes $LINENO before each simple command). The real programs
// are never reachable there, so nothing touches this machine's swap,
// sysctls or modules. The scan's hits must be exactly the stub calls that
// turn swap on / write a sysctl / remove a module.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readShellScript } from '../../src/boot-scripts/shell-lines.js';
import { parseCrontab } from '../../src/ports/crontab.js';
import { commentOutRanges, scriptMarker } from '../../src/boot-scripts/neutralise.js';

const STUBS = ['swapon', 'sysctl', 'modprobe', 'rmmod'] as const;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'boot-scripts-'));
  // One stub for all four: it logs "LINE\tNAME\tARG..." (tab-separated) to $STUB_LOG.
  writeFileSync(
    path.join(dir, 'stub'),
    '#!/bin/sh\nline=$(cat "$STUB_LINE" 2>/dev/null || echo 0)\nprintf "%s\\t%s" "$line" "${0##*/}" >>"$STUB_LOG"\nfor a in "$@"; do printf "\\t%s" "$a" >>"$STUB_LOG"; done\necho >>"$STUB_LOG"\n',
  );
  chmodSync(path.join(dir, 'stub'), 0o755);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Call {
  line: number;
  argv: string[];
}

/**
 * Runs `script` under bash in a private mount namespace with the stubs over
 * /usr/sbin/{swapon,sysctl,modprobe,rmmod} (and the /sbin names, which are
 * the same files on merged /usr). Returns the calls, in order.
 */
function runUnderStubs(script: string, shell: 'bash' | 'dash' = 'bash'): Call[] {
  const file = path.join(dir, 'script');
  const log = path.join(dir, 'log');
  const lineFile = path.join(dir, 'line');
  // bash: a DEBUG trap records the line of every simple command before it runs (dash has none). It is
  // put before the first line, on that line, so the script's line numbers stay as written.
  // The line file is replaced by a rename, never truncated: in a pipeline another member's trap runs
  // while a stub reads it.
  writeFileSync(file, shell === 'bash' ? `trap 'echo $LINENO > ${lineFile}.$BASHPID && mv -f ${lineFile}.$BASHPID ${lineFile}' DEBUG; ${script}` : script);
  writeFileSync(log, '');
  rmSync(lineFile, { force: true });
  const binds = STUBS.map((s) => `mount --bind ${dir}/stub /usr/sbin/${s}`).join(' && ');
  const run = `${shell} ${file}`;
  const r = spawnSync(
    'unshare',
    ['-m', '--propagation', 'private', 'sh', '-c', `${binds} && STUB_LOG=${log} STUB_LINE=${lineFile} PATH=/usr/sbin:/usr/bin ${run}`],
    { encoding: 'utf8' },
  );
  if (r.status !== 0 && r.status !== 1) throw new Error(`oracle run failed (${r.status}): ${r.stderr}`);
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [line, ...argv] = l.split('\t');
      return { line: Number(line), argv };
    });
}

/** The rule under test, stated from the man pages: which calls turn swap on, write a sysctl, remove a module. */
function matters(argv: string[]): boolean {
  const [prog, ...args] = argv;
  if (prog === 'swapon') return !args.some((a) => ['-s', '--summary', '--show', '-h', '--help', '-V', '--version'].includes(a) || a.startsWith('--show='));
  if (prog === 'sysctl') return args.some((a) => !a.startsWith('-') && a.includes('='));
  if (prog === 'modprobe') return args.some((a) => a === '--remove' || /^-[a-z]*r[a-z]*$/.test(a));
  return prog === 'rmmod';
}

/**
 * The scan's hits as (line, program) pairs, to compare with the stub calls.
 * bash's LINENO for a command written over continuation lines is its last
 * line; the scan names the first. The pair takes bash's line when it lies in
 * the command's lines (from its start to the end of its statement), so a
 * disagreement still shows.
 */
function scanned(script: string, truth: Array<[number, string]>): Array<[number, string]> {
  const hits = readShellScript(script).commands.flatMap((c) =>
    c.actions.map((a) => ({
      c,
      prog:
        a.kind === 'swapon'
          ? 'swapon'
          : a.kind === 'sysctl-write'
            ? 'sysctl'
            : a.kind === 'module-remove'
              ? a.program === 'rmmod'
                ? 'rmmod'
                : 'modprobe'
              : 'unknown',
    })),
  );
  return hits.map(({ c, prog }, i): [number, string] => {
    const t = truth[i]?.[0];
    return [t !== undefined && t >= c.line && t <= c.last ? t : c.line, prog];
  });
}

function oracle(script: string): Array<[number, string]> {
  const calls = runUnderStubs(script).filter((c) => matters(c.argv));
  // sysctl a=1 b=2 is one call but two writes: the scan reports each write.
  return calls.flatMap((c): Array<[number, string]> =>
    c.argv[0] === 'sysctl'
      ? c.argv
          .slice(1)
          .filter((a) => !a.startsWith('-') && a.includes('='))
          .map(() => [c.line, 'sysctl'])
      : c.argv[0] === 'modprobe' || c.argv[0] === 'rmmod'
        ? c.argv
            .slice(1)
            .filter((a) => !a.startsWith('-'))
            .map(() => [c.line, c.argv[0]!])
        : [[c.line, c.argv[0]!]],
  );
}

// Straight-line scripts (every command runs), so the shells' run is the whole truth.
const CASES: Array<{ name: string; script: string; hits: number }> = [
  { name: 'swapon -a and swapon /path', script: 'swapon -a\nswapon /swapfile\n', hits: 2 },
  { name: '/sbin/swapon and /usr/sbin/swapon', script: '/sbin/swapon /a\n/usr/sbin/swapon -p 5 /b\n', hits: 2 },
  {
    name: 'command swapon, env, nice, nohup, timeout',
    script: 'command swapon /c\nenv FOO=1 swapon /e\nnice -n 5 swapon /n\nnohup swapon /h >/dev/null 2>&1\ntimeout 5 swapon /t\n',
    hits: 5,
  },
  {
    name: 'a word that merely contains swapon',
    script: 'echo "swapon is not run here" >/dev/null\necho swapon >/dev/null\nlogger "run swapon -a later"\n: swapon /colon\n',
    hits: 0,
  },
  { name: 'sh -c and bash -c strings', script: "sh -c 'swapon /y'\nbash -c \"swapon -p 5 /z; echo done\" >/dev/null\nsh -ec 'true && swapon /w'\n", hits: 3 },
  { name: 'continuation lines', script: 'swapon \\\n  /cont\necho one \\\n  two >/dev/null; swapon \\\n/cont2\n', hits: 2 },
  { name: 'a continued command names its first line', script: 'echo >/dev/null\nswapon \\\n  -p 1 \\\n  /c\n', hits: 1 },
  { name: 'comments', script: '# swapon /commented\ntrue # swapon /after-comment\n  # swapon -a\necho a#b >/dev/null\n', hits: 0 },
  { name: 'quoting of the command name and arguments', script: '\'swapon\' /q1\n"swapon" "/q 2"\nswa\\pon /q3\nswapon \'/q;4\'\n', hits: 4 },
  { name: 'lists and pipelines', script: 'true && swapon /l1; false || swapon /l2\nswapon /l3 | cat >/dev/null\ntrue &&\n  swapon /l4\n', hits: 4 },
  { name: 'leading assignments and redirections', script: 'FOO=bar swapon /assign\n2>/dev/null swapon /redir\nswapon /out >/dev/null 2>&1\n', hits: 3 },
  { name: 'read-only swapon options', script: 'swapon --show\nswapon -s\nswapon --show=NAME\nswapon --version >/dev/null\n', hits: 0 },
  {
    name: 'sysctl writes and reads',
    script:
      'sysctl -w net.ipv4.ip_forward=0\nsysctl net.ipv4.ip_forward=0\nsysctl -q -w net.bridge.bridge-nf-call-iptables=0 net/bridge/bridge-nf-call-ip6tables=0\nsysctl net.ipv4.ip_forward\nsysctl -a >/dev/null\n',
    hits: 4,
  },
  {
    name: 'modprobe -r and rmmod',
    script: 'modprobe -r br_netfilter\nmodprobe -rv overlay\nmodprobe --remove br-netfilter\nrmmod br_netfilter\nmodprobe overlay\n',
    hits: 4,
  },
  {
    name: 'here-documents are data',
    script: "cat >/dev/null <<'EOF'\nswapon /in-doc\ndon't\nEOF\nswapon /after-doc\ncat >/dev/null <<-END\n\tswapon /tab-doc\n\tEND\n",
    hits: 1,
  },
  { name: 'exec as the last command', script: 'true\nexec swapon /exec\n', hits: 1 },
  // Compound commands and variables assigned from literals.
  {
    name: 'case patterns are no commands; the item bodies are',
    script: 'case swapon in\n  swapon|modprobe) swapon /case ;;\nesac\ncase y in\n  (y) rmmod br_netfilter;;\nesac\n',
    hits: 2,
  },
  {
    name: 'a program named by a variable assigned from a literal',
    script: 'SWAPON=/sbin/swapon\n$SWAPON /var-swap\nm=br_netfilter\nmodprobe -r "$m"\n',
    hits: 2,
  },
  { name: 'braced variables and a value put together from two', script: 'dir=/sbin\nprog=${dir}/swapon\n"$prog" /braced\n', hits: 1 },
  {
    name: 'sh -c with if/then/fi and the test builtin',
    script: "sh -c 'if [ -d / ]; then swapon /in-if; fi'\nsh -c '[ -d / ] && swapon /after-test'\n",
    hits: 2,
  },
  // (A subshell is left out here: bash's LINENO inside one with a DEBUG trap is one line short, an artefact of the oracle.)
  {
    name: 'braces, while and for',
    script: '{ swapon /brace; }\nfor f in /f1; do swapon /for; done\nn=0\nwhile [ $n -lt 1 ]; do n=1; swapon /while; done\n',
    hits: 3,
  },
];

describe('shell scripts: the scan agrees with bash run over stubs', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const truth = oracle(c.script);
      expect(truth).toHaveLength(c.hits);
      expect(scanned(c.script, truth)).toEqual(truth);
    });
  }

  it('dash runs the same swapon calls (the shell of /bin/sh and of rc.local on Debian)', () => {
    for (const c of CASES) {
      const viaDash = runUnderStubs(c.script, 'dash')
        .filter((x) => matters(x.argv))
        .map((x) => x.argv);
      const viaBash = runUnderStubs(c.script, 'bash')
        .filter((x) => matters(x.argv))
        .map((x) => x.argv);
      expect(viaDash, c.name).toEqual(viaBash);
    }
  });
});

describe('what a script line means (each command: commands.test.ts)', () => {
  it('a script line whose program is a $VARIABLE is reported as unknown with its line', () => {
    const r = readShellScript('#!/bin/sh\n$SWAPON -a\n[ -x /sbin/swapon ] && true\n');
    expect(r.commands.map((c) => [c.line, c.actions.map((a) => a.kind)])).toEqual([[2, ['unknown']]]);
  });
  it('an unterminated quote is a problem naming its line', () => {
    const r = readShellScript("#!/bin/sh\nswapon /a\necho 'oops\nswapon /b\n");
    expect(r.problems).toEqual([{ line: 3, message: expect.stringContaining('unterminated quote') }]);
  });
});

describe('which lines can be commented out: the result still parses (sh -n) and runs the rest', () => {
  const shn = (text: string): number => {
    const f = path.join(dir, 'check.sh');
    writeFileSync(f, text);
    return spawnSync('dash', ['-n', f]).status ?? -1;
  };
  const MARK = scriptMarker('test');

  it('a top-level statement, continuation lines included, is commented out whole', () => {
    const script = '#!/bin/sh -e\necho start >/dev/null\nswapon \\\n  /cont && echo after >/dev/null\necho end >/dev/null\n';
    const [c] = readShellScript(script).commands;
    expect([c!.first, c!.last, c!.neutralisable]).toEqual([3, 4, true]);
    const after = commentOutRanges(script, [{ first: c!.first, last: c!.last }], MARK);
    expect(shn(after)).toBe(0);
    expect(runUnderStubs(after).filter((x) => matters(x.argv))).toEqual([]);
    expect(readShellScript(after).commands).toEqual([]);
    // Every other line is byte-identical.
    expect(after.split('\n').filter((l) => l !== MARK && !l.startsWith('#swapon') && !l.startsWith('#  /cont'))).toEqual(
      script.split('\n').filter((_, i) => i !== 2 && i !== 3),
    );
  });

  it('a line inside if/while/for/case/{ }/( )/a function is left to a person (commenting it out can break sh)', () => {
    const bodies = [
      'if [ -f /swap ]; then\n  swapon /swap\nfi\n',
      'while false; do\n  swapon /w\ndone\n',
      'for f in /a /b; do\n  swapon "$f"\ndone\n',
      'case x in\n  x) swapon /c ;;\nesac\n',
      '{\n  swapon /brace\n}\n',
      '(\n  swapon /sub\n)\n',
      'start() {\n  swapon /fn\n}\nstart\n',
    ];
    for (const b of bodies) {
      const cmds = readShellScript(b).commands;
      expect(cmds.length, b).toBeGreaterThan(0);
      for (const c of cmds) expect(c.neutralisable, b).toMatch(/compound command/);
      // Why: commenting out the body line is a syntax error for some of them.
      const c = cmds[0]!;
      if (b.startsWith('if') || b.startsWith('while') || b.startsWith('{'))
        expect(shn(commentOutRanges(b, [{ first: c.first, last: c.last }], MARK)), b).not.toBe(0);
    }
  });

  it('a line that starts a here-document is left to a person', () => {
    const [c] = readShellScript('swapon /a; cat <<EOF\nswapon /doc\nEOF\n').commands;
    expect(c!.neutralisable).toMatch(/here-document/);
  });
});

describe('crontab lines as cron runs them', () => {
  const hitsOf = (text: string, owner: string | null) =>
    parseCrontab(text, '/etc/cron.d/x', owner).entries.flatMap((e) =>
      readShellScript(e.shellCommand)
        .commands.filter((c) => c.actions.some((a) => a.kind === 'swapon'))
        .map(() => [e.line, e.schedule, e.user]),
    );

  it('@reboot in a system crontab carries a user field; in a user crontab the owner runs it', () => {
    expect(hitsOf('SHELL=/bin/sh\n@reboot root /sbin/swapon /s\n', null)).toEqual([[2, '@reboot', 'root']]);
    // In a user crontab "root" is the command, not a user: nothing named swapon runs.
    expect(hitsOf('@reboot root /sbin/swapon /s\n', 'alice')).toEqual([]);
    expect(hitsOf('@reboot /sbin/swapon /s\n', 'root')).toEqual([[1, '@reboot', 'root']]);
  });

  it('timed entries, % (stdin), comments and environment lines', () => {
    const tab = [
      '# @reboot root swapon -a',
      'MAILTO=""',
      '*/5 * * * * root swapon -a',
      '@reboot root echo swapon%swapon -a',
      '  @REBOOT root sh -c "swapon /x"',
    ].join('\n');
    expect(hitsOf(tab, null)).toEqual([
      [3, '*/5 * * * *', 'root'],
      [5, '@reboot', 'root'],
    ]);
  });

  it('the oracle: what sh -c runs for each cron command is what the scan reads', () => {
    const tab = '@reboot root /sbin/swapon /a && sysctl -w net.ipv4.ip_forward=0\n@reboot root echo "swapon"\n';
    for (const e of parseCrontab(tab, '/etc/crontab', null).entries) {
      const truth = runUnderStubs(e.shellCommand + '\n')
        .filter((x) => matters(x.argv))
        .map((x) => x.argv[0]);
      expect(readShellScript(e.shellCommand).commands.flatMap((c) => c.actions.map((a) => (a.kind === 'swapon' ? 'swapon' : 'sysctl')))).toEqual(truth);
    }
  });
});

it('the stubs really replace the programs (the oracle cannot reach the real swapon)', () => {
  const calls = runUnderStubs('/sbin/swapon --version\nswapon -a\n/usr/sbin/sysctl -w x.y=1\n');
  expect(calls.map((c) => c.argv)).toEqual([
    ['swapon', '--version'],
    ['swapon', '-a'],
    ['sysctl', '-w', 'x.y=1'],
  ]);
  expect(existsSync(path.join(dir, 'log'))).toBe(true);
});

it('a command over continuation lines is reported at its first line, its statement spans all of them', () => {
  const [c] = readShellScript('echo >/dev/null\nswapon \\\n  -p 1 \\\n  /c\n').commands;
  expect([c!.line, c!.first, c!.last]).toEqual([2, 2, 4]);
});

describe('"$0" as a command name', () => {
  // sh sets $0 to the script's path when it runs a file: `$0 stop` runs the same script, whose lines are all read here.
  const initScript = '#!/bin/sh\ncase "$1" in\nrestart)\n  $0 stop\n  "$0" start\n  ;;\nesac\n';
  it('in a script file is the script itself: no unknown', () => {
    expect(readShellScript(initScript, 0, true).commands.flatMap((c) => c.actions)).toEqual([]);
  });
  it('in an sh -c command line ($0 is the shell or a caller-chosen name) stays unknown', () => {
    const kinds = readShellScript(initScript, 0, false).commands.flatMap((c) => c.actions.map((a) => a.kind));
    expect(kinds).toEqual(['unknown', 'unknown']);
  });
});
