// The collection's own integration targets (contrib/ansible/collection/tests/integration/targets),
// run as a collection maintainer runs them: ansible-test integration --local, in the installed
// collection built by scripts/collection.mjs. plan_diff runs on the controller; reconcile_role
// converges an offline tree under ansible-test's output directory (the host is never changed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

const repo = path.resolve(new URL('..', import.meta.url).pathname);
const SLOW = 300_000;
let work: string;
let installed: string;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'ansible-collection-integration-'));
  await execa('node', ['scripts/bundle.mjs'], { cwd: repo });
  const built = await execa('node', ['scripts/collection.mjs', '--output', path.join(work, 'dist')], { cwd: repo });
  await execa('ansible-galaxy', ['collection', 'install', '-p', path.join(work, 'collections'), built.stdout.trim()], {
    env: { ANSIBLE_HOME: path.join(work, 'ansible-home') },
  });
  installed = path.join(work, 'collections/ansible_collections/k8s_host_reconcile/k8s_host_reconcile');
}, SLOW);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the collection's integration targets", () => {
  it(
    'pass under ansible-test integration --local',
    async () => {
      const r = await execa('ansible-test', ['integration', '--local', 'plan_diff', 'reconcile_role'], {
        cwd: installed,
        reject: false,
        env: { ANSIBLE_HOME: path.join(work, 'ansible-home'), ANSIBLE_NOCOLOR: '1', PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` },
      });
      expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
      for (const target of ['plan_diff', 'reconcile_role']) expect(r.stdout).toContain(`Running ${target} integration test role`);
      // Both recaps: nothing failed; the one ignored failure is plan_diff's refusal of a bad mode, asserted there.
      const recaps = r.stdout.split('\n').filter((l) => /^testhost\s+: ok=/.test(l));
      expect(recaps).toHaveLength(2);
      for (const l of recaps) expect(l).toMatch(/ failed=0 /);
      expect(recaps.map((l) => / ignored=(\d+)/.exec(l)?.[1])).toEqual(['1', '0']);
      // Every assert task ran and passed (4 in plan_diff, 2 in reconcile_role).
      expect(r.stdout.match(/"msg": "All assertions passed"/g)?.length).toBe(6);
    },
    SLOW,
  );
});
