// observeSysctlTree reads what systemd-sysctl and procps' sysctl --system
// read (sysctl.d(5)): every *.conf entry of /etc, /run, /usr/local/lib,
// /usr/lib and /lib sysctl.d (an alias of a directory read already adds
// nothing), a link to /dev/null as a mask, and /etc/sysctl.conf when it is a
// regular file. Worked by hand from that page on fixture roots.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { observeSysctlTree } from '../../src/sysctl/observe.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const work = mkdtempSync(path.join(tmpdir(), 'sysctl-observe-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function observe(files: Tree, dirs: string[] = []) {
  const root = mkdtempSync(path.join(work, 'root-'));
  buildTree(root, files);
  for (const d of dirs) mkdirSync(path.join(root, d), { recursive: true });
  return observeSysctlTree(new Host({ root }));
}

describe('observeSysctlTree', () => {
  it('lists *.conf entries of each directory, reads them, and names where the bytes live', async () => {
    const o = await observe({
      'etc/sysctl.d/10-a.conf': 'net.ipv4.ip_forward = 1\n',
      'etc/sysctl.d/README': 'not read\n',
      'etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' },
      'etc/sysctl.conf': 'kernel.panic = 5\n',
      'usr/lib/sysctl.d/50-default.conf': '-net.ipv4.conf.all.rp_filter = 2\n',
    });
    expect(o.dirs).toEqual(['/etc/sysctl.d', '/usr/lib/sysctl.d']);
    expect(o.tree.files.map((f) => [f.path, f.realPath, f.masked, f.assignments.map((a) => a.key)])).toEqual(
      expect.arrayContaining([
        ['/etc/sysctl.d/10-a.conf', '/etc/sysctl.d/10-a.conf', false, ['net.ipv4.ip_forward']],
        ['/etc/sysctl.d/99-sysctl.conf', '/etc/sysctl.conf', false, ['kernel.panic']],
        ['/usr/lib/sysctl.d/50-default.conf', '/usr/lib/sysctl.d/50-default.conf', false, ['net.ipv4.conf.all.rp_filter']],
      ]),
    );
    expect(o.tree.files).toHaveLength(3);
    expect(o.tree.sysctlConf).toMatchObject({ path: '/etc/sysctl.conf', realPath: '/etc/sysctl.conf', content: 'kernel.panic = 5\n' });
    expect(o.skipped).toEqual([]);
  });

  it('a link to /dev/null masks its name and holds nothing', async () => {
    const o = await observe({ 'etc/sysctl.d/50-default.conf': { link: '/dev/null' }, 'usr/lib/sysctl.d/50-default.conf': 'kernel.panic = 1\n' });
    expect(o.tree.files.find((f) => f.path === '/etc/sysctl.d/50-default.conf')).toEqual({
      path: '/etc/sysctl.d/50-default.conf',
      masked: true,
      realPath: '/dev/null',
      content: '',
      assignments: [],
    });
  });

  it('/lib/sysctl.d as a link to usr/lib/sysctl.d is read once', async () => {
    const o = await observe({ 'usr/lib/sysctl.d/50-x.conf': 'kernel.panic = 1\n', lib: { link: 'usr/lib' } });
    expect(o.dirs).toEqual(['/usr/lib/sysctl.d']);
    expect(o.tree.files.map((f) => f.path)).toEqual(['/usr/lib/sysctl.d/50-x.conf']);
  });

  it('an entry that cannot be read as a file is skipped with the reason, keeping its name in the list', async () => {
    const o = await observe({ 'etc/sysctl.d/dangling.conf': { link: '/nowhere/x.conf' } }, ['etc/sysctl.d/dir.conf']);
    expect(o.skipped.map((s) => s.path).sort()).toEqual(['/etc/sysctl.d/dangling.conf', '/etc/sysctl.d/dir.conf']);
    expect(o.tree.files.map((f) => [f.path, f.content])).toEqual(
      expect.arrayContaining([
        ['/etc/sysctl.d/dangling.conf', ''],
        ['/etc/sysctl.d/dir.conf', ''],
      ]),
    );
  });

  it('/etc/sysctl.conf missing, or a directory, is no file; a parse problem is an issue naming the file', async () => {
    expect((await observe({})).tree.sysctlConf).toBeNull();
    expect((await observe({}, ['etc/sysctl.conf'])).tree.sysctlConf).toBeNull();
    const o = await observe({ 'etc/sysctl.d/bad.conf': 'no equals sign here\n' });
    expect(o.issues.map((i) => i.file)).toEqual(['/etc/sysctl.d/bad.conf']);
  });
});
