// Turning plans and results into JSON for pipelines and text for people. As
// Terraform does, the text is rendered from the same serialisable plan
// document that --json prints, so the two cannot tell different stories.
import { createTwoFilesPatch } from 'diff';
import type { Change } from '../resources/types.js';
import { displayText } from '../bytes.js';
import { redactDeep, redactFileTexts, redactString } from '../redact.js';
import { terminalSafe } from '../untrusted-text.js';

/**
 * Host text (a path, a unit name, a command line, a diff line, a reason) for
 * the text plan: controls and format characters escaped (untrusted-text.ts),
 * a tab kept as the column it is. Escaped before any colour is added.
 */
const safe = (s: string): string => s.split('\t').map(terminalSafe).join('\t');
import type { Plan } from './plan.js';
import { actionable, operatorChanges, pendingCount } from './plan.js';
import type { ApplyResult } from './apply.js';
import type { BeforeState } from './before-state.js';
import type { VerifyError } from '../errors.js';
import type { Finding } from '../findings.js';
import type { Withdrawal } from '../promises.js';
import { changeWithdrawals, planPromises, type PlanPromise } from './promises.js';

import { FORMAT_VERSION, TOOL_VERSION } from '../version.js';

export { FORMAT_VERSION };

export interface Palette {
  add(s: string): string;
  del(s: string): string;
  hunk(s: string): string;
  bold(s: string): string;
  warn(s: string): string;
  dim(s: string): string;
}

const plain: Palette = { add: (s) => s, del: (s) => s, hunk: (s) => s, bold: (s) => s, warn: (s) => s, dim: (s) => s };
const ansi = (code: string) => (s: string) => `\x1b[${code}m${s}\x1b[0m`;
const coloured: Palette = { add: ansi('32'), del: ansi('31'), hunk: ansi('36'), bold: ansi('1'), warn: ansi('33'), dim: ansi('2') };

/** Colour only on a terminal, and never when NO_COLOR is set (no-color.org). */
export function paletteFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Palette {
  return stream.isTTY && !('NO_COLOR' in env && env.NO_COLOR !== '') ? coloured : plain;
}

/** A unified diff of two byte strings, shown as text. */
export function unifiedDiff(path: string, before: string | null, after: string | null): string {
  const shown = redactFileTexts(path, { before: before === null ? null : displayText(before), after: after === null ? null : displayText(after) });
  return textDiff(path, shown.before, shown.after);
}

function textDiff(path: string, before: string | null, after: string | null): string {
  const patch = createTwoFilesPatch(
    before === null ? '/dev/null' : path,
    after === null ? '/dev/null' : path,
    before ?? '',
    after ?? '',
    undefined,
    undefined,
    { context: 3 },
  );
  // Drop the "Index:"/"===" preamble the diff package adds; keep ---/+++ and hunks.
  return patch
    .split('\n')
    .filter((l) => !l.startsWith('Index: ') && !/^=+$/.test(l))
    .join('\n')
    .replace(/\n+$/, '\n');
}

const SYMBOL: Record<JsonChange['action'], string> = {
  create: '+',
  update: '~',
  delete: '-',
  runtime: '>',
  stop: '-',
  disable: '-',
  mask: '-',
  operator: '!',
  deferred: '…',
};

function renderChange(c: JsonChange, p: Palette): string[] {
  const tag = c.operator !== null ? p.warn(' [operator action required]') : c.deferred ? p.dim(' [deferred to boot]') : c.runtime ? p.dim(' [runtime]') : '';
  const lines = [`  ${c.operator !== null ? p.warn('!') : SYMBOL[c.action]} ${safe(c.summary)}${tag}`];
  if (c.operator !== null) lines.push(`      reason: ${safe(c.operator)}`);
  if (c.withdraws.length > 0) lines.push(`      withdraws: ${safe(describeWithdrawals(c.withdraws))}`);
  if (c.redacted) lines.push(p.dim(`      (sensitive values hidden; apply writes and rollback restores the file's own bytes)`));
  if (c.path !== null) {
    // The document's contents are already display text (jsonChanges): diff them as they are.
    for (const raw of textDiff(c.path, c.before, c.after).trimEnd().split('\n')) {
      const l = safe(raw);
      const styled =
        l.startsWith('+++') || l.startsWith('---')
          ? p.bold(l)
          : l.startsWith('+')
            ? p.add(l)
            : l.startsWith('-')
              ? p.del(l)
              : l.startsWith('@@')
                ? p.hunk(l)
                : l;
      lines.push(`      ${styled}`);
    }
  }
  return lines;
}

