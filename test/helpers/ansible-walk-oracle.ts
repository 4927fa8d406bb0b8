// ansible-playbook as the oracle for the task walk: a role tree is run with
// `-c local` against one host whose facts the test gives, every module
// replaced by a stub that changes nothing and echoes its arguments
// (ansible-walk/stub.py), and a callback (ansible-walk/record.py) that records
// each task result: where the task is written, ran or skipped, the arguments
// it got and whether it ran in check mode. Nothing on this machine is
// touched: a task file naming a module that is not stubbed is refused before
// ansible runs.
import { mkdtemp, readFile, rm, copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { isMap, isSeq, parseAllDocuments } from 'yaml';
import type { Node } from 'yaml';
import { buildTree } from './tree.js';
import type { Tree } from './tree.js';
import { ansiblePython } from './ansible-python.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Modules replaced by the stub (short names and the FQCNs of the collections shadowed below). */
export const STUBBED = [
  'command',
  'shell',
  'sysctl',
  'modprobe',
  'mount',
  'systemd',
  'systemd_service',
  'service',
  'lineinfile',
  'replace',
  'copy',
  'file',
  'stat',
  'blockinfile',
  'package',
  'apt',
  'wait_for',
  'get_url',
  'unarchive',
  'user',
  'group',
  'seboolean',
  'selinux',
];
const COLLECTION_STUBS: Record<string, string[]> = {
  'ansible/posix': ['sysctl', 'mount', 'seboolean', 'selinux'],
  'community/general': ['modprobe'],
};
/** Actions that run inside ansible-playbook and change nothing on the host. */
const SAFE = [
  'set_fact',
  'assert',
  'debug',
  'fail',
  'meta',
  'include_tasks',
  'import_tasks',
  'include',
  'include_role',
  'import_role',
  'group_by',
  'include_vars',
  'block',
];
const KEYWORDS = new Set([
  'action',
  'any_errors_fatal',
  'args',
  'async',
  'become',
  'become_exe',
  'become_flags',
  'become_method',
  'become_user',
  'changed_when',
  'check_mode',
  'collections',
  'connection',
  'debugger',
  'delay',
  'delegate_facts',
  'delegate_to',
  'diff',
  'environment',
  'failed_when',
  'ignore_errors',
  'ignore_unreachable',
  'loop',
  'loop_control',
  'module_defaults',
  'name',
  'no_log',
  'notify',
  'poll',
  'port',
  'register',
  'remote_user',
  'retries',
  'run_once',
  'tags',
  'throttle',
  'timeout',
  'until',
  'vars',
  'when',
  'rescue',
  'always',
  'apply',
]);

function allowed(key: string): boolean {
  if (KEYWORDS.has(key) || key.startsWith('with_')) return true;
  const short = key.replace(/^ansible\.(builtin|legacy)\./, '');
  if (key.startsWith('ansible.builtin.') || key.startsWith('ansible.legacy.')) return SAFE.includes(short);
  for (const [coll, mods] of Object.entries(COLLECTION_STUBS)) if (mods.some((m) => key === `${coll.replace('/', '.')}.${m}`)) return true;
  return SAFE.includes(key) || STUBBED.includes(key);
}

/** Throws when a task file names something that would run for real. */
function guard(file: string, text: string): void {
  const visit = (n: Node | null | undefined): void => {
    if (isSeq(n)) for (const i of n.items) visit(i as Node);
    else if (isMap(n)) {
      for (const p of n.items) {
        const k = String((p.key as { value?: unknown })?.value ?? p.key);
        if (!allowed(k)) throw new Error(`walk oracle: ${file} names ${k}, which is not stubbed; refusing to run it`);
        if (['block', 'rescue', 'always'].includes(k)) visit(p.value as Node);
      }
    }
  };
  for (const d of parseAllDocuments(text) as { contents: Node | null }[]) visit(d.contents);
}

let utilsDir: Promise<string | null> | undefined;
/** Where the ansible.utils collection of ansible's own Python is installed (null: not installed). */
function ansibleUtilsDir(): Promise<string | null> {
  utilsDir ??= execa(ansiblePython(), ['-c', 'import ansible_collections.ansible.utils as m; print(list(m.__path__)[0])'], { reject: false }).then((r) =>
    r.exitCode === 0 ? r.stdout.trim() : null,
  );
  return utilsDir;
}

export interface OracleRecord {
  path: string;
  /** Relative to the checkout: roles/x/tasks/main.yml */
  file: string;
  line: number;
  name: string;
  action: string;
  status: 'ok' | 'failed' | 'skipped';
  args: Record<string, unknown> | null;
  check_mode: boolean | null;
  msg: unknown;
}

export interface OracleRun {
  records: OracleRecord[];
  exitCode: number;
  stdout: string;
}

/**
 * Runs `roles` (in order, one play each, after kubespray_defaults when the tree
 * has it) on host `host` of the INI inventory at `inventory` (relative to the
 * tree root), with `facts` as the setup facts. The checkout is `ks/` in the tree.
 */
export async function runWalkOracle(tree: Tree, o: WalkOptions): Promise<OracleRun> {
  const mode = walkMode();
  if (mode === 'recorded') return replay(tree, o);
  const run = await runLive(tree, o);
  const version = await ansibleVersion();
  const key = recordKey(tree, o);
  const recorded = readRecords().answers[key];
  if (mode === 'record') await saveRecord(key, { ansible: version, ...run });
  // A recorded answer that ansible-playbook no longer gives would let the replay (the mutation group's
  // fast run) judge the audit by a stale oracle. Another ansible-core may answer otherwise: not compared.
  else if (recorded && recorded.ansible === version && JSON.stringify(recorded.records) !== JSON.stringify(run.records)) {
    throw new Error(`walk oracle: ${RECORDS} holds another answer for this tree than ansible-core ${version} gives; record again (WALK_ORACLE=record)`);
  }
  return run;
}

type WalkOptions = { roles: string[]; inventory: string; host: string; facts: Record<string, unknown>; prelude?: string };

// Record and replay: ansible-playbook takes seconds per tree, so the mutation group (stryker/groups.mjs) runs
// the walk cases against answers ansible-playbook gave, kept in RECORDS. WALK_ORACLE=record runs ansible and
// keeps its answers; WALK_ORACLE=recorded replays them and fails on a tree without one; live (the default)
// runs ansible and fails when a kept answer of the same ansible-core version differs from the live one.
const RECORDS = path.join(HERE, '../fixtures/ansible-walk/records.json');
const ROOT_MARK = '<oracle-root>';

interface Recorded extends OracleRun {
  ansible: string;
}
interface RecordFile {
  answers: Record<string, Recorded>;
}

function walkMode(): 'live' | 'record' | 'recorded' {
  const m = process.env.WALK_ORACLE ?? 'live';
  if (m === 'live' || m === 'record' || m === 'recorded') return m;
  throw new Error(`WALK_ORACLE=${m}: expected live, record or recorded`);
}

let records: RecordFile | undefined;
function readRecords(): RecordFile {
  try {
    records ??= JSON.parse(readFileSync(RECORDS, 'utf8')) as RecordFile;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    records = { answers: {} };
  }
  return records;
}

// Several test files may record at once (vitest workers): each save rereads the file and adds its answer.
async function saveRecord(key: string, answer: Recorded): Promise<void> {
  let onDisk: RecordFile = { answers: {} };
  try {
    onDisk = JSON.parse(await readFile(RECORDS, 'utf8')) as RecordFile;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  onDisk.answers[key] = answer;
  const sorted = Object.fromEntries(Object.entries(onDisk.answers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  await mkdir(path.dirname(RECORDS), { recursive: true });
  await writeFile(RECORDS, JSON.stringify({ answers: sorted }, null, 1) + '\n');
  records = { answers: sorted };
}

/** What decides ansible's answer: the tree, the run's options and the oracle's own stub, facts and callback code. */
function recordKey(tree: Tree, o: WalkOptions): string {
  const h = createHash('sha256');
  for (const p of Object.keys(tree).sort()) h.update(JSON.stringify([p, tree[p]]));
  h.update(JSON.stringify([o.roles, o.inventory, o.host, o.facts, o.prelude ?? null]));
  for (const f of ['stub.py', 'fake_facts.py', 'record.py']) h.update(readFileSync(path.join(HERE, 'ansible-walk', f)));
  return h.digest('hex');
}

function replay(tree: Tree, o: WalkOptions): OracleRun {
  const answer = readRecords().answers[recordKey(tree, o)];
  if (!answer) throw new Error(`walk oracle: no recorded answer for this tree in ${RECORDS}; run the test with WALK_ORACLE=record`);
  return { records: answer.records, exitCode: answer.exitCode, stdout: answer.stdout };
}

let version: Promise<string> | undefined;
function ansibleVersion(): Promise<string> {
  version ??= execa(ansiblePython(), ['-c', 'import ansible.release as r; print(r.__version__)']).then((r) => r.stdout.trim());
  return version;
}

async function runLive(tree: Tree, o: WalkOptions): Promise<OracleRun> {
  const root = await mkdtemp(path.join(tmpdir(), 'ks-walk-oracle-'));
  try {
    buildTree(root, tree);
    for (const [p, text] of Object.entries(tree)) if (typeof text === 'string' && /\/tasks\/.*\.ya?ml$/.test(p)) guard(p, text);
    const ks = path.join(root, 'ks');
    await mkdir(path.join(root, 'oracle/library'), { recursive: true });
    await mkdir(path.join(root, 'oracle/callbacks'), { recursive: true });
    for (const m of STUBBED) await copyFile(path.join(HERE, 'ansible-walk/stub.py'), path.join(root, 'oracle/library', `${m}.py`));
    await copyFile(path.join(HERE, 'ansible-walk/fake_facts.py'), path.join(root, 'oracle/library/fake_facts.py'));
    await copyFile(path.join(HERE, 'ansible-walk/record.py'), path.join(root, 'oracle/callbacks/record.py'));
    for (const [coll, mods] of Object.entries(COLLECTION_STUBS)) {
      const dir = path.join(root, 'oracle/collections/ansible_collections', coll, 'plugins/modules');
      await mkdir(dir, { recursive: true });
      buildTree(path.join(root, 'oracle/collections/ansible_collections', coll), {
        'MANIFEST.json': JSON.stringify({ collection_info: { namespace: coll.split('/')[0], name: coll.split('/')[1], version: '1.0.0' } }),
      });
      for (const m of mods) await copyFile(path.join(HERE, 'ansible-walk/stub.py'), path.join(dir, `${m}.py`));
    }
    // ansible.utils (ipaddr, ipwrap: filters only, nothing runs on the host) from the installation ansible runs with.
    const utils = await ansibleUtilsDir();
    if (utils) await symlink(utils, path.join(root, 'oracle/collections/ansible_collections/ansible/utils'));
    const shared = Object.keys(tree).some((p) => p.startsWith('ks/roles/kubespray_defaults/')) ? ['kubespray_defaults'] : [];
    // A tree with kubespray's playbooks/cluster.yml runs each role with the other roles of its play there.
    const cluster =
      typeof tree['ks/playbooks/cluster.yml'] === 'string'
        ? (parseAllDocuments(tree['ks/playbooks/cluster.yml'] as string)[0]!.toJSON() as { roles?: unknown[] }[])
        : [];
    const playOf = (role: string): unknown[] =>
      cluster.find((p) => p.roles?.some((r) => (typeof r === 'string' ? r : (r as { role?: string }).role) === role))?.roles ??
      [...shared, role].map((r) => ({ role: r }));
    // One play per role, as kubespray's playbooks run preinstall and node in separate plays (facts stay across plays).
    const play =
      (o.prelude ? `- import_playbook: ${o.prelude}\n` : '') +
      o.roles
        .map((role) =>
          [
            '- hosts: all',
            '  gather_facts: false',
            '  pre_tasks:',
            `    - fake_facts: { facts: ${JSON.stringify(o.facts)} }`,
            '  roles:',
            ...playOf(role).map((r) => `    - ${JSON.stringify(typeof r === 'string' ? { role: r } : r)}`),
            '',
          ].join('\n'),
        )
        .join('');
    buildTree(root, { 'ks/walk-oracle.yml': play });
    const out = path.join(root, 'records.jsonl');
    buildTree(root, { 'records.jsonl': '' });
    const r = await execa('ansible-playbook', ['-c', 'local', '-i', path.join(root, o.inventory), '--limit', o.host, path.join(ks, 'walk-oracle.yml')], {
      env: {
        ANSIBLE_NOCOLOR: '1',
        ANSIBLE_LOCALHOST_WARNING: 'false',
        ANSIBLE_HOME: path.join(root, '.ansible'),
        ANSIBLE_LIBRARY: path.join(root, 'oracle/library'),
        ANSIBLE_CALLBACK_PLUGINS: path.join(root, 'oracle/callbacks'),
        ANSIBLE_CALLBACKS_ENABLED: 'record',
        ANSIBLE_COLLECTIONS_PATH: path.join(root, 'oracle/collections'),
        ANSIBLE_COLLECTIONS_SCAN_SYS_PATH: 'false',
        ANSIBLE_RETRY_FILES_ENABLED: 'false',
        ANSIBLE_CONFIG: path.join(root, 'none.cfg'),
        ANSIBLE_PYTHON_INTERPRETER: 'auto_silent',
        WALK_ORACLE_OUT: out,
        ANSIBLE_REMOTE_TEMP: path.join(root, 'remote-tmp'),
        ANSIBLE_LOCAL_TEMP: path.join(root, 'local-tmp'),
      },
      reject: false,
    });
    const records: OracleRecord[] = [];
    for (const line of (await readFile(out, 'utf8')).split('\n')) {
      if (!line.trim()) continue;
      // The temporary root is written as ROOT_MARK, so an answer is the same from run to run.
      const rec = JSON.parse(line.split(root).join(ROOT_MARK)) as Omit<OracleRecord, 'file' | 'line'>;
      const m = /^(.*):(\d+)$/.exec(rec.path);
      const ksMark = `${ROOT_MARK}/ks/`;
      if (!m || !m[1]!.startsWith(ksMark)) continue;
      // copy's content travels as a temporary file whose names change per run (none of them is compared).
      const args = rec.args && '_original_basename' in rec.args ? { ...rec.args, src: '<transferred>', _original_basename: '<transferred>' } : rec.args;
      records.push({ ...rec, args, file: m[1]!.slice(ksMark.length), line: Number(m[2]) });
    }
    return { records, exitCode: r.exitCode ?? -1, stdout: (r.stdout + r.stderr).split(root).join(ROOT_MARK) };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
