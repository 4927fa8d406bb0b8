// Image mode: decides whether the image needs a first-boot run and what it
// will do, from the plan of the desired-state resources. Pure but for
// reading the desired state's bytes and the running bundle.
import type { FirstBootSpec } from '../first-boot.js';
import type { DeriveInput, FirstBootPart, PlannedResource } from '../types.js';
import { runningBundle } from './bundle.js';

/** A provider's share: its own answer, else each deferred change is one line of work. */
function partOf(r: PlannedResource): FirstBootPart | null {
  return r.provider.atFirstBoot?.(r.spec, r.changes) ?? null;
}

/**
 * Work only a running system can do: a step deferred to boot, or what a
 * provider says of its own (PortFree: ports to free, for who listens on them
 * is known only once services run).
 */
export function firstBootWork(resources: PlannedResource[]): string[] {
  const work = resources.flatMap((r) => (partOf(r) ? [] : r.changes.filter((c) => c.action === 'deferred').map((c) => `${r.name}: ${c.summary.replace(/^at first boot:? /, '')}`)));
  for (const r of resources) work.push(...(partOf(r)?.work ?? []));
  return work;
}

/** The first-boot spec for this image, or null on a running host, when first boot is off, or when it has nothing to do. */
export function firstBootSpec({ desired, live, resources, desiredBytes }: DeriveInput): FirstBootSpec | null {
  if (live || desired.first_boot === 'off') return null;
  const work = firstBootWork(resources);
  if (work.length === 0) return null;
  const parts = resources.flatMap((r) => partOf(r) ?? []);
  return {
    type: 'FirstBoot',
    name: 'FirstBoot',
    mode: desired.first_boot,
    desired: { source: desired.source, bytes: desiredBytes() },
    bundle: runningBundle(),
    candidates: [...new Set(parts.flatMap((p) => p.candidates))].sort(),
    work,
    portTimeoutSec: Math.max(0, ...parts.map((p) => p.timeoutSec)),
  };
}
