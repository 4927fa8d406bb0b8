// The plan document: what `--plan --json` prints, what an apply stores as
// its run's plan.json and result.json, and the one source the text plan and
// apply's result are rendered from, so text and JSON cannot tell different
// stories (as Terraform's plan file and its text are one).
import type { Change } from '../resources/types.js';
import { displayText } from '../bytes.js';
import { redactDeep, redactFileTexts } from '../redact.js';
import type { Plan } from './plan.js';
import { actionable, operatorChanges, pendingCount } from './plan.js';
import type { BeforeState } from './before-state.js';
import type { Finding } from '../findings.js';
import type { Withdrawal } from '../promises.js';
import { changeWithdrawals, planPromises, type PlanPromise } from './promises.js';
import { FORMAT_VERSION, TOOL_VERSION } from '../version.js';

export { FORMAT_VERSION };

/**
 * The plan document: what `--plan --json` prints, what an apply stores as its
 * run's plan.json, and what the text plan is rendered from. An apply's
 * result.json is the same document (after apply, without `reports`) with
 * what apply did.
 */
export interface PlanDocument {
  format_version: string;
  tool: { name: 'k8s-host-reconcile'; version: string };
  mode: 'plan' | 'apply';
  live: boolean;
  root: string;
  before_state: BeforeState | null;
  pending_changes: number;
  operator_required: number;
  /** Findings where kubespray's own preflight stops on this host (--plan exits 1 while there are any); an accepted one too: kubespray is not told. */
  kubespray_preflight_failures: number;
  /** Findings accepted by their check name (--accept, the desired state's accept list): each has `accepted: true`. */
  accepted_findings: number;
  resources: JsonResource[];
  /** What the plan leaves true after apply and at the next boot, and what takes each back (docs/output.md, "Promises"). */
  promises: PlanPromise[];
  findings: Finding[];
  /** Report files (facts.json, who-fixes.json) as they will be written; absent from result.json. */
  reports?: Record<string, unknown>;
}

export interface PlanDocumentParts {
  mode?: 'plan' | 'apply';
  before?: BeforeState | null;
  findings?: Finding[];
  reports?: Record<string, unknown>;
  /** Operator lines counted elsewhere (result.json: those the plan after apply still has). */
  operator?: number;
}

export function planDocument(plan: Plan, parts: PlanDocumentParts = {}): PlanDocument {
  const findings = parts.findings ?? [];
  // One place every plan document passes through: a credential in any string of it is redacted (redact.ts).
  return redactDeep({
    format_version: FORMAT_VERSION,
    tool: { name: 'k8s-host-reconcile', version: TOOL_VERSION },
    mode: parts.mode ?? 'plan',
    live: plan.live,
    root: plan.root,
    before_state: parts.before ?? null,
    pending_changes: pendingCount(plan),
    operator_required: parts.operator ?? operatorChanges(plan).length,
    kubespray_preflight_failures: findings.filter((f) => f.stops).length,
    accepted_findings: findings.filter((f) => f.accepted).length,
    resources: jsonPlan(plan),
    promises: planPromises(plan),
    findings,
    ...(parts.reports ? { reports: parts.reports } : {}),
  });
}

export interface JsonChange {
  id: string;
  action: Change['action'];
  summary: string;
  runtime: boolean;
  deferred: boolean;
  operator: string | null;
  /** An operator line: the promises it takes back (empty otherwise). */
  withdraws: Withdrawal[];
  path: string | null;
  before: string | null;
  after: string | null;
  /** before and after show lines holding credentials redacted, `(sensitive value N)` (the file's own bytes are written). */
  redacted: boolean;
  detail: unknown;
}

export function jsonChanges(changes: Change[], withdraws: (c: Change) => Withdrawal[] = (c) => c.withdraws ?? []): JsonChange[] {
  return changes.map((c) => {
    // For pipelines and people: bytes that are not UTF-8 show as U+FFFD here, and a line holding a
    // credential is redacted (redact.ts); the write and the journal use the exact bytes.
    const shown = c.file
      ? redactFileTexts(c.file.path, {
          before: c.file.before === null ? null : displayText(c.file.before),
          after: c.file.after === null ? null : displayText(c.file.after),
        })
      : { before: null, after: null, redacted: false };
    return redactDeep({
      id: c.id,
      action: c.action,
      summary: c.summary,
      runtime: c.runtime ?? false,
      deferred: c.action === 'deferred',
      operator: c.operator ?? null,
      withdraws: c.action === 'operator' ? withdraws(c) : [],
      path: c.file?.path ?? null,
      before: shown.before,
      after: shown.after,
      redacted: shown.redacted,
      detail: c.op ?? null,
    });
  });
}

export interface JsonResource {
  name: string;
  type: string;
  in_sync: boolean;
  changes: JsonChange[];
  observed: unknown;
  /** Lines the plan shows under the resource (the provider's notes, e.g. a rehearsal's outcome). */
  notes: string[];
}

export function jsonPlan(plan: Plan): JsonResource[] {
  return plan.resources.map((r) => ({
    name: r.name,
    type: r.type,
    in_sync: actionable(r.changes).length === 0 && !r.changes.some((c) => c.operator),
    changes: jsonChanges(r.changes, (c) => changeWithdrawals(r, c)),
    observed: r.provider.summarize?.(r.spec, r.observed) ?? null,
    notes: r.provider.notes?.(r.spec, r.observed) ?? [],
  }));
}
