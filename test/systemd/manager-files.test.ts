// A unit as the running manager loaded it (src/systemd/manager-files.ts):
// exactly the fragment and drop-ins `systemctl show` names, in that order,
// whatever else lies on the search path; a file it names that is gone or
// cannot be read is said once, naming the first such file, and the rest is
// still read. Fixture trees in temp dirs.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { dropInPathsOf, readManagerUnitFiles } from '../../src/systemd/manager-files.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function tree(files: Record<string, string>): Host {
  const root = mkdtempSync(path.join(os.tmpdir(), 'manager-files-'));
  roots.push(root);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    writeFileSync(path.join(root, p), text);
  }
  return new Host({ root, live: false });
}

const FRAG = '/usr/lib/systemd/system/web.service';
const D1 = '/etc/systemd/system/web.service.d/10-port.conf';
const D2 = '/run/systemd/system/web.service.d/20-env.conf';

describe('DropInPaths= as systemctl show prints it', () => {
  it('splits on runs of blanks and drops the empty ends', () => {
    expect(dropInPathsOf(`${D1}  ${D2} `)).toEqual([D1, D2]);
    expect(dropInPathsOf('')).toEqual([]);
    expect(dropInPathsOf(undefined)).toEqual([]);
  });
});

describe('readManagerUnitFiles', () => {
  it('the fragment, then the drop-ins in the order given, each line with its file and line; a drop-in the manager did not name is not read', async () => {
    const host = tree({
      [FRAG]: '[Service]\nExecStart=/usr/bin/web\n',
      [D1]: '[Service]\nEnvironment=PORT=6443\n',
      [D2]: '# env\n[Service]\nEnvironment=MODE=x\n',
      '/etc/systemd/system/web.service.d/30-later.conf': '[Service]\nEnvironment=LATER=1\n',
    });
    const r = await readManagerUnitFiles(host, 'web.service', FRAG, [D2, D1]);
    expect(r.error).toBeNull();
    expect(r.fragmentText).toBe('[Service]\nExecStart=/usr/bin/web\n');
    expect(r.directives.map((d) => `${d.file}:${d.line} ${d.key}=${d.value}`)).toEqual([
      `${FRAG}:2 ExecStart=/usr/bin/web`,
      `${D2}:3 Environment=MODE=x`,
      `${D1}:2 Environment=PORT=6443`,
    ]);
  });

  it('a named file that is gone: the first one is said, naming the unit, and the others are still read', async () => {
    const host = tree({ [FRAG]: '[Service]\nExecStart=/usr/bin/web\n', [D2]: '[Service]\nEnvironment=MODE=x\n' });
    const r = await readManagerUnitFiles(host, 'web.service', FRAG, [D1, '/etc/systemd/system/web.service.d/gone-too.conf', D2]);
    expect(r.error).toBe(`${D1} (a unit file systemctl names for web.service) does not exist`);
    expect(r.directives.map((d) => d.file)).toEqual([FRAG, D2]);
  });

  it('a fragment that cannot be read (a directory): no fragment text, the error names it, the drop-ins are read', async () => {
    const host = tree({ [`${FRAG}/x`]: '', [D1]: '[Service]\nEnvironment=PORT=1\n' });
    const r = await readManagerUnitFiles(host, 'web.service', FRAG, [D1]);
    expect(r.fragmentText).toBeNull();
    expect(r.error).toMatch(new RegExp(`^${FRAG.replace(/\./g, '\\.')} could not be read: `));
    expect(r.directives.map((d) => d.file)).toEqual([D1]);
  });
});
