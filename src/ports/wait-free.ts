// After a stop: wait until each port is free and stays free past its unit's
// restart delay.
import type { TargetFs, TargetHost } from '../host.js';
import { readListeners } from '../observe/listeners.js';
import { parseTimespanMs } from '../systemd/systemctl-output.js';
import { SYSTEM_SYSTEMCTL, systemctlValue, type Systemctl } from '../systemd/systemctl-show.js';

const POLL_MS = 200;

/** The longest RestartUSec= of `units`, in ms (0 when none is known). */
export async function restartDelayMs(host: TargetHost, units: string[], via: Systemctl = SYSTEM_SYSTEMCTL): Promise<number> {
  let max = 0;
  for (const u of units) {
    const v = await systemctlValue(host, 'RestartUSec', u, via);
    const ms = v === null ? null : parseTimespanMs(v);
    if (ms !== null) max = Math.max(max, ms);
  }
  return max;
}

/**
 * Waits until every port is free and has stayed free for its hold time (the
 * unit's restart delay + 1 s), all within `timeoutMs`. Returns the ports that
 * did not get there, with why.
 */
export async function waitFree(host: TargetFs, holds: Map<number, number>, timeoutMs: number, progress: (m: string) => void): Promise<Map<number, string>> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  const freeSince = new Map<number, number>();
  const done = new Set<number>();
  const reappeared = new Set<number>();
  let lastReport = 0;
  for (;;) {
    const now = Date.now();
    const busy = new Set((await readListeners(host)).map((l) => l.port));
    for (const [port, hold] of holds) {
      if (done.has(port)) continue;
      if (busy.has(port)) {
        if (freeSince.has(port)) reappeared.add(port);
        freeSince.delete(port);
        continue;
      }
      if (!freeSince.has(port)) freeSince.set(port, now);
      // Hold past the restart delay, but never past the timeout.
      if (now - freeSince.get(port)! >= hold || now >= deadline) done.add(port);
    }
    if (done.size === holds.size) break;
    if (now >= deadline) break;
    if (now - lastReport >= 1000) {
      lastReport = now;
      const waiting = [...holds.keys()].filter((p) => !done.has(p));
      const states = waiting.map((p) =>
        freeSince.has(p) ? `${p} free for ${((now - freeSince.get(p)!) / 1000).toFixed(1)}s of ${(holds.get(p)! / 1000).toFixed(1)}s` : `${p} still listening`,
      );
      progress(`PortFree: waiting (${((now - started) / 1000).toFixed(0)}s of ${timeoutMs / 1000}s): ${states.join(', ')}`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const failed = new Map<number, string>();
  for (const port of holds.keys()) {
    if (done.has(port) && freeSince.has(port)) {
      const held = Date.now() - freeSince.get(port)!;
      if (held < holds.get(port)!)
        progress(
          `PortFree: port ${port} free for only ${(held / 1000).toFixed(1)}s of its ${(holds.get(port)! / 1000).toFixed(1)}s hold when the timeout ran out`,
        );
      continue;
    }
    failed.set(
      port,
      reappeared.has(port)
        ? `port ${port} was free and then listening again: something restarts it`
        : `port ${port} still listening after ${timeoutMs / 1000}s`,
    );
  }
  return failed;
}
