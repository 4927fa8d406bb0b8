// What `apply` prints when it is done: what failed, what is left to a
// person, which reports it wrote, and one closing line.
import { redactString } from '../redact.js';
import type { ApplyResult } from './apply.js';
import type { VerifyError } from '../errors.js';
import type { PlanPromise } from './promises.js';
import { safe, type Palette } from './plan-text.js';

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
