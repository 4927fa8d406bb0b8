// A lying fleet host against the controller (issue 51), checked with
// ansible-playbook itself, through the collection's role and through
// contrib/ansible/reconcile.yml: both bring documents back with the role's
// tasks/fetch.yml. Every host is a --root tree under a temp dir reached with
// ansible_connection=local, so this machine is never changed. The liar's
// interpreter (ansible_python_interpreter) is a wrapper that runs python3 and
// rewrites find's answer about its reports directory: names with '../', paths
// outside it, another host's reconcile.json, a huge file said to be small; its
// tree also holds a link and a huge file under the tool's own names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { parse } from 'yaml';
import { DESIRED, FSTAB } from './helpers/swap-modules-tree.js';
import { runPlaybookIn, type PlaybookRun } from './helpers/ansible-localhost.js';
import { REPORT_DOCUMENTS, RUN_DOCUMENTS, newRunJournal } from '../src/reconcile/reports.js';

const repo = path.resolve(new URL('..', import.meta.url).pathname);
const roleDir = path.join(repo, 'contrib/ansible/collection/roles/reconcile');
const ROLE_FQCN = 'k8s_host_reconcile.k8s_host_reconcile.reconcile';
const SLOW = 240_000;
const HUGE = 9 * 1024 * 1024; // over the default reconcile_fetch_max_bytes (8 MiB)
const BAD_NAME = '../escaped';

let bundle: string;
beforeAll(async () => {
  await execa('node', ['scripts/bundle.mjs'], { cwd: repo });
  const dir = mkdtempSync(path.join(tmpdir(), 'ansible-fetch-bundle-'));
  bundle = path.join(dir, 'reconcile.mjs');
  copyFileSync(path.join(repo, 'dist/reconcile.mjs'), bundle);
}, SLOW);
afterAll(() => rmSync(path.dirname(bundle), { recursive: true, force: true }));

const fetchVars = () => {
  const tasks = parse(readFileSync(path.join(roleDir, 'tasks/fetch.yml'), 'utf8')) as { vars?: Record<string, unknown> }[];
  return tasks[0]!.vars!;
};

describe('the names the controller fetches', () => {
  it('are the documents the CLI writes (src/reconcile/reports.ts), in the one task file both playbooks use', () => {
    const vars = fetchVars();
    expect([...(vars['_reconcile_report_documents'] as string[])].sort()).toEqual([...REPORT_DOCUMENTS].sort());
    expect([...(vars['_reconcile_run_documents'] as string[])].sort()).toEqual([...RUN_DOCUMENTS].sort());
    // Both playbooks bring documents back only through it: the role includes it, and the repository's
    // playbook is the role (its one task that is not a set_fact includes it by FQCN).
    expect(readFileSync(path.join(roleDir, 'tasks/main.yml'), 'utf8')).toMatch(/include_tasks: fetch\.yml/);
    const wrapper = readFileSync(path.join(repo, 'contrib/ansible/reconcile.yml'), 'utf8');
    const plays = parse(wrapper) as { tasks: Record<string, unknown>[] }[];
    expect(plays).toHaveLength(1);
    expect(plays[0]!.tasks.map((t) => Object.keys(t).find((k) => k.startsWith('ansible.builtin.')))).toEqual([
      'ansible.builtin.set_fact',
      'ansible.builtin.include_role',
    ]);
    expect(plays[0]!.tasks[1]!['ansible.builtin.include_role']).toEqual({ name: 'k8s_host_reconcile.k8s_host_reconcile.reconcile' });
    for (const yml of [wrapper, readFileSync(path.join(roleDir, 'tasks/main.yml'), 'utf8')]) expect(yml).not.toMatch(/relpath|ansible\.builtin\.fetch/);
  });

  it("take a run id as newRunJournal names it, and nothing that is a path (the pattern as Python's re reads it)", async () => {
    const pattern = fetchVars()['_reconcile_run_id'] as string;
    const ids = [newRunJournal('/r', new Date('2026-11-29T20:53:00.123Z'), 42).id, newRunJournal('/r', new Date('2031-01-01T00:00:00Z'), 4194304).id];
    const others = ['..', '.', '', 'runs', '20261129T205300123Z-42/..', '../20261129T205300123Z-42', '20261129T205300123Z-', '20261129T205300123Z-42\n'];
    // Ansible's `match` test is Python's re.match.
    const r = await execa('python3', [
      '-c',
      'import re,sys,json; print(json.dumps([bool(re.match(sys.argv[1], s)) for s in json.loads(sys.argv[2])]))',
      pattern,
      JSON.stringify([...ids, ...others]),
    ]);
    expect(JSON.parse(r.stdout)).toEqual([...ids.map(() => true), ...others.map(() => false)]);
  });
});

