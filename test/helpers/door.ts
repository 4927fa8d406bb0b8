// A write door for provider tests: a run directory inside the fixture root,
// as the engine opens one for each apply.
import { afterEach } from 'vitest';
import { WriteDoor } from '../../src/door/door.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import type { ApplyContext } from '../../src/resources/types.js';

let n = 0;
// The engine ends every door it opens (which closes its journal); a test
// often does not, so the doors a test opened are ended after it, rather than
// their journal handles being closed by the garbage collector (DEP0137).
const opened: WriteDoor[] = [];
afterEach(async () => {
  for (const d of opened.splice(0)) await d.end('ok').catch(() => undefined);
});

export async function openDoor(host: Host, runDir = `/var/lib/reconcile-test/runs/run${++n}`): Promise<WriteDoor> {
  const door = await WriteDoor.open(host, { runDir, runId: runDir.split('/').pop()!, mode: 'apply', tool: 'test' });
  opened.push(door);
  return door;
}

export async function applyContext(host: Host, runDir?: string, progress: (m: string) => void = () => {}): Promise<ApplyContext> {
  return { progress, door: await openDoor(host, runDir) };
}

/**
 * For live tests against this machine's own /proc with a fake command runner:
 * a door whose journal (and any file write) lands in a fresh temp root, never
 * on this machine's /etc.
 */
export async function scratchContext(progress: (m: string) => void = () => {}): Promise<ApplyContext & { root: string }> {
  const root = mkdtempSync(path.join(tmpdir(), 'door-scratch-'));
  return { progress, door: await openDoor(new Host({ root })), root };
}
