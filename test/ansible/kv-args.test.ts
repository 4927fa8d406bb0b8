// src/ansible/kv-args.ts against ansible-core's own splitter
// (ansible.parsing.splitter: parse_kv and split_args, through
// test/helpers/ansible-language.py on the Python ansible runs on), over
// strings generated from the pieces that decide how a free-form argument
// splits: quotes of both kinds, backslashes, "=", blanks and newlines, and
// Jinja2's {{ }}, {% %} and {# #} blocks, which keep their blanks. Each string
// is asked with check_raw off (a module's key=value arguments) and on (the
// command/shell family, whose words stay _raw_params). Ours must give
// Ansible's mapping, or fail where Ansible fails. The generator is seeded, so
// a failure names a string that reproduces.
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { KvParseError, parseKv, splitModuleString } from '../../src/ansible/kv-args.js';
import { ansiblePython } from '../helpers/ansible-python.js';
import { pick as pickFrom, random } from '../helpers/random.js';

type Answer = { ok: true; value: unknown } | { ok: false; error: string };

async function ask(reqs: Array<{ op: 'kv'; text: string; check_raw: boolean }>): Promise<Answer[]> {
  const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-language.py')], { input: JSON.stringify(reqs) });
  return JSON.parse(r.stdout) as Answer[];
}

const WORDS = ['name', 'value', 'net.ipv4.ip_forward', '1', 'creates', 'chdir', '/tmp/x', 'a b', 'yes', 'state', 'present', 'x'];
const PIECES = ['=', ' ', '  ', '"', "'", '\\', '\\"', "\\'", '\\=', '\n', '\\\n', '{{', '}}', '{{ x }}', '{%', '%}', '{% if a %}', '{#', '#}', '\t'];

function generated(n: number, seed: number): string[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => pickFrom(rnd, xs);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const len = 1 + Math.floor(rnd() * 9);
    let s = '';
    for (let j = 0; j < len; j++) s += rnd() < 0.45 ? pick(WORDS) : pick(PIECES);
    out.push(s);
  }
  return out;
}

/** Ours in the oracle's shape: a mapping, or a failure (any KvParseError; anything else is a bug of ours). */
function ours(text: string, checkRaw: boolean): Answer {
  try {
    return { ok: true, value: parseKv(text, checkRaw) };
  } catch (e) {
    if (e instanceof KvParseError) return { ok: false, error: e.message };
    throw e;
  }
}

const TEXTS = [
  ...generated(1500, 46),
  // What kubespray and admins write: the module's own words, quoted values, templates with blanks.
  'name=net.ipv4.ip_forward value=1 sysctl_set=yes state=present reload=yes',
  'name="net.bridge.bridge-nf-call-iptables" value="{{ 1 if a else 0 }}"',
  "cmd='swapoff -a' creates=/etc/swap.off",
  'swapoff -a && sed -i "/ swap / s/^/#/" /etc/fstab chdir=/',
  'echo {{ item }} > /proc/sys/net/ipv4/ip_forward',
];
let theirs: Map<string, Answer>;
const key = (text: string, checkRaw: boolean) => `${checkRaw ? 1 : 0}:${text}`;

beforeAll(async () => {
  const reqs = TEXTS.flatMap((text) => [false, true].map((check_raw) => ({ op: 'kv' as const, text, check_raw })));
  const answers = await ask(reqs);
  theirs = new Map(reqs.map((r, i) => [key(r.text, r.check_raw), answers[i]!]));
}, 120_000);

describe("parse_kv: ours is ansible-core's", () => {
  for (const checkRaw of [false, true]) {
    it(`${TEXTS.length} strings, check_raw ${checkRaw}`, () => {
      // Key order counts too: Python's dict and ours keep insertion order, and json.dumps prints it.
      const differ: string[] = [];
      for (const text of TEXTS) {
        const t = theirs.get(key(text, checkRaw))!;
        const o = ours(text, checkRaw);
        if (t.ok !== o.ok || (t.ok && o.ok && JSON.stringify(t.value) !== JSON.stringify(o.value))) {
          differ.push(`${JSON.stringify(text)}: ansible ${JSON.stringify(t)}, ours ${JSON.stringify(o)}`);
        }
      }
      expect(differ.slice(0, 10)).toEqual([]);
      // The generated strings reach both outcomes and the _raw_params path, so the comparison is not vacuous.
      const answers = TEXTS.map((t) => theirs.get(key(t, checkRaw))!);
      expect(answers.filter((a) => !a.ok).length).toBeGreaterThan(20);
      expect(answers.filter((a) => a.ok && '_raw_params' in (a.value as object)).length).toBeGreaterThan(20);
    });
  }
});

describe('splitModuleString', () => {
  it('the module is the first word, the rest its argument string, as ModuleArgsParser splits `action: MODULE ARGS`', () => {
    expect(splitModuleString('sysctl name=net.ipv4.ip_forward value=1')).toEqual({ module: 'sysctl', args: 'name=net.ipv4.ip_forward value=1' });
    expect(splitModuleString('  ansible.posix.sysctl  ')).toEqual({ module: 'ansible.posix.sysctl', args: '' });
    expect(splitModuleString('shell "echo a  b" chdir=/')).toEqual({ module: 'shell', args: '"echo a  b" chdir=/' });
  });
});
