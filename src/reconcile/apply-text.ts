// What `apply` prints: before it starts, the changes it is making (the plan
// itself only with -v: the plan was for deciding, this is the record of
// doing); when it is done, what failed, what is left to a person, which
// reports it wrote, and one closing line.
import { redactString } from '../redact.js';
import type { ApplyResult } from './apply.js';
import type { VerifyError } from '../errors.js';
import type { PlanPromise } from './promises.js';
import type { PlanDocument } from './plan-document.js';
import { mustDo, type MustDo } from './must-do.js';
import type { Finding } from '../findings.js';
import { acceptedLine, changeHead, headerLines, mustDoLines, planBody, safe, type Detail, type Palette } from './plan-text.js';

const plural = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;

/** Before apply starts: `Applying N changes` and one line per change (verbose: the whole plan above it; quiet: nothing). */
export function renderApplyStart(plan: PlanDocument, p: Palette, detail: Detail = 'normal'): string {
  if (detail === 'quiet') return '';
  const changes = plan.resources.flatMap((r) => r.changes.filter((c) => c.operator === null).map((c) => ({ r: r.name, c })));
  const pending = changes.filter(({ c }) => !c.deferred).length;
  const deferred = changes.length - pending;
  const head =
    changes.length === 0
      ? 'Nothing to apply.'
      : `Applying ${plural(pending, 'change')}${deferred ? `, ${deferred} deferred to boot` : ''}${detail === 'verbose' ? '' : ':'}`;
  if (detail === 'verbose') return [...planBody(plan, p, 'verbose', mustDo(plan), 'apply'), '', p.bold(head)].join('\n') + '\n';
  const out = headerLines(plan, p, 'normal', 'apply', []);
  out.push(p.bold(head), ...changes.map(({ r, c }) => changeHead(c, p, `${r}: `)));
  return out.join('\n') + '\n';
}

export interface ApplyTextParts {
  /** What the plan left to a person (the plan document's What you must do). */
  mustDo?: MustDo[];
  detail?: Detail;
  /** The plan's findings: the accepted ones get their closing line (plan-text.ts acceptedLine), quiet too. */
  findings?: Finding[];
}

export function renderApplyResult(
  result: ApplyResult,
  verify: VerifyError[],
  operator: number,
  p: Palette,
  written: string[],
  withdrawn: PlanPromise[] = [],
  parts: ApplyTextParts = {},
): string {
  const items = parts.mustDo ?? [];
  const out: string[] = [''];
  const n = result.applied.reduce((a, r) => a + r.changes.length, 0);
  for (const f of result.failures) out.push(p.del(`error: ${safe(redactString(`${f.resource}: ${f.message}`))}`));
  for (const v of verify) out.push(p.del(`error: ${safe(redactString(v.message))}`));
  // What you must do brings its own blank line; the one above it is enough when nothing failed.
  if (items.length > 0) out.push(...mustDoLines(items, p).slice(out.length === 1 ? 1 : 0), '');
  const failedOrBlocked = result.failures.reduce((a, f) => a + (f.changes?.length ?? 0), 0);
  const clean = result.failures.length === 0 && verify.length === 0;
  const listed = items.length > 0 ? 'What you must do, above' : '"!" lines above';
  // "everything else was converged" only when it was: a failure or a verification error says otherwise.
  if (operator)
    out.push(
      p.warn(`${plural(operator, 'change')} need${operator === 1 ? 's' : ''} an operator (${listed})${clean ? '; everything else was converged' : ''}.`),
    );
  if (withdrawn.length > 0) {
    const where = items.some((m) => m.kind === 'unknown') ? 'What you must do, above' : 'the "unknown" warnings of the plan';
    out.push(
      p.warn(
        `${withdrawn.length} promise${withdrawn.length === 1 ? ' is' : 's are'} not known to hold at the next boot (${where}): ${safe(withdrawn.map((w) => w.id).join(', '))}.`,
      ),
    );
  }
  if (parts.detail !== 'quiet') for (const w of written) out.push(p.dim(`wrote ${safe(w)}`));
  const accepted = acceptedLine(parts.findings ?? [], p);
  if (accepted) out.push(accepted);
  if (clean && operator === 0 && withdrawn.length === 0) {
    out.push(p.add(n === 0 ? 'Apply complete: no changes; the host already matched.' : `Apply complete: ${plural(n, 'change')} applied and verified.`));
  } else {
    const said = [`${plural(n, 'change')} applied`];
    if (failedOrBlocked > 0) said.push(`${failedOrBlocked} failed or not applied`);
    const other = result.failures.filter((f) => f.changes === undefined).length;
    if (other > 0) said.push(plural(other, 'other failure'));
    if (verify.length > 0) said.push(`${verify.length} not verified`);
    if (operator > 0) said.push(`${operator} for an operator`);
    if (withdrawn.length > 0) said.push(`${withdrawn.length} not known to hold at the next boot`);
    out.push(p.del(`Apply incomplete: ${said.join(', ')}; see ${clean ? (items.length > 0 ? 'What you must do' : 'the "!" lines') : 'the errors'} above.`));
  }
  return out.join('\n') + '\n';
}
