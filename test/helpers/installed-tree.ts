// A root holding files, symlinks and executables (removed after each test), and a command runner that records
// every command line and answers only those it is given (127 otherwise), for the facts' installed-command suites.
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import type { CommandRunner } from '../../src/host.js';

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

export async function tree(files: Record<string, string>, links: Record<string, string> = {}, exec: string[] = []): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'facts-installed-'));
  temps.push(root);
  for (const [p, content] of Object.entries(files)) {
    await mkdir(path.join(root, path.dirname(p)), { recursive: true });
    await writeFile(path.join(root, p), content);
  }
  for (const [p, to] of Object.entries(links)) {
    await mkdir(path.join(root, path.dirname(p)), { recursive: true });
    await symlink(to, path.join(root, p));
  }
  for (const p of exec) await chmod(path.join(root, p), 0o755);
  return root;
}

/** A command line as run. */
export type Call = string;
/** A runner that records each command line and answers only those in `answers`. */
export function recording(calls: Call[], answers: Record<string, string> = {}): CommandRunner {
  return async (cmd, args) => {
    const line = [cmd, ...args].join(' ');
    calls.push(line);
    return line in answers ? { command: line, exitCode: 0, stdout: answers[line]!, stderr: '' } : { command: line, exitCode: 127, stdout: '', stderr: '' };
  };
}

/** An empty temporary directory, removed after the test. */
export async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
