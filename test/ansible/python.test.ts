// src/ansible/python.ts's str methods and json.dumps against Python itself
// (python3, the interpreter ansible runs on): each call below is made on
// strings and values generated from the characters that tell the two
// languages apart (Python's whitespace set, its line boundaries, DEL and the
// other control characters, non-ASCII and astral characters, the separators
// themselves), and ours must return exactly what Python returns. Inputs go
// to Python as JSON on stdin and are used only as data. Seeded, so a failure
// reproduces. Numbers are whole: JavaScript has one number type, and the
// Jinja layer's floats are checked against Templar in test/kubespray/language.test.ts.
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { pyJsonDumps, pyReplace, pySplit, pySplitlines, pyStrip } from '../../src/ansible/python.js';
import { ansiblePython } from '../helpers/ansible-python.js';
import { pick as pickFrom, random } from '../helpers/random.js';

type Call =
  | { fn: 'split'; s: string; sep: string | null; max: number }
  | { fn: 'strip'; s: string; chars: string | null; left: boolean; right: boolean }
  | { fn: 'replace'; s: string; a: string; b: string; count: number }
  | { fn: 'splitlines'; s: string }
  | { fn: 'dumps'; v: unknown; indent: number | null; sort_keys: boolean; ensure_ascii: boolean };

const ORACLE = String.raw`
import json, sys
out = []
for c in json.load(sys.stdin):
    try:
        f = c['fn']
        if f == 'split': r = c['s'].split(c['sep'], c['max'])
        elif f == 'strip':
            m = {(True, True): str.strip, (True, False): str.lstrip, (False, True): str.rstrip}[(c['left'], c['right'])]
            r = m(c['s'], c['chars'])
        elif f == 'replace': r = c['s'].replace(c['a'], c['b'], c['count'])
        elif f == 'splitlines': r = c['s'].splitlines()
        elif f == 'dumps': r = json.dumps(c['v'], indent=c['indent'], sort_keys=c['sort_keys'], ensure_ascii=c['ensure_ascii'])
        out.append({'ok': True, 'value': r})
    except Exception as e:
        out.append({'ok': False, 'error': type(e).__name__})
sys.stdout.write(json.dumps(out))
`;

const CHARS = [
  'a',
  'b',
  'x',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\r',
  '\v',
  '\f',
  '\x1c',
  '\x1f',
  '\x85',
  '\xa0',
  '\u2028',
  '\u3000',
  '\u200b',
  '\x7f',
  '\x00',
  '\x01',
  'é',
  '€',
  '😀',
  ',',
  '=',
  '"',
  '\\',
  '/',
  '<',
  '&',
];

function calls(n: number, seed: number): Call[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => pickFrom(rnd, xs);
  const str = (max = 8) => Array.from({ length: Math.floor(rnd() * max) }, () => pick(CHARS)).join('');
  const value = (depth: number): unknown => {
    const r = rnd();
    if (depth > 2 || r < 0.35) return str();
    if (r < 0.45) return Math.floor(rnd() * 2000) - 1000;
    if (r < 0.5) return pick([true, false, null]);
    if (r < 0.75) return Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) }, () => [str(4), value(depth + 1)]));
  };
  const out: Call[] = [];
  for (let i = 0; i < n; i++) {
    const s = str(12);
    switch (i % 5) {
      case 0:
        out.push({ fn: 'split', s, sep: rnd() < 0.5 ? null : pick([' ', ',', '  ', 'a', '\n']), max: pick([-1, 0, 1, 2]) });
        break;
      case 1: {
        const [left, right] = pick([
          [true, true],
          [true, false],
          [false, true],
        ] as const);
        out.push({ fn: 'strip', s, chars: rnd() < 0.5 ? null : str(3), left, right });
        break;
      }
      case 2:
        out.push({ fn: 'replace', s, a: pick(['a', ' ', '', 'ab', '\n', 'é']), b: pick(['', '-', 'xy']), count: pick([-1, 0, 1, 2, 5]) });
        break;
      case 3:
        out.push({ fn: 'splitlines', s });
        break;
      default:
        out.push({ fn: 'dumps', v: value(0), indent: pick([null, 2, 4]), sort_keys: rnd() < 0.5, ensure_ascii: rnd() < 0.7 });
    }
  }
  return out;
}

function ours(c: Call): { ok: true; value: unknown } | { ok: false } {
  try {
    switch (c.fn) {
      case 'split':
        return { ok: true, value: pySplit(c.s, c.sep ?? undefined, c.max) };
      case 'strip':
        return { ok: true, value: pyStrip(c.s, c.chars, c.left, c.right) };
      case 'replace':
        return { ok: true, value: pyReplace(c.s, c.a, c.b, c.count) };
      case 'splitlines':
        return { ok: true, value: pySplitlines(c.s) };
      case 'dumps':
        return {
          ok: true,
          value: pyJsonDumps(c.v, { ...(c.indent === null ? {} : { indent: c.indent }), sortKeys: c.sort_keys, ensureAscii: c.ensure_ascii }),
        };
    }
  } catch {
    return { ok: false };
  }
}

const CALLS = calls(5000, 49);
let theirs: Array<{ ok: boolean; value?: unknown }>;
beforeAll(async () => {
  const r = await execa(ansiblePython(), ['-c', ORACLE], { input: JSON.stringify(CALLS) });
  theirs = JSON.parse(r.stdout) as typeof theirs;
}, 120_000);

describe("ours is Python's", () => {
  for (const fn of ['split', 'strip', 'replace', 'splitlines', 'dumps'] as const) {
    it(`str.${fn === 'dumps' ? 'json.dumps' : fn}`, () => {
      const differ: string[] = [];
      let asked = 0;
      CALLS.forEach((c, i) => {
        if (c.fn !== fn) return;
        asked++;
        const o = ours(c);
        const t = theirs[i]!;
        if (o.ok !== t.ok || (o.ok && JSON.stringify(o.value) !== JSON.stringify(t.value)))
          differ.push(`${JSON.stringify(c)}: python ${JSON.stringify(t)}, ours ${JSON.stringify(o)}`);
      });
      expect(asked).toBe(1000);
      expect(differ.slice(0, 5)).toEqual([]);
    });
  }
});
