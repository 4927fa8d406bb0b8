// Apply for the Docker containers stop_containers names: through the runtime's
// own client (argv, never a shell), one journaled runtime step each
// (container-stop keeps the restart policy before, so --rollback sets it back
// and starts the container: reconcile/runtime-undo.ts), then the port must
// stay free. dockerd itself is never touched.
import type { Host } from '../../host.js';
import type { ApplyContext } from '../types.js';
import type { ContainerStopOp } from './ops.js';
import { waitFree } from '../../ports/wait-free.js';

export async function applyContainerStops(
  host: Host,
  ops: ContainerStopOp[],
  timeoutMs: number,
  ctx: ApplyContext,
): Promise<{ errors: string[]; failedPorts: number[] }> {
  const errors: string[] = [];
  const failed = new Set<number>();
  const holds = new Map<number, number>();
  for (const op of ops) {
    const ref = op.name ?? op.id.slice(0, 12);
    try {
      await ctx.door.runtime({ step: 'container-stop', runtime: 'docker', id: op.id, restart: op.restart }, async () => {
        // The policy goes first: a container with restart=always that is stopped stays stopped until dockerd restarts, then comes back.
        await host.runChecked('docker', ['update', '--restart=no', op.id]);
        await host.runChecked('docker', ['stop', op.id]);
      });
      ctx.progress(`PortFree: port ${op.port}: docker container ${ref} set to --restart=no and stopped`);
      holds.set(op.port, 1000);
    } catch (e) {
      failed.add(op.port);
      errors.push(`port ${op.port} (docker container ${ref}): ${(e as Error).message}`);
    }
  }
  for (const [port, why] of holds.size > 0 ? await waitFree(host, holds, timeoutMs, ctx.progress) : new Map<number, string>()) {
    failed.add(port);
    errors.push(why);
  }
  return { errors, failedPorts: [...failed].sort((a, b) => a - b) };
}
