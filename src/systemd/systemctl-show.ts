// One property of a unit, as the running manager reports it.
import type { TargetHost } from '../host.js';

/** `systemctl show -p PROP --value UNIT`; null when systemctl fails or is missing. */
export async function systemctlValue(host: TargetHost, prop: string, unit: string, scope: string[] = []): Promise<string | null> {
  try {
    const r = await host.run('systemctl', [...scope, 'show', '-p', prop, '--value', unit]);
    return r.exitCode === 0 ? r.stdout.trim() : null;
  } catch {
    return null;
  }
}
