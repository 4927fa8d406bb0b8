// ansible and ansible-playbook on localhost, as oracles for small questions
// (what a module does with its words, what set_fact stores): each run gets its
// own ANSIBLE_HOME under a fresh temporary directory, removed afterwards.
import { execa } from 'execa';
import type { Result } from 'execa';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

async function inScratch<T>(prefix: string, run: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  try {
    return await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const env = (dir: string, extra: Record<string, string> = {}) => ({
  ANSIBLE_HOME: dir,
  ANSIBLE_LOCAL_TEMP: path.join(dir, 'tmp'),
  ANSIBLE_NOCOLOR: '1',
  ANSIBLE_LOCALHOST_WARNING: 'false',
  ANSIBLE_INVENTORY_UNPARSED_WARNING: 'false',
  ...extra,
});

/** `ansible localhost -m module -a args`; a failing module is a result, not a throw. */
export function runLocalModule(module: string, args: string): Promise<Result> {
  return inScratch('ansible-adhoc-', (dir) => execa('ansible', ['localhost', '-c', 'local', '-m', module, '-a', args], { reject: false, env: env(dir) }));
}

export interface TaskResult {
  hosts: Record<string, { msg?: unknown }>;
}

/** Runs one play on localhost and gives its tasks' results, as the json callback reports them. */
export function runLocalPlay(play: unknown[]): Promise<TaskResult[]> {
  return inScratch('ansible-play-', async (dir) => {
    await writeFile(path.join(dir, 'play.yml'), JSON.stringify(play));
    const r = await execa('ansible-playbook', ['-i', 'localhost,', '-c', 'local', path.join(dir, 'play.yml')], {
      env: env(dir, { ANSIBLE_STDOUT_CALLBACK: 'json' }),
    });
    return (JSON.parse(r.stdout) as { plays: { tasks: TaskResult[] }[] }).plays[0]!.tasks;
  });
}

export interface PlaybookRun {
  exitCode: number;
  stderr: string;
  stats: Record<string, { failures: number; changed: number; ok: number }>;
  /** Each task by name (the first of that name, a role's without its prefix), its result per host. */
  task: (name: string) => Record<string, TaskHostResult>;
}
export interface TaskHostResult {
  failed?: boolean;
  skipped?: boolean;
  msg?: unknown;
  ansible_facts?: Record<string, unknown>;
}

/**
 * ansible-playbook with its own inventory, in `dir` (ANSIBLE_HOME, temp and an empty
 * ansible.cfg under it, so no configuration of this machine applies); the json callback's
 * stats and tasks. The caller owns and removes `dir`.
 */
export async function runPlaybookIn(dir: string, args: string[], timeout: number): Promise<PlaybookRun> {
  await writeFile(path.join(dir, 'ansible.cfg'), '');
  const tmp = path.join(dir, 'tmp');
  const r = await execa('ansible-playbook', args, {
    cwd: dir,
    reject: false,
    timeout,
    env: env(dir, {
      ANSIBLE_CONFIG: path.join(dir, 'ansible.cfg'),
      ANSIBLE_REMOTE_TEMP: tmp,
      ANSIBLE_RETRY_FILES_ENABLED: '0',
      ANSIBLE_STDOUT_CALLBACK: 'json',
    }),
  });
  if (!r.stdout.trim().startsWith('{')) throw new Error(`ansible-playbook printed no JSON (exit ${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
  const doc = JSON.parse(r.stdout) as {
    stats: PlaybookRun['stats'];
    plays: { tasks: { task: { name: string }; hosts: Record<string, TaskHostResult> }[] }[];
  };
  const tasks = doc.plays.flatMap((p) => p.tasks);
  return {
    exitCode: r.exitCode ?? -1,
    stderr: r.stderr,
    stats: doc.stats,
    // A role's task is named "ROLE : NAME".
    task: (name) => tasks.find((t) => t.task.name === name || t.task.name.endsWith(` : ${name}`))?.hosts ?? {},
  };
}
