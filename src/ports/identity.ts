// Whose listener is it? A process's cgroup names where it lives, not who it
// is: cron, atd, supervisors, CI runners, sshd without logind all leave the
// processes they start in their own cgroup. A unit counts as the holder's own
// only when
//   1. the holder is the unit's main process (MainPID; PIDFile= for Type=forking), or
//   2. the holder descends from the main process through the unit's own
//      ExecStart= command line (the `sh -c` wrapper without exec), or shares
//      the listening socket the main process holds (nginx-style workers), or
//   3. the socket was handed over by the unit's .socket (handled by the caller).
// Otherwise the unit only spawned it. Pure.
import type { ProcInfo } from './proc.js';
import { showArgv } from './proc.js';
import { argvMatches } from './argv.js';
import { shellScriptOf, shellSimpleCommands, type Word } from '../lex/shell.js';
import type { ExecCommand } from '../systemd/exec-command.js';
import type { CronEntry } from './crontab.js';

/** What the manager and the unit files say about one service. */
export interface UnitFacts {
  unit: string;
  /** Why `systemctl show` could not answer; null when it did. */
  error: string | null;
  /** MainPID when > 0. */
  mainPid: number | null;
  type: string | null;
  pidFile: string | null;
  /** The PID written in PIDFile=, when it was read. */
  pidFilePid: number | null;
  /** Why PIDFile= could not be used, when it is set but unreadable. */
  pidFileError: string | null;
  /**
   * The effective ExecStart= lines (fragment and drop-ins the manager names);
   * `script` is the text of the shell script a line runs (`sh FILE`, or FILE
   * with a shell "#!" line), when it was read.
   */
  execStart: { file: string; line: number; value: string; command: ExecCommand | null; script?: { path: string; text: string } | null }[];
  /** Why ExecStart= could not be read; null when it was. */
  execError: string | null;
  /** The main process (argv, exe), when it could be read. */
  main: ProcInfo | null;
  /** FragmentPath=, when the manager named one (a transient unit's is under /run/systemd/transient). */
  fragment?: string | null;
  /** The /etc/init.d script systemd-sysv-generator made this unit from (its fragment says so); absent or null for any other unit. */
  sysv?: string | null;
}

/** The holder and its ancestors, nearest first, as read from /proc. */
export interface Ancestry {
  chain: ProcInfo[];
  complete: boolean;
}

export type Attribution =
  | { own: true; unit: string; proof: string }
  | {
      own: false;
      unit: string;
      /** Why the unit is not the holder's own. */
      reason: string;
      /** True when the facts to decide were missing (systemctl failed, /proc unreadable). */
      unknown: boolean;
      /** The holder and its ancestors up to the unit's main process (included), nearest first; empty when unknown. */
      path: ProcInfo[];
    };

function describe(p: ProcInfo): string {
  return `pid ${p.pid} (${showArgv(p.argv)})`;
}

/** "200 -> 238 -> 240": the chain from the ancestor down to the holder. */
export function pidPath(path: ProcInfo[]): string {
  return [...path]
    .reverse()
    .map((p) => p.pid)
    .join(' -> ');
}

