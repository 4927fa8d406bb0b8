// deb822 as dpkg reads /var/lib/dpkg/status, with dpkg itself as the oracle:
// generated status files (stanzas in any order, field names in any case,
// blanks after the colon and at the end, continuation lines with a space or
// a tab, several empty lines or lines of blanks between stanzas) are read by
// `dpkg-query --admindir=DIR --show` (which lists every package not
// not-installed, with its Status) and by parseDeb822; both must name the
// same packages with the same Status, or both refuse the file (dpkg takes a
// line of blanks for a continuation, so the stanza after it repeats Package).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installedPackages, parseDeb822 } from '../../src/lex/deb822.js';
import { pick, random } from '../helpers/random.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** What dpkg-query reads from a status file: package -> Status; null when dpkg refuses the file. */
function dpkgQuery(status: string): Map<string, string> | null {
  const dir = mkdtempSync(path.join(tmpdir(), 'deb822-'));
  dirs.push(dir);
  mkdirSync(path.join(dir, 'updates'));
  mkdirSync(path.join(dir, 'info'));
  writeFileSync(path.join(dir, 'status'), status);
  let out: string;
  try {
    out = execFileSync('dpkg-query', [`--admindir=${dir}`, '--show', '--showformat=${Package}\\t${Status}\\n'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString();
  } catch {
    return null;
  }
  return new Map(
    out
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.split('\t') as [string, string]),
  );
}

const STATES = [
  'install ok installed',
  'deinstall ok config-files',
  'purge ok not-installed',
  'install ok unpacked',
  'hold ok installed',
  'install ok half-configured',
  'install reinstreq half-installed',
];

function generate(seed: number): string {
  const r = random(seed);
  const names = ['containerd', 'docker.io', 'runc', 'libc6', 'tzdata', 'containerd.io', 'docker-ce', 'systemd'].filter(() => r() < 0.7);
  const blank = () => pick(r, ['\n', '\n\n', '\n \n', '\n\t\n\n']);
  const key = (k: string) => pick(r, [k, k.toLowerCase(), k.toUpperCase()]);
  const sp = () => pick(r, [' ', '  ', '\t', ' \t']);
  return names
    .map((name) => {
      const cont = () => pick(r, [' ', '\t']);
      const fields = [
        `${key('Package')}:${sp()}${name}${pick(r, ['', ' ', '\t'])}`,
        `${key('Status')}:${sp()}${pick(r, STATES)}`,
        `Priority: optional`,
        `Section: admin`,
        `Installed-Size: ${Math.floor(r() * 90000)}`,
        `Maintainer: Debian Go Packaging Team <team+pkg-go@tracker.debian.org>`,
        `Architecture: amd64`,
        `Version: 1.${Math.floor(r() * 9)}.${Math.floor(r() * 30)}~ds1-1+b1`,
        ...(r() < 0.5 ? [`Depends: libc6 (>= 2.34),${cont()}runc (>= 1.1.0)`.replace(`,${' '}`, ', ')] : []),
        ...(r() < 0.4 ? [`Conffiles:\n /etc/containerd/config.toml 0123456789abcdef0123456789abcdef`] : []),
        `Description: a package\n${cont()}a long line: with a colon\n${cont()}.\n${cont()}Package: not a field`,
      ];
      // dpkg does not care about the order of the fields after Package.
      const [first, ...rest] = fields;
      return [first, ...rest.sort(() => r() - 0.5)].join('\n');
    })
    .join(blank())
    .concat('\n');
}

describe('deb822 as dpkg reads its status file', () => {
  it('200 generated status files: the same packages and Status as dpkg-query, or refused by both', () => {
    let refused = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const text = generate(seed);
      const parsed = parseDeb822(text);
      const oracle = dpkgQuery(text);
      if (oracle === null || !parsed.ok) {
        expect([seed, parsed.ok]).toEqual([seed, oracle !== null]);
        refused++;
        continue;
      }
      const mine = new Map(
        parsed.stanzas.map((s) => [s.fields.get('package')!, s.fields.get('status')!] as const).filter(([, st]) => !st.endsWith(' not-installed')),
      );
      expect([seed, [...mine].sort()]).toEqual([seed, [...oracle].sort()]);
    }
    // Both kinds of file are generated.
    expect(refused).toBeGreaterThan(10);
    expect(refused).toBeLessThan(190);
  });
  it("continuation lines are joined (without their first blank); a field's value is trimmed", () => {
    const p = parseDeb822('Package: runc \nDescription: one\n two\n\tthree\n');
    expect(p.ok && [...p.stanzas[0]!.fields]).toEqual([
      ['package', 'runc'],
      ['description', 'one\ntwo\nthree'],
    ]);
  });
  it('a continuation before any field, a line without a colon, a duplicate field: an error with its line', () => {
    expect(parseDeb822(' x\n')).toEqual({ ok: false, line: 1, reason: 'a continuation line outside a field' });
    expect(parseDeb822('Package: a\nnot a field\n')).toEqual({ ok: false, line: 2, reason: 'a line that is no field (no colon)' });
    expect(parseDeb822('Package: a\nstatus: x\nStatus: y\n')).toEqual({ ok: false, line: 3, reason: 'a duplicate field Status' });
  });
  it("installed packages: the states with files on the disk (dpkg-query(1)'s list), not config-files nor not-installed", () => {
    const text = [
      'Package: runc\nStatus: install ok installed',
      'Package: containerd\nStatus: deinstall ok config-files',
      'Package: docker.io\nStatus: install ok half-configured',
      'Package: tzdata\nStatus: purge ok not-installed',
    ].join('\n\n');
    const p = parseDeb822(`${text}\n`);
    expect(p.ok && [...installedPackages(p.stanzas)]).toEqual([
      ['runc', { status: 'install ok installed', line: 1 }],
      ['docker.io', { status: 'install ok half-configured', line: 7 }],
    ]);
  });
});
