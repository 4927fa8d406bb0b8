// The boot rehearsal: the host's own systemd-sysctl and procps
// `sysctl --system` run over a copy of its sysctl configuration (with the
// planned changes applied) in a private mount + network namespace, and the
// resulting values are read from that namespace's /proc/sys/net. Only net.*
// keys: they belong to the network namespace, so the rehearsal can write
// them without touching the host. Every other line is left out of the copy
// (and the programs are limited to net keys as a second guard), so nothing
// global (kernel.*, vm.*, fs.*) is ever written.
//
// The copy keeps every file's line numbers, so a line the rehearsal blames
// (bisect.ts) is the same file:line on the host.
import path from 'node:path';
import type { TargetFs, TargetHost } from '../host.js';
import { parseSysctlLine } from './parse.js';
import { SYSCTL_CONF, SYSCTL_DIRS } from './order.js';
import type { SysctlModel, SysctlTree } from './order.js';
import { effectiveList } from '../systemd/unit-file.js';
import { parseExecLine } from '../systemd/exec-command.js';
import { SYSTEM_UNIT_PATH } from '../systemd/unit-dirs.js';
import { systemUnitGraph } from '../systemd/system-graph.js';
import { sysctlProcPath } from '../observe/sysctl-live.js';
import { REHEARSAL_SCRIPT } from './rehearsal-script.js';
import { rehearsalArchive } from './rehearsal-archive.js';

export interface RehearsalEnv {
  unshare: string;
  /** `env -i`: the programs see only the environment the rehearsal gives them. */
  env: string;
  sh: string;
  sysctl: string;
  /** From systemd-sysctl.service's ExecStart=. */
  systemdSysctl: string;
}

export type RehearsalAvailability = { ok: true; env: RehearsalEnv } | { ok: false; reason: string };

/** Keys of this network namespace only: the first element is literally "net". */
export function isNetKey(key: string): boolean {
  return key.split('.')[0] === 'net';
}

