// Reports about the host that are not resources: facts as kubespray sees
// them and the kubespray audit (who fixes what). Wired to src/kubespray.
import type { Host } from '../host.js';
import type { DesiredState } from '../desired-state.js';
import type { Finding } from './render.js';

/** Report features this build has, for `reconcile --providers` (the VM suite reads it). */
export const REPORT_FEATURES: string[] = [];

export interface HostReports {
  findings: Finding[];
  /** name -> JSON value, for the reports directory (apply writes them). */
  reports: Record<string, unknown>;
}

export async function hostReports(_host: Host, _desired: DesiredState, _progress: (m: string) => void): Promise<HostReports> {
  return { findings: [], reports: {} };
}
