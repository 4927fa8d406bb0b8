// Image mode: decides whether the image needs a first-boot run and what it
// will do, from the plan of the desired-state resources. Pure but for
// reading the desired state's bytes and the running bundle.
import type { FirstBootMode } from '../../desired-state.js';
import type { ByteString } from '../../bytes.js';
import type { BaseSpec, DeriveInput, FirstBootPart, PlannedResource } from '../types.js';
import { runningBundle, type RunningBundle } from './bundle.js';

export interface FirstBootSpec extends BaseSpec {
  type: 'FirstBoot';
  mode: Exclude<FirstBootMode, 'off'>;
  /** The bake's desired state, byte for byte, and where it was read from. */
  desired: { source: string; bytes: ByteString };
  /** The running bundle; null when run from the sources. */
  bundle: RunningBundle | null;
  /** Candidate services the bake found: the unit starts after them and the run waits for them. */
  candidates: string[];
  /** What the first boot will do, one line each (the deferred changes of the other resources). */
  work: string[];
  /** The longest wait for one candidate or port (PortFree's timeout_seconds), 0 with none to wait for. */
  portTimeoutSec: number;
}

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
  const work = resources.flatMap((r) =>
    partOf(r) ? [] : r.changes.filter((c) => c.action === 'deferred').map((c) => `${r.name}: ${c.summary.replace(/^at first boot:? /, '')}`),
  );
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
