// src/lex/shlex.ts against Python's own shlex module: every input is split by
// /usr/bin/python3 with the same parameters, and the tokens (or the ValueError's
// message, with the tokens read before it) must be the same.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shlex, shlexSplit, type ShlexOptions, type ShlexResult } from '../../src/lex/shlex.js';

/** Python reads each [text, options] pair with shlex.shlex and the attributes set as the options say. */
const ORACLE = String.raw`
import json, shlex, sys
out = []
for text, o in json.load(sys.stdin):
    lx = shlex.shlex(text, posix=o.get('posix', False), punctuation_chars=o.get('punctuationChars', False))
    if o.get('whitespaceSplit'): lx.whitespace_split = True
    if 'commenters' in o: lx.commenters = o['commenters']
    tokens = []
    try:
        for t in lx: tokens.append(t)
        out.append({'tokens': tokens, 'error': None})
    except ValueError as e:
        out.append({'tokens': tokens, 'error': str(e)})
print(json.dumps(out))
`;

function python(cases: Array<[string, ShlexOptions]>): ShlexResult[] {
  const r = spawnSync('/usr/bin/python3', ['-c', ORACLE], { input: JSON.stringify(cases), encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as ShlexResult[];
}

/** A fixed pseudo-random sequence (xorshift32), so a failure names an input that comes back. */
function inputs(count: number, seed: number): string[] {
  const alphabet = [
    'a',
    'b',
    'Z',
    '0',
    ' ',
    ' ',
    '\t',
    '\n',
    '\r',
    '"',
    '"',
    "'",
    "'",
    '\\',
    '\\',
    '#',
    ';',
    '&',
    '|',
    '(',
    ')',
    '<',
    '>',
    '=',
    '-',
    '.',
    '~',
    '*',
    'é',
    'ß',
    '\v',
    '\f',
    '\u00a0',
    '$',
    '%',
    '😀',
  ];
  let x = seed;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = Math.floor(next() * 14);
    let s = '';
    for (let k = 0; k < n; k++) s += alphabet[Math.floor(next() * alphabet.length)];
    out.push(s);
  }
  return out;
}

const FIXED = [
  '',
  `A="x y" B='z'\n# comment C=1\nD=a\\ b E="q\\"r"`,
  `h a="x y" b='z' # c=d`,
  'host ansible_password=a#b',
  `"\\a" "\\\\" '\\'`,
  'trailing\\',
  'open "quote',
  "''",
  'a"b"c',
  'ls -l|grep x&&echo "a;b" >out',
  'a\x0bb\x0cc\u00a0d',
  'ééé ßx 😀y',
];

const OPTION_SETS: Array<[string, ShlexOptions]> = [
  ['the class with its defaults (non-POSIX)', {}],
  ['posix', { posix: true }],
  ['posix, whitespace_split (distro on os-release)', { posix: true, whitespaceSplit: true }],
  ['posix, whitespace_split, no comments (shlex.split)', { posix: true, whitespaceSplit: true, commenters: '' }],
  ['non-POSIX, whitespace_split', { whitespaceSplit: true }],
  ['posix, punctuation_chars', { posix: true, punctuationChars: true }],
  ['posix, punctuation_chars, whitespace_split', { posix: true, punctuationChars: true, whitespaceSplit: true }],
  ['punctuation_chars "|&", non-POSIX', { punctuationChars: '|&' }],
];

describe('shlex as Python reads it', () => {
  const texts = [...FIXED, ...inputs(400, 0x2545f491)];
  for (const [name, opts] of OPTION_SETS) {
    it(`${name}: ${texts.length} inputs`, () => {
      const expected = python(texts.map((t) => [t, opts]));
      texts.forEach((t, i) => expect(shlex(t, opts), JSON.stringify(t)).toEqual(expected[i]));
    });
  }

  it('shlex.split with and without comments', () => {
    const split = (comments: boolean) => python(texts.map((t) => [t, { posix: true, whitespaceSplit: true, ...(comments ? {} : { commenters: '' }) }]));
    const plain = split(false);
    const commented = split(true);
    texts.forEach((t, i) => {
      expect(shlexSplit(t), JSON.stringify(t)).toEqual(plain[i]);
      expect(shlexSplit(t, { comments: true }), JSON.stringify(t)).toEqual(commented[i]);
    });
  });
});
