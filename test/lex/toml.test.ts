// The TOML reader against python3's tomllib (3.11, TOML 1.0) as the oracle:
// generated documents of what the reader claims to read (headers with bare,
// quoted and dotted keys, [[arrays of tables]], strings with escapes,
// literal strings, integers in four bases, floats, booleans, arrays over
// lines with comments and trailing commas, inline tables), some with a key
// or a table defined twice. Each is read by both: the same value, or both
// refuse it. Documents with what the reader does not read (a multi-line
// string, a date) are refused by it with "not read here", whatever tomllib
// makes of them.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { readToml } from '../../src/lex/toml.js';
import { pick, random } from '../helpers/random.js';

function tomllib(docs: string[]): (string | null)[] {
  const py = [
    'import json, sys, tomllib',
    'out = []',
    'for d in json.load(sys.stdin):',
    '    try:',
    '        out.append(json.dumps(tomllib.loads(d), default=str))',
    '    except tomllib.TOMLDecodeError:',
    '        out.append(None)',
    'print(json.dumps(out))',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-c', py], { input: JSON.stringify(docs), maxBuffer: 64 << 20 }).toString()) as (string | null)[];
}

function generator(seed: number) {
  const r = random(seed);
  const bare = () => pick(r, ['a', 'b', 'runc', 'options', 'SystemdCgroup', 'plugins', 'x-1', '_y', '42']);
  const quoted = () => pick(r, ['"io.containerd.grpc.v1.cri"', "'io.containerd.cri.v1.runtime'", '"a b"', '"é"', '""', '"\\u0041"']);
  const keyPart = () => (r() < 0.7 ? bare() : quoted());
  const key = () => Array.from({ length: 1 + Math.floor(r() * (r() < 0.7 ? 1 : 3)) }, keyPart).join(pick(r, ['.', ' . ', '.']));
  const str = () =>
    pick(r, [
      '"plain"',
      '"with \\"quote\\" and \\\\ slash"',
      '"tab\\there\\n"',
      '"\\u00e9\\U0001F600"',
      "'C:\\\\path'",
      "''",
      '"/run/containerd/containerd.sock"',
      '"# not a comment"',
    ]);
  const int = () => pick(r, ['0', '42', '-17', '+5', '1_000', '0x1F', '0o755', '0b1010', '0xdead_beef']);
  const float = () => pick(r, ['1.5', '-0.25', '1e3', '6.02E+23', '3.0e-2', '0.0']);
  const scalar = () => pick(r, [str, int, float, () => pick(r, ['true', 'false'])])();
  const val = (depth = 0): string => {
    const k = r();
    if (depth < 2 && k < 0.12) {
      const items = Array.from({ length: Math.floor(r() * 4) }, () => val(depth + 1));
      const sep = pick(r, [', ', ',\n  ', ', # c\n  ']);
      return `[${pick(r, ['', '\n  '])}${items.join(sep)}${items.length > 0 && r() < 0.3 ? ',' : ''}${pick(r, ['', '\n'])}]`;
    }
    if (depth < 2 && k < 0.2) {
      const n = Math.floor(r() * 3);
      const ks = Array.from({ length: n }, (_, i) => `k${i}`);
      return `{${ks.map((x) => ` ${x} = ${val(depth + 1)}`).join(',')}${n > 0 ? ' ' : ''}}`;
    }
    return scalar();
  };
  const line = () => `${key()}${pick(r, [' = ', '=', ' =\t'])}${val()}${pick(r, ['', ' # comment', '\t#'])}`;
  const headerLine = () => (r() < 0.2 ? `[[${key()}]]` : `[${pick(r, ['', ' '])}${key()}${pick(r, ['', ' '])}]`);
  return (): string => {
    const out: string[] = [];
    for (let i = 0; i < 1 + Math.floor(r() * 8); i++) {
      if (r() < 0.3) out.push(headerLine());
      else if (r() < 0.1) out.push(pick(r, ['', '# a comment', '   ']));
      else out.push(line());
    }
    return out.join(pick(r, ['\n', '\r\n'])) + (r() < 0.8 ? '\n' : '');
  };
}

describe('the TOML reader, against python3 tomllib', () => {
  it('3,000 generated documents: the same value, or both refuse it', () => {
    const gen = generator(47);
    const docs = Array.from({ length: 3000 }, gen);
    const oracle = tomllib(docs);
    const disagree: { doc: string; mine: unknown; tomllib: unknown }[] = [];
    docs.forEach((doc, i) => {
      const mine = readToml(doc);
      const theirs = oracle[i] === null ? null : JSON.parse(oracle[i]!);
      const same = mine.ok ? theirs !== null && JSON.stringify(mine.value) === JSON.stringify(theirs) : theirs === null;
      if (!same) disagree.push({ doc, mine: mine.ok ? mine.value : mine.reason, tomllib: theirs });
    });
    expect(disagree.slice(0, 3)).toEqual([]);
    // Both outcomes are generated.
    expect(oracle.filter((o) => o === null).length).toBeGreaterThan(100);
    expect(oracle.filter((o) => o !== null).length).toBeGreaterThan(1000);
  });
  it('what it does not read is refused with its line, though tomllib reads it', () => {
    for (const doc of ['a = """x\ny"""\n', "a = '''x'''\n", 'd = 1979-05-27T07:32:00Z\n', 't = 07:32:00\n', 'f = inf\n', 'n = nan\n']) {
      const mine = readToml(doc);
      expect(mine.ok ? 'read' : mine.reason).toMatch(/not read here/);
      expect(tomllib([doc])[0]).not.toBeNull();
    }
    expect(readToml('a = 1\nb = """x"""\n')).toEqual({ ok: false, line: 2, reason: 'a multi-line string is not read here' });
  });
  it("containerd 1.6's `config default` runc options, as it prints them", () => {
    const doc =
      'version = 2\n\n[plugins]\n\n  [plugins."io.containerd.grpc.v1.cri"]\n    sandbox_image = "registry.k8s.io/pause:3.6"\n\n' +
      '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n      runtime_type = "io.containerd.runc.v2"\n\n' +
      '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n        BinaryName = ""\n        SystemdCgroup = false\n';
    const mine = readToml(doc);
    expect(mine.ok && mine.value).toEqual(JSON.parse(tomllib([doc])[0]!));
  });
});
