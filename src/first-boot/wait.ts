// Before the first boot's run applies, each resource may wait for what
// could take back what it frees a few seconds late (Provider.firstBootWait:
// PortFree waits for services that name a wanted port). The engine loops
// over the registry and names no resource.
import type { Host } from '../host.js';
import type { DesiredState } from '../desired-state.js';
import type { FirstBootWait } from '../resources/types.js';
import { PROVIDERS, type ProviderRegistry } from '../resources/index.js';

export async function waitForCandidates(
  host: Host,
  desired: DesiredState,
  progress: (m: string) => void,
  sleep?: (ms: number) => Promise<unknown>,
  registry: ProviderRegistry = PROVIDERS,
): Promise<FirstBootWait[]> {
  const waited: FirstBootWait[] = [];
  for (const spec of desired.resources) {
    const wait = registry[spec.type]?.firstBootWait;
    if (wait) waited.push(...(await wait(host, spec, { progress, waited, sleep })));
  }
  return waited;
}