function describeWithdrawals(ws: Withdrawal[]): string {
  return ws.map((w) => `${w.promise} (${w.from === 'apply' ? 'after apply and at boot' : 'at the next boot'})`).join(', ');
}

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
  /** Findings where kubespray's own preflight stops on this host (--plan exits 1 while there are any). */
  kubespray_preflight_failures: number;
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
    resources: jsonPlan(plan),
    promises: planPromises(plan),
    findings,
    ...(parts.reports ? { reports: parts.reports } : {}),
  });
}

function describePromise(p: PlanPromise): string {
  const what =
    p.kind === 'port' ? `port ${p.subject} free` : p.kind === 'sysctl' ? `${p.subject} = ${p.expect}` : p.kind === 'swap' ? 'swap off' : `${p.subject} loaded`;
  const when = p.after_apply && p.at_boot ? 'after apply and at the next boot' : p.after_apply ? 'after apply; not promised at the next boot' : 'not promised';
  // An unknown's line is its finding's message (it starts "unknown:"); an operator line's is its change id.
  const by = p.withdrawn_by.map((w) =>
    w.by === 'unknown' ? `${w.resource}: ${w.line}` : w.by === 'failure' ? `apply's failure ${w.resource}: ${w.line}` : `operator line ${w.resource} ${w.line}`,
  );
  return `${what}: ${when}${by.length > 0 ? `; withdrawn by ${by.join('; ')}` : ''}`;
}

const isPending = (c: JsonChange) => c.operator === null && !c.deferred;

/** The text plan, from the plan document alone. */
export function renderPlan(plan: PlanDocument, p: Palette): string {
  const extras = { findings: plan.findings, facts: (plan.reports?.['facts.json'] as Record<string, unknown> | undefined) ?? null };
  const out: string[] = [];
  out.push(p.bold(`k8s-host-reconcile plan: ${plan.live ? 'live host' : `offline image ${safe(plan.root)}`}`));
  if (plan.before_state) {
    const b = plan.before_state;
    out.push(
      p.dim(`  before: swap_total_kb=${b.swap_total_kb} ip_forward=${b.ip_forward} br_netfilter=${b.br_netfilter} busy_ports=[${b.busy_ports.join(', ')}]`),
    );
  }
  if (extras.facts) {
    const f = Object.entries(extras.facts)
      .map(([k, v]) => safe(`${k}=${v}`))
      .join(' ');
    out.push(p.dim(`  facts (as kubespray sees them): ${f}`));
  }
  out.push('');
  for (const r of plan.resources) {
    const todo = r.changes.filter(isPending).length;
    const ops = r.changes.filter((c) => c.operator !== null).length;
    const deferred = r.changes.filter((c) => c.deferred).length;
    const status = [
      todo ? `${todo} change${todo === 1 ? '' : 's'}` : null,
      ops ? p.warn(`${ops} for an operator`) : null,
      deferred ? `${deferred} deferred to boot` : null,
    ].filter(Boolean);
    out.push(`${p.bold(safe(r.name))}: ${status.length ? status.join(', ') : 'in sync'}`);
    for (const n of r.notes) out.push(p.dim(`  ${safe(n)}`));
    for (const c of r.changes) out.push(...renderChange(c, p));
  }
  if (plan.promises.length > 0) {
    out.push('', p.bold('Promises'));
    for (const pr of plan.promises) {
      const kept = pr.after_apply && pr.at_boot;
      out.push(`  ${kept ? '=' : p.warn('!')} ${safe(describePromise(pr))}`);
    }
  }
  if (extras.findings?.length) {
    out.push('', p.bold('Findings'));
    for (const f of extras.findings) {
      const label = f.level === 'info' ? 'info' : f.level === 'warning' ? p.warn('warning') : p.del('error');
      out.push(`  ${label}${f.check ? ` [${f.check}]` : ''}: ${safe(f.message)}`);
      for (const e of f.evidence ?? []) out.push(p.dim(`      ${safe(e)}`));
    }
  }
  out.push('', summaryLine(plan, extras.findings ?? [], p));
  if (!plan.live) out.push(p.dim('Offline: runtime steps (swapoff, modprobe, /proc/sys writes, unit stops) are skipped; see the deferred lines.'));
  return out.join('\n') + '\n';
}

