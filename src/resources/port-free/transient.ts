// A port held by a transient unit (systemd-run): its unit file lives in
// /run/systemd/transient and is gone after the next boot, so disabling or
// masking it says nothing about that boot: whatever ran systemd-run (a boot
// script, a program) makes it again. Stopping it frees the port now; what
// makes it at boot is not traced here, so the promise for that boot is
// withdrawn, loudly. Pure.
import type { LivePortsObserved } from '../../ports/observed.js';
import { portPromise, type ProviderUnknown } from '../../promises.js';

/** Where the manager keeps the unit files of systemd-run's units (systemd.unit(5): "Transient units"). */
export const TRANSIENT_DIR = '/run/systemd/transient/';

export function transientUnknowns(o: LivePortsObserved): ProviderUnknown[] {
  const out: ProviderUnknown[] = [];
  for (const b of o.busy) {
    const units = [...new Set(b.holders.map((h) => h.placement?.unit ?? null).filter((u): u is string => u !== null))];
    for (const u of units) {
      const fragment = o.units[u]?.fragment ?? null;
      if (fragment === null || !fragment.startsWith(TRANSIENT_DIR)) continue;
      out.push({
        message: `port ${b.port} is held by ${u}, a transient unit (FragmentPath=${fragment}, made at run time by systemd-run or over the manager's bus); stopping it frees the port now, but what makes it again at the next boot is not traced (a boot script such as /etc/rc.local, a cron @reboot line or a unit's ExecStart= running systemd-run --unit=${u.replace(/\.service$/, '')}, or a program): find it and remove it`,
        withdraws: [{ promise: portPromise(b.port), from: 'boot' }],
        // Stopping the unit hides it from the next observation; what makes it at boot is still there.
        outlivesApply: true,
      });
    }
  }
  return out;
}
