// SysV init scripts as systemd sees them, with Debian's own tools as the
// oracles, in a chroot of a fresh Debian 12 root (test/helpers/nspawn.ts's
// base): update-rc.d makes and toggles the rc?.d links, and
// systemd-sysv-generator (run in the chroot, into a scratch directory) writes
// the unit. sysvScriptOf must know the generator's unit and nothing else;
// generatorLinksTo names the .wants links the generator stops writing once
// update-rc.d disable has turned the S links into K links.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { freshRootfs } from '../helpers/nspawn.js';
import { Host } from '../../src/host.js';
import { loadUnitGraph } from '../../src/systemd/unit-loader.js';
import { generatorLinksTo, sysvScriptOf, SYSV_GENERATOR_DIR } from '../../src/systemd/sysv.js';
import { SYSTEM_UNIT_PATH } from '../../src/systemd/unit-dirs.js';
import { lsbInitScript } from '../helpers/sysv-script.js';

const INIT = lsbInitScript(
  'legacy-api',
  'Legacy API server',
  `exit 0
`,
);

let root = '';
function inChroot(...argv: string[]): string {
  const r = spawnSync('chroot', [root, ...argv], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
/** Runs the real generator in the chroot, its late output in /run/systemd/generator.late as at boot. */
function generate(): void {
  rmSync(path.join(root, 'run/systemd'), { recursive: true, force: true });
  for (const d of ['generator', 'generator.early', 'generator.late']) mkdirSync(path.join(root, 'run/systemd', d), { recursive: true });
  inChroot('/lib/systemd/system-generators/systemd-sysv-generator', '/run/systemd/generator', '/run/systemd/generator.early', '/run/systemd/generator.late');
}

beforeAll(() => {
  root = freshRootfs();
  writeFileSync(path.join(root, 'etc/init.d/legacy-api'), INIT, { mode: 0o755 });
  inChroot('update-rc.d', 'legacy-api', 'defaults');
}, 300_000);
// Removing a whole Debian root takes more than vitest's 10 s hook default on a loaded machine.
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
}, 120_000);

describe('systemd-sysv-generator units', () => {
  it("the generator's unit names its script; a native unit, or a copy without the generator's mark, does not", () => {
    generate();
    const frag = `${SYSV_GENERATOR_DIR}/legacy-api.service`;
    const text = readFileSync(path.join(root, frag), 'utf8');
    expect(text).toContain('SourcePath=/etc/init.d/legacy-api');
    expect(sysvScriptOf(frag, text)).toBe('/etc/init.d/legacy-api');
    expect(sysvScriptOf('/etc/systemd/system/legacy-api.service', text)).toBeNull();
    expect(sysvScriptOf(frag, text.split('\n').slice(1).join('\n'))).toBeNull();
    const cron = readFileSync(path.join(root, 'lib/systemd/system/cron.service'), 'utf8');
    expect(sysvScriptOf('/lib/systemd/system/cron.service', cron)).toBeNull();
  });

  it('the .wants links it writes are the ones update-rc.d disable makes it drop', async () => {
    generate();
    const host = new Host({ root, live: false });
    const before = await loadUnitGraph(host, { dirs: SYSTEM_UNIT_PATH });
    const links = generatorLinksTo(before, ['legacy-api.service']).sort();
    expect(links.length).toBeGreaterThan(0);
    inChroot('update-rc.d', 'legacy-api', 'disable');
    generate();
    const after = await loadUnitGraph(new Host({ root, live: false }), { dirs: SYSTEM_UNIT_PATH });
    expect(generatorLinksTo(after, ['legacy-api.service'])).toEqual([]);
    // What remains of the generator's links to it is exactly none of those: all went.
    const remaining = after.edges.filter((e) => e.how === 'link' && links.includes(e.file));
    expect(remaining).toEqual([]);
    inChroot('update-rc.d', 'legacy-api', 'enable');
  });
});
