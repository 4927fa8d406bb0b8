// A kubespray checkout read through the target host: paths joined under its
// directory, files listed, YAML files parsed once (cached by normalised path)
// with their line counters, and a defaults file's top-level variables with
// the line each is set on. Values are checked against PyYAML's safe_load (the
// loader Ansible's own is built on) run on the same text; lines are counted
// by hand.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HostError } from '../../src/errors.js';
import { lineOf, topLevelVars } from '../../src/kubespray/checkout.js';
import { KS, checkout } from '../helpers/kubespray-fixture.js';

/** PyYAML's value for a YAML text (dates and other non-JSON values as their str()). */
function pyyaml(text: string): unknown {
  const r = spawnSync('python3', ['-c', 'import sys, json, yaml; print(json.dumps(yaml.safe_load(sys.stdin.read()), default=str))'], {
    input: text,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

const DEFAULTS = [
  '---',
  '# comment',
  'base: &base',
  '  a: 1',
  '  b: two',
  'merged:',
  '  <<: *base',
  '  b: three',
  'flag: yes',
  'octal: 0644',
  'empty:',
  'list:',
  '  - x',
  '  - "{{ y }}"',
  'alias: *base',
  '',
].join('\n');

describe('KubesprayCheckout', () => {
  it('joins paths under its directory; exists, readText and list read the target', async () => {
    const ck = await checkout({ 'roles/a/defaults/main.yml': 'x: 1\n', 'roles/a/defaults/other.yml': 'y: 2\n', 'roles/a/defaults/sub/z.yml': '' });
    expect(ck.target('roles/a')).toBe(`/${KS}/roles/a`);
    expect(await ck.exists('roles/a/defaults/main.yml')).toBe(true);
    expect(await ck.exists('roles/b')).toBe(false);
    expect(await ck.readText('roles/a/defaults/main.yml')).toBe('x: 1\n');
    expect(await ck.readText('roles/none.yml')).toBeNull();
    expect((await ck.list('roles/a/defaults')).sort()).toEqual(['main.yml', 'other.yml']);
    expect(await ck.list('roles/missing')).toEqual([]);
  });
  it('parses a YAML file once: the same object for the same normalised path; null when missing', async () => {
    const ck = await checkout({ 'roles/a/defaults/main.yml': 'x: 1\n' });
    const one = await ck.yaml('roles/a/defaults/main.yml');
    expect(one?.rel).toBe('roles/a/defaults/main.yml');
    expect(await ck.yaml('roles/a/tasks/../defaults/main.yml')).toBe(one);
    expect(await ck.yaml('roles/a/defaults/none.yml')).toBeNull();
  });
  it('a syntax error is a HostError naming the file', async () => {
    const ck = await checkout({ 'bad.yml': 'a: [1, 2\n' });
    const e = await ck.yaml('bad.yml').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(HostError);
    expect((e as Error).message.startsWith(`/${KS}/bad.yml: `)).toBe(true);
  });
});

describe('topLevelVars', () => {
  it("each top-level key with PyYAML's value (merge keys, aliases, YAML 1.1 yes and octal) and its 1-based line", async () => {
    const file = (await (await checkout({ 'd.yml': DEFAULTS })).yaml('d.yml'))!;
    const vars = topLevelVars(file);
    const expected = pyyaml(DEFAULTS) as Record<string, unknown>;
    expect(Object.fromEntries(vars.map((v) => [v.name, v.value]))).toEqual(expected);
    // Checked by hand as well: PyYAML merges <<, reads yes as true and 0644 as octal 420.
    expect(expected).toMatchObject({ merged: { a: 1, b: 'three' }, flag: true, octal: 420, empty: null });
    expect(vars.map((v) => [v.name, v.line])).toEqual([
      ['base', 3],
      ['merged', 6],
      ['flag', 9],
      ['octal', 10],
      ['empty', 11],
      ['list', 12],
      ['alias', 15],
    ]);
    expect(new Set(vars.map((v) => v.file))).toEqual(new Set(['d.yml']));
  });
  it('a file whose top level is not a mapping has none', async () => {
    const ck = await checkout({ 'l.yml': '- a\n- b\n', 's.yml': 'just text\n', 'e.yml': '' });
    for (const f of ['l.yml', 's.yml', 'e.yml']) expect(topLevelVars((await ck.yaml(f))!), f).toEqual([]);
  });
});

describe('lineOf', () => {
  it('the line a node starts on; 0 for no node', async () => {
    const file = (await (await checkout({ 'd.yml': DEFAULTS })).yaml('d.yml'))!;
    const list = file.doc.get('list', true) as Parameters<typeof lineOf>[1];
    expect(lineOf(file, list)).toBe(13);
    expect(lineOf(file, null)).toBe(0);
    expect(lineOf(file, undefined)).toBe(0);
  });
});
