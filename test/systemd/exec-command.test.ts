// ExecStart= command lines (src/systemd/exec-command.ts) against systemd's
// own parser: `systemd --test` (test/helpers/systemd-oracle.ts) loads units
// whose ExecStart= values are generated from the pieces admins and packages
// write (quotes, C escapes known and unknown, separators and characters that
// only look like them, ";" and "\;", prefixes, "%%") and dumps each
// command's argv. Ours reads the same units with our loader. Words with a
// variable or a specifier are left out of the generator: systemd resolves
// them per unit or at start time, so its dump cannot be the oracle; the
// cases after the generator hold them, with expectations from
// systemd.service(5).
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { Host } from '../../src/host.js';
import { loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { unitFilesOf } from '../../src/systemd/socket-unit.js';
import { execCommandsOf, parseExecLine, parseExecValue } from '../../src/systemd/exec-command.js';
import { LIB, NODEFAULT, oracle, unitTree } from '../helpers/systemd-oracle.js';
import { pick, random } from '../helpers/random.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const PREFIXES = ['', '', '', '-', '@', ':', '+', '!', '!!', '-@', '@-', '+!', '!+', '--', '!!!', ':-+'];
const PROGRAMS = ['/bin/echo', '/bin/echo', 'echo', '"/bin/echo"', "'/usr/bin/env'", '/bin/', 'bin/echo', '/bin/e\\x63ho', '"/bin/a b"', ''];
const PIECES = [
  'a',
  'word',
  '-c',
  '--opt=1',
  'é',
  '😀',
  '"',
  "'",
  '"x y"',
  "'x y'",
  '""',
  "''",
  '"a\'b"',
  "'a\"b'",
  '\\a',
  '\\b',
  '\\f',
  '\\n',
  '\\r',
  '\\t',
  '\\v',
  '\\s',
  '\\\\',
  '\\"',
  "\\'",
  '\\x41',
  '\\x00',
  '\\x4',
  '\\xc3\\xa9',
  '\\xff',
  '\\101',
  '\\000',
  '\\777',
  '\\0',
  '\\u00e9',
  '\\u0000',
  '\\ud800',
  '\\U0001F600',
  '\\UFFFFFFFF',
  '\\U0000FFFE',
  // The edges of UTF-8's lengths and of the code points systemd refuses in \\U (unichar_is_valid), and hex or octal cut short.
  '\\u0041',
  '\\u007f',
  '\\u0080',
  '\\u07ff',
  '\\u0800',
  '\\uffff',
  '\\U00010000',
  '\\U0010FFFF',
  '\\U00110000',
  '\\U0000D800',
  '\\U0000DFFF',
  '\\U0000FDCF',
  '\\U0000FDD0',
  '\\U0000FDEF',
  '\\U0000FDF0',
  '\\U0001FFFE',
  '\\xg4',
  '\\u00g9',
  '\\377',
  '\\400',
  '\\q',
  '\\ ',
  '\\%-',
  '%%',
  '\\x25\\x25',
  ';',
  '\\;',
  '";"',
  'a;b',
  ' ',
  ' ',
  ' ',
  '  ',
  '\t',
  '\v',
  '\f',
  '\u00a0',
  '\u2028',
];

/** A generated ExecStart= value: prefixes, a program, then pieces. It never ends in a lone backslash, which the unit-file reader would take as a continuation. */
function generated(r: () => number): string {
  // Mostly a clean program and a space, so that most values load and their words are compared; now and then pieces stick to it.
  let v = pick(r, PREFIXES) + (r() < 0.8 ? '/bin/echo' : pick(r, PROGRAMS)) + (r() < 0.9 ? ' ' : '');
  const n = Math.floor(r() * 12);
  for (let i = 0; i < n; i++) v += (r() < 0.6 ? ' ' : '') + pick(r, PIECES);
  return v.trim().endsWith('\\') ? `${v} z` : v;
}

/** A word as the dump's "Command Line:" prints it (shell_maybe_quote): bare, or in double quotes with C escapes; undone to its bytes as UTF-8 text. */
function dumpWords(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < line.length) {
    if (line[i] === ' ') {
      i++;
      continue;
    }
    let w = '';
    if (line[i] !== '"') {
      while (i < line.length && line[i] !== ' ') w += line[i++];
      out.push(w);
      continue;
    }
    i++;
    const bytes: number[] = [];
    const enc = new TextEncoder();
    while (line[i] !== '"') {
      if (i >= line.length) throw new Error(`unterminated quote in the dump: ${line}`);
      if (line[i] !== '\\') {
        const ch = String.fromCodePoint(line.codePointAt(i)!);
        bytes.push(...enc.encode(ch));
        i += ch.length;
        continue;
      }
      const n = line[i + 1]!;
      const ctl: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11 };
      if (n in ctl) {
        bytes.push(ctl[n]!);
        i += 2;
      } else if (/^[0-7]{3}$/.test(line.slice(i + 1, i + 4))) {
        bytes.push(parseInt(line.slice(i + 1, i + 4), 8));
        i += 4;
      } else if (n === 'x' && /^[0-9a-fA-F]{2}$/.test(line.slice(i + 2, i + 4))) {
        bytes.push(parseInt(line.slice(i + 2, i + 4), 16));
        i += 4;
      } else {
        bytes.push(...enc.encode(n));
        i += 2;
      }
    }
    i++;
    out.push(new TextDecoder().decode(Uint8Array.from(bytes)));
  }
  return out;
}

