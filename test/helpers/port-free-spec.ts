// A PortFree spec as the desired-state loader fills it in for tests that are
// not about its options: nothing protected or disabled beforehand, no mask,
// and the schema's default wait of 30 seconds.
import type { PortFreeSpec } from '../../src/resources/port-free/spec.js';

export function portFreeSpec(ports: number[], extra: Partial<PortFreeSpec> = {}): PortFreeSpec {
  return { type: 'PortFree', ports, protected_units: [], stop_spawner_units: [], mask: false, timeout_seconds: 30, disable_units: [], ...extra };
}
