// `ansible-playbook --check --diff` with the collection shows the plan's changes as Ansible diffs
// (issue 50), judged by the file system rather than by the tool: each file diff's "before" must be
// the file's bytes before the run, its "after" the bytes a real apply then leaves there, and the set
// of files with a diff must be the set of regular files the apply changed. The host is an offline
// tree (reconcile_root) under a temp dir: this machine is never changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, lstatSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

const repo = path.resolve(new URL('..', import.meta.url).pathname);
const SLOW = 240_000;

let work: string;
const tree = () => path.join(work, 'trees', 'used-server');

/** Every regular file and symlink under the tree, by its path inside the root, with its bytes or link target. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      const st = lstatSync(full);
      const inRoot = '/' + path.relative(root, full);
      if (st.isDirectory()) walk(full);
      else if (st.isSymbolicLink()) out.set(inRoot, `link:${readlinkSync(full)}`);
      else out.set(inRoot, readFileSync(full, 'utf8'));
    }
  };
  walk(root);
  return out;
}

const env = () => ({
  ANSIBLE_CONFIG: path.join(work, 'ansible.cfg'),
  ANSIBLE_HOME: path.join(work, 'ansible-home'),
  ANSIBLE_COLLECTIONS_PATH: path.join(work, 'collections'),
  ANSIBLE_LOCAL_TEMP: path.join(work, 'tmp'),
  ANSIBLE_REMOTE_TEMP: path.join(work, 'tmp'),
  ANSIBLE_RETRY_FILES_ENABLED: '0',
  ANSIBLE_NOCOLOR: '1',
});

interface AnsibleDiff {
  before?: string;
  after?: string;
  before_header?: string;
  after_header?: string;
  prepared?: string;
}
interface TaskResult {
  changed?: boolean;
  skipped?: boolean;
  diff?: AnsibleDiff[];
}

async function play(args: string[], callback: 'json' | 'default') {
  const r = await execa('ansible-playbook', ['-i', 'inventory.ini', 'site.yml', ...args], {
    cwd: work,
    reject: false,
    timeout: SLOW,
    env: { ...env(), ANSIBLE_STDOUT_CALLBACK: callback },
  });
  return r;
}

async function jsonPlay(args: string[]) {
  const r = await play(args, 'json');
  if (!r.stdout.trim().startsWith('{')) throw new Error(`ansible-playbook printed no JSON (exit ${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
  const doc = JSON.parse(r.stdout) as {
    stats: Record<string, { changed: number; failures: number }>;
    plays: { tasks: { task: { name: string }; hosts: Record<string, TaskResult> }[] }[];
  };
  const diffTask = doc.plays.flatMap((p) => p.tasks).find((t) => t.task.name.endsWith('Show the changes as diffs'));
  return { exitCode: r.exitCode, stats: doc.stats, diffTask: diffTask?.hosts['used-server'] };
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'ansible-collection-diff-'));
  await execa('node', ['scripts/bundle.mjs'], { cwd: repo });
  const built = await execa('node', ['scripts/collection.mjs', '--output', path.join(work, 'dist')], { cwd: repo });
  writeFileSync(path.join(work, 'ansible.cfg'), '');
  const installed = await execa('ansible-galaxy', ['collection', 'install', '-p', path.join(work, 'collections'), built.stdout.trim()], {
    env: env(),
    reject: false,
  });
  if (installed.exitCode !== 0) throw new Error(installed.stderr);
  // The README's used server: a swap line in fstab and a sysctl.d file setting ip_forward to 0.
  cpSync(path.join(repo, 'test/fixtures/sample-host'), tree(), { recursive: true });
  cpSync(path.join(repo, 'test/fixtures/sample-desired-state.yaml'), path.join(work, 'desired.yaml'));
  writeFileSync(
    path.join(work, 'inventory.ini'),
    [
      '[k8s_cluster]',
      `used-server reconcile_root=${tree()}`,
      '[k8s_cluster:vars]',
      'ansible_connection=local',
      'ansible_python_interpreter=/usr/bin/python3',
      `reconcile_desired_state=${path.join(work, 'desired.yaml')}`,
      `reconcile_fetch_dir=${path.join(work, 'fetched')}`,
      `reconcile_remote_dir=${path.join(work, 'remote')}`,
      `reconcile_node=${process.execPath}`,
      '',
    ].join('\n'),
  );
  writeFileSync(path.join(work, 'site.yml'), '- ansible.builtin.import_playbook: k8s_host_reconcile.k8s_host_reconcile.prepare\n');
}, SLOW);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the collection under --diff', () => {
  it(
    '--check --diff shows each file the apply will change, before and after, and a real apply agrees byte for byte',
    async () => {
      const before = snapshot(tree());
      const check = await jsonPlay(['--check', '--diff']);
      expect(check.exitCode).toBe(0);
      expect(snapshot(tree())).toEqual(before); // --check changed nothing
      const diffs = check.diffTask?.diff ?? [];
      expect(check.diffTask?.changed).toBe(true);
      const fileDiffs = diffs.filter((d) => d.prepared === undefined);
      const prepared = diffs.filter((d) => d.prepared !== undefined).map((d) => d.prepared!);

      const applied = await jsonPlay(['--diff']);
      expect(applied.exitCode).toBe(0);
      const after = snapshot(tree());
      // The oracle: which regular files under /etc the apply really changed or created (the tool's own
      // state and reports live elsewhere; a mask is a symlink, shown as the plan's line instead).
      const changed = [...after.keys()].filter((p) => p.startsWith('/etc/') && !after.get(p)!.startsWith('link:') && before.get(p) !== after.get(p));
      expect(changed.length).toBeGreaterThan(0);
      const pathOf = (d: AnsibleDiff) => d.before_header!.replace(/ \(absent\)$/, '');
      expect(fileDiffs.map(pathOf).sort()).toEqual(changed.sort());
      for (const d of fileDiffs) {
        const p = pathOf(d);
        expect(d.before, p).toBe(before.get(p) ?? '');
        expect(d.after, p).toBe(after.get(p));
      }
      // The swap unit's mask is a symlink the apply made: it is one prepared line naming it, not a file diff.
      const links = [...after.keys()].filter((p) => after.get(p)!.startsWith('link:') && !before.has(p));
      for (const l of links)
        expect(
          prepared.some((t) => t.includes(path.basename(l))),
          `${l} in ${prepared.join('')}`,
        ).toBe(true);
      // The apply's own --diff shows what it carried out: the same files.
      expect(
        (applied.diffTask?.diff ?? [])
          .filter((d) => d.prepared === undefined)
          .map(pathOf)
          .sort(),
      ).toEqual(changed.sort());

      // Converged: a second apply with --diff has nothing to show and changes nothing.
      const again = await jsonPlay(['--diff']);
      expect(again.exitCode).toBe(0);
      expect(again.stats['used-server']!.changed).toBe(0);
      expect(again.diffTask?.changed ?? false).toBe(false);
      // (its reports are new run documents under reports_dir; the host's own files are untouched)
      const etc = (m: Map<string, string>) => [...m].filter(([p]) => p.startsWith('/etc/'));
      expect(etc(snapshot(tree()))).toEqual(etc(after));
    },
    SLOW * 3,
  );

  it(
    "Ansible's own default output prints the fstab swap line as removed, and without --diff the task is skipped",
    async () => {
      rmSync(tree(), { recursive: true, force: true });
      cpSync(path.join(repo, 'test/fixtures/sample-host'), tree(), { recursive: true });
      // The fixture's swap entries, read as fstab(5) fields: the third field is the type.
      const swapLines = readFileSync(path.join(tree(), 'etc/fstab'), 'utf8')
        .split('\n')
        .filter((l) => !l.trim().startsWith('#') && l.trim().split(/\s+/)[2] === 'swap');
      expect(swapLines.length).toBeGreaterThan(0);
      const r = await play(['--check', '--diff'], 'default');
      expect(r.exitCode, r.stderr).toBe(0);
      for (const l of swapLines) expect(r.stdout.split('\n')).toContain(`-${l}`);
      expect(r.stdout).toContain('before: /etc/fstab');

      const quiet = await jsonPlay(['--check']);
      expect(quiet.diffTask?.skipped).toBe(true);
    },
    SLOW * 2,
  );
  it(
    "a credential in a file the plan rewrites is not in Ansible's diff either",
    async () => {
      rmSync(tree(), { recursive: true, force: true });
      cpSync(path.join(repo, 'test/fixtures/sample-host'), tree(), { recursive: true });
      const secret = 'Tr0ub4dor-not-for-ansible-output';
      const fstab = path.join(tree(), 'etc/fstab');
      writeFileSync(fstab, readFileSync(fstab, 'utf8') + `//files/share /mnt/share cifs username=ops,password=${secret} 0 0\n`);
      const r = await play(['--check', '--diff'], 'default');
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toContain('before: /etc/fstab (credentials redacted)');
      expect(r.stdout).toContain('-/swapfile none swap sw 0 0');
      expect(r.stdout).not.toContain(secret);
    },
    SLOW,
  );
});
