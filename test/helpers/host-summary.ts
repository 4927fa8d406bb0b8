// A fleet report's host summary written by hand, for the renderers' tests:
// every list empty unless the test gives it.
import type { HostSummary, Verdict } from '../../src/report/document.js';

export function hostSummary(name: string, verdict: Verdict, extra: Partial<HostSummary> = {}): HostSummary {
  return {
    host: name,
    file: `${name}/reconcile.json`,
    mode: 'plan',
    verdict,
    changes: 0,
    operator: [],
    unknowns: [],
    errors: [],
    accepted: [],
    causes: [],
    change_details: [],
    documents: [],
    ...extra,
  };
}
