// First boot, before anything is observed: a candidate service (one whose
// ExecStart= or Environment= names a wanted port) may have been started in
// parallel and bind its port only seconds later (an agent with
// Restart=always under a slow start). Observing too early would see a free
// port and leave the agent to grab it after the run. So the run waits, for
// each candidate that is running, until it listens on a wanted port or is
// gone, bounded by PortFree's timeout_seconds, with progress to the journal.
// PortFree's first-boot trait (Provider.firstBootWait): the first-boot run
// (src/first-boot/wait.ts) asks each resource what to wait for.
import type { Host } from '../../host.js';
import type { PortFreeSpec } from './spec.js';
import type { FirstBootWait, FirstBootWaitContext } from '../types.js';
import { serviceCandidates } from '../../ports/socket-units.js';
import { unitFilesOf } from '../../systemd/socket-unit.js';
import { systemUnitGraph } from '../../systemd/system-graph.js';
import { protectionOf } from '../../ports/protection.js';
import type { LivePortsObserved } from '../../ports/observed.js';

export type WaitOutcome = 'listening' | 'gone' | 'not running' | 'timeout';

export interface CandidateWait extends FirstBootWait {
  unit: string;
  /** Wanted ports its unit file names. */
  ports: number[];
  outcome: WaitOutcome;
  /** The wanted port it was seen on, for 'listening'. */
  port?: number;
  seconds: number;
}

/** systemd ActiveState values of a unit that is (re)starting or running: wait for it. */
export function isRunningState(state: string): boolean {
  return ['active', 'activating', 'reloading'].includes(state);
}

/** Pure: one poll's verdict for a candidate, or null to keep waiting. */
export function verdictOf(unit: string, state: string, seen: LivePortsObserved): { outcome: WaitOutcome; port?: number } | null {
  const busy = seen.busy.find((b) => b.holders.some((h) => h.placement?.unit === unit) || b.activation?.service === unit);
  if (busy) return { outcome: 'listening', port: busy.port };
  if (!isRunningState(state)) return { outcome: 'gone' };
  return null;
}

async function activeState(host: Host, unit: string): Promise<string> {
  try {
    const r = await host.run('systemctl', ['show', '-p', 'ActiveState', '--value', unit]);
    return r.exitCode === 0 ? r.stdout.trim() : 'unknown';
  } catch {
    return 'unknown';
  }
}

const POLL_MS = 500;

/** One PortFree spec's candidates: each running one is waited for until it listens on a wanted port, is gone, or the timeout passes. */
export async function waitForPortCandidates(
  host: Host,
  spec: PortFreeSpec,
  ctx: FirstBootWaitContext,
  observe: (host: Host, spec: PortFreeSpec) => Promise<LivePortsObserved>,
): Promise<CandidateWait[]> {
  const { progress } = ctx;
  const sleep = ctx.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const out: CandidateWait[] = [];
  const units = unitFilesOf(await systemUnitGraph(host));
  const byUnit = new Map<string, number[]>();
  for (const c of serviceCandidates(units.values(), spec.ports)) {
    // A protected candidate is the operator saying it does not bind the port.
    if (protectionOf(c.unit, spec, null) !== null) continue;
    byUnit.set(c.unit, [...(byUnit.get(c.unit) ?? []), c.port]);
  }
  const waiting = new Map<string, { ports: number[]; since: number }>();
  for (const [unit, ports] of byUnit) {
    if (ctx.waited.some((w) => w.unit === unit) || out.some((w) => w.unit === unit)) continue;
    if (isRunningState(await activeState(host, unit))) waiting.set(unit, { ports, since: Date.now() });
    else out.push({ unit, ports, outcome: 'not running', seconds: 0 });
  }
  if (waiting.size === 0) return out;
  progress(
    `first boot: waiting up to ${spec.timeout_seconds} s for ${[...waiting.keys()].join(', ')} to listen on ${[...new Set([...waiting.values()].flatMap((w) => w.ports))].join(', ')} or stop`,
  );
  const t0 = Date.now();
  const deadline = t0 + spec.timeout_seconds * 1000;
  let lastReport = t0;
  for (;;) {
    const seen = await observe(host, spec);
    for (const [unit, w] of [...waiting]) {
      const v = verdictOf(unit, await activeState(host, unit), seen);
      if (v === null) continue;
      const seconds = Math.round((Date.now() - w.since) / 100) / 10;
      progress(`first boot: ${unit} ${v.outcome === 'listening' ? `listens on ${v.port}` : 'is gone'} after ${seconds} s`);
      out.push({ unit, ports: w.ports, ...v, seconds });
      waiting.delete(unit);
    }
    if (waiting.size === 0) break;
    const now = Date.now();
    if (now >= deadline) {
      for (const [unit, w] of waiting) {
        progress(
          `first boot: warning: ${unit} is still running after ${spec.timeout_seconds} s and does not listen on ${w.ports.join(', ')}; left alone (list it in protected_units if it never binds them)`,
        );
        out.push({ unit, ports: w.ports, outcome: 'timeout', seconds: spec.timeout_seconds });
      }
      break;
    }
    if (now - lastReport >= 2000) {
      lastReport = now;
      progress(`first boot: still waiting (${Math.round((now - t0) / 1000)} s of ${spec.timeout_seconds} s) for ${[...waiting.keys()].join(', ')}`);
    }
    await sleep(POLL_MS);
  }
  return out;
}
