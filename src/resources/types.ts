// The resource contract every provider implements (after mgmt's CheckApply
// split into a read, a pure comparison and an act).
import type { Host, TargetHost } from '../host.js';
import type { WriteDoor } from '../door/door.js';
import type { ByteString } from '../bytes.js';
import type { Promised, ProviderUnknown, Withdrawal } from '../promises.js';
import type { BaseSpec } from '../desired-state.js';

// The spec every resource shares lives with the desired state, below every reader of it (sysctl/ names resources too).
export type { BaseSpec } from '../desired-state.js';

/**
 * A file a change would write, with both contents so the plan can show a
 * unified diff. Contents are byte strings (src/bytes.ts): what is written is
 * exactly `after`, and `before` is what the write door expects to find.
 */
export interface FileChange {
  /** Target path, e.g. "/etc/fstab". */
  path: string;
  /** null: the file does not exist yet. */
  before: ByteString | null;
  /** null: the file will be removed. */
  after: ByteString | null;
}

/** What apply does with a change. */
export type ActionableAction = 'create' | 'update' | 'delete' | 'runtime' | 'stop' | 'disable' | 'mask';

/**
 * The action says it all: `operator` (a person must act) and `deferred` (a
 * runtime step offline mode leaves to the first boot) are never applied.
 */
export type ChangeAction = ActionableAction | 'operator' | 'deferred';

interface ChangeBase<Op> {
  /** Stable within its resource, so pipelines and verification can match changes across runs. */
  id: string;
  /** One line a person can act on. */
  summary: string;
  file?: FileChange;
  /** Acts on the running system (kernel state, services). Never produced or applied offline. */
  runtime?: boolean;
  /** Provider-specific, JSON-serialisable payload that apply acts on. */
  op: Op;
  /**
   * Facts other resources' changes may need that this change, left to an
   * operator, leaves unestablished (a modprobe the kernel will refuse).
   */
  unmet?: string[];
  /**
   * The promises an operator line takes back (src/promises.ts). Absent on an
   * operator line: every promise of its resource, from apply on.
   */
  withdraws?: Withdrawal[];
}

export type Change<Op = unknown> =
  | (ChangeBase<Op> & { action: ActionableAction | 'deferred'; operator?: undefined })
  | (ChangeBase<Op> & {
      action: 'operator';
      /**
       * The tool will not do this: a person must. The text is the exact reason.
       * Apply reports it, converges everything else, and exits 1.
       */
      operator: string;
    });

export interface DiffContext {
  live: boolean;
  /**
   * Offline only: the image gets a first-boot run (first_boot: apply or
   * verify), so work only a running system can judge is left to it instead
   * of to an operator.
   */
  firstBoot?: boolean;
}

export interface ApplyContext {
  /** Progress for anything that waits; goes to stderr. */
  progress(message: string): void;
  /**
   * The engine's write door: the only way a provider changes a file or a
   * link, and how it journals a runtime step before taking it.
   */
  door: WriteDoor;
}

export interface ApplyOutcome {
  /** Report files (name -> JSON value) for the reports directory, e.g. ports.json. */
  reports?: Record<string, unknown>;
  /**
   * Part of the changes failed, but what was done still deserves its report
   * (a port freed while another would not stay free). Throwing loses the reports.
   */
  error?: string;
  /**
   * With `error`: what failed, as facts other resources' changes may need
   * (e.g. "module:br_netfilter"). Absent: everything the resource was to
   * establish counts as failed.
   */
  failedFacts?: string[];
  /** With `error`: the ids of the changes that failed; the others were carried out. Absent: none counts as carried out. */
  failedChanges?: string[];
}

/** A fact a change needs from another resource's apply (ModulesLoad's "module:br_netfilter"). */
export interface ChangeNeed {
  type: string;
  fact: string;
}

export interface Provider<Spec extends BaseSpec = BaseSpec, Observed = unknown, Op = unknown> {
  type: Spec['type'];
  /** Types that must be applied before this one (ModulesLoad before SysctlFile). */
  after: string[];
  /** Reads only. Offline it must not read /proc or /sys (Host refuses). */
  observe(host: TargetHost, spec: Spec): Promise<Observed>;
  /** Pure. */
  diff(spec: Spec, observed: Observed, ctx: DiffContext): Change<Op>[];
  /**
   * Optional, pure: what was observed, as JSON for `--json` (e.g. SysctlFile's
   * verdicts per model), so pipelines and the VM suite can check predictions.
   */
  summarize?(spec: Spec, observed: Observed): unknown;
  /**
   * Optional, pure: what the observation could not use and the person should
   * know (an entry skipped the way its real consumer skips it, a line it
   * ignores), each naming the file. Shown as warnings in plan and apply.
   */
  warnings?(spec: Spec, observed: Observed): string[];
  /** Optional, pure: what this resource promises to leave true after apply and at the next boot. */
  promised?(spec: Spec): Promised[];
  /**
   * Optional, pure: what could not be judged and decides whether a promise
   * holds (a boot script this scan cannot read). Each is a loud `unknown`
   * finding: `--plan` exits 2 and apply 1 while it stands.
   */
  unknowns?(spec: Spec, observed: Observed): ProviderUnknown[];
  /** Optional, pure: lines the plan shows under the resource (e.g. SysctlFile's rehearsed outcome). */
  notes?(spec: Spec, observed: Observed): string[];
  /**
   * Optional, pure: what an observation after apply shows still wrong beyond
   * its diff (SysctlFile: a key the rehearsal shows wrong). The engine's
   * verification names these with the changes left; a provider never
   * observes again to verify itself.
   */
  unconverged?(spec: Spec, observed: Observed): string[];
  /**
   * Optional, pure: what one change needs from the resources in `after`.
   * Without it every change needs all of them. A change whose needs all
   * hold is applied even when another change of a resource it names failed.
   */
  needs?(spec: Spec, change: Change<Op>): ChangeNeed[];
  /** Performs exactly the changes handed to it (never operator or deferred ones). */
  apply(host: Host, spec: Spec, changes: Change<Op>[], ctx: ApplyContext): Promise<ApplyOutcome | void>;
}
