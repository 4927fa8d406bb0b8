// Every npm script on a fresh machine either installs the Debian packages it
// needs (as root, through its pre-script) or stops with one line naming them;
// a tool missing under `npm run deb` is never a Node stack trace. The machines
// here are simulated by a PATH that lacks the tool: nothing is installed.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '..');
const scripts: Record<string, string> = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')).scripts;

/** A PATH directory holding only these programs (from this machine's PATH). */
function pathWith(programs: string[]): { dir: string; done: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'npm-scripts-path-'));
  for (const p of programs) {
    const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', p], { encoding: 'utf8' }).stdout.trim();
    if (!found) throw new Error(`this test needs ${p}`);
    symlinkSync(found, path.join(dir, p));
  }
  return { dir, done: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('npm scripts on a machine without their tools', () => {
  it('scripts/deb.mjs without go-md2man: exit 1, one line naming the package, nothing built', () => {
    const p = pathWith(['node', 'sh', 'dpkg-deb']);
    try {
      const r = spawnSync(process.execPath, [path.join(repo, 'scripts/deb.mjs')], { cwd: repo, env: { PATH: p.dir }, encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^deb: go-md2man missing: apt-get install go-md2man\b/);
      expect(r.stderr).not.toMatch(/ENOENT|\n\s+at /);
      expect(r.stdout).toBe('');
    } finally {
      p.done();
    }
  });

  it('the ensure script, where it cannot install (no apt-get): one line naming the missing packages of the group', () => {
    const p = pathWith(['bash', 'node', 'sort', 'id', 'dpkg-deb']);
    try {
      const r = spawnSync('bash', [path.join(repo, 'scripts/ensure-debian-packages.sh'), 'deb'], { cwd: repo, env: { PATH: p.dir }, encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stderr.trimEnd().split('\n')).toEqual([
        'Debian packages missing (deb): go-md2man; run as root on Debian, or: sudo apt-get update && sudo apt-get install -y go-md2man',
      ]);
      const bench = spawnSync('bash', [path.join(repo, 'scripts/ensure-debian-packages.sh'), 'bench', 'boot'], {
        cwd: repo,
        env: { PATH: p.dir },
        encoding: 'utf8',
      });
      expect(bench.status).toBe(1);
      expect(bench.stderr).toMatch(/^Debian packages missing \(bench boot\): hyperfine mmdebstrap systemd-container; /);
      expect(bench.stderr.trimEnd().split('\n')).toHaveLength(1);
    } finally {
      p.done();
    }
  });

  it('the ensure script names the npm packages when npm ci has not run', () => {
    const fake = mkdtempSync(path.join(tmpdir(), 'npm-scripts-repo-'));
    try {
      spawnSync('mkdir', ['-p', path.join(fake, 'scripts')]);
      spawnSync('cp', [path.join(repo, 'scripts/ensure-debian-packages.sh'), path.join(repo, 'package.json'), fake]);
      spawnSync('mv', [path.join(fake, 'ensure-debian-packages.sh'), path.join(fake, 'scripts/')]);
      const r = spawnSync('bash', [path.join(fake, 'scripts/ensure-debian-packages.sh'), 'npm'], { encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^npm packages missing: ajv diff execa .*esbuild.*; run: npm ci\n$/);
    } finally {
      rmSync(fake, { recursive: true, force: true });
    }
  });

  it('every npm script that runs something has a pre-script that checks what it needs', () => {
    for (const name of Object.keys(scripts).filter((n) => !n.startsWith('pre'))) {
      expect(scripts[`pre${name}`], name).toMatch(/^bash scripts\/ensure-debian-packages\.sh( (unit|vm|boot|deb|bench|fleet|collection|npm))*$/);
    }
    expect(scripts.predeb).toBe('bash scripts/ensure-debian-packages.sh deb');
  });
});
