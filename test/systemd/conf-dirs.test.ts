// "First directory wins a file name, then byte order" is one module
// (src/systemd/conf-dirs.ts) used by the sysctl.d, modules-load.d/modprobe.d,
// unit drop-in and zram-generator readers. The oracle is systemd-analyze
// cat-config on the same fixture tree: it prints the files systemd reads, in
// the order it reads them.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { observeSysctlTree } from '../../src/sysctl/observe.js';
import { readOrder } from '../../src/sysctl/order.js';
import { effectiveConfFiles } from '../../src/modprobe/modprobe-d.js';
import { byteOrder, listConfDirs } from '../../src/systemd/conf-dirs.js';
import { MODULES_LOAD_DIRS } from '../../src/modprobe/modules-load-d.js';
import { readZramDevices } from '../../src/swap/zram.js';
import { buildTree } from '../helpers/tree.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

/** Names whose byte order differs from locale order, and one non-ASCII name. */
const NAMES = ['Z.conf', 'a.conf', '10-y.conf', '10_x.conf', 'é.conf', 'B.conf'];

function fixture(dir: string): string {
  const root = mkdtempSync(path.join(tmpdir(), 'conf-dirs-'));
  roots.push(root);
  const tree: Record<string, string> = {};
  for (const n of NAMES) tree[`etc/${dir}/${n}`] = `# ${n}\n`;
  tree[`usr/lib/${dir}/a.conf`] = '# shadowed by /etc\n';
  tree[`usr/lib/${dir}/5-vendor.conf`] = '# shadowed by /run\n';
  tree[`run/${dir}/5-vendor.conf`] = '# run\n';
  tree[`usr/lib/${dir}/7-vendor.conf`] = '# vendor only\n';
  tree[`etc/${dir}/.hidden.conf`] = '# hidden\n';
  tree[`etc/${dir}/README`] = 'not a .conf\n';
  buildTree(root, tree);
  return root;
}

/** The files systemd reads for `what`, in its order, as paths inside the root. */
function catConfig(root: string, what: string): string[] {
  const r = spawnSync('systemd-analyze', [`--root=${root}`, 'cat-config', what], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout
    .split('\n')
    .filter((l) => l.startsWith(`# ${root}/`))
    .map((l) => l.slice(2 + root.length));
}

describe('conf-dir precedence against systemd-analyze cat-config', () => {
  it('sysctl.d: the boot reader reads the winners in byte order', async () => {
    const root = fixture('sysctl.d');
    const expected = catConfig(root, 'sysctl.d');
    expect(expected).toContain('/run/sysctl.d/5-vendor.conf');
    const tree = await observeSysctlTree(new Host({ root }));
    expect(readOrder(tree.tree, 'boot').map((o) => o.file.path)).toEqual(expected);
  });

  it('modules-load.d: the winners in byte order', async () => {
    const root = fixture('modules-load.d');
    const expected = catConfig(root, 'modules-load.d');
    const files = effectiveConfFiles(await listConfDirs(new Host({ root }), MODULES_LOAD_DIRS));
    expect(files.map((f) => f.path)).toEqual(expected);
  });

  it('zram-generator drop-ins: the last file read defines the device', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'conf-dirs-'));
    roots.push(root);
    const tree: Record<string, string> = { 'usr/lib/systemd/zram-generator.conf': '[zram0]\n' };
    for (const n of NAMES) tree[`etc/systemd/zram-generator.conf.d/${n}`] = '[zram0]\nzram-size = 1\n';
    tree['usr/lib/systemd/zram-generator.conf.d/é.conf'] = '[zram0]\nzram-size = 2\n';
    buildTree(root, tree);
    const read = catConfig(root, 'systemd/zram-generator.conf');
    expect(read.length).toBe(NAMES.length + 1);
    const devices = await readZramDevices(new Host({ root }));
    expect(devices.map((d) => [d.device, d.file])).toEqual([['zram0', read[read.length - 1]]]);
  });
});

describe('byteOrder is strcmp over the UTF-8 bytes', () => {
  /** strcmp(3): the first differing byte, as unsigned char; a prefix sorts first. */
  function strcmpUtf8(a: string, b: string): number {
    const x = new TextEncoder().encode(a);
    const y = new TextEncoder().encode(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
    return Math.sign(x.length - y.length);
  }
  // Code units from each range where UTF-16 order and UTF-8 byte order part:
  // ASCII, two- and three-byte BMP, U+E000..U+FFFF (above the surrogates in
  // code point order, below them in UTF-16), pairs (four bytes, two with the same high half) and lone
  // surrogates at both ends of their ranges.
  const UNITS = [
    'a',
    'Z',
    '-',
    '_',
    '.',
    '\u00e9',
    '\u07ff',
    '\u0800',
    '\ud7ff',
    '\ue000',
    '\uffff',
    '\ud83d\ude00',
    '\ud83d\ude01',
    '\udbff\udfff',
    '\ud800',
    '\udbff',
    '\udc00',
    '\udfff',
  ];

  it('agrees with strcmp on every pair of short names built from those units', () => {
    const names: string[] = [''];
    for (const u of UNITS) names.push(u, `x${u}`, `${u}y`);
    for (const u of UNITS) for (const v of UNITS) names.push(u + v);
    const wrong: Array<[string, string]> = [];
    for (const a of names) for (const b of names) if (byteOrder(a, b) !== strcmpUtf8(a, b)) wrong.push([a, b]);
    expect(names.length).toBeGreaterThan(250);
    expect(wrong).toEqual([]);
  });
});
