// contrib/ansible/reconcile.yml against localhost (ansible_connection=local),
// always with reconcile_root pointing at a fixture tree in a temp dir and every
// staging/fetch directory inside that temp dir: the playbook never changes this
// machine. The JSON stdout callback gives exact per-host stats and task results.
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { DESIRED, FSTAB, swapModulesTree } from './helpers/swap-modules-tree.js';

const repo = path.resolve(new URL('..', import.meta.url).pathname);
const playbook = path.join(repo, 'contrib/ansible/reconcile.yml');
const SLOW = 120_000;

interface HostStats {
  ok: number;
  changed: number;
  failures: number;
  unreachable: number;
  skipped: number;
}
interface TaskResult {
  changed?: boolean;
  failed?: boolean;
  rc?: number;
  cmd?: string[];
  msg?: string;
  stdout?: string;
}
interface Run {
  exitCode: number;
  stats: HostStats;
  task: (prefix: string) => TaskResult | undefined;
  stderr: string;
}

let bundle: string;
beforeAll(async () => {
  await execa('node', ['scripts/bundle.mjs'], { cwd: repo });
  // One private copy: other test files rebuild dist/ while this file runs.
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-bundle-'));
  bundle = path.join(dir, 'reconcile.mjs');
  copyFileSync(path.join(repo, 'dist/reconcile.mjs'), bundle);
}, SLOW);
afterAll(() => rmSync(path.dirname(bundle), { recursive: true, force: true }));

