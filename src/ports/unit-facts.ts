// The manager's view of the service a port holder sits in, and the effective
// ExecStart= read from exactly the unit files the manager loaded.
import type { TargetFs, TargetHost } from '../host.js';
import { parseShowProperties } from '../systemd/systemctl-output.js';
import { SYSTEM_SYSTEMCTL, systemctlArgv, type Systemctl } from '../systemd/systemctl-show.js';
import { readProcess } from './proc.js';
import { isShell, shebangShell, shellScriptOf } from '../lex/shell.js';
import { execCommandsOf, type ExecCommand } from '../systemd/exec-command.js';
import { dropInPathsOf, readManagerUnitFiles } from '../systemd/manager-files.js';
import type { UnitFacts } from './identity.js';
import { sysvScriptOf } from '../systemd/sysv.js';

/** The manager's view of a service (main process, type, PID file, unit files) and its effective ExecStart=. */
export async function unitFacts(host: TargetHost, unit: string, via: Systemctl = SYSTEM_SYSTEMCTL): Promise<UnitFacts> {
  const facts: UnitFacts = {
    unit,
    error: null,
    mainPid: null,
    type: null,
    pidFile: null,
    pidFilePid: null,
    pidFileError: null,
    execStart: [],
    execError: null,
    main: null,
  };
  const props = ['MainPID', 'Type', 'PIDFile', 'FragmentPath', 'DropInPaths'];
  let show: Map<string, string>;
  try {
    const r = await host.run(...systemctlArgv(via, ['show', ...props.flatMap((p) => ['-p', p]), unit]));
    if (r.exitCode !== 0) return { ...facts, error: `systemctl show ${unit} exited ${r.exitCode}: ${r.stderr.trim() || r.stdout.trim()}` };
    show = parseShowProperties(r.stdout);
  } catch (e) {
    return { ...facts, error: `systemctl show ${unit} failed: ${(e as Error).message}` };
  }
  const main = Number(show.get('MainPID'));
  if (!show.has('MainPID') || !Number.isInteger(main) || main < 0) {
    return { ...facts, error: `systemctl show ${unit} gave no MainPID (${JSON.stringify(show.get('MainPID') ?? null)})` };
  }
  facts.mainPid = main > 0 ? main : null;
  facts.type = show.get('Type') || null;
  facts.pidFile = show.get('PIDFile') || null;
  if (facts.type === 'forking' && facts.pidFile !== null) {
    try {
      const text = await host.readFile(facts.pidFile);
      const n = text === null ? NaN : Number(text.trim().split(/\s+/)[0]);
      if (text === null) facts.pidFileError = `PIDFile=${facts.pidFile} does not exist`;
      else if (Number.isInteger(n) && n > 0) facts.pidFilePid = n;
      else facts.pidFileError = `PIDFile=${facts.pidFile} holds no PID`;
    } catch (e) {
      facts.pidFileError = `PIDFile=${facts.pidFile} could not be read: ${(e as Error).message}`;
    }
  }
  // ExecStart= from exactly the files the manager loaded, read with the unit-file grammar.
  const fragment = show.get('FragmentPath') || null;
  facts.fragment = fragment;
  if (fragment === null) facts.execError = `systemctl shows no unit file (FragmentPath=) for ${unit}`;
  else {
    const read = await readManagerUnitFiles(host, unit, fragment, dropInPathsOf(show.get('DropInPaths')));
    facts.execError ??= read.error;
    if (read.fragmentText !== null) facts.sysv = sysvScriptOf(fragment, read.fragmentText);
    facts.execStart = [];
    for (const { directive: d, command } of execCommandsOf(read.directives, 'ExecStart')) {
      facts.execStart.push({ file: d.file, line: d.line, value: d.value, command, script: command ? await execScript(host, command) : null });
    }
  }
  const mainPid = mainPidOf(facts);
  if (mainPid !== null) facts.main = await readProcess(host, mainPid);
  return facts;
}

/** Largest wrapper script read; anything bigger is not a wrapper. */
const MAX_SCRIPT_BYTES = 256 * 1024;

/** The shell script an ExecStart= command runs: `sh FILE ...`, or FILE itself with a shell "#!" line. */
async function execScript(host: TargetFs, c: ExecCommand): Promise<{ path: string; text: string } | null> {
  const first = c.argv[0];
  const arg = c.argv[1];
  let file: string | null = null;
  if (first && isShell(first) && shellScriptOf(c.argv) === null && arg && !arg.startsWith('-') && arg.startsWith('/')) file = arg;
  else if (c.path && c.path.startsWith('/') && !isShell(c.path)) file = c.path;
  if (file === null) return null;
  try {
    const st = await host.lstat(await host.realTarget(file));
    if (st === null || !st.isFile() || st.size > MAX_SCRIPT_BYTES) return null;
    const text = await host.readFile(file);
    if (text === null) return null;
    // Run as `sh FILE` any text is a script; run directly, only with a shell "#!".
    if (file === c.path && shebangShell(text.split('\n', 1)[0]!) === null) return null;
    return { path: file, text };
  } catch {
    return null;
  }
}

/** The main process as far as the facts tell: MainPID, else a forking unit's PIDFile=. */
export function mainPidOf(f: UnitFacts): number | null {
  return f.mainPid ?? (f.type === 'forking' ? f.pidFilePid : null);
}
