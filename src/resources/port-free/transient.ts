// A port held by a transient unit (systemd-run): its unit file lives in
// /run/systemd/transient and is gone after the next boot, so disabling or
// masking it says nothing about that boot: whatever ran systemd-run (a boot
// script, a program) makes it again. Stopping it frees the port now. When a
// boot script's `systemd-run --unit=NAME` line makes that very unit, the
// plan names the line (an operator line: a person edits the script); when
// nothing read at boot makes it, the promise for that boot is withdrawn by an
// unknown, loudly. Pure, apart from transientMakers, which reads through Host.
import type { TargetFs } from '../../host.js';
import type { LivePortsObserved } from '../../ports/observed.js';
import type { Change } from '../types.js';
import type { PortFreeOp } from './ops.js';
import { scanBootScripts, type BootScriptHit } from '../../boot-scripts/scan.js';
import type { ProviderUnknown } from '../../promises.js';
import { portPromise } from './promises.js';

/** Where the manager keeps the unit files of systemd-run's units (systemd.unit(5): "Transient units"). */
export const TRANSIENT_DIR = '/run/systemd/transient/';

/** A boot-script line that runs systemd-run: the unit it makes (null: a random run-*.service name). */
export interface TransientMaker {
  unit: string | null;
  file: string;
  line: number;
  text: string;
  runBy: string;
}

/** The transient units holding a busy port, by port. */
function transientHolders(o: LivePortsObserved): Array<{ port: number; unit: string; fragment: string }> {
  const out: Array<{ port: number; unit: string; fragment: string }> = [];
  for (const b of o.busy) {
    const units = [...new Set(b.holders.map((h) => h.placement?.unit ?? null).filter((u): u is string => u !== null))];
    for (const u of units) {
      const fragment = o.units[u]?.fragment ?? null;
      if (fragment !== null && fragment.startsWith(TRANSIENT_DIR)) out.push({ port: b.port, unit: u, fragment });
    }
  }
  return out;
}

/**
 * The boot scripts' systemd-run lines, read only when a transient unit holds
 * a wanted port (rare): a host without one reads nothing more.
 */
export async function transientMakers(host: TargetFs, o: LivePortsObserved): Promise<TransientMaker[] | undefined> {
  if (transientHolders(o).length === 0) return undefined;
  const scripts = await scanBootScripts(host);
  return scripts.hits.flatMap((h: BootScriptHit) =>
    h.action.kind === 'transient-unit' && !h.action.scope ? [{ unit: h.action.unit, file: h.file, line: h.line, text: h.text, runBy: h.runBy }] : [],
  );
}

function at(m: TransientMaker): string {
  return m.line > 0 ? `${m.file}:${m.line}` : m.file;
}

/** Operator lines: each boot-script line that makes a transient unit holding a port again at boot. */
export function transientMakerChanges(o: LivePortsObserved & { transientMakers?: TransientMaker[] }): Change<PortFreeOp>[] {
  const out: Change<PortFreeOp>[] = [];
  for (const t of transientHolders(o)) {
    for (const m of (o.transientMakers ?? []).filter((x) => x.unit === t.unit)) {
      out.push({
        id: `boot-script:${at(m)}`,
        action: 'operator',
        summary: `${at(m)} makes ${t.unit} again at every boot (systemd-run; ${m.runBy}), and ${t.unit} holds port ${t.port}: \`${m.text}\``,
        operator: `${at(m)}: remove or comment out that line; stopping ${t.unit} frees port ${t.port} only until the next boot`,
        op: { kind: 'operator', port: t.port, unit: t.unit, pid: null },
        withdraws: [{ promise: portPromise(t.port), from: 'boot' }],
        // Apply stops the unit, which hides it from the next observation; the line still makes it at boot.
        outlivesApply: true,
      });
    }
  }
  return out;
}

export function transientUnknowns(o: LivePortsObserved & { transientMakers?: TransientMaker[] }): ProviderUnknown[] {
  const out: ProviderUnknown[] = [];
  for (const { port, unit: u, fragment } of transientHolders(o)) {
    const makers = o.transientMakers ?? [];
    if (makers.some((m) => m.unit === u)) continue; // named by an operator line (transientMakerChanges)
    const unnamed = makers.filter((m) => m.unit === null).map(at);
    const candidates = unnamed.length > 0 ? `; boot-script lines that run systemd-run without --unit (a random name) may be it: ${unnamed.join(', ')}` : '';
    out.push({
      message: `port ${port} is held by ${u}, a transient unit (FragmentPath=${fragment}, made at run time by systemd-run or over the manager's bus); stopping it frees the port now, but no boot script read here (rc.local, crontabs, ifupdown hooks, the command lines of units started at boot) makes ${u}: a program or a script this scan cannot read may run systemd-run --unit=${u.replace(/\.service$/, '')}${candidates}: find it and remove it`,
      withdraws: [{ promise: portPromise(port), from: 'boot' }],
      // Stopping the unit hides it from the next observation; what makes it at boot is still there.
      outlivesApply: true,
    });
  }
  return out;
}