async function which(host: TargetFs, name: string): Promise<string | null> {
  for (const dir of (process.env.PATH || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    if (!dir.startsWith('/')) continue;
    const p = path.posix.join(dir, name);
    const st = await host.lstat(p).catch(() => null);
    if (st && (st.isFile() || st.isSymbolicLink())) return p;
  }
  return null;
}

/**
 * The program of an ExecStart= value (systemd.service(5)), read with the one
 * ExecStart= word splitter (systemd/exec-command.ts): prefixes ("@", "-", ":",
 * "+", "!", "!!") come off, quotes and escapes are systemd's. Null when the
 * value is empty or the program holds a specifier or variable.
 */
export function execStartProgram(value: string): string | null {
  return parseExecLine(value)?.path ?? null;
}

/** systemd-sysctl.service's program, from its fragment and drop-ins, or why it cannot be found. */
export async function systemdSysctlProgram(host: TargetFs): Promise<{ path: string } | { reason: string }> {
  const unit = 'systemd-sysctl.service';
  // The shared graph: the same search path, drop-in order and masks as every other unit reader.
  const loaded = (await systemUnitGraph(host, [unit])).units.get(unit);
  if (loaded?.masked) return { reason: `${unit} is masked (${loaded.entry}): systemd-sysctl does not run at boot` };
  const fragment = loaded?.fragment;
  if (!loaded || !fragment) return { reason: `no ${unit} on the unit search path (${SYSTEM_UNIT_PATH.join(', ')})` };
  const directives = loaded.directives;
  const exec = effectiveList(directives, 'Service', 'ExecStart').pop();
  if (!exec) return { reason: `${fragment} has no ExecStart=` };
  const program = execStartProgram(exec.value);
  if (!program || !program.startsWith('/')) return { reason: `${exec.file}:${exec.line}: ExecStart=${exec.value} does not name an absolute program` };
  if (!(await host.exists(program))) return { reason: `${program} (ExecStart= of ${exec.file}:${exec.line}) does not exist` };
  return { path: program };
}

/** Whether the rehearsal can run on this host, and with which programs; otherwise one line saying why not. */
export async function rehearsalAvailability(host: TargetHost): Promise<RehearsalAvailability> {
  if (!host.live || host.root !== '/') {
    return {
      ok: false,
      reason: `offline (--root ${host.root}): the rehearsal would run this machine's programs, not the image's; the engine's prediction stands`,
    };
  }
  if (!host.isRoot()) return { ok: false, reason: "not root: creating the private mount and network namespace needs root; the engine's prediction stands" };
  const unshare = await which(host, 'unshare');
  if (!unshare) return { ok: false, reason: "no unshare (util-linux) on PATH; the engine's prediction stands" };
  // The script inside the namespaces runs these by name (mount and tar from PATH): each must be there.
  for (const [name, pkg] of [
    ['mount', 'util-linux'],
    ['tar', 'tar'],
    ['sh', 'dash'],
    ['env', 'coreutils'],
  ] as const)
    if (!(await which(host, name))) return { ok: false, reason: `no ${name} (${pkg}) on PATH; the engine's prediction stands` };
  const sysctl = await which(host, 'sysctl');
  if (!sysctl) return { ok: false, reason: "no sysctl (procps) on PATH to rehearse `sysctl --system`; the engine's prediction stands" };
  const sd = await systemdSysctlProgram(host);
  if ('reason' in sd) return { ok: false, reason: `systemd-sysctl cannot be found: ${sd.reason}; the engine's prediction stands` };
  return { ok: true, env: { unshare, env: (await which(host, 'env'))!, sh: (await which(host, 'sh'))!, sysctl, systemdSysctl: sd.path } };
}

/** "file:line" of a line the rehearsal may leave out, by the file that holds its bytes. */
export function lineId(realPath: string, line: number): string {
  return `${realPath}:${line}`;
}

/**
 * The rehearsal's copy of one file: lines that are not net.* assignments
 * (or comments) become empty, so line numbers stay, and the lines in
 * `removed` (by lineId of `realPath`) are left out the same way.
 */
export function rehearsalText(content: string, realPath: string, removed: ReadonlySet<string>): string {
  const lines = content.split('\n');
  return lines
    .map((raw, i) => {
      if (i === lines.length - 1 && raw === '') return raw;
      if (removed.has(lineId(realPath, i + 1))) return '';
      const r = parseSysctlLine(raw, realPath, i + 1);
      if (r === null) return raw;
      if ('assignment' in r && isNetKey(r.assignment.key)) return raw;
      return '';
    })
    .join('\n');
}

interface Source {
  path: string;
  kind: 'dir' | 'file';
  create?: { ancestor: string };
}

type Entry = { name: string; content: string } | { name: string; link: string };

interface TrialInput {
  sources: Array<{ entries: Entry[] } | { content: string }>;
  start: Array<[string, string]>;
  seed: Array<[string, string]>;
}

export interface RehearsalLayout {
  sources: Source[];
  trials: TrialInput[];
}

export interface RehearsalTrial {
  tree: SysctlTree;
  /** lineIds to leave out (bisection). */
  removed?: ReadonlySet<string>;
  /** Overrides the run's start and seed values for this trial. */
  start?: Array<[string, string]>;
  seed?: Array<[string, string]>;
}

/** Directory paths the layout covers, each as the path the programs open (symlinks in it resolved). */
export async function coveredDirs(host: TargetFs): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const dir of SYSCTL_DIRS) out.set(dir, await host.realTarget(dir));
  return out;
}

function b64(s: string): string {
  return Buffer.from(s, 'latin1').toString('base64');
}

/**
 * Pure: the helper's input for a set of trees. Every sysctl.d directory that
 * exists (or that a tree needs) is replaced as a whole; symlinks stay links
 * when they point at a file the layout holds (a mask, 99-sysctl.conf ->
 * ../sysctl.conf), and become filtered copies otherwise.
 */