describe('ExecStart= values, as systemd --test parses them', () => {
  it('generated values: the same commands with the same argv, and a refusal where systemd loads no command', async () => {
    const r = random(20261202);
    const values = Array.from({ length: 600 }, () => generated(r));
    const files: Record<string, string> = {};
    values.forEach((v, i) => {
      files[`${LIB}/v${i}.service`] = `${NODEFAULT}[Service]\nType=oneshot\nExecStart=${v}\n`;
    });
    files[`${LIB}/multi-user.target`] = `${NODEFAULT}Wants=${values.map((_, i) => `v${i}.service`).join(' ')}\n`;
    const root = unitTree(roots, 'exec-command-', files);
    const o = await oracle(root);
    const units = unitFilesOf(await loadUnitGraph(new Host({ root, live: false })));
    let compared = 0;
    let refused = 0;
    let wordsCompared = 0;
    values.forEach((v, i) => {
      const u = o.units.get(`v${i}.service`);
      expect(u, v).toBeDefined();
      const start = u!.lines.indexOf('-> ExecStart:');
      const theirs: string[][] = [];
      for (let k = start + 1; start >= 0 && k < u!.lines.length && u!.lines[k]!.startsWith('\tCommand Line: '); k++)
        theirs.push(dumpWords(u!.lines[k]!.slice('\tCommand Line: '.length)));
      const ours = execCommandsOf(units.get(`v${i}.service`)!.directives, 'ExecStart');
      const commands = ours.filter((c) => c.command !== null).map((c) => c.command!.argv);
      const error = ours.find((c) => c.error !== null)?.error ?? null;
      if (error !== null) {
        refused++;
        // What systemd loaded is at most the commands before the refusal, and a unit left without a command is not loaded.
        expect(theirs.length, `${JSON.stringify(v)}: ${error}`).toBeLessThanOrEqual(commands.length);
        if (commands.length === 0) expect(u!.load, `${JSON.stringify(v)}: ${error}`).not.toBe('loaded');
        return;
      }
      // An empty value is a reset: no command, and a service without one is not loaded.
      expect(u!.load === 'loaded', JSON.stringify(v)).toBe(commands.length > 0);
      expect(commands.length, JSON.stringify(v)).toBe(theirs.length);
      commands.forEach((argv, c) => {
        expect(argv.length, JSON.stringify(v)).toBe(theirs[c]!.length);
        argv.forEach((w, k) => {
          // A word whose bytes are no UTF-8 is unknown to us (our texts are UTF-8); systemd prints its bytes.
          if (w === null) expect(theirs[c]![k], JSON.stringify(v)).toContain('\ufffd');
          else {
            expect(w, JSON.stringify(v)).toBe(theirs[c]![k]);
            wordsCompared++;
          }
        });
      });
      compared++;
    });
    // The generator reaches both sides: values systemd loads and values it refuses, and many words.
    expect(compared).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(50);
    expect(wordsCompared).toBeGreaterThan(1200);
  }, 120_000);
});

