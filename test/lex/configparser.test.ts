// Python's configparser (src/lex/configparser.ts) against CPython's own:
// generated INI texts (sections, the default section, options with = and :,
// inline and full-line comments, indented continuations, blank lines inside
// values, repeated sections and options, lines configparser refuses, Unicode
// spaces) are read by /usr/bin/python3's RawConfigParser with tuned's
// parameters and with the defaults; every section, option, value and the
// refusal (its exception's name) must be the same.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readConfigParser, sectionOptions, type ConfigParserOptions } from '../../src/lex/configparser.js';
import { pick, random } from '../helpers/random.js';

const ORACLE = String.raw`
import sys, json, io, configparser
cases = json.load(sys.stdin)
out = []
for c in cases:
    kw = dict(delimiters=tuple(c['delimiters']), inline_comment_prefixes=tuple(c['inline']), strict=c['strict'], allow_no_value=c['no_value'])
    p = configparser.RawConfigParser(**kw)
    if c['keep_case']: p.optionxform = str
    try:
        # newline=None: universal newlines, as open() reads the file in text mode.
        p.read_file(io.StringIO(c['text'], newline=None))
    except Exception as e:
        out.append({'error': type(e).__name__}); continue
    out.append({'sections': [[s, [[o, p.get(s, o, raw=True)] for o in p.options(s)]] for s in p.sections()], 'defaults': [[k, v] for k, v in p.defaults().items()]})
print(json.dumps(out))
`;

interface Case {
  text: string;
  delimiters: string[];
  inline: string[];
  strict: boolean;
  no_value: boolean;
  keep_case: boolean;
}

function generated(seed: number): Case {
  const r = random(seed);
  const pieces = [
    () => `[${pick(r, ['main', 'sysctl', 'DEFAULT', 'a b', ' x ', 'sysctl] tail', 'v]w'])}]`,
    () =>
      `${pick(r, ['', ' ', '\t', '    '])}${pick(r, ['Key', 'net.ipv4.ip_forward', 'a b', '', 'x'])}${pick(r, ['=', ' = ', ':', ' : ', '', '=='])}${pick(r, ['0', '1', ' 1 ', '"0"', 'a # c', 'a#c', 'a ; c', '', 'v\u00a0', '\u2003w'])}`,
    () => pick(r, ['# comment', '; comment', '   # indented comment', '', '  ', 'rem ark']),
    () => `${pick(r, ['  ', '\t'])}${pick(r, ['continued', '# not a comment?', '[not a section]', 'k=v'])}`,
  ];
  const lines = [`[${pick(r, ['main', 'sysctl', 'DEFAULT'])}]`];
  for (let i = 0; i < 3 + Math.floor(r() * 8); i++) lines.push(pick(r, pieces)());
  return {
    text: (r() < 0.1 ? pick(r, ['k=v\n', '# c\n']) : '') + lines.join(pick(r, ['\n', '\n', '\r\n'])) + (r() < 0.8 ? '\n' : ''),
    delimiters: pick(r, [['='], ['=', ':']]),
    inline: pick(r, [['#'], [], ['#', ';']]),
    strict: r() < 0.3,
    no_value: r() < 0.3,
    keep_case: r() < 0.7,
  };
}

function ours(c: Case) {
  const o: Partial<ConfigParserOptions> = {
    delimiters: c.delimiters,
    inlineCommentPrefixes: c.inline,
    strict: c.strict,
    allowNoValue: c.no_value,
    ...(c.keep_case ? { optionxform: (n: string) => n } : {}),
  };
  const r = readConfigParser(c.text, o);
  if ('error' in r) return { error: r.error.slice(0, r.error.indexOf(':')) };
  return {
    sections: [...r.ok.sections.keys()].map((s) => [s, [...sectionOptions(r.ok, s)].map(([k, v]) => [k, v.value])]),
    defaults: [...r.ok.defaults].map(([k, v]) => [k, v.value]),
  };
}

describe("configparser reads as CPython's RawConfigParser", () => {
  const cases = Array.from({ length: 2000 }, (_, i) => generated(i + 1));
  const r = spawnSync('/usr/bin/python3', ['-c', ORACLE], { input: JSON.stringify(cases), encoding: 'utf8', maxBuffer: 1 << 26 });
  const theirs = r.status === 0 ? (JSON.parse(r.stdout) as unknown[]) : [];

  it('the oracle ran', () => {
    expect(r.status, r.stderr).toBe(0);
    expect(theirs).toHaveLength(cases.length);
  });

  it('2000 generated files: the same sections, options, values and refusals', () => {
    const differ = cases.map((c, i) => ({ c, ours: ours(c), theirs: theirs[i] })).filter((x) => JSON.stringify(x.ours) !== JSON.stringify(x.theirs));
    expect(differ.slice(0, 3)).toEqual([]);
    // Both outcomes are drawn: files read, and files refused.
    expect(theirs.filter((t) => 'error' in (t as object)).length).toBeGreaterThan(100);
    expect(theirs.filter((t) => 'sections' in (t as object)).length).toBeGreaterThan(100);
  });

  it('keeps the line an option starts on', () => {
    const r = readConfigParser('# c\n[sysctl]\n\nnet.ipv4.ip_forward = 0\n  continued\nvm.x=1\n', { delimiters: ['='] });
    expect('ok' in r && [...r.ok.sections.get('sysctl')!].map(([k, v]) => [k, v.line, v.value])).toEqual([
      ['net.ipv4.ip_forward', 4, '0\ncontinued'],
      ['vm.x', 6, '1'],
    ]);
  });
});