let work: string;
let root: string;
beforeEach(() => {
  ({ work, root } = swapModulesTree('fleet-playbook-'));
  // An empty config file so no ansible.cfg on this machine changes the run.
  writeFileSync(path.join(work, 'ansible.cfg'), '');
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** The inventory carries the reconcile_* variables, so the run also proves
 * that inventory vars are not shadowed by the playbook's own defaults. */
function inventory(desired: string): string {
  const file = path.join(work, 'inventory.ini');
  writeFileSync(
    file,
    [
      '[fleet]',
      'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3',
      '',
      '[fleet:vars]',
      `reconcile_bundle=${bundle}`,
      `reconcile_desired_state=${desired}`,
      `reconcile_root=${root}`,
      `reconcile_remote_dir=${path.join(work, 'remote')}`,
      `reconcile_fetch_dir=${path.join(work, 'fetched')}`,
      `reconcile_node=${process.execPath}`,
      '',
    ].join('\n'),
  );
  return file;
}

async function playbookRun(opts: { check?: boolean; desired?: string } = {}): Promise<Run> {
  const inv = inventory(opts.desired ?? path.join(work, 'desired.yaml'));
  const tmp = path.join(work, 'ansible-tmp');
  const r = await execa('ansible-playbook', ['-i', inv, playbook, ...(opts.check ? ['--check'] : [])], {
    cwd: work,
    reject: false,
    timeout: SLOW,
    env: {
      ANSIBLE_CONFIG: path.join(work, 'ansible.cfg'),
      ANSIBLE_STDOUT_CALLBACK: 'json',
      ANSIBLE_NOCOLOR: '1',
      ANSIBLE_HOME: path.join(work, 'ansible-home'),
      ANSIBLE_LOCAL_TEMP: tmp,
      ANSIBLE_REMOTE_TEMP: tmp,
      ANSIBLE_RETRY_FILES_ENABLED: '0',
    },
  });
  let doc: {
    stats: Record<string, HostStats>;
    plays: { tasks: { task: { name: string }; hosts: Record<string, TaskResult> }[] }[];
  };
  try {
    doc = JSON.parse(r.stdout);
  } catch {
    throw new Error(`ansible-playbook printed no JSON (exit ${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
  }
  const tasks = doc.plays.flatMap((p) => p.tasks);
  return {
    exitCode: r.exitCode ?? -1,
    stats: doc.stats['localhost']!,
    // A task of the role is named "ROLE : NAME" in the callback's output.
    task: (prefix) => tasks.find((t) => t.task.name.replace(/^[\w.]+ : /, '').startsWith(prefix))?.hosts['localhost'],
    stderr: r.stderr,
  };
}

/** Every file and symlink under dir with its content, to prove a run changed nothing. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        out[path.relative(dir, p) + '/'] = '';
        walk(p);
      } else out[path.relative(dir, p)] = e.isSymbolicLink() ? `-> ${readlinkSync(p)}` : readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

describe('contrib/ansible/reconcile.yml on localhost with a --root tree', () => {
  it(
    '(a) --check runs the plan: the host is changed, the playbook exits 0, nothing changes',
    async () => {
      const before = snapshot(root);
      const r = await playbookRun({ check: true });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stats).toMatchObject({ changed: 1, failures: 0, unreachable: 0 });
      const run = r.task('Run reconcile')!;
      expect(run.cmd).toEqual(expect.arrayContaining(['--plan', '--json', '--root', root]));
      expect(run.cmd).not.toContain('--apply');
      expect(run.rc).toBe(2);
      expect(run.changed).toBe(true);
      expect(JSON.parse(run.stdout!).pending_changes).toBeGreaterThan(0);
      expect(r0(r.task('Summary')!.msg)).toMatch(/^localhost: plan: \d+ change\(s\) pending in SwapOff, ModulesLoad$/);
      // The tree is byte-for-byte as it was, and --check staged nothing in the remote dir.
      expect(snapshot(root)).toEqual(before);
      expect(readFileSync(path.join(root, 'etc/fstab'), 'utf8')).toBe(FSTAB);
      expect(existsSync(path.join(work, 'remote'))).toBe(false);
    },
    SLOW,
  );

  it(
    '(b) apply converges the tree and fetches the reports; (c) a second apply and a --check are ok',
    async () => {
      const first = await playbookRun();
      expect(first.exitCode, first.stderr).toBe(0);
      expect(first.stats).toMatchObject({ changed: 1, failures: 0 });
      const run = first.task('Run reconcile')!;
      expect(run.cmd).toEqual(expect.arrayContaining(['--apply', '--json', '--root', root]));
      expect(run.changed).toBe(true);
      expect(r0(first.task('Summary')!.msg)).toMatch(/^localhost: apply: applied \d+ change\(s\) in SwapOff, ModulesLoad, verified$/);

      // Converged inside the tree.
      const fstab = readFileSync(path.join(root, 'etc/fstab'), 'utf8');
      expect(fstab).not.toMatch(/^\/swapfile/m);
      expect(fstab).toContain('tmpfs /tmp tmpfs defaults 0 0');
      expect(readFileSync(path.join(root, 'etc/modules-load.d/k8s.conf'), 'utf8')).toMatch(/^overlay\nbr_netfilter\n$/m);
      // The tool stays staged for later runs on the host.
      expect(existsSync(path.join(work, 'remote/reconcile.mjs'))).toBe(true);

      // Reports: the run's documents under <root>/root/ks/preflight came back to fetched/localhost/reports/
      // (the role's layout), beside the document the run printed.
      const runsHere = readdirSync(path.join(root, 'root/ks/preflight/runs'));
      expect(runsHere).toHaveLength(1);
      expect(JSON.parse(readFileSync(path.join(work, 'fetched/localhost/reconcile.json'), 'utf8'))).toMatchObject({ mode: 'apply', verified: true });
      const fetchedRuns = path.join(work, 'fetched/localhost/reports/runs');
      expect(readdirSync(fetchedRuns)).toEqual(runsHere);
      const fetchedResult = readFileSync(path.join(fetchedRuns, runsHere[0]!, 'result.json'), 'utf8');
      expect(fetchedResult).toBe(readFileSync(path.join(root, 'root/ks/preflight/runs', runsHere[0]!, 'result.json'), 'utf8'));
      expect(JSON.parse(fetchedResult)).toMatchObject({ mode: 'apply', verified: true });
      // Only the run's documents come back: its journal and backup/ (a copy of /etc/fstab under the
      // host's own path names) stay on the host for rollback, and the copies are private.
      expect(readdirSync(path.join(fetchedRuns, runsHere[0]!)).sort()).toEqual(['plan.json', 'result.json']);
      expect(readFileSync(path.join(root, 'root/ks/preflight/runs', runsHere[0]!, 'backup/etc/fstab'), 'utf8')).toBe(FSTAB);
      expect(statSync(path.join(fetchedRuns, runsHere[0]!, 'result.json')).mode & 0o777).toBe(0o600);
      expect(statSync(fetchedRuns).mode & 0o777).toBe(0o700);

      // (c) Nothing left to do: ok, not changed.
      const second = await playbookRun();
      expect(second.exitCode, second.stderr).toBe(0);
      expect(second.stats.changed).toBe(0);
      expect(second.stats.failures).toBe(0);
      expect(second.stats.ok).toBeGreaterThan(0);
      expect(second.task('Run reconcile')!.changed).toBe(false);
      expect(r0(second.task('Summary')!.msg)).toBe('localhost: apply: nothing to change, verified');
      expect(readFileSync(path.join(root, 'etc/fstab'), 'utf8')).toBe(fstab);
      // The second run's journal came back too.
      expect(readdirSync(fetchedRuns)).toHaveLength(2);

      const check = await playbookRun({ check: true });
      expect(check.exitCode, check.stderr).toBe(0);
      expect(check.stats).toMatchObject({ changed: 0, failures: 0 });
      expect(check.task('Run reconcile')!.rc).toBe(0);
      expect(r0(check.task('Summary')!.msg)).toBe('localhost: plan: in sync');
    },
    3 * SLOW,
  );

  it(
    '(d) an invalid desired state fails the host and the playbook, and changes nothing',
    async () => {
      const bad = path.join(work, 'bad.yaml');
      writeFileSync(bad, DESIRED.replace('modules: [overlay, br_netfilter]', 'modules: [overlay, br_netfilter]\n    persist: yes'));
      const before = snapshot(root);
      const r = await playbookRun({ desired: bad });
      expect(r.exitCode).not.toBe(0);
      expect(r.stats).toMatchObject({ failures: 1, changed: 0 });
      const run = r.task('Run reconcile')!;
      expect(run.rc).toBe(1);
      // The role's verdict: the host fails with the CLI's own message.
      const fail = r.task('Fail the host when a person must act')!;
      expect(fail.failed).toBe(true);
      expect(JSON.stringify(fail.msg)).toContain('resources[1].persist: unknown key');
      expect(r0(r.task('Summary')!.msg)).toMatch(/^localhost: apply: failed \(exit 1\): .*resources\[1\]\.persist: unknown key/);
      expect(snapshot(root)).toEqual(before);
    },
    SLOW,
  );
});

/** The summary is one line; fail loudly if it is not. */
function r0(msg: string | undefined): string {
  expect(msg).toBeDefined();
  expect(msg).not.toContain('\n');
  return msg!;
}