function sameArgv(a: string[] | null, b: string[] | null): boolean {
  return a !== null && b !== null && a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The commands a process started by `argv` may run: itself, or the simple commands of its `sh -c` script. */
function commandsOf(argv: Word[]): Word[][] {
  const script = shellScriptOf(argv);
  return script === null ? [argv] : [argv, ...shellSimpleCommands(script)];
}

/** How the unit's main process is known, or null when it has none. */
function mainOf(f: UnitFacts): { pid: number; how: string } | null {
  const forking = f.type === 'forking' && f.pidFile !== null;
  if (f.mainPid !== null) {
    const same = forking && f.pidFilePid === f.mainPid ? ` (Type=forking; PIDFile=${f.pidFile} names it too)` : '';
    return { pid: f.mainPid, how: `MainPID of ${f.unit}${same}` };
  }
  // The manager lost track of it (MainPID=0), but the daemon's own PID file says.
  if (forking && f.pidFilePid !== null) return { pid: f.pidFilePid, how: `named by ${f.unit}'s PIDFile=${f.pidFile} (Type=forking)` };
  return null;
}

/**
 * Decides whether `unit` (the holder's cgroup unit) is the holder's own.
 * `mainHoldsSocket`: whether the unit's main process holds the same
 * listening socket (null: unknown).
 */
export function attribute(holder: Ancestry, facts: UnitFacts, mainHoldsSocket: boolean | null): Attribution {
  const unit = facts.unit;
  const self = holder.chain[0];
  const pid = self?.pid ?? -1;
  const not = (reason: string, unknown: boolean, path: ProcInfo[] = []): Attribution => ({ own: false, unit, reason, unknown, path });
  if (facts.error !== null) return not(`cannot tell whether pid ${pid} is ${unit}'s own process: ${facts.error}`, true);
  if (self === undefined) return not(`pid ${pid} could not be read from /proc, so its origin is unknown`, true);

  const main = mainOf(facts);
  if (main !== null && main.pid === pid) return { own: true, unit, proof: `pid ${pid} is ${main.how}` };
  // A generated SysV unit has no main process by design (GuessMainPID=no) and runs nothing but its script.
  if (main === null && facts.sysv) {
    return {
      own: true,
      unit,
      proof: `pid ${pid} runs in ${unit}, which systemd-sysv-generator made for the init script ${facts.sysv} (SourcePath=; Type=forking without a main PID), and that unit runs nothing but the script`,
    };
  }
  if (main === null) {
    const pf = facts.pidFileError ? `; ${facts.pidFileError}` : '';
    return not(
      `${unit} has no main process (MainPID=0${facts.type ? `, Type=${facts.type}` : ''}${pf}), so it is a process left in its cgroup, not one it runs`,
      false,
    );
  }

  const k = holder.chain.findIndex((p) => p.pid === main.pid);
  if (k < 0) {
    const parents =
      holder.chain
        .slice(1)
        .map((p) => p.pid)
        .join(' -> ') || 'none';
    const cut = holder.complete ? '' : ' (its parent chain could not be read to the end)';
    return not(
      `it is not ${main.how} (pid ${main.pid}) and does not descend from it (its parents: ${parents}${cut}); it was left behind in the cgroup (KillMode=process, a restart) or moved into it`,
      !holder.complete,
    );
  }
  const path = holder.chain.slice(0, k + 1);
  if (mainHoldsSocket === true) {
    return { own: true, unit, proof: `pid ${pid} shares the listening socket of its ancestor pid ${main.pid}, which is ${main.how} (${pidPath(path)})` };
  }

  if (facts.execError !== null) return not(`cannot tell whether ${describe(self)} was started by ${unit}'s ExecStart=: ${facts.execError}`, true, path);
  const exec = facts.execStart.flatMap((e) => [...(e.command ? commandsOf(e.command.argv) : []), ...(e.script ? shellSimpleCommands(e.script.text) : [])]);
  // From the main process down: each step is a command of ExecStart= (or of a
  // `sh -c` script such a command runs), or a plain fork of its parent.
  const allowed = new Map<number, Word[][]>([[main.pid, exec]]);
  for (let i = k - 1; i >= 0; i--) {
    const p = path[i]!;
    const parent = path[i + 1]!;
    const fork = p.exe !== null && p.exe === parent.exe && sameArgv(p.argv, parent.argv);
    const cmds = allowed.get(parent.pid) ?? [];
    if (fork) {
      allowed.set(p.pid, cmds);
      continue;
    }
    // A "#!" script shows its interpreter in front of the command line ExecStart= wrote.
    if (!cmds.some((c) => argvMatches(p.argv, c) || (p.script != null && argvMatches(p.script, c)))) {
      const where = facts.execStart.map((e) => `${e.file}:${e.line}${e.script ? ` and ${e.script.path}` : ''}`).join(', ') || 'none';
      const via = p === self ? 'but is itself' : `through ${describe(p)}, which is`;
      return not(
        `it descends from ${describe(path[k]!)}, which is ${main.how}, ${via} not a command of ${unit}'s ExecStart= (${where}) nor a plain fork of its parent`,
        false,
        path,
      );
    }
    const script = shellScriptOf(p.argv);
    allowed.set(p.pid, script === null ? [] : shellSimpleCommands(script));
  }
  return { own: true, unit, proof: `pid ${pid} was started by ${unit}'s ExecStart (${pidPath(path)})` };
}

// ---------------------------------------------------------------- spawners

/**
 * General-purpose spawners: what they are, i.e. why stopping one for a port
 * is wrong. Never stopped for a port unless the desired state names the unit
 * in stop_spawner_units. Patterns use * and ?; "cron" also covers cron.service.
 */
export const SPAWNER_UNITS: readonly { pattern: string; what: string }[] = [
  ...['cron', 'crond', 'cronie', 'fcron'].map((pattern) => ({
    pattern,
    what: 'the cron daemon: it runs every cron job on this host (logrotate and the rest)',
  })),
  { pattern: 'anacron', what: 'anacron: it runs the daily, weekly and monthly jobs of this host' },
  { pattern: 'atd', what: 'the at daemon: it runs every queued at and batch job' },
  ...['supervisor', 'supervisord', 'circus', 'circusd', 'pm2-*', 's6', 'runit', 'monit'].map((pattern) => ({
    pattern,
    what: 'a process supervisor: it runs every program in its configuration',
  })),
  ...['docker', 'containerd', 'podman', 'crio', 'cri-o', 'lxc', 'lxd', 'snap.lxd.daemon', 'incus', 'kubelet'].map((pattern) => ({
    pattern,
    what: 'a container runtime: it runs every container on this host',
  })),
  ...['gitlab-runner', 'actions.runner.*', 'buildkite-agent', 'woodpecker-agent', 'drone-runner-*', 'jenkins-agent', 'forgejo-runner', 'act_runner'].map(
    (pattern) => ({
      pattern,
      what: 'a CI runner: it runs every job sent to this host',
    }),
  ),
];

/** Why a unit that only spawned a holder must not be stopped for it. */
export function spawnerHarm(unit: string, what: string | null): string {
  if (what !== null) return `${unit} is ${what}; stopping and disabling it would end all of that, at every boot, and leave what starts the listener in place`;
  return `stopping and disabling ${unit} would take down what ${unit} really runs, at every boot, and leave what starts the listener in place`;
}

// ---------------------------------------------------------------- origins

/**
 * The crontab lines that started the holder: a process on its path below the
 * spawner's main process is `SHELL -c COMMAND` with the line's command (what
 * cron runs), or, when the shell exec'd it, the process is that command
 * itself. A line for another user than the process's never matches.
 */
export function cronOrigins(path: ProcInfo[], entries: CronEntry[], uids: ReadonlyMap<string, number>): CronEntry[] {
  const below = path.slice(0, -1);
  const viaShell = below.filter((p) => shellScriptOf(p.argv) !== null);
  return entries.filter((e) => {
    const uid = uids.get(e.user);
    const userOk = (p: ProcInfo) => uid === undefined || p.uid === null || p.uid === uid;
    if (viaShell.some((p) => shellScriptOf(p.argv) === e.shellCommand && userOk(p))) return true;
    if (viaShell.length > 0) return false;
    const cmds = shellSimpleCommands(e.shellCommand);
    return cmds.length === 1 && below.some((p) => argvMatches(p.argv, cmds[0]!) && userOk(p));
  });
}

/** A login session on the path: sshd's per-connection process titles itself "sshd: USER@TTY". */
export function loginSessionOf(path: ProcInfo[]): ProcInfo | null {
  return path.find((p) => p.argv !== null && /^sshd: \S/.test(p.argv.join(' '))) ?? path.find((p) => p.argv !== null && /^-/.test(p.argv[0]!)) ?? null;
}
