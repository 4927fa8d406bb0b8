// One tuned profile file, and profiles merged, against tuned's own Python
// classes from Debian's tuned package (/usr/bin/python3 with
// tuned.profiles: Loader._load_config_data, Factory.create, Merger.merge).
// The include chain and the boot are tuned.test.ts's subject.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mergeProfiles, readTunedProfile, type TunedProfile } from '../../src/boot-scripts/tuned-profile.js';

const ORACLE = String.raw`
import sys, json
import tuned.profiles as profiles, tuned.profiles.variables
from tuned.profiles.loader import Loader
loader = Loader(None, profiles.Factory(), profiles.Merger(), None, tuned.profiles.variables.Variables())
out = []
try:
    ps = [profiles.Factory().create(n, loader._load_config_data(f)) for n, f in json.loads(sys.argv[1])]
except Exception as e:
    print(json.dumps({'refused': repr(e)})); sys.exit(0)
m = profiles.Merger().merge(ps)
units = {n: {'type': u.type, 'enabled': bool(u.enabled), 'replace': bool(u.replace), 'drop': u.drop, 'options': dict(u.options)} for n, u in m.units.items()}
print(json.dumps({'main': dict(m.options), 'units': units}))
`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tuned-profile-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes each profile as /etc/tuned/NAME/tuned.conf under the temp dir; what tuned makes of them, and what the reader makes. */
function both(profiles: Array<[string, string]>): { tuned: unknown; ours: unknown } {
  const files = profiles.map(([name, text]) => {
    const file = path.join(dir, name, 'tuned.conf');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return [name, file] as const;
  });
  const r = spawnSync('/usr/bin/python3', ['-c', ORACLE, JSON.stringify(files)], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const tuned = JSON.parse(r.stdout) as unknown;
  const read = files.map(([name, file]) => readTunedProfile(name, file, profiles.find(([n]) => n === name)![1]));
  const bad = read.find((x) => 'unknown' in x);
  if (bad) return { tuned, ours: { refused: bad } };
  const merged = mergeProfiles(read.map((x) => (x as { profile: TunedProfile }).profile));
  const values = (m: Map<string, { value: string }>) => Object.fromEntries([...m].map(([k, v]) => [k, v.value]));
  const units = Object.fromEntries(
    [...merged.units].map(([n, u]) => [n, { type: u.type, enabled: u.enabled, replace: u.replace, drop: u.drop, options: values(u.options) }]),
  );
  return { tuned, ours: { main: values(merged.main), units } };
}

describe('readTunedProfile and mergeProfiles, against tuned', () => {
  const cases: Array<[string, Array<[string, string]>]> = [
    [
      'one profile: [main], a sysctl unit, an inline comment, "=" only as delimiter, option names keep their case',
      [['one', '[main]\nsummary=one # note\n\n[sysctl]\nnet.ipv4.ip_forward = 1\nVM.Swappiness=10\nkernel.x: 1 = 2\n']],
    ],
    [
      'type=, enabled=, replace=, drop= are popped; a unit named other than its plugin',
      [['one', '[my_sysctl]\ntype=sysctl\nenabled=false\nnet.ipv4.ip_forward=0\n\n[vm]\nenabled=1\ntransparent_hugepages=never\n']],
    ],
    [
      '[DEFAULT] options are in every unit; ${i:PROFILE_DIR} is the directory, not after a backslash',
      [['one', '[DEFAULT]\nshared=${i:PROFILE_DIR}/x\nkept=\\${i:PROFILE_DIR}\n\n[sysctl]\nnet.ipv4.ip_forward=1\n']],
    ],
    [
      'merged: the later profile updates [main] and options, drop= removes older options, replace= takes the unit whole',
      [
        [
          'base',
          '[main]\nsummary=base\n\n[sysctl]\nnet.ipv4.ip_forward=1\nvm.swappiness=30\nkernel.a=1\n\n[vm]\ntransparent_hugepages=always\ntransparent_hugepages.defrag=never\n',
        ],
        [
          'over',
          '[main]\nsummary=over\n\n[sysctl]\ndrop=vm.swappiness, kernel.a\nnet.ipv4.ip_forward=0\n\n[vm]\nreplace=true\ntransparent_hugepages=never\n\n[disk]\nreadahead=4096\n',
        ],
      ],
    ],
    [
      "merged: enabled= and type= are the later unit's",
      [
        ['base', '[sysctl]\nnet.ipv4.ip_forward=1\n'],
        ['over', '[sysctl]\nenabled=false\n'],
      ],
    ],
  ];
  for (const [title, profiles] of cases) {
    it(title, () => {
      const { tuned, ours } = both(profiles);
      expect(ours).toEqual(tuned);
    });
  }
  it('a file configparser refuses (an option before any section, a duplicate section is allowed): refused by both, with the line', () => {
    const { tuned, ours } = both([['bad', 'net.ipv4.ip_forward=0\n[sysctl]\n']]);
    expect(tuned).toMatchObject({ refused: expect.stringContaining('InvalidProfileException') });
    expect(ours).toMatchObject({ refused: { line: 1, unknown: expect.stringContaining('enables no profile at all') } });
    const dup = both([['dup', '[sysctl]\na=1\n[sysctl]\nb=2\n']]);
    expect(dup.ours).toEqual(dup.tuned);
  });
  it('text that is not UTF-8 (decoded with U+FFFD) is unknown at line 0', () => {
    expect(readTunedProfile('x', '/etc/tuned/x/tuned.conf', '[main]\nsummary=\uFFFD\n')).toEqual({
      unknown: 'the file is not UTF-8 text, which tuned cannot read',
      file: '/etc/tuned/x/tuned.conf',
      line: 0,
    });
  });
  it('each option keeps the file and line that set it last', () => {
    const a = readTunedProfile('a', '/usr/lib/tuned/a/tuned.conf', '[sysctl]\nnet.ipv4.ip_forward=1\nvm.swappiness=1\n');
    const b = readTunedProfile('b', '/etc/tuned/b/tuned.conf', '\n\n[sysctl]\nvm.swappiness=5\n');
    const m = mergeProfiles([(a as { profile: TunedProfile }).profile, (b as { profile: TunedProfile }).profile]);
    const sysctl = m.units.get('sysctl')!.options;
    expect([sysctl.get('net.ipv4.ip_forward'), sysctl.get('vm.swappiness')]).toEqual([
      { value: '1', file: '/usr/lib/tuned/a/tuned.conf', line: 2 },
      { value: '5', file: '/etc/tuned/b/tuned.conf', line: 4 },
    ]);
  });
});
