// The Ansible collection k8s_host_reconcile.k8s_host_reconcile, as a kubespray user runs it: built by
// scripts/collection.mjs with ansible-galaxy, installed by ansible-galaxy in
// a network namespace with no network (it must need none), and its
// `prepare` play imported before a stand-in for kubespray's cluster.yml,
// run by ansible-playbook against hosts that are offline trees (--root, via
// reconcile_root, under a temp dir): this machine is never changed. What
// each host's run must do follows from its content (test/helpers/fleet-documents.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { FLEET_DESIRED, FLEET, plantTree, type FleetHost } from './helpers/fleet-documents.js';
import { FSTAB } from './helpers/swap-modules-tree.js';
import { main } from '../src/cli.js';
import { captureIo } from './helpers/io.js';

const repo = path.resolve(new URL('..', import.meta.url).pathname);
const SLOW = 240_000;
// The plan-mode hosts of the small fleet (each content once), and one whose node is missing.
const HOSTS: FleetHost[] = FLEET.filter((h) => h.mode === 'plan');
const NO_NODE = 'node-without-node';
// A former node (a kubelet.conf left behind: the FormerNode unknown) whose check the inventory accepts
// (reconcile_accept), and the same tree without it.
const ACCEPTED = 'node-former-accepted';
const NOT_ACCEPTED = 'node-former-not-accepted';
const FORMER = { 'etc/kubernetes/kubelet.conf': { content: 'apiVersion: v1\n' } };

let work: string;
let tarball: string;
beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'ansible-collection-'));
  await execa('node', ['scripts/bundle.mjs'], { cwd: repo });
  const built = await execa('node', ['scripts/collection.mjs', '--output', path.join(work, 'dist')], { cwd: repo });
  tarball = built.stdout.trim();
  writeFileSync(path.join(work, 'desired.yaml'), FLEET_DESIRED);
  writeFileSync(path.join(work, 'ansible.cfg'), '');
  for (const h of HOSTS) plantTree(path.join(work, 'trees', h.name), h);
  plantTree(path.join(work, 'trees', NO_NODE), { name: NO_NODE, mode: 'plan', files: {}, expect: 'failed' });
  for (const name of [ACCEPTED, NOT_ACCEPTED]) plantTree(path.join(work, 'trees', name), { name, mode: 'plan', files: FORMER, expect: 'unknown' });
  writeFileSync(
    path.join(work, 'inventory.ini'),
    [
      '[k8s_cluster]',
      ...HOSTS.map((h) => `${h.name} reconcile_root=${path.join(work, 'trees', h.name)}`),
      `${NO_NODE} reconcile_root=${path.join(work, 'trees', NO_NODE)} reconcile_node=/nonexistent/node`,
      `${ACCEPTED} reconcile_root=${path.join(work, 'trees', ACCEPTED)} reconcile_accept='["FormerNode"]'`,
      `${NOT_ACCEPTED} reconcile_root=${path.join(work, 'trees', NOT_ACCEPTED)}`,
      '',
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
  // docs/fleets.md's site.yml: the collection's play, then kubespray (here a stand-in that shows what it sees).
  writeFileSync(
    path.join(work, 'site.yml'),
    [
      '- ansible.builtin.import_playbook: k8s_host_reconcile.k8s_host_reconcile.prepare',
      '- name: Stand-in for kubespray cluster.yml',
      '  hosts: k8s_cluster',
      '  gather_facts: false',
      '  tasks:',
      '    - name: Kubespray sees the document',
      '      ansible.builtin.debug:',
      '        msg: "{{ reconcile_result.document.mode }} {{ reconcile_result.document.pending_changes }}"',
      '',
    ].join('\n'),
  );
}, SLOW);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const env = () => ({
  ANSIBLE_CONFIG: path.join(work, 'ansible.cfg'),
  ANSIBLE_HOME: path.join(work, 'ansible-home'),
  ANSIBLE_COLLECTIONS_PATH: path.join(work, 'collections'),
  ANSIBLE_LOCAL_TEMP: path.join(work, 'tmp'),
  ANSIBLE_REMOTE_TEMP: path.join(work, 'tmp'),
  ANSIBLE_RETRY_FILES_ENABLED: '0',
  ANSIBLE_NOCOLOR: '1',
});

