// One property of a unit, as the running manager reports it.
import type { TargetHost } from '../host.js';

/**
 * How a manager is asked: the program and the arguments before systemctl's
 * verb. The system manager is plain `systemctl`; a user's manager is
 * `systemctl --user -M USER@`, or systemctl run as that user on the manager's
 * private socket (src/ports/user-manager.ts).
 */
export interface Systemctl {
  cmd: string;
  args: readonly string[];
}

export const SYSTEM_SYSTEMCTL: Systemctl = { cmd: 'systemctl', args: [] };

/** The argument array for `verb...` through `via`. */
export function systemctlArgv(via: Systemctl, rest: readonly string[]): [string, string[]] {
  return [via.cmd, [...via.args, ...rest]];
}

/** `systemctl show -p PROP --value UNIT`; null when systemctl fails or is missing. */
export async function systemctlValue(host: TargetHost, prop: string, unit: string, via: Systemctl = SYSTEM_SYSTEMCTL): Promise<string | null> {
  try {
    const r = await host.run(...systemctlArgv(via, ['show', '-p', prop, '--value', unit]));
    return r.exitCode === 0 ? r.stdout.trim() : null;
  } catch {
    return null;
  }
}
