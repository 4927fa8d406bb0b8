// The collection's sources and the repository's playbook lint clean with
// Debian's ansible-lint and its production profile (the profile Galaxy-bound
// collections are held to), each directory through its own .ansible-lint.
// That the lint reads every YAML file is shown by planting one over-long
// line in each file of a copy (the files listed here, not by the lint): every
// file must then be named. ansible-lint missing is a failure, not a skip.
import { afterAll, describe, expect, it } from 'vitest';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

const repo = path.resolve(new URL('..', import.meta.url).pathname);
const SLOW = 300_000;
const work = mkdtempSync(path.join(tmpdir(), 'ansible-lint-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** ansible-lint in `dir` as the config there says, its violations as JSON. */
async function lint(dir: string) {
  const r = await execa('ansible-lint', ['--nocolor', '-f', 'json'], {
    cwd: dir,
    reject: false,
    timeout: SLOW,
    // Its own cache (the collection it installs to resolve FQCNs) under the test's directory.
    env: { HOME: path.join(work, 'home'), XDG_CACHE_HOME: path.join(work, 'cache'), ANSIBLE_HOME: path.join(work, 'ansible-home'), NO_COLOR: '1' },
  });
  const violations = JSON.parse(r.stdout || '[]') as Array<{ check_name: string; location: { path: string } }>;
  return { code: r.exitCode, stderr: r.stderr, violations };
}

/** The YAML files under dir, relative, found by walking it (not through the lint). */
function yamlFiles(dir: string, rel = ''): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const p = path.join(rel, e.name);
    if (e.isDirectory()) return yamlFiles(dir, p);
    return /\.ya?ml$/.test(e.name) || e.name === '.ansible-lint' ? [p] : [];
  });
}

describe('ansible-lint --profile production', () => {
  it.each([
    ['contrib/ansible/collection', 'the collection’s sources'],
    ['contrib/ansible', 'reconcile.yml'],
  ])(
    '%s (%s): 0 failures, 0 warnings',
    async (dir) => {
      const r = await lint(path.join(repo, dir));
      expect(r.violations.map((v) => `${v.location.path}: ${v.check_name}`)).toEqual([]);
      expect(r.stderr).toMatch(/^Passed with production profile: 0 failure\(s\), 0 warning\(s\) on \d+ files\.$/m);
      expect(r.code).toBe(0);
    },
    SLOW,
  );

  it(
    'reads every YAML file of the collection: a line too long planted in each is found in each',
    async () => {
      const copy = path.join(work, 'collection');
      cpSync(path.join(repo, 'contrib/ansible/collection'), copy, { recursive: true });
      const files = yamlFiles(copy).filter((f) => f !== '.ansible-lint');
      expect(files).toEqual(
        expect.arrayContaining(['galaxy.yml', 'roles/reconcile/tasks/main.yml', 'roles/reconcile/meta/argument_specs.yml', 'changelogs/changelog.yaml']),
      );
      // Words, not one long token: yamllint lets a line of one unbreakable word run long.
      for (const f of files) appendFileSync(path.join(copy, f), `# ${'too long '.repeat(25)}\n`);
      const r = await lint(copy);
      expect(r.code).not.toBe(0);
      const named = new Set(r.violations.filter((v) => v.check_name.startsWith('yaml[line-length]')).map((v) => v.location.path));
      expect([...named].sort()).toEqual([...files].sort());
    },
    SLOW,
  );
});