interface TaskHost {
  cmd?: string[];
  failed?: boolean;
  changed?: boolean;
  skipped?: boolean;
  msg?: unknown;
  ansible_facts?: Record<string, unknown>;
}
async function play(check: boolean, limit?: string) {
  const r = await execa(
    'ansible-playbook',
    ['-i', 'inventory.ini', 'site.yml', '--forks', '5', ...(check ? ['--check'] : []), ...(limit ? ['--limit', limit] : [])],
    {
      cwd: work,
      reject: false,
      timeout: SLOW,
      env: { ...env(), ANSIBLE_STDOUT_CALLBACK: 'json' },
    },
  );
  if (!r.stdout.trim().startsWith('{')) throw new Error(`ansible-playbook printed no JSON (exit ${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
  const doc = JSON.parse(r.stdout) as {
    stats: Record<string, { failures: number; changed: number }>;
    plays: { play: { name: string }; tasks: { task: { name: string }; hosts: Record<string, TaskHost> }[] }[];
  };
  const task = (playName: string, prefix: string) =>
    doc.plays.find((p) => p.play.name.startsWith(playName))?.tasks.find((t) => t.task.name.includes(prefix))?.hosts ?? {};
  return { exitCode: r.exitCode, stderr: r.stderr, stats: doc.stats, task };
}

const tree = (name: string) => path.join(work, 'trees', name);
const doc = (name: string) => JSON.parse(readFileSync(path.join(work, 'fetched', name, 'reconcile.json'), 'utf8'));

describe('the Ansible collection k8s_host_reconcile.k8s_host_reconcile', () => {
  it(
    'builds into a tarball that ansible-galaxy installs with no network',
    async () => {
      // The version is the tool's, package.json's (the source's galaxy.yml holds the placeholder 0.0.0).
      const version = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')).version as string;
      expect(path.basename(tarball)).toBe(`k8s_host_reconcile-k8s_host_reconcile-${version}.tar.gz`);
      // A fresh network namespace has only a down loopback: any download would fail.
      const r = await execa('unshare', ['--net', 'ansible-galaxy', 'collection', 'install', '-p', path.join(work, 'collections'), tarball], {
        env: env(),
        reject: false,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      const installed = path.join(work, 'collections/ansible_collections/k8s_host_reconcile/k8s_host_reconcile');
      const manifest = JSON.parse(readFileSync(path.join(installed, 'MANIFEST.json'), 'utf8')).collection_info;
      expect(manifest).toMatchObject({ namespace: 'k8s_host_reconcile', name: 'k8s_host_reconcile', version, license_file: 'LICENSE' });
      expect(manifest.repository).toMatch(/^https:\/\//);
      // The license, the changelog (antsibull-changelog's layout) and the role's argument specs are in the tarball.
      expect(readFileSync(path.join(installed, 'LICENSE'), 'utf8')).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
      for (const f of ['CHANGELOG.rst', 'changelogs/changelog.yaml', 'changelogs/config.yaml', 'roles/reconcile/meta/argument_specs.yml'])
        expect(existsSync(path.join(installed, f)), f).toBe(true);
      expect(readFileSync(path.join(installed, 'changelogs/changelog.yaml'), 'utf8')).toContain(`\n  ${version}:\n`);
      expect(existsSync(path.join(installed, '.ansible-lint'))).toBe(false);
      const role = path.join(installed, 'roles/reconcile');
      expect(readFileSync(path.join(role, 'files/reconcile.mjs'))).toEqual(readFileSync(path.join(repo, 'dist/reconcile.mjs')));
      // The shipped desired state is one the CLI accepts.
      const io = captureIo();
      const probe = mkdtempSync(path.join(work, 'probe-'));
      mkdirSync(path.join(probe, 'etc'));
      writeFileSync(path.join(probe, 'etc/fstab'), FSTAB);
      expect(await main(['--plan', '-f', path.join(role, 'files/desired-state.yaml'), '--root', probe], io.value), io.stderr()).not.toBe(1);

      // The fetch directory's default, as the installed role's defaults say it, templated in a play run from
      // another directory: beside the inventory, else in the working directory, never in the collection.
      const elsewhere = mkdtempSync(path.join(work, 'elsewhere-'));
      const probePlay = path.join(elsewhere, 'fetch-dir.yml');
      writeFileSync(
        probePlay,
        JSON.stringify([
          {
            name: 'probe',
            hosts: 'all',
            gather_facts: false,
            vars_files: [path.join(role, 'defaults/main.yml')],
            tasks: [{ 'ansible.builtin.debug': { var: 'reconcile_fetch_dir' } }],
          },
        ]),
      );
      const fetchDirWith = async (inventory: string[]) => {
        const run = await execa('ansible-playbook', [...inventory, probePlay], {
          cwd: elsewhere,
          reject: false,
          // PWD as the shell that starts ansible-playbook sets it (execa's cwd alone leaves the parent's).
          env: { ...env(), ANSIBLE_STDOUT_CALLBACK: 'json', PWD: elsewhere },
        });
        expect(run.exitCode, run.stderr).toBe(0);
        const tasks = JSON.parse(run.stdout).plays[0].tasks as { hosts: Record<string, { reconcile_fetch_dir: string }> }[];
        return Object.values(tasks[0]!.hosts)[0]!.reconcile_fetch_dir;
      };
      const local = ['-c', 'local', '-e', 'ansible_python_interpreter=/usr/bin/python3'];
      writeFileSync(path.join(work, 'one-host.ini'), 'probe-host\n');
      expect(await fetchDirWith(['-i', path.join(work, 'one-host.ini'), ...local])).toBe(path.join(work, 'reconcile-reports'));
      expect(await fetchDirWith(['-i', 'probe-host,', ...local])).toBe(path.join(elsewhere, 'reconcile-reports'));
    },
    SLOW,
  );

  it(
    '--check: plans, registers the document, fails the hosts a person must act on with their lines, and kubespray runs only on the rest',
    async () => {
      const before = HOSTS.map((h) => readdirSync(tree(h.name), { recursive: true }).length);
      const r = await play(true);
      expect(r.exitCode).toBe(2); // some host failed
      for (const h of HOSTS) {
        const failedHere = h.expect === 'operator' || h.expect === 'unknown';
        expect(r.stats[h.name]!.failures, h.name).toBe(failedHere ? 1 : 0);
        const fail = r.task('Make the hosts safe', 'Fail the host when a person must act')[h.name];
        if (failedHere) {
          expect(fail?.failed).toBe(true);
          expect(Array.isArray(fail!.msg)).toBe(true);
          const lines = fail!.msg as string[];
          expect(lines.length).toBeGreaterThan(0);
          for (const l of lines) expect(l).toContain(h.names);
          if (h.expect === 'operator') expect(lines[0]).toMatch(/^operator: SysctlFile: /);
        } else expect(fail?.failed ?? false).toBe(false);
        // The plan's document came back to the controller as the CLI printed it.
        expect(doc(h.name)).toMatchObject({ mode: 'plan' });
      }
      // reconcile_accept: the FormerNode unknown accepted by name is in the document, marked, and fails nothing;
      // the same tree without it fails on that line.
      const runs = r.task('Make the hosts safe', 'Run reconcile');
      expect(runs[ACCEPTED]!.cmd).toEqual(expect.arrayContaining(['--plan', '--accept=FormerNode']));
      expect(runs[NOT_ACCEPTED]!.cmd!.some((a) => a.startsWith('--accept'))).toBe(false);
      expect(r.stats[ACCEPTED]!.failures).toBe(0);
      expect(doc(ACCEPTED)).toMatchObject({ mode: 'plan', accepted_findings: 1 });
      expect(doc(ACCEPTED).findings.find((f: { check?: string }) => f.check === 'FormerNode')).toMatchObject({ accepted: true, accepted_by: ['--accept'] });
      expect(r.stats[NOT_ACCEPTED]!.failures).toBe(1);
      const notAccepted = r.task('Make the hosts safe', 'Fail the host when a person must act')[NOT_ACCEPTED]!.msg as string[];
      expect(notAccepted.some((l) => l.includes('/etc/kubernetes/kubelet.conf'))).toBe(true);

      const seen = r.task('Stand-in for kubespray', 'Kubespray sees the document');
      // Ansible runs no later play on a failed host: kubespray sees only the hosts the tool can fix (and the accepted one).
      expect(Object.keys(seen).sort()).toEqual([...HOSTS.filter((h) => h.expect === 'changes').map((h) => h.name), ACCEPTED].sort());
      expect(seen['node-swap-plan']!.msg).toMatch(/^plan [1-9]\d*$/);
      // The host without node fails with an error document that names what happened.
      expect(r.stats[NO_NODE]!.failures).toBe(1);
      expect(doc(NO_NODE).error).toMatch(/^no document from the run \(exit /);
      // --check changed nothing in the trees and staged nothing in the remote dir.
      expect(HOSTS.map((h) => readdirSync(tree(h.name), { recursive: true }).length)).toEqual(before);
      expect(readFileSync(path.join(tree('node-swap-plan'), 'etc/fstab'), 'utf8')).toBe(FSTAB);
      expect(existsSync(path.join(work, 'remote'))).toBe(false);

      // The fetched documents are what `reconcile report` reads.
      const io = captureIo();
      expect(await main(['report', '-o', path.join(work, 'report'), path.join(work, 'fetched')], io.value)).toBe(2);
      const rows = Object.fromEntries(
        io
          .stdout()
          .split('\n')
          .filter((l) => l.startsWith('node-'))
          .map((l) => l.split(/\s+/).slice(0, 2)),
      );
      // The accepted host's swap line is still the tool's to fix; the other still has its unknown.
      expect(rows).toEqual({
        ...Object.fromEntries(HOSTS.map((h) => [h.name, h.expect])),
        [NO_NODE]: 'failed',
        [ACCEPTED]: 'changes',
        [NOT_ACCEPTED]: 'unknown',
      });
    },
    SLOW,
  );

  it(
    'apply: converges the host the tool can fix (kubespray runs on it), the others still fail',
    async () => {
      // The former nodes are the --check test's (reconcile_accept); apply's verdict is the fleet's hosts'.
      const r = await play(false, `all:!${ACCEPTED}:!${NOT_ACCEPTED}`);
      expect(r.exitCode).toBe(2);
      const fixable = HOSTS.filter((h) => h.expect === 'changes').map((h) => h.name);
      for (const name of fixable) {
        expect(r.stats[name]).toMatchObject({ failures: 0 });
        expect(readFileSync(path.join(tree(name), 'etc/fstab'), 'utf8')).not.toMatch(/^\/swapfile/m);
        expect(doc(name)).toMatchObject({ mode: 'apply', verified: true });
        // The run's journal came back next to the document.
        expect(readdirSync(path.join(work, 'fetched', name, 'reports/runs'))).toHaveLength(1);
      }
      expect(Object.keys(r.task('Stand-in for kubespray', 'Kubespray sees the document')).sort()).toEqual(fixable);
      for (const h of HOSTS.filter((x) => x.expect === 'operator' || x.expect === 'unknown')) {
        expect(r.stats[h.name]!.failures, h.name).toBe(1);
        expect(doc(h.name)).toMatchObject({ mode: 'apply', verified: false });
      }
    },
    SLOW,
  );
});
