// The built bundle (dist/reconcile.mjs) run as a separate program on image
// trees made for one test: how the CLI suites that need a real process
// (exit code, a fresh module state, systemctl --root as the oracle) set up.
import { beforeAll, expect } from 'vitest';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const repo = path.resolve(new URL('../..', import.meta.url).pathname);
export const BUNDLE = path.join(repo, 'dist/reconcile.mjs');

/** What one run of the bundle did. */
export interface BundleRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Call at a test file's top level: builds the bundle once before the file's tests. */
export function buildBundleBeforeAll(): void {
  beforeAll(() => {
    expect(spawnSync(process.execPath, ['scripts/bundle.mjs'], { cwd: repo }).status).toBe(0);
  }, 60_000);
}

/** The bundle with `args`, colours off. */
export function runBundle(args: string[]): BundleRun {
  const r = spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `systemctl --root ROOT ARGS…`'s standard output, trimmed (`is-enabled` and the like). */
export function systemctlRootText(root: string, ...args: string[]): string {
  return spawnSync('systemctl', ['--root', root, ...args], { encoding: 'utf8' }).stdout.trim();
}

/** Writes a file under `root` (its folders made) with the mode given. */
export type PutFile = (rel: string, data: string, mode?: number) => void;

export function fileWriter(root: string): PutFile {
  return (rel, data, mode = 0o644) => {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), data);
    chmodSync(path.join(root, rel), mode);
  };
}

/** A desired state of one SysctlFile wanting net.ipv4.ip_forward = 1, first boot off: the boot-script suites' usual input. */
export const IP_FORWARD_DESIRED =
  'reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SysctlFile\n    file: /etc/sysctl.d/k8s.conf\n    settings:\n      net.ipv4.ip_forward: 1\n';

/** Writes the desired state `yaml` to `file`, then runs `--plan --json -f file --root root` in the caller's environment. */
export function planJsonRun(file: string, yaml: string, root: string): SpawnSyncReturns<string> {
  writeFileSync(file, yaml);
  return spawnSync(process.execPath, [BUNDLE, '--plan', '--json', '-f', file, '--root', root], { encoding: 'utf8' });
}