/** Every entry under dir: kind, mode and a hash of the content (or the link's target). */
function scan(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      const st = lstatSync(p);
      const rel = path.relative(dir, p);
      if (st.isDirectory()) {
        out.set(rel + '/', `dir ${(st.mode & 0o7777).toString(8)}`);
        walk(p);
      } else if (st.isSymbolicLink()) out.set(rel, `link`);
      else out.set(rel, `file ${(st.mode & 0o7777).toString(8)} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
    }
  };
  walk(dir);
  return out;
}

const LIAR = `#!/usr/bin/python3
# A lying host's python: runs the module, then rewrites find's answer about its reports directory.
import json, os, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
lies = json.load(open(os.path.join(here, 'lies.json')))
r = subprocess.run(['/usr/bin/python3'] + sys.argv[1:], stdout=subprocess.PIPE)
out = r.stdout
try:
    doc = json.loads(out)
    paths = doc.get('invocation', {}).get('module_args', {}).get('paths')
    with open(os.path.join(here, 'log'), 'a') as f:
        f.write(json.dumps(paths) + '\\n')
    if paths == [lies['reports']]:
        for f in doc.get('files', []):
            if os.path.basename(f['path']) in lies['shrink']:
                f['size'] = 2
        doc['files'] = doc.get('files', []) + lies['extra']
        out = json.dumps(doc).encode()
except ValueError:
    pass
sys.stdout.buffer.write(out)
sys.exit(r.returncode)
`;

interface Variant {
  name: string;
  /** Where a host's reports land under its host directory. */
  sub: string;
  /** Whether the play writes reconcile.json. */
  document: boolean;
  playbook: (work: string) => string;
}
const VARIANTS: Variant[] = [
  {
    name: "the collection's role",
    sub: 'reports',
    document: true,
    playbook: (work) => {
      const file = path.join(work, 'site.yml');
      // The role as the collection's (its tasks name the collection's plan_diff action by FQCN): the source tree's
      // collections/ directory beside the playbook, as contrib/ansible/reconcile.yml has it.
      symlinkSync(path.join(repo, 'contrib/ansible/collections'), path.join(work, 'collections'));
      writeFileSync(file, JSON.stringify([{ name: 'The role', hosts: 'all', gather_facts: false, roles: [{ role: ROLE_FQCN }] }]));
      return file;
    },
  },
  // The role's layout too: the repository's playbook is a thin wrapper around it.
  { name: 'contrib/ansible/reconcile.yml', sub: 'reports', document: true, playbook: () => path.join(repo, 'contrib/ansible/reconcile.yml') },
];

describe.each(VARIANTS)('a lying host through $name', (variant) => {
  let work: string;
  let run: PlaybookRun;
  let before: Map<string, string>;
  let after: Map<string, string>;
  const HOSTS = ['liar', 'honest', 'planted', BAD_NAME];
  const tree = (h: string) => path.join(work, 'trees', h.replace(/[./]/g, '_'));
  const reportsOf = (h: string) => path.join(tree(h), 'root/ks/preflight');
  const fetched = () => path.join(work, 'fetched');
  const hostDir = (h: string) => path.join(fetched(), h);
  const destOf = (h: string) => path.join(hostDir(h), variant.sub);
  const extra = () => {
    const R = reportsOf('liar');
    return [
      { path: `${R}/../../../../../outside/evil.json`, isreg: true, size: 5 },
      { path: `${R}/..`, isdir: true },
      { path: `${R}/runs/20261206T193225300Z-1/../../../../../../../outside/run.json`, isreg: true, size: 5 },
      { path: `${R}/runs/${'../'.repeat(6)}fetched/honest/reconcile.json`, isreg: true, size: 5 },
      { path: `${R}/runs/20261206T193225300Z-1/plan.json/../../../../x`, isreg: true, size: 5 },
      { path: '/etc/passwd', isreg: true, size: 10 },
      // Host text is data, never a template the controller runs.
      { path: `${R}/{{ lookup('pipe', 'touch ${work}/templated') }}`, isreg: true, size: 5 },
      { path: `${R}/runs/{% for x in [1] %}{{ lookup('pipe', 'touch ${work}/templated-run') }}{% endfor %}`, isdir: true },
      { path: path.join(work, 'fetched/honest/reconcile.json'), isreg: true, size: 10 },
      // A document the tool names but the host does not have: fetched with fail_on_missing false, nothing lands.
      { path: `${R}/before.json`, isreg: true, size: 3 },
      42,
      { path: null },
    ];
  };

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'ansible-fetch-'));
    mkdirSync(path.join(work, 'ansible'));
    writeFileSync(path.join(work, 'desired.yaml'), DESIRED);
    for (const h of HOSTS) {
      mkdirSync(path.join(tree(h), 'etc/systemd/system'), { recursive: true });
      writeFileSync(path.join(tree(h), 'etc/fstab'), FSTAB);
    }
    // What the liar's own tree holds in its reports directory, under the tool's names and others.
    mkdirSync(path.join(work, 'outside/planted-target'), { recursive: true });
    writeFileSync(path.join(work, 'outside/host-secret'), 'a file the link points at\n');
    const R = reportsOf('liar');
    mkdirSync(path.join(R, 'runs/not-a-run-id'), { recursive: true });
    writeFileSync(path.join(R, 'runs/not-a-run-id/plan.json'), '{}\n');
    symlinkSync(path.join(work, 'outside/host-secret'), path.join(R, 'facts.json'));
    for (const big of ['who-fixes.json', 'ports.json']) {
      writeFileSync(path.join(R, big), '');
      truncateSync(path.join(R, big), HUGE);
    }
    writeFileSync(path.join(R, 'notes.txt'), 'not a document\n');
    mkdirSync(path.join(work, 'liar'));
    writeFileSync(path.join(work, 'liar/python'), LIAR);
    chmodSync(path.join(work, 'liar/python'), 0o755);
    writeFileSync(path.join(work, 'liar/lies.json'), JSON.stringify({ reports: R, shrink: ['ports.json'], extra: extra() }));
    // On the controller, someone planted a link where a host's runs would land.
    mkdirSync(destOf('planted'), { recursive: true });
    symlinkSync(path.join(work, 'outside/planted-target'), path.join(destOf('planted'), 'runs'));

    const host = (h: string, interpreter: string) => ({
      ansible_python_interpreter: interpreter,
      reconcile_root: tree(h),
      reconcile_remote_dir: path.join(work, 'remote', h.replace(/[./]/g, '_')),
    });
    writeFileSync(
      path.join(work, 'inventory.yml'),
      JSON.stringify({
        all: {
          hosts: {
            liar: host('liar', path.join(work, 'liar/python')),
            honest: host('honest', '/usr/bin/python3'),
            planted: host('planted', '/usr/bin/python3'),
            [BAD_NAME]: host(BAD_NAME, '/usr/bin/python3'),
          },
          vars: {
            ansible_connection: 'local',
            reconcile_bundle: bundle,
            reconcile_desired_state: path.join(work, 'desired.yaml'),
            reconcile_fetch_dir: fetched(),
            reconcile_node: process.execPath,
          },
        },
      }),
    );
    const playbook = variant.playbook(work);
    before = scan(work);
    run = await runPlaybookIn(path.join(work, 'ansible'), ['-i', path.join(work, 'inventory.yml'), playbook, '--forks', '4'], SLOW);
    after = scan(work);
  }, SLOW);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const changed = () => [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k)).sort();

  it('writes nothing outside each host’s own fetch directory (the whole temp tree scanned before and after)', () => {
    expect(run.stats['liar'], run.stderr).toMatchObject({ failures: 0 });
    expect(run.stats['honest']).toMatchObject({ failures: 0 });
    // Allowed to change: the hosts' own trees and staging, ansible's home, the liar's log, and fetched/<host>/ of the good names.
    const allowed = ['trees/', 'remote/', 'ansible/', 'liar/log', 'fetched/liar/', 'fetched/honest/', 'fetched/planted/'];
    const stray = changed().filter((k) => k !== 'fetched/' && !allowed.some((a) => k.startsWith(a)));
    expect(stray).toEqual([]);
    expect(readdirSync(path.join(work, 'outside')).sort()).toEqual(['host-secret', 'planted-target']);
    expect(readdirSync(path.join(work, 'outside/planted-target'))).toEqual([]);
    expect(readdirSync(fetched()).sort()).toEqual(['honest', 'liar', 'planted']);
    expect(existsSync(path.join(work, 'escaped'))).toBe(false);
    expect(existsSync(path.join(work, 'templated'))).toBe(false);
    expect(existsSync(path.join(work, 'templated-run'))).toBe(false);
  });

  it("brings back exactly the liar's real documents, and the honest host's row untouched", () => {
    for (const h of ['liar', 'honest']) {
      const runs = readdirSync(path.join(reportsOf(h), 'runs')).filter((d) => d !== 'not-a-run-id');
      expect(runs, h).toHaveLength(1);
      const id = runs[0]!;
      const prefix = path.relative(work, hostDir(h)) + '/';
      const sub = variant.sub ? `${variant.sub}/` : '';
      const expected = [
        ...(variant.document ? ['reconcile.json'] : []),
        ...(sub ? [sub] : []),
        `${sub}runs/`,
        `${sub}runs/${id}/`,
        `${sub}runs/${id}/plan.json`,
        `${sub}runs/${id}/result.json`,
      ].sort();
      const landed = [...after.keys()].filter((k) => k.startsWith(prefix) && k !== prefix).map((k) => k.slice(prefix.length));
      expect(landed.sort(), h).toEqual(expected);
      for (const doc of ['plan.json', 'result.json'])
        expect(readFileSync(path.join(destOf(h), 'runs', id, doc)), `${h} ${doc}`).toEqual(readFileSync(path.join(reportsOf(h), 'runs', id, doc)));
      if (variant.document) {
        // Each host's reconcile.json is its own run's document: its journal is in its own tree.
        const doc = JSON.parse(readFileSync(path.join(hostDir(h), 'reconcile.json'), 'utf8'));
        expect(doc).toMatchObject({ mode: 'apply', verified: true, journal: `/root/ks/preflight/runs/${id}` });
        expect(doc).toEqual(JSON.parse(readFileSync(path.join(reportsOf(h), 'runs', id, 'result.json'), 'utf8')));
      }
    }
  });

  it('names every refused entry with the host, and reports nothing for the honest host', () => {
    const R = reportsOf('liar');
    const shown = (p: string) => (p.startsWith(R + '/') ? p.slice(R.length + 1) : p);
    const offered = (extra().filter((e) => typeof e === 'object' && e.path && e.path !== `${R}/before.json`) as { path: string }[]).map((e) => shown(e.path));
    const facts = run.task('Judge each name the host offers')['liar']!.ansible_facts!;
    const refused = facts['reconcile_fetch_refused'] as string[];
    for (const name of [...offered, 'facts.json', 'who-fixes.json', 'notes.txt', 'runs/not-a-run-id', 'runs/not-a-run-id/plan.json'])
      expect(
        refused.some((l) => l.startsWith(`${name} (`)),
        name,
      ).toBe(true);
    expect(refused.find((l) => l.startsWith('facts.json'))).toMatch(/a link/);
    expect(refused.find((l) => l.startsWith('who-fixes.json'))).toContain(`${HUGE} bytes`);
    const msg = run.task('Refused')['liar']!.msg as string;
    expect(msg).toMatch(/^liar: refused \d+ name\(s\) the host offered/);
    expect(msg).toContain('notes.txt (not a document the tool writes)');
    expect(run.task('Refused')['honest']?.skipped).toBe(true);
    // ports.json was said to be 2 bytes: fetched, found too big on the controller, removed, and named.
    const removed = run.task('Removed')['liar']!.msg as string;
    expect(removed).toMatch(/^liar: removed from /);
    expect(removed).toContain(path.join(destOf('liar'), 'ports.json'));
    expect(existsSync(path.join(destOf('liar'), 'ports.json'))).toBe(false);
    // The controller's own checks never ran through the host's interpreter: it saw only its own listing.
    const seen = readFileSync(path.join(work, 'liar/log'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('['));
    expect(seen.map((l) => JSON.parse(l))).toEqual([[R]]);
  });

  it('refuses an inventory name with "../" and a link planted on the controller, failing those hosts', () => {
    expect(run.stats[BAD_NAME]).toMatchObject({ failures: 1 });
    expect(run.task('Refuse an inventory name that is not one directory name')[BAD_NAME]!.msg).toMatch(/^\.\.\/escaped: refused: /);
    expect(run.stats['planted']).toMatchObject({ failures: 1 });
    const planted = run.task('Refuse a link on the way to a destination on the controller')['planted'];
    expect(JSON.stringify(planted)).toContain('planted: refused: ');
    expect(JSON.stringify(planted)).toContain(path.join(work, 'outside/planted-target'));
  });

  it('keeps every document 0600 in 0700 directories on the controller', () => {
    expect(after.get('fetched/')).toBe('dir 700');
    const modes = [...after.entries()]
      .filter(([k]) => k.startsWith('fetched/liar/') || k.startsWith('fetched/honest/'))
      .map(([k, v]): [string, string] => [k, v.split(' ').slice(0, 2).join(' ')]);
    expect(modes.length).toBeGreaterThan(5);
    for (const [k, m] of modes) expect(m, k).toBe(k.endsWith('/') ? 'dir 700' : 'file 600');
  });
});
