// dist/reconcile.mjs must run with nothing but node: no node_modules beside it.
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, mkdtempSync, mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

const repo = path.resolve(new URL('..', import.meta.url).pathname);

describe('the bundle', () => {
  let dir: string;
  beforeAll(async () => {
    await execa('node', ['scripts/bundle.mjs'], { cwd: repo });
    dir = mkdtempSync(path.join(tmpdir(), 'bundle-test-'));
    copyFileSync(path.join(repo, 'dist/reconcile.mjs'), path.join(dir, 'reconcile.mjs'));
    mkdirSync(path.join(dir, 'root/etc'), { recursive: true });
    writeFileSync(path.join(dir, 'root/etc/fstab'), '/swap.img none swap sw 0 0\n');
    writeFileSync(path.join(dir, 'desired.yaml'), 'reports_dir: /r\nresources:\n  - type: SwapOff\n  - type: ModulesLoad\n');
  }, 60_000);

  it('runs --plan --root with only node and no node_modules', async () => {
    expect(existsSync(path.join(dir, 'node_modules'))).toBe(false);
    const r = await execa('node', ['reconcile.mjs', '--plan', '--root', 'root', '-f', 'desired.yaml'], {
      cwd: dir,
      reject: false,
      env: { NODE_PATH: '', PATH: process.env.PATH ?? '' },
      extendEnv: false,
    });
    expect(r.stderr).not.toMatch(/Cannot find (module|package)/);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toContain('--- /etc/fstab');
  });
});