describe('ExecStart= values the unit-file reader never hands over, by extract_first_word() and config_parse_exec()', () => {
  it('blanks around a value are no words; a value of blanks has no command', () => {
    expect(parseExecValue('  /bin/true  ')).toEqual({ commands: [{ prefixes: '', path: '/bin/true', argv: ['/bin/true'] }], error: null });
    expect(parseExecValue(' \t ')).toEqual({ commands: [], error: null });
  });

  it('a trailing backslash outside quotes is kept as written; inside quotes it leaves the quote open', () => {
    expect(parseExecLine('/bin/echo a\\')!.argv).toEqual(['/bin/echo', 'a\\']);
    expect(parseExecValue('/bin/echo "a\\').error).toBe('unbalanced quoting, so systemd refuses the value and the unit');
  });

  it('"\\;" ending the value is the word ";"; a word that only ends in ";" keeps what comes before it', () => {
    expect(parseExecLine('/bin/echo \\;')!.argv).toEqual(['/bin/echo', ';']);
    expect(parseExecLine('/bin/echo a; b')!.argv).toEqual(['/bin/echo', 'a;', 'b']);
  });

  it('a lone ";" as the first word separates nothing: the command after it is the first', () => {
    expect(parseExecValue('; /bin/echo x').commands.map((c) => c.argv)).toEqual([['/bin/echo', 'x']]);
  });

  it('each refusal says why', () => {
    expect(parseExecValue('@').error).toBe('the command has no executable, so systemd refuses the value and the unit');
    expect(parseExecValue('/bin/"e"\\x5cho').error).toBe(
      'the executable "/bin/e\\\\ho" holds a quote, a backslash or a control character, so systemd refuses the value and the unit',
    );
    expect(parseExecValue('-/usr/bin/').error).toBe('the executable /usr/bin/ names a directory, so systemd refuses the value');
    expect(parseExecValue('bin/tool').error).toBe(
      'the executable bin/tool is neither an absolute path nor a plain file name, so systemd refuses the value and the unit',
    );
    expect(parseExecValue('@/bin/tool').error).toBe('the command has no argv[0], so systemd refuses the value and the unit');
  });

  it('a word whose bytes are no UTF-8 is unknown, not a replacement character', () => {
    expect(parseExecLine('/bin/echo \\xff ok')!.argv).toEqual(['/bin/echo', null, 'ok']);
  });
});

describe('ExecStart= words systemd resolves later (systemd.service(5) "Command lines")', () => {
  it('$NAME as a whole word and ${NAME} anywhere are the environment at start time: unknown; "$$" is "$"; a "$" inside a word stays', () => {
    expect(parseExecLine('/bin/sh -c "echo $$HOME" $HOME ${X}y a$B')!.argv).toEqual(['/bin/sh', '-c', 'echo $HOME', null, null, 'a$B']);
    // "$HOME/bin" is no whole-word $NAME: it reaches the program as written; "a${X}" is ${NAME} inside a word, and so is
    // the ${X} after "$$" (a literal "$").
    expect(parseExecLine('/bin/ls $HOME/bin a${X} $$${X}')!.argv).toEqual(['/bin/ls', '$HOME/bin', null, null]);
  });

  it('with ":" nothing is expanded, "$$" included', () => {
    expect(parseExecLine(':/bin/echo $HOME ${X} $$')!.argv).toEqual(['/bin/echo', '$HOME', '${X}', '$$']);
  });

  it('a specifier other than "%%" depends on the unit: unknown, also when an escape spells it', () => {
    expect(parseExecLine('/bin/echo %n 100%% \\x25n \\x25\\x25')!.argv).toEqual(['/bin/echo', null, '100%', null, '%']);
    expect(parseExecLine('%h/bin/tool')!.path).toBeNull();
  });

  it('"@" takes the executable apart from argv', () => {
    expect(parseExecLine('@/usr/sbin/daemon my-daemon --flag')).toEqual({ prefixes: '@', path: '/usr/sbin/daemon', argv: ['my-daemon', '--flag'] });
  });

  it('a value of two commands gives both, each with the directive that holds it', () => {
    const d = { section: 'Service', key: 'ExecStartPre', value: '/sbin/sysctl -w a=0 ; /sbin/modprobe -r br_netfilter', file: '/etc/x.service', line: 4 };
    const ours = execCommandsOf([d], 'ExecStartPre');
    expect(ours.map((c) => c.command!.argv)).toEqual([
      ['/sbin/sysctl', '-w', 'a=0'],
      ['/sbin/modprobe', '-r', 'br_netfilter'],
    ]);
    expect(ours.every((c) => c.directive === d && c.error === null)).toBe(true);
  });

  it('an empty value resets the list; a refused value keeps the commands before the refusal and says why', () => {
    const at = (value: string, line: number) => ({ section: 'Service', key: 'ExecStart', value, file: '/etc/x.service', line });
    const ours = execCommandsOf([at('/bin/a', 1), at('', 2), at('/bin/b ; /bin/c "x', 3)], 'ExecStart');
    expect(ours.map((c) => [c.directive.line, c.command?.argv ?? null, c.error])).toEqual([
      [3, ['/bin/b'], null],
      [3, null, 'unbalanced quoting, so systemd refuses the value and the unit'],
    ]);
    expect(parseExecValue('-/bin/c "x').error).toBe('unbalanced quoting, so systemd refuses the value');
    expect(parseExecValue('"x').error).toBe('unbalanced quoting, so systemd ignores the rest of the value');
  });
});
