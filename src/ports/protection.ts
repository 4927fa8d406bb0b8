// Which units PortFree never stops or disables, and why.
import { SPAWNER_UNITS } from './identity.js';

/**
 * Units PortFree never stops, whatever holds a port: the manager itself and
 * what keeps the host reachable. An ssh session or a console login on a host
 * without logind leaves its processes in ssh.service or getty@.service, so
 * these are also spawners of processes that are not theirs.
 */
export const BUILTIN_PROTECTED: readonly { pattern: string; why: string }[] = [
  { pattern: 'init.scope', why: 'it is the service manager (PID 1)' },
  { pattern: '-.slice', why: 'it is the root of the unit tree' },
  { pattern: 'systemd-logind', why: 'it keeps every login session and seat' },
  { pattern: 'systemd-*', why: 'it is part of systemd' },
  { pattern: 'dbus*', why: 'every service talks through the message bus' },
  ...['ssh*', 'sshd*'].map((pattern) => ({ pattern, why: 'it carries every remote login (and, without logind, the processes started in them)' })),
  ...['getty@*', 'serial-getty@*', 'autovt@*', 'console-getty', 'container-getty@*'].map((pattern) => ({
    pattern,
    why: 'it carries console logins (and, without logind, the processes started in them)',
  })),
];

function globToRegExp(glob: string): RegExp {
  const esc = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${esc}$`);
}

/** Whether a unit-name pattern (* and ?) covers `unit`; "ssh" also covers "ssh.service". */
function unitPatternHit(pattern: string, unit: string): boolean {
  const re = globToRegExp(pattern);
  return re.test(unit) || re.test(unit.replace(/\.[a-z]+$/, ''));
}

/** What a general-purpose spawner unit is, or null for any other unit. */
export function spawnerKind(unit: string): string | null {
  return SPAWNER_UNITS.find((s) => unitPatternHit(s.pattern, unit))?.what ?? null;
}

/**
 * Why `unit` is protected, or null. Order: this program's own unit, the
 * built-in list, protected_units, then the general-purpose spawners (cron,
 * atd, supervisors, container runtimes, CI runners), which stop_spawner_units
 * releases by exact name.
 */
export function protectionOf(unit: string, spec: { protected_units?: string[]; stop_spawner_units?: string[] }, selfUnit: string | null): string | null {
  if (selfUnit !== null && unit === selfUnit) return `${unit} is the unit this program runs in`;
  const b = BUILTIN_PROTECTED.find((p) => unitPatternHit(p.pattern, unit));
  if (b) return `${unit} is protected by the built-in list (${b.pattern}): ${b.why}`;
  const s = (spec.protected_units ?? []).find((p) => unitPatternHit(p, unit));
  if (s) return `${unit} is listed in protected_units (${s})`;
  const what = spawnerKind(unit);
  if (what !== null && !(spec.stop_spawner_units ?? []).includes(unit)) {
    return `${unit} is protected by the built-in list of spawners: it is ${what} (name it in stop_spawner_units to allow stopping it)`;
  }
  return null;
}
