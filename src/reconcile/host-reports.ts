// Reports about the host that are not resources: facts as kubespray sees
// them and the kubespray audit (who fixes what), from src/kubespray, and a
// former Kubernetes node's leftovers (src/former-node), and kubeadm's
// preflight answered before the install (src/acceptance).
import type { Host } from '../host.js';
import { resourceName, type DesiredFile, type DesiredState } from '../desired-state.js';
import { PROVIDERS, type ProviderRegistry } from '../resources/index.js';
import type { Finding } from '../findings.js';
import { kubesprayReport, type PlanObservations } from '../kubespray/report.js';
import { planFacts, type Plan } from './plan.js';
import { observeFormerNode } from '../former-node/evidence.js';
import { formerNodeFindings } from '../former-node/finding.js';
import { acceptanceFindings } from '../acceptance/run.js';
import type { NodeEvidence } from '../former-node/evidence.js';
import type { KubesprayClears } from '../former-node/kubespray-clears.js';
import type { KubesprayReport } from '../kubespray/report.js';
import { brokenPromises, observationOf, readWatchRecord, watchFindings } from '../boot-watch/findings.js';
import { planPromises } from './promises.js';

/** Report features this build has, for `reconcile --providers` (the VM suite reads it). */
export const REPORT_FEATURES: string[] = ['facts', 'who-fixes', 'rollback', 'first-boot', 'boot-scripts', 'boot-watch'];

export interface HostReports {
  findings: Finding[];
  /** name -> JSON value, for the reports directory (apply writes them). */
  reports: Record<string, unknown>;
}

/**
 * Pure: what the planned resources observed that the reports need (their
 * providers' `facts`): the sysctl.d tree, MemTotal and the running kernel's
 * release. A field no resource observed is left out.
 */
export function planObservations(plan: Plan | null): PlanObservations {
  const f = planFacts(plan);
  const out: PlanObservations = {};
  if (f.sysctlTree !== undefined) out.sysctlTree = f.sysctlTree;
  out.facts = {
    ...(f.memTotalKb !== undefined ? { memTotalKb: f.memTotalKb } : {}),
    ...(f.kernelRelease !== undefined ? { kernelRelease: f.kernelRelease } : {}),
  };
  return out;
}

/** Pure: the files the desired resources write whole, as their providers say (Provider.ownedFiles). */
export function desiredFiles(desired: DesiredState, registry: ProviderRegistry = PROVIDERS): DesiredFile[] {
  return desired.resources.flatMap((r) =>
    (Object.hasOwn(registry, r.type) ? (registry[r.type]!.ownedFiles?.(r) ?? []) : []).map((f) => ({ ...f, resource: resourceName(r) })),
  );
}

/** `plan`: the plan the reports are about; its observations are used instead of reading the host again. */
export async function hostReports(host: Host, desired: DesiredState, progress: (m: string) => void, plan: Plan | null): Promise<HostReports> {
  if (host.live && desired.facts.source === 'ansible') progress('gathering facts with ansible -m setup (this can take a while)');
  const r = await kubesprayReport(host, desired, { ...planObservations(plan), desiredFiles: desiredFiles(desired) });
  const reports: Record<string, unknown> = {};
  if (r.facts) reports['facts.json'] = r.facts;
  if (r.whoFixes) reports['who-fixes.json'] = r.whoFixes;
  // A former node: kubeadm's preflight stops on what it left, whatever the four resources do.
  const evidence = await observeFormerNode(host);
  const formerNode = formerNodeFindings(evidence, desired.kubespray, await kubesprayClears(r, evidence));
  // kubeadm's preflight, judged on the facts the report gathered (nothing read twice).
  const acceptance = await acceptanceFindings(host, r);
  const watched = await bootWatchReport(host, plan);
  if (watched) reports['boot-watch.json'] = watched.report;
  return { findings: [...r.findings, ...formerNode, ...acceptance, ...(watched?.findings ?? [])], reports };
}

/**
 * A watched boot (this boot's record in /run): each promise of the plan the
 * running host breaks, as the plan observed it, with its writer from the
 * kernel's record (src/boot-watch/). null when this boot was not watched.
 */
async function bootWatchReport(host: Host, plan: Plan | null): Promise<{ findings: Finding[]; report: unknown } | null> {
  const record = plan ? await readWatchRecord(host) : null;
  if (!plan || !record) return null;
  return watchFindings(record, brokenPromises(planPromises(plan), observationOf(planFacts(plan))));
}

/**
 * kubespray's answer to a former node, when there is one and a readable checkout: whether reset.yml's reset role,
 * and cluster.yml's audited roles, remove each piece of evidence on this node. null otherwise; when the roles
 * cannot be read (every answer is then unknown, with the reason).
 */
async function kubesprayClears(r: KubesprayReport, evidence: NodeEvidence[]): Promise<KubesprayClears | null> {
  if (!r.node || !evidence.some((e) => e.strong)) return null;
  const { auditReset } = await import('../kubespray/reset-audit.js');
  const { AUDITED_ROLES } = await import('../kubespray/who-fixes.js');
  const paths = evidence.map((e) => e.path);
  try {
    const reset = await auditReset(r.node.checkout, paths, r.node.audit);
    const cluster = await auditReset(r.node.checkout, paths, r.node.audit, AUDITED_ROLES);
    return { reset: reset.answers, cluster: cluster.answers, clusterRoles: AUDITED_ROLES };
  } catch (e) {
    // Unknown, loudly: each piece says why.
    const unknown = new Map(
      paths.map((p) => [
        p,
        { clears: 'unknown' as const, warning: { file: r.node!.checkout.dir, line: 0, message: `kubespray's roles cannot be read: ${(e as Error).message}` } },
      ]),
    );
    return { reset: unknown, cluster: unknown, clusterRoles: AUDITED_ROLES };
  }
}
