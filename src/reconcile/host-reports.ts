// Reports about the host that are not resources: facts as kubespray sees
// them and the kubespray audit (who fixes what), from src/kubespray.
import type { Host } from '../host.js';
import type { DesiredState } from '../desired-state.js';
import type { Finding } from '../findings.js';
import { kubesprayReport } from '../kubespray/report.js';
import { observeSysctlTree } from '../sysctl/observe.js';
import type { SysctlTree } from '../sysctl/order.js';
import type { SysctlFileObserved } from '../resources/sysctl-file/observed.js';
import type { Plan } from './plan.js';

/** Report features this build has, for `reconcile --providers` (the VM suite reads it). */
export const REPORT_FEATURES: string[] = ['facts', 'who-fixes', 'rollback', 'first-boot', 'boot-scripts'];

export interface HostReports {
  findings: Finding[];
  /** name -> JSON value, for the reports directory (apply writes them). */
  reports: Record<string, unknown>;
}

/** The sysctl.d tree a SysctlFile resource observed for the plan, if one did. */
function observedSysctlTree(plan: Plan | null): SysctlTree | null {
  const r = plan?.resources.find((x) => x.type === 'SysctlFile');
  return r ? (r.observed as SysctlFileObserved).tree : null;
}

/** `plan`: the plan the reports are about; its observations are used instead of reading the host again. */
export async function hostReports(host: Host, desired: DesiredState, progress: (m: string) => void, plan: Plan | null): Promise<HostReports> {
  if (host.live && desired.facts.source === 'ansible') progress('gathering facts with ansible -m setup (this can take a while)');
  const seen = observedSysctlTree(plan);
  const r = await kubesprayReport(host, desired, async () => seen ?? (await observeSysctlTree(host)).tree);
  const reports: Record<string, unknown> = {};
  if (r.facts) reports['facts.json'] = r.facts;
  if (r.whoFixes) reports['who-fixes.json'] = r.whoFixes;
  return { findings: r.findings, reports };
}
