// reports_mode in desired-state.yaml: the modes of the reports directory's
// documents and of the directories the tool makes for them, through the CLI
// on a fixture root (--root). The run's own directory is private whatever it says.
import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { main } from '../../src/cli.js';
import { reportModes } from '../../src/reconcile/reports.js';
import { captureIo } from '../helpers/io.js';
import { DESIRED, swapModulesTree } from '../helpers/swap-modules-tree.js';

const works: string[] = [];
afterEach(() => {
  for (const w of works.splice(0)) rmSync(w, { recursive: true, force: true });
});
const modeOf = (p: string) => statSync(p).mode & 0o7777;

async function applyWith(extra: string) {
  const t = swapModulesTree('reports-modes-');
  works.push(t.work);
  const desired = path.join(t.work, 'desired.yaml');
  writeFileSync(desired, extra + DESIRED);
  const h = captureIo(true);
  const code = await main(['apply', '-f', desired, '--root', t.root], h.value);
  return { code, stderr: h.stderr(), root: t.root, desired };
}

describe('reports_mode', () => {
  it('reportModes: each file mode and its directory mode', () => {
    expect(reportModes(undefined)).toEqual({ file: 0o600, dir: 0o700 });
    expect(reportModes('0600')).toEqual({ file: 0o600, dir: 0o700 });
    expect(reportModes('0640')).toEqual({ file: 0o640, dir: 0o750 });
    expect(reportModes('0644')).toEqual({ file: 0o644, dir: 0o755 });
  });

  it('by default the reports and runs directories the tool makes are 0700', async () => {
    const r = await applyWith('');
    expect(r.code, r.stderr).toBe(0);
    const reports = path.join(r.root, 'root/ks/preflight');
    for (const d of ['root', 'root/ks', 'root/ks/preflight', 'root/ks/preflight/runs']) expect(modeOf(path.join(r.root, d)), d).toBe(0o700);
    const [run] = readdirSync(path.join(reports, 'runs'));
    expect(modeOf(path.join(reports, 'runs', run!))).toBe(0o700);
  });

  it('reports_mode "0644": directories 0755, the run directory still 0700', async () => {
    const r = await applyWith('reports_mode: "0644"\n');
    expect(r.code, r.stderr).toBe(0);
    const reports = path.join(r.root, 'root/ks/preflight');
    expect(modeOf(reports)).toBe(0o755 & ~process.umask());
    const [run] = readdirSync(path.join(reports, 'runs'));
    expect(modeOf(path.join(reports, 'runs', run!))).toBe(0o700);
  });

  it('an unquoted or other mode is refused at its line, before anything is written', async () => {
    for (const bad of ['reports_mode: 0640\n', 'reports_mode: "0666"\n']) {
      const r = await applyWith(bad);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${r.desired}:1:15 reports_mode:`);
      expect(readdirSync(r.root)).toEqual(['etc']);
    }
  });
});
