// What tuned's reapply_sysctl leaves net.ipv4.ip_forward at, against tuned's
// own code: plugins/plugin_sysctl.py's _write_sysctl (the profile's value)
// then _apply_system_sysctl (the /run/sysctl.d and /etc/sysctl.d files, then
// /etc/sysctl.conf), run by Debian's installed tuned in a fresh network and
// private mount namespace (`unshare -n -m`: the files are the case's, bound
// over /etc/sysctl.d, /etc/sysctl.conf and a tmpfs /run; ip_forward is per
// network namespace, and the cases write no other key, so this machine's
// values are never touched). The reader's side: the scan's hit on a root with
// the same files (the planned k8s.conf handed over as the plan hands it), its
// re-applied files as the SysctlFile judge lists them, the last one that sets
// the key deciding; and the judge takes the promise back only when tuned's
// own value is the one that stays.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTree, type Tree } from '../helpers/tree.js';
import { pick, random } from '../helpers/random.js';
import { scanBootScripts } from '../../src/boot-scripts/scan.js';
import { Host } from '../../src/host.js';
import { followKey, loadWrites } from '../../src/sysctl/order.js';
import { keysAffecting } from '../../src/sysctl/couplings.js';
import { reappliedFiles, sysctlConcern } from '../../src/resources/sysctl-file/boot-scripts.js';

const KEY = 'net.ipv4.ip_forward';
const PKG = path.resolve('test/fixtures/debian-packages/tuned_2.20.0-1');
const work = mkdtempSync(path.join(tmpdir(), 'tuned-reapply-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Case {
  /** The profile's value. */
  v: string;
  run: Record<string, string>;
  etc: Record<string, string>;
  conf: string | null;
  /** The plan's own file, /etc/sysctl.d/k8s.conf (ip_forward = 1), or none. */
  planned: boolean;
  /** /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf, as Debian ships it. */
  link: boolean;
}

function generated(seed: number): Case {
  const r = random(seed);
  const line = () => pick(r, [`${KEY} = 0\n`, `${KEY} = 1\n`, `${KEY}=0\n`, '# nothing\n', `; ${KEY} = 0\n`, `  ${KEY} = 1  \n`, '']);
  const names = ['10-a.conf', '50-b.conf', 'k8s.conf', 'zz.conf', '99-sysctl.conf', 'x.conf.bak', 'README'];
  const files = (n: number) => Object.fromEntries(Array.from({ length: n }, () => [pick(r, names), line()]));
  const c: Case = {
    v: pick(r, ['0', '1']),
    run: files(Math.floor(r() * 3)),
    etc: files(Math.floor(r() * 4)),
    conf: r() < 0.6 ? line() : null,
    planned: r() < 0.5,
    link: r() < 0.5,
  };
  if (c.planned) delete c.etc['k8s.conf'];
  if (c.link) delete c.etc['99-sysctl.conf'];
  return c;
}

/** The case's files laid out under dir (run/, etc-sysctl.d/, sysctl.conf), the planned k8s.conf written as apply would. */
function layout(c: Case, dir: string): void {
  mkdirSync(path.join(dir, 'run'), { recursive: true });
  mkdirSync(path.join(dir, 'etc-sysctl.d'), { recursive: true });
  for (const [n, t] of Object.entries(c.run)) writeFileSync(path.join(dir, 'run', n), t);
  for (const [n, t] of Object.entries(c.etc)) writeFileSync(path.join(dir, 'etc-sysctl.d', n), t);
  if (c.planned) writeFileSync(path.join(dir, 'etc-sysctl.d', 'k8s.conf'), `${KEY} = 1\n`);
  if (c.link) symlinkSync('../sysctl.conf', path.join(dir, 'etc-sysctl.d', '99-sysctl.conf'));
  writeFileSync(path.join(dir, 'sysctl.conf'), c.conf ?? '');
}

/** tuned's own write and reapply in a namespace of their own: the value ip_forward ends at. */
function tunedLeaves(c: Case, i: number): string {
  const dir = path.join(work, `o${i}`);
  layout(c, dir);
  const py = `from tuned.plugins import plugin_sysctl as p\np._write_sysctl('${KEY}', '${c.v}')\np._apply_system_sysctl({})`;
  const script = [
    'set -e',
    'mount -t tmpfs tmpfs /run',
    'mkdir /run/sysctl.d',
    'cp -a "$0/run/." /run/sysctl.d/',
    'mount --bind "$0/etc-sysctl.d" /etc/sysctl.d',
    'mount --bind "$0/sysctl.conf" /etc/sysctl.conf',
    'echo 1 > /proc/sys/net/ipv4/ip_forward',
    '/usr/bin/python3 -c "$1" 2>/dev/null',
    'cat /proc/sys/net/ipv4/ip_forward',
  ].join('\n');
  return execFileSync('unshare', ['-n', '-m', '--propagation', 'private', 'sh', '-c', script, dir, py], { encoding: 'utf8' }).trim();
}

/** A root with tuned enabled, the profile writing v, and the case's files as they are before apply. */
function root(c: Case, i: number): string {
  const r = path.join(work, `r${i}`);
  for (const d of ['lib', 'etc', 'usr']) cpSync(path.join(PKG, d), path.join(r, d), { recursive: true });
  const tree: Tree = {
    'etc/systemd/system/multi-user.target.wants/tuned.service': { link: '/lib/systemd/system/tuned.service' },
    'etc/tuned/k8s/tuned.conf': `[main]\nsummary=x\n\n[sysctl]\n${KEY}=${c.v}\n`,
    'etc/tuned/active_profile': 'k8s\n',
    ...Object.fromEntries(Object.entries(c.run).map(([n, t]) => [`run/sysctl.d/${n}`, t])),
    ...Object.fromEntries(Object.entries(c.etc).map(([n, t]) => [`etc/sysctl.d/${n}`, t])),
    ...(c.link ? { 'etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' } } : {}),
  };
  buildTree(r, tree);
  if (c.conf !== null) writeFileSync(path.join(r, 'etc/sysctl.conf'), c.conf);
  else rmSync(path.join(r, 'etc/sysctl.conf'), { force: true });
  return r;
}