export function layout(
  trials: RehearsalTrial[],
  dirs: { real: Map<string, string>; existing: Set<string>; ancestors: Map<string, string>; sysctlConf: string | null },
  start: Array<[string, string]>,
  seed: Array<[string, string]>,
): RehearsalLayout | { reason: string } {
  const realDirs = [...new Set(SYSCTL_DIRS.map((d) => dirs.real.get(d) ?? d))];
  const needed = new Set<string>();
  for (const t of trials) for (const f of t.tree.files) needed.add(dirs.real.get(path.posix.dirname(f.path)) ?? path.posix.dirname(f.path));
  const sources: Source[] = [];
  for (const d of realDirs) {
    if (dirs.existing.has(d)) sources.push({ path: d, kind: 'dir' });
    else if (needed.has(d)) {
      const ancestor = dirs.ancestors.get(d);
      if (!ancestor || ancestor === '/' || ancestor === '/tmp' || ancestor.startsWith('/tmp/') || ancestor.startsWith('/proc')) {
        return { reason: `${d} does not exist on this host and cannot be laid out` };
      }
      sources.push({ path: d, kind: 'dir', create: { ancestor } });
    }
  }
  // /etc/sysctl.conf is covered whenever this host has one, so its own lines never leak into a tree that has none.
  const sysctlConf = trials.find((t) => t.tree.sysctlConf)?.tree.sysctlConf ?? null;
  const confPath = sysctlConf?.realPath ?? dirs.sysctlConf;
  if (sysctlConf && dirs.sysctlConf && sysctlConf.realPath !== dirs.sysctlConf)
    return { reason: `${sysctlConf.realPath} is not where this host's /etc/sysctl.conf lives (${dirs.sysctlConf})` };
  if (sysctlConf && !dirs.sysctlConf) return { reason: `${sysctlConf.realPath} does not exist on this host and cannot be laid out` };
  if (confPath) sources.push({ path: confPath, kind: 'file' });
  const laid = (p: string, t: RehearsalTrial) =>
    (sysctlConf && p === sysctlConf.realPath) ||
    t.tree.files.some(
      (f) =>
        !f.masked &&
        f.path === f.realPath &&
        (dirs.real.get(path.posix.dirname(f.path)) ?? path.posix.dirname(f.path)) + '/' + path.posix.basename(f.path) === p,
    );
  const trialInputs: TrialInput[] = trials.map((t) => {
    const removed = t.removed ?? new Set<string>();
    const perSource = sources.map((s) => {
      if (s.kind === 'file') {
        const conf = t.tree.sysctlConf;
        return { content: conf ? b64(rehearsalText(conf.content, conf.realPath, removed)) : '' };
      }
      const entries: Entry[] = [];
      for (const f of t.tree.files) {
        const dir = dirs.real.get(path.posix.dirname(f.path)) ?? path.posix.dirname(f.path);
        if (dir !== s.path) continue;
        const name = path.posix.basename(f.path);
        if (f.masked) entries.push({ name, link: '/dev/null' });
        else if (f.realPath !== f.path && laid(f.realPath, t)) entries.push({ name, link: f.realPath });
        else entries.push({ name, content: b64(rehearsalText(f.content, f.realPath, removed)) });
      }
      return { entries };
    });
    return { sources: perSource, start: t.start ?? start, seed: t.seed ?? seed };
  });
  return { sources, trials: trialInputs };
}

export type RehearsedValues = Record<SysctlModel, Record<string, string | null>>;

export interface RehearsalRun {
  results: Array<RehearsedValues & { warnings: Record<SysctlModel, string> }>;
  ms: number;
}

