// systemd's own loader as a test oracle: `systemd --test --system
// --unit=default.target` pointed at a fixture tree with $SYSTEMD_UNIT_PATH and
// no generators, run as an unprivileged user. It loads the units with the
// real loader, computes the boot transaction and dumps every loaded unit with
// its dependency lists. It starts nothing. Links in fixtures must be
// relative: systemd resolves absolute ones on this machine.
import { chmodSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { buildTree, type Tree } from './tree.js';

export const SYSTEMD = '/lib/systemd/systemd';
export const ETC = 'etc/systemd/system';
export const LIB = 'usr/lib/systemd/system';
export const NODEFAULT = '[Unit]\nDefaultDependencies=no\n';
/** The targets systemd's manager loads by itself, without dependencies of their own. */
export const SKELETON: Tree = Object.fromEntries(
  ['basic', 'sysinit', 'local-fs', 'local-fs-pre', 'umount', 'swap', 'shutdown', 'rescue', 'multi-user', 'graphical', 'timers', 'sockets'].map((t) => [
    `${LIB}/${t}.target`,
    NODEFAULT,
  ]),
);
export const DEFAULT_LINK: Tree = { [`${ETC}/default.target`]: { link: '../../../usr/lib/systemd/system/multi-user.target' } };

/**
 * A unit tree in a new temp dir, readable by the oracle's unprivileged user:
 * the skeleton targets, default.target -> multi-user.target, and `files`.
 * Its path is pushed on `roots`, for the caller to remove.
 */
export function unitTree(roots: string[], prefix: string, files: Tree): string {
  const root = mkdtempSync(path.join(os.tmpdir(), prefix));
  roots.push(root);
  buildTree(root, { ...SKELETON, ...DEFAULT_LINK, ...files });
  chmodSync(root, 0o755);
  return root;
}

/** A temp tree holding exactly `files` (no skeleton), readable by the oracle's user; pushed on `roots`, for the caller to remove. */
export function plainTree(roots: string[], prefix: string, files: Tree): string {
  const root = mkdtempSync(path.join(os.tmpdir(), prefix));
  roots.push(root);
  buildTree(root, files);
  chmodSync(root, 0o755);
  return root;
}

/** systemctl --root, confined to a temp tree: never this machine's units. */
export async function systemctlRoot(root: string, ...args: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  if (!root.startsWith(os.tmpdir() + path.sep)) throw new Error(`refusing systemctl outside a temp tree: ${root}`);
  const r = await execa('systemctl', [`--root=${root}`, ...args], { reject: false });
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode ?? -1 };
}

export interface OracleUnit {
  load: string;
  /** The unit's dump lines as systemd prints them, without the leading tabs ("ListenStream: [::]:8081"). */
  lines: string[];
  deps: Map<string, string[]>;
  /** The dump's Fragment Path, DropIn Path (in the order applied) and Alias lines, as absolute paths on this machine. */
  fragment: string | null;
  dropIns: string[];
  aliases: string[];
}

/** systemd's own loader: the boot transaction and every loaded unit's dependency lists. */
export async function oracle(root: string): Promise<{ jobs: Set<string>; units: Map<string, OracleUnit> }> {
  if (!root.startsWith(os.tmpdir() + path.sep)) throw new Error(`refusing the oracle outside a temp tree: ${root}`);
  const empty = path.join(root, 'no-generators');
  buildTree(root, { 'no-generators/.keep': '' });
  await execa('chmod', ['-R', 'a+rX', root]);
  const env = {
    SYSTEMD_UNIT_PATH: [`${root}/${ETC}`, `${root}/run/systemd/system`, `${root}/${LIB}`].join(':'),
    SYSTEMD_GENERATOR_PATH: empty,
    SYSTEMD_ENVIRONMENT_GENERATOR_PATH: empty,
    SYSTEMD_LOG_LEVEL: 'err',
    HOME: root,
  };
  const asNobody = process.getuid?.() === 0 ? (['setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', SYSTEMD]] as const) : ([SYSTEMD, []] as const);
  const r = await execa(asNobody[0], [...asNobody[1], '--test', '--system', '--unit=default.target', '--no-pager'], {
    env,
    extendEnv: false,
    reject: false,
    timeout: 60_000,
  });
  if (!r.stdout.includes('-> By jobs:')) throw new Error(`systemd --test gave no transaction (exit ${r.exitCode}): ${r.stderr}`);
  const jobs = new Set([...r.stdout.matchAll(/^\t\tAction: (\S+) -> start$/gm)].map((m) => m[1]!));
  const units = new Map<string, OracleUnit>();
  let cur: OracleUnit | null = null;
  for (const line of r.stdout.slice(r.stdout.indexOf('-> By units:'), r.stdout.indexOf('-> By jobs:')).split('\n')) {
    const u = /^\t-> Unit (\S+):$/.exec(line);
    if (u) {
      cur = { load: '', lines: [], deps: new Map(), fragment: null, dropIns: [], aliases: [] };
      units.set(u[1]!, cur);
      continue;
    }
    if (cur && line.startsWith('\t\t')) cur.lines.push(line.slice(2));
    const l = /^\t\tUnit Load State: (\S+)$/.exec(line);
    if (l && cur) cur.load = l[1]!;
    const f = /^\t\t(Fragment Path|DropIn Path|Alias): (.+)$/.exec(line);
    if (f && cur) {
      if (f[1] === 'Fragment Path') cur.fragment = f[2]!;
      else (f[1] === 'Alias' ? cur.aliases : cur.dropIns).push(f[2]!);
    }
    const d = /^\t\t(\w+): (\S+) \(/.exec(line);
    if (d && cur) (cur.deps.get(d[1]!) ?? cur.deps.set(d[1]!, []).get(d[1]!)!).push(d[2]!);
  }
  return { jobs, units };
}

/** Units the oracle says start at boot: the transaction, closed under WantedBy/RequiredBy/UpheldBy/BoundBy/TriggeredBy. */
export function oracleStarted(o: Awaited<ReturnType<typeof oracle>>): Set<string> {
  const started = new Set(o.jobs);
  for (let grew = true; grew;) {
    grew = false;
    for (const [name, u] of o.units) {
      if (started.has(name) || u.load !== 'loaded') continue; // a masked or missing unit gets no job
      const by = ['WantedBy', 'RequiredBy', 'UpheldBy', 'BoundBy', 'TriggeredBy'].flatMap((k) => u.deps.get(k) ?? []);
      if (by.some((b) => started.has(b))) {
        started.add(name);
        grew = true;
      }
    }
  }
  return started;
}
