// The unit-file parser (systemd.syntax(7), conf-parser.c). The oracle is
// systemd's own loader (`systemd --test`, test/helpers/systemd-oracle.ts):
// each case is a service's Description= as the loader dumps it, and whether
// the loader takes the file at all.
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import {
  effectiveBoolean,
  effectiveList,
  effectiveValue,
  lastAccepted,
  parseUnitBoolean,
  parseUnitFile,
  parseUnitText,
  type UnitDirective,
} from '../../src/systemd/unit-file.js';
import { LIB, NODEFAULT, oracle, unitTree } from '../helpers/systemd-oracle.js';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

describe('unit-file lines systemd passes over (conf-parser.c)', () => {
  it("a line with no '=' or no key is no directive; a byte-order mark counts only at the start of the file", () => {
    const d = parseUnitText('\ufeff[Unit]\nWantsx\n=b.service\nDescription=a\ufeffb\n', '/etc/systemd/system/x.service');
    expect(d.map((x) => [x.section, x.key, x.value, x.line])).toEqual([['Unit', 'Description', 'a\ufeffb', 4]]);
    expect(parseUnitText('[Unit]\nDescription=a\ufeffb\n', '/etc/systemd/system/y.service')[0]!.value).toBe('a\ufeffb');
  });
});

// Each text follows "[Service]\nExecStart=/bin/true\n", so the service loads when its lines do.
const CASES: Array<[string, string]> = [
  ['plain', '[Unit]\nDescription=plain\n'],
  ['blanks around key and value', '[Unit]\n  Description \t=  spaced out \t\n'],
  ['a continuation keeps the next line as it is', '[Unit]\nDescription=first \\\n   second\n'],
  ['a comment inside a continuation is skipped', '[Unit]\nDescription=a \\\n# not me \\\n; nor me\nb\n'],
  ['an even run of backslashes continues nothing', '[Unit]\nDescription=ends in two \\\\\nDefaultDependencies=no\n'],
  ['CRLF and a lone CR end lines', '[Unit]\r\nDescription=crlf\rDefaultDependencies=no\r\n'],
  ['the last assignment wins, across sections', '[Unit]\nDescription=one\n[Install]\nDescription=other section\n[Unit]\nDescription=two\n'],
  ['a continuation the file ends in', '[Unit]\nDescription=at the end \\'],
  ['a key with no = is passed over', '[Unit]\nDescriptionx\nDescription=kept\n'],
];

describe('parseUnitText against systemd --test', () => {
  it('reads Description= as systemd does, and the file loads', async () => {
    const files: Record<string, string> = {
      [`${LIB}/multi-user.target`]: `${NODEFAULT}Wants=${CASES.map((_, i) => `c${i}.service`).join(' ')} bad.service\n`,
      [`${LIB}/bad.service`]: '[Service]\nExecStart=/bin/true\n[Unit\nDescription=after a bad header\n',
    };
    CASES.forEach(([, text], i) => (files[`${LIB}/c${i}.service`] = `[Service]\nExecStart=/bin/true\n${text}`));
    const o = await oracle(unitTree(roots, 'unit-file-', files));
    for (const [i, [name, text]] of CASES.entries()) {
      const u = o.units.get(`c${i}.service`)!;
      expect(u.load, name).toBe('loaded');
      const theirs = u.lines.find((l) => l.startsWith('Description: '))!.slice('Description: '.length);
      const parsed = parseUnitFile(`[Service]\nExecStart=/bin/true\n${text}`, `/${LIB}/c${i}.service`);
      expect(parsed.errors, name).toEqual([]);
      expect(effectiveValue(parsed.directives, 'Unit', 'Description'), name).toBe(theirs);
    }
    // A bad section header stops the parser: systemd does not load the unit; we name the line.
    expect(o.units.get('bad.service')!.load).not.toBe('loaded');
    const bad = parseUnitFile(files[`${LIB}/bad.service`]!, '/x/bad.service');
    expect(bad.errors).toEqual([{ file: '/x/bad.service', line: 3, message: "invalid section header '[Unit'" }]);
    expect(bad.directives.map((d) => d.key)).toEqual(['ExecStart']);
  }, 60_000);

  it('a directive is numbered by its first physical line', () => {
    expect(parseUnitText('[Unit]\n\nDescription=a \\\nb\nAfter=x\n', '/f').map((d) => [d.key, d.line])).toEqual([
      ['Description', 3],
      ['After', 5],
    ]);
  });
});

describe('effective values', () => {
  const d = (key: string, value: string, section = 'Socket'): UnitDirective => ({ section, key, value, file: '/f', line: 1 });
  it('a list is reset by an empty assignment; a single value by an empty one too', () => {
    const ds = [d('ListenStream', '1'), d('ListenStream', ''), d('ListenStream', '2'), d('ListenStream', '3', 'Other'), d('ListenStream', '4')];
    expect(effectiveList(ds, 'Socket', 'ListenStream').map((x) => x.value)).toEqual(['2', '4']);
    expect(effectiveValue(ds, 'Socket', 'ListenStream')).toBe('4');
    expect(effectiveValue([d('Service', 'a.service'), d('Service', '')], 'Socket', 'Service')).toBeNull();
  });
  it("parse_boolean's six words each way, in any case", () => {
    for (const w of ['1', 'yes', 'Y', 'TRUE', 't', 'On']) expect(parseUnitBoolean(w), w).toBe(true);
    for (const w of ['0', 'no', 'N', 'False', 'f', 'OFF']) expect(parseUnitBoolean(w), w).toBe(false);
    for (const w of ['', 'enable', '2', 'yes ']) expect(parseUnitBoolean(w), w).toBeNull();
  });
  it('a boolean setting keeps its last value systemd takes: a refused one, the empty one too, is ignored', () => {
    const ds = [d('Accept', 'yes'), d('Accept', 'maybe'), d('Accept', '')];
    expect(effectiveBoolean(ds, 'Socket', 'Accept')).toBe(true);
    expect(effectiveBoolean([...ds, d('Accept', 'off')], 'Socket', 'Accept')).toBe(false);
    expect(effectiveBoolean([], 'Socket', 'Accept')).toBeNull();
    expect(lastAccepted(ds, 'Socket', 'Accept', (v) => v.length > 3)?.value).toBe('maybe');
  });
});