/** The plan's last line: what is pending, what needs an operator, what could not be judged, what stops kubespray. */
function summaryLine(plan: PlanDocument, findings: Finding[], p: Palette): string {
  const all = plan.resources.flatMap((r) => r.changes);
  const pending = all.filter(isPending).length;
  const operator = all.filter((c) => c.operator !== null).length;
  const unknown = findings.filter((f) => f.unknown && !f.withdraws && !f.check).length;
  // The tool's own checks that cannot call the host ready (a former node), by name.
  const checks = [...new Set(findings.filter((f) => f.unknown && !f.withdraws && f.check).map((f) => f.check!))];
  // An unknown boot-time line the scan cannot judge withdraws promises: the next boot is not known to be safe.
  const withdrawing = findings.filter((f) => f.unknown && f.withdraws).length;
  const stops = findings.filter((f) => f.stops).length;
  const unknownText = [
    unknown ? `${unknown} kubespray finding${unknown === 1 ? '' : 's'} could not be judged` : null,
    checks.length ? `${checks.join(', ')} ${checks.length === 1 ? 'is' : 'are'} not known to pass` : null,
    withdrawing ? `${withdrawing} unknown${withdrawing === 1 ? '' : 's'} withdraw${withdrawing === 1 ? 's' : ''} promises for the next boot` : null,
  ]
    .filter((x): x is string => x !== null)
    .join(', ');
  if (stops > 0) {
    // --plan exits 1 for these, whatever else is pending. kubeadm's checks (src/acceptance) by name: kubespray's run stops in kubeadm's preflight.
    const asserts = findings.filter((f) => f.stops && !f.check).length;
    const kubeadm = [...new Set(findings.filter((f) => f.stops && f.check).map((f) => f.check!))];
    const why = [
      asserts > 0 ? `${asserts} failing assert${asserts === 1 ? '' : 's'}` : null,
      kubeadm.length > 0 ? `kubeadm's preflight fails ${kubeadm.join(', ')}` : null,
    ].filter((x): x is string => x !== null);
    return (
      p.del(`Error: kubespray's preflight will stop on this host (${why.join('; ')}, the errors above).`) +
      ` Plan: ${pending} change${pending === 1 ? '' : 's'} pending` +
      (operator ? `, ${operator} need${operator === 1 ? 's' : ''} an operator` : '') +
      (unknownText ? `, ${unknownText}` : '') +
      '.'
    );
  } else if (pending === 0 && operator === 0 && unknown === 0 && withdrawing === 0 && checks.length === 0)
    return p.add('No changes. The host matches the desired state.');
  else if (pending === 0 && operator === 0) {
    // --plan exits 2 for these: say why the exit code is not 0.
    return p.warn(`No changes, but ${unknownText} (the "unknown" warnings above).`);
  } else {
    return (
      `Plan: ${pending} change${pending === 1 ? '' : 's'} pending` +
      (operator ? `, ${p.warn(`${operator} need${operator === 1 ? 's' : ''} an operator`)}` : '') +
      (unknownText ? `, ${p.warn(unknownText)}` : '') +
      '.'
    );
  }
}

export function renderApplyResult(
  result: ApplyResult,
  verify: VerifyError[],
  operator: number,
  p: Palette,
  written: string[],
  withdrawn: PlanPromise[] = [],
): string {
  const out: string[] = [''];
  const plural = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  const n = result.applied.reduce((a, r) => a + r.changes.length, 0);
  for (const f of result.failures) out.push(p.del(`error: ${safe(redactString(`${f.resource}: ${f.message}`))}`));
  for (const v of verify) out.push(p.del(`error: ${safe(redactString(v.message))}`));
  const failedOrBlocked = result.failures.reduce((a, f) => a + (f.changes?.length ?? 0), 0);
  const clean = result.failures.length === 0 && verify.length === 0;
  // "everything else was converged" only when it was: a failure or a verification error says otherwise.
  if (operator)
    out.push(
      p.warn(
        `${plural(operator, 'change')} need${operator === 1 ? 's' : ''} an operator (see "!" lines above)${clean ? '; everything else was converged' : ''}.`,
      ),
    );
  if (withdrawn.length > 0) {
    out.push(
      p.warn(
        `${withdrawn.length} promise${withdrawn.length === 1 ? ' is' : 's are'} not known to hold at the next boot (see the "unknown" warnings above): ${safe(withdrawn.map((w) => w.id).join(', '))}.`,
      ),
    );
  }
  for (const w of written) out.push(p.dim(`wrote ${safe(w)}`));
  if (clean && operator === 0 && withdrawn.length === 0) {
    out.push(p.add(n === 0 ? 'Apply complete: no changes; the host already matched.' : `Apply complete: ${plural(n, 'change')} applied and verified.`));
  } else {
    const parts = [`${plural(n, 'change')} applied`];
    if (failedOrBlocked > 0) parts.push(`${failedOrBlocked} failed or not applied`);
    const other = result.failures.filter((f) => f.changes === undefined).length;
    if (other > 0) parts.push(plural(other, 'other failure'));
    if (verify.length > 0) parts.push(`${verify.length} not verified`);
    if (operator > 0) parts.push(`${operator} for an operator`);
    if (withdrawn.length > 0) parts.push(`${withdrawn.length} not known to hold at the next boot`);
    out.push(p.del(`Apply incomplete: ${parts.join(', ')}; see ${clean ? 'the "!" lines' : 'the errors'} above.`));
  }
  return out.join('\n') + '\n';
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
