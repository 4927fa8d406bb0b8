// dist/reconcile.mjs must run with nothing but node: no node_modules beside it.
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, cpSync, mkdtempSync, mkdirSync, writeFileSync, existsSync, symlinkSync } from 'node:fs';
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

  it('names itself as it was invoked: k8s-host-reconcile through the package’s link name, reconcile through the npm bin and as reconcile.mjs', async () => {
    // The link names the package (/usr/bin/k8s-host-reconcile) and npm (node_modules/.bin/reconcile) install.
    mkdirSync(path.join(dir, 'bin'), { recursive: true });
    for (const name of ['k8s-host-reconcile', 'reconcile']) symlinkSync('../reconcile.mjs', path.join(dir, 'bin', name));
    const env = { NODE_PATH: '', PATH: process.env.PATH ?? '' };
    for (const [script, name] of [
      ['bin/k8s-host-reconcile', 'k8s-host-reconcile'],
      ['bin/reconcile', 'reconcile'],
      ['reconcile.mjs', 'reconcile'],
    ]) {
      const help = await execa('node', [script!, '--help'], { cwd: dir, reject: false, env, extendEnv: false });
      expect(help.stdout.split('\n')[0]).toBe(`Usage: ${name} COMMAND [OPTIONS]`);
      const refused = await execa('node', [script!, 'plan', '--bogus'], { cwd: dir, reject: false, env, extendEnv: false });
      expect(refused.exitCode).toBe(1);
      expect(refused.stderr.split('\n')[0]).toBe(`${name}: unknown option --bogus`);
      expect(refused.stderr).toContain(`Run '${name} plan --help' for more.`);
      // The plan's last line is a command to paste: under the name the user typed.
      const tree = mkdtempSync(path.join(dir, `tree-${name}-`));
      cpSync(path.join(repo, 'test/fixtures/sample-host'), tree, { recursive: true, verbatimSymlinks: true });
      const plan = await execa('node', [script!, 'plan', '--root', tree, '-f', path.join(repo, 'test/fixtures/sample-desired-state.yaml')], {
        cwd: dir,
        reject: false,
        env,
        extendEnv: false,
      });
      expect(plan.exitCode, plan.stderr).toBe(2);
      expect(plan.stdout.trimEnd().split('\n')).toContain(`Next: run \`${name} apply\` with the same options to make these 5 changes.`);
    }
  });

  it('runs commands with only node: execa, loaded on the first command, is inside the bundle', async () => {
    // --facts reads this host and runs `ip -4 route get` (the plan above runs none).
    writeFileSync(path.join(dir, 'facts.yaml'), 'reports_dir: /tmp/never-written\nfacts:\n  source: native\nresources: []\n');
    const r = await execa('node', ['reconcile.mjs', '--facts', '--json', '-f', 'facts.yaml'], {
      cwd: dir,
      reject: false,
      env: { NODE_PATH: '', PATH: process.env.PATH ?? '' },
      extendEnv: false,
    });
    expect(r.stderr).not.toMatch(/Cannot find (module|package)|internal error/);
    expect(r.exitCode).toBe(0);
    // The address is the command's answer, asked here independently.
    const route = await execa('ip', ['-4', 'route', 'get', '8.8.8.8'], { reject: false });
    expect(JSON.parse(r.stdout).facts.default_ipv4).toBe(/\bsrc (\S+)/.exec(route.stdout)?.[1] ?? null);
  });
});
