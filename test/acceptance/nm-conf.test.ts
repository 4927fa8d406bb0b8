// NetworkManager's merged [keyfile] unmanaged-devices (src/acceptance/nm-conf.ts)
// against NetworkManager itself: Debian's network-manager 1.42
// (scripts/ensure-debian-packages.sh installs it and keeps its units from
// starting) prints the configuration it would run with, without starting
// (`NetworkManager --print-config`), with --config, --config-dir,
// --system-config-dir and --intern-config pointed at the test's tree; never
// this machine's configuration. Generated trees: += / -= / = in any order and
// repeated, repeated groups, files NM skips (*.txt), hidden files, a name in
// /etc or /run shadowing /usr/lib's, /etc's shadowing /run's (/run's conf.d
// is given to NM in a mount namespace of the test's own: nmSays).
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pick, random } from '../helpers/random.js';
import { isConfName, mergeUnmanaged, readOrder, splitSpecs, type NmConfFile } from '../../src/acceptance/nm-conf.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * NM's own merged value: the unmanaged-devices line of [keyfile] in --print-config. /run's conf.d has no option: NM runs
 * in a mount namespace of its own (unshare -m, propagation private) with a tmpfs on /run holding the tree's files, so this
 * machine's /run is never touched.
 */
function nmSays(main: string, etc: string, lib: string, run: string, intern: string): string[] | string {
  const script =
    'mount -t tmpfs none /run && mkdir -p /run/NetworkManager/conf.d && cp -a "$1"/. /run/NetworkManager/conf.d/ && shift && exec NetworkManager "$@"';
  const args = ['--print-config', `--config=${main}`, `--config-dir=${etc}`, `--system-config-dir=${lib}`, `--intern-config=${intern}`];
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script, 'nm', run, ...args], { encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) return `refused: ${r.stderr}`;
  const lines = r.stdout.split('\n');
  const g = lines.indexOf('[keyfile]');
  if (g < 0) return [];
  for (const l of lines.slice(g + 1)) {
    if (l.startsWith('[')) break;
    // A plain assignment is printed as written: its specs are read as the Device List Format says (',' or ';', trimmed).
    if (l.startsWith('unmanaged-devices=')) return splitSpecs(l.slice('unmanaged-devices='.length));
  }
  return [];
}

const NAMES = ['a', 'b', 'cali*', 'cni0', 'flannel.1', 'lxc*', 'x'];
const spec = (r: () => number) => `interface-name:${pick(r, NAMES)}`;
function line(r: () => number): string {
  const op = pick(r, ['=', '+=', '-=', '+=', '+=']);
  const n = Math.floor(r() * 3);
  const specs = Array.from({ length: n }, () => spec(r));
  return `unmanaged-devices${op}${specs.join(pick(r, [';', ',', ' , ']))}${pick(r, ['', ';', ' '])}`;
}
function fileText(r: () => number): string {
  const out: string[] = [pick(r, ['# a comment', '[main]\nplugins=keyfile', ''])];
  for (let g = 0; g < 1 + Math.floor(r() * 2); g++) {
    out.push(pick(r, ['[keyfile]', '[keyfile]', '[device]']));
    for (let k = 0; k < 1 + Math.floor(r() * 3); k++) out.push(line(r));
  }
  return out.join('\n') + '\n';
}