/** Runs the trials in one private mount + network namespace, each in a fresh network namespace of its own. */
export async function runRehearsal(
  host: TargetHost,
  env: RehearsalEnv,
  trials: RehearsalTrial[],
  keys: string[],
  values: { start: Array<[string, string]>; seed: Array<[string, string]> },
): Promise<RehearsalRun | { reason: string }> {
  const t0 = performance.now();
  const real = await coveredDirs(host);
  const existing = new Set<string>();
  const ancestors = new Map<string, string>();
  for (const d of new Set(real.values())) {
    if ((await host.lstat(d))?.isDirectory()) existing.add(d);
    else {
      let a = path.posix.dirname(d);
      while (a !== '/' && !(await host.lstat(a))?.isDirectory()) a = path.posix.dirname(a);
      ancestors.set(d, a);
    }
  }
  const conf = await host.realTarget(SYSCTL_CONF);
  const sysctlConf = (await host.lstat(conf))?.isFile() ? conf : null;
  const lay = layout(trials, { real, existing, ancestors, sysctlConf }, values.start, values.seed);
  if ('reason' in lay) return lay;
  const packed = rehearsalArchive(lay, keys);
  if ('reason' in packed) return packed;
  // The script runs mount, tar, grep and unshare by name: only absolute PATH entries, as which() reads them, so none is found relative to the working directory.
  const searchPath = (process.env.PATH || '/usr/sbin:/usr/bin:/sbin:/bin')
    .split(':')
    .filter((d) => d.startsWith('/'))
    .join(':');
  const environment = [`PATH=${searchPath}`, 'SYSTEMD_LOG_LEVEL=warning', 'SYSTEMD_LOG_TARGET=console', 'LC_ALL=C'];
  const args = [String(process.pid), String(lay.trials.length), String(packed.tmpfsBytes), env.systemdSysctl, env.sysctl];
  const script = [env.sh, '-c', REHEARSAL_SCRIPT, 'k8s-host-reconcile-rehearsal', REHEARSAL_SCRIPT, 'setup', ...args];
  const r = await host.run(env.unshare, ['-m', '-n', '--propagation', 'private', '--', env.env, '-i', ...environment, ...script], {
    input: packed.archive,
    timeoutMs: 30_000,
  });
  if (r.exitCode !== 0) return { reason: `the rehearsal failed (${env.unshare} exited ${r.exitCode}): ${r.stderr.trim().split('\n').pop() ?? ''}` };
  const results = rehearsalOutput(r.stdout, keys, lay.trials.length);
  if ('reason' in results) return results;
  return { results, ms: Math.round(performance.now() - t0) };
}

/**
 * Pure: the script's records (rehearsal-script.ts) as each trial's values
 * and warnings. A key's value is the first line grep gives for its path,
 * blanks trimmed and runs of blanks made one space (a tab between a range's
 * two numbers reads as "a b"); a key with no line could not be read (null).
 * A trial without its closing record did not finish.
 */
export function rehearsalOutput(stdout: string, keys: string[], trials: number): RehearsalRun['results'] | { reason: string } {
  const out = Array.from({ length: trials }, () => ({
    lines: { boot: [] as string[], system: [] as string[] },
    warnings: { boot: [] as string[], system: [] as string[] },
    done: false,
  }));
  let reading: string[] | null = null;
  for (const line of stdout.split('\n')) {
    if (line.startsWith('/')) {
      reading?.push(line);
      continue;
    }
    reading = null;
    const m = /^([rwe]) (\d+) (\S+)(?: (.*))?$/s.exec(line);
    const trial = m ? out[Number(m[2])] : undefined;
    if (!m || !trial) continue;
    const model = m[3] as SysctlModel;
    if (m[1] === 'e') trial.done = true;
    else if (model !== 'boot' && model !== 'system') continue;
    else if (m[1] === 'w') trial.warnings[model].push(m[4] ?? '');
    else reading = trial.lines[model];
  }
  const unfinished = out.findIndex((t) => !t.done);
  if (unfinished >= 0) return { reason: `the rehearsal stopped before trial ${unfinished + 1} of ${trials} finished` };
  const valuesOf = (lines: string[]) =>
    Object.fromEntries(
      keys.map((key) => {
        const at = `${sysctlProcPath(key)}:`;
        const line = lines.find((l) => l.startsWith(at));
        return [key, line === undefined ? null : line.slice(at.length).trim().replace(/\s+/g, ' ')];
      }),
    );
  return out.map((t) => ({
    boot: valuesOf(t.lines.boot),
    system: valuesOf(t.lines.system),
    warnings: { boot: t.warnings.boot.join('\n').trim(), system: t.warnings.system.join('\n').trim() },
  }));
}

/** A start value the wanted one is not: 0 for a wanted non-zero integer, 1 for 0; none for other values. */
export function startValue(wanted: string): string | null {
  if (!/^-?\d+$/.test(wanted.trim())) return null;
  return Number(wanted) === 0 ? '1' : '0';
}