describe("tuned's reapply_sysctl, as tuned's own functions run it", () => {
  it('150 generated sysctl trees: the value ip_forward ends at, and whether the profile line takes the promise back', async () => {
    let kept = 0;
    let undone = 0;
    for (let i = 1; i <= 150; i++) {
      const c = generated(i);
      const theirs = tunedLeaves(c, i);
      const scan = await scanBootScripts(new Host({ root: root(c, i) }));
      const hit = scan.hits.find((h) => h.action.kind === 'sysctl-write' && h.action.key === KEY)!;
      const planned = new Map(c.planned ? [['/etc/sysctl.d/k8s.conf', `${KEY} = 1\n`]] : []);
      const files = reappliedFiles(hit.reapplied!, planned);
      const last = [...followKey(loadWrites(files, keysAffecting(KEY)), KEY, 'system')].reverse().find((s) => s.touched);
      const ours = last?.value ?? c.v;
      expect(ours, JSON.stringify(c)).toBe(theirs);
      // The judge blames the profile line only when tuned's own value stays, and it is not the wanted 1.
      const blamed = sysctlConcern.judge({ type: 'SysctlFile', settings: { [KEY]: 1 } }, hit, planned) !== null;
      expect(blamed, JSON.stringify(c)).toBe(last === undefined && c.v !== '1');
      if (theirs === '1') kept++;
      if (blamed) undone++;
      rmSync(path.join(work, `r${i}`), { recursive: true, force: true });
    }
    // Both outcomes are drawn: the promise kept by a re-applied file, and taken back by the profile line.
    expect(kept).toBeGreaterThan(25);
    expect(undone).toBeGreaterThan(5);
  }, 600_000);
});
