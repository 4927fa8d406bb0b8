// After apply: observe again; every resource's diff must be empty (apart from
// operator action and steps deferred to boot), and no provider may see its
// resource unconverged. A leftover change names its resource.
import type { Plan } from './plan.js';
import { actionable } from './plan.js';
import { VerifyError } from '../errors.js';

export function verifyConverged(after: Plan): VerifyError[] {
  return after.resources
    .map((r) => ({ r, left: [...actionable(r.changes).map((c) => c.summary), ...(r.provider.unconverged?.(r.spec, r.observed) ?? [])] }))
    .filter(({ left }) => left.length > 0)
    .map(({ r, left }) => new VerifyError(r.name, left));
}