describe('mergeUnmanaged, against NetworkManager --print-config', () => {
  it('agrees on 120 generated trees', () => {
    const r = random(47);
    // The trees must reach what is judged: a /run file that counts, a shadowed name, a non-empty result.
    const reached = { run: 0, shadowed: 0, nonEmpty: 0 };
    for (let n = 0; n < 120; n++) {
      const root = mkdtempSync(path.join(tmpdir(), 'nm-conf-'));
      dirs.push(root);
      const lib = path.join(root, 'usr/lib/NetworkManager/conf.d');
      const etc = path.join(root, 'etc/NetworkManager/conf.d');
      const run = path.join(root, 'run/NetworkManager/conf.d');
      for (const d of [lib, etc, run]) mkdirSync(d, { recursive: true });
      const main = path.join(root, 'etc/NetworkManager/NetworkManager.conf');
      const files: Record<string, NmConfFile[]> = {
        '/usr/lib/NetworkManager/conf.d': [],
        '/run/NetworkManager/conf.d': [],
        '/etc/NetworkManager/conf.d': [],
      };
      // NM refuses a --config that does not exist: the main file is there, sometimes empty.
      const mainFile: NmConfFile = { path: '/etc/NetworkManager/NetworkManager.conf', text: r() < 0.8 ? fileText(r) : '' };
      writeFileSync(main, mainFile.text);
      for (const [dir, abs] of [
        ['/usr/lib/NetworkManager/conf.d', lib],
        ['/run/NetworkManager/conf.d', run],
        ['/etc/NetworkManager/conf.d', etc],
      ] as const) {
        for (let k = 0; k < Math.floor(r() * 4); k++) {
          const name = pick(r, ['10-a.conf', '20-B.conf', 'b.conf', '.h.conf', '30-c.txt', '99-z.conf']);
          const text = fileText(r);
          writeFileSync(path.join(abs, name), text);
          const list = files[dir]!.filter((f) => !f.path.endsWith(`/${name}`));
          if (isConfName(name)) files[dir] = [...list, { path: `${dir}/${name}`, text }];
          else files[dir] = list;
        }
      }
      const ours = mergeUnmanaged(readOrder(mainFile, files));
      const theirs = nmSays(main, etc, lib, run, path.join(root, 'intern.conf'));
      expect(Array.isArray(theirs), `tree ${n}: ${String(theirs)}`).toBe(true);
      if (ours.known && ours.value.from.some((f) => f.startsWith('/run/'))) reached.run++;
      const names = Object.values(files).flatMap((fs) => fs.map((f) => path.basename(f.path)));
      if (new Set(names).size < names.length) reached.shadowed++;
      if (ours.known && ours.value.specs.length > 0) reached.nonEmpty++;
      expect(ours.known && ours.value.specs, `tree ${n}: ${JSON.stringify(files)} main ${JSON.stringify(mainFile)}`).toEqual(theirs);
    }
    expect(Math.min(reached.run, reached.shadowed, reached.nonEmpty), JSON.stringify(reached)).toBeGreaterThan(10);
  });

  it('the order by hand: /usr/lib, /run, the main file, /etc; /etc shadows /run, /run shadows /usr/lib (NetworkManager.conf(5), DESCRIPTION)', () => {
    const f = (p: string, t: string): NmConfFile => ({ path: p, text: `[keyfile]\n${t}\n` });
    const order = readOrder(f('/etc/NetworkManager/NetworkManager.conf', 'unmanaged-devices+=interface-name:main'), {
      '/usr/lib/NetworkManager/conf.d': [f('/usr/lib/NetworkManager/conf.d/a.conf', 'x'), f('/usr/lib/NetworkManager/conf.d/b.conf', 'x')],
      '/run/NetworkManager/conf.d': [f('/run/NetworkManager/conf.d/b.conf', 'x'), f('/run/NetworkManager/conf.d/c.conf', 'x')],
      '/etc/NetworkManager/conf.d': [f('/etc/NetworkManager/conf.d/c.conf', 'x')],
    });
    expect(order.map((o) => o.path)).toEqual([
      '/usr/lib/NetworkManager/conf.d/a.conf',
      '/run/NetworkManager/conf.d/b.conf',
      '/etc/NetworkManager/NetworkManager.conf',
      '/etc/NetworkManager/conf.d/c.conf',
    ]);
  });

  it('says unknown, naming the line, where NM would refuse the file or a backslash escapes', () => {
    const bad = mergeUnmanaged([{ path: '/etc/NetworkManager/conf.d/x.conf', text: '[keyfile]\nnot a pair\n' }]);
    expect(bad).toEqual({ known: false, reason: '/etc/NetworkManager/conf.d/x.conf:2 is not a key=value line in a group' });
    const esc = mergeUnmanaged([{ path: '/etc/NetworkManager/conf.d/x.conf', text: '[keyfile]\nunmanaged-devices=interface-name:a\\,b\n' }]);
    expect(esc.known).toBe(false);
  });
});
