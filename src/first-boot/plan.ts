// Image mode: decides whether the image needs a first-boot run and what it
// will do, from the plan of the desired-state resources. Pure but for
// reading the desired state's bytes and the running bundle.
import type { DesiredState, PortFreeSpec } from '../desired-state.js';
import { bytesOf } from '../bytes.js';
import type { ResourcePlan } from '../reconcile/plan.js';
import type { FirstBootSpec } from './bake.js';
import type { Change } from '../resources/types.js';
import type { PortFreeOp } from '../resources/port-free/ops.js';
import { runningBundle } from './bundle.js';
import { readDesiredStateFile } from '../reconcile/load.js';

/**
 * Work only a running system can do: a step deferred to boot, or ports to
 * free (who listens on them is known only once services run).
 */
export function firstBootWork(desired: DesiredState, resources: ResourcePlan[]): string[] {
  // Candidates are named once, in the wait the unit starts with.
  const work = resources.flatMap((r) => r.changes.filter((c) => c.action === 'deferred' && (c.op as { kind?: string } | null)?.kind !== 'first-boot-wait').map((c) => `${r.name}: ${c.summary.replace(/^at first boot:? /, '')}`));
  const ports = desired.resources.filter((r): r is PortFreeSpec => r.type === 'PortFree');
  for (const p of ports) work.push(`${p.name ?? 'PortFree'}: free ${p.ports.join(', ')} from whatever holds them then`);
  return work;
}

/** The first-boot spec for this image, or null when first boot is off or has nothing to do. */
export function firstBootSpec(desired: DesiredState, resources: ResourcePlan[]): FirstBootSpec | null {
  if (desired.first_boot === 'off') return null;
  const work = firstBootWork(desired, resources);
  if (work.length === 0) return null;
  const candidates = [...new Set(resources.filter((r) => r.type === 'PortFree').flatMap((r) =>
    (r.changes as Change<PortFreeOp>[]).flatMap((c) => (c.op.kind === 'first-boot-wait' ? [c.op.unit] : []))))].sort();
  const ports = desired.resources.filter((r): r is PortFreeSpec => r.type === 'PortFree');
  return {
    type: 'FirstBoot',
    name: 'FirstBoot',
    mode: desired.first_boot,
    desired: { source: desired.source, bytes: bytesOf(readDesiredStateFile(desired.source)) },
    bundle: runningBundle(),
    candidates,
    work,
    portTimeoutSec: Math.max(0, ...ports.map((p) => p.timeout_seconds)),
  };
}
