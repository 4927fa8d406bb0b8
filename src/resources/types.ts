// The resource contract every provider implements (after mgmt's CheckApply
// split into a read, a pure comparison and an act).
import type { Host, TargetFs, TargetHost } from '../host.js';
import type { WriteDoor } from '../door/door.js';
import type { ByteString } from '../bytes.js';
import type { Promised, PromiseKind, ProviderUnknown, Withdrawal } from '../promises.js';
import type { BaseSpec, DesiredState } from '../desired-state.js';
import type { SysctlTree } from '../sysctl/order.js';

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
/** `move`: a file or directory tree renamed aside through the door (WriteDoor.moveAside), never deleted. */
export type ActionableAction = 'create' | 'update' | 'delete' | 'runtime' | 'stop' | 'disable' | 'mask' | 'move';

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
  /**
   * An operator line whose cause outlives apply while what showed it does
   * not (a boot script that makes a transient unit again, once apply has
   * stopped that unit): apply carries it into promises_after and its exit code.
   */
  outlivesApply?: boolean;
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
  /** With `error`: the promises (Promised.id) the failure leaves unkept. Absent: every promise of the resource. */
  failedPromises?: string[];
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
  /**
   * The spec's branch of the desired state's JSON Schema (its folder's
   * spec.ts): required of every desired type, absent on a derived one.
   */
  schema?: Readonly<Record<string, unknown>>;
  /** Optional, pure: what this resource promises to leave true after apply and at the next boot. */
  promised?(spec: Spec): Promised[];
  /**
   * The kinds of promise `promised` makes (Promised.kind -> how the plan says
   * one and how a booted host is judged against it). Required with `promised`:
   * the plan, its document and the boot farm's judge know a kind only from here.
   */
  promiseKinds?: Readonly<Record<string, PromiseKind>>;
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
  /**
   * Optional, pure: the promises (Promised.id) one change is to make hold,
   * or null when it cannot tell. A change that is not applied (a need of it
   * failed or is left to an operator) takes back only these in
   * promises_after; without it, or on null, every promise of the resource.
   */
  changePromises?(spec: Spec, change: Change<Op>): string[] | null;
  /** Performs exactly the changes handed to it (never operator or deferred ones). */
  apply(host: Host, spec: Spec, changes: Change<Op>[], ctx: ApplyContext): Promise<ApplyOutcome | void>;

  // Traits: what the engine asks every provider that has one, never naming it.

  /**
   * Optional, pure: the grammar of the spec's values on the document as
   * parsed, before the schema fills defaults (shapes are the schema's job;
   * for the same key the grammar's reason wins).
   */
  grammar?(raw: Record<string, unknown>): SpecIssue[];
  /**
   * Optional, pure: what the spec alone may own or set (a file, a sysctl
   * key). A second resource claiming the same is a desired-state error naming
   * both places; a file claimed must not be a package's link.
   */
  claims?(spec: Spec): Claim[];
  /**
   * Optional: desired-state problems only the host reveals (a sysctl key the
   * running kernel lacks), checked before anything is observed or written.
   * `promised`: what every desired resource promises (a module ModulesLoad loads).
   */
  hostChecks?(host: TargetFs, spec: Spec, ctx: { promised: Promised[] }): Promise<SpecIssue[]>;
  /**
   * Optional, pure: what the observation says about the host for the reports
   * (before.json, facts.json, the ordering audit), so they never read it twice.
   */
  facts?(spec: Spec, observed: Observed): HostFacts;
  /**
   * Optional, live only: this type's fields of before.json (the lab's record
   * of the host before anything changed), from what a planned resource of it
   * observed (`seen`: the plan's facts), else read with the observer the
   * provider itself uses. Asked of every provider, desired or not.
   */
  beforeState?(host: TargetFs, seen: HostFacts): Promise<BeforeFields>;
  /**
   * Optional, pure: the files this resource writes whole, with the content
   * its spec alone decides (SysctlFile's sysctl.d file), so that audits of
   * the host as it will be (the kubespray ordering audit) count them.
   */
  ownedFiles?(spec: Spec): Array<{ path: string; content: string }>;
  /**
   * Optional, pure: what the first boot of an image must finish for this
   * resource (image mode). A provider with it speaks for its deferred changes;
   * of one without it, each deferred change is one line of work.
   */
  atFirstBoot?(spec: Spec, changes: Change<Op>[]): FirstBootPart;
  /**
   * Optional: what the image's first-boot run waits for before it applies
   * (services that may take what this resource frees a few seconds late),
   * with progress; each entry goes into first-boot.json's `waited`.
   */
  firstBootWait?(host: Host, spec: Spec, ctx: FirstBootWaitContext): Promise<FirstBootWait[]>;
  /**
   * Optional: the engine derives this provider's one resource from the plan
   * of the desired ones (FirstBoot), instead of reading it from the desired
   * state; null: none this run. Planned after the desired resources.
   */
  derive?(input: DeriveInput): Spec | null;
  /** Optional: applied before every other resource (FirstBoot: see reconcile/plan.ts applyOrder). */
  applyFirst?: boolean;
}

/** A problem with a spec, at a key below the resource (JSON pointer segments). */
export interface SpecIssue {
  at: string[];
  /** The key itself, not its value, is wrong. */
  atKey?: boolean;
  message: string;
}

/**
 * Something one resource alone may own. `file`: a path as written (compared
 * normalised; one file has one owner); `sysctl`: a key in its canonical
 * dotted form (one key has one value).
 */
export interface Claim {
  kind: 'file' | 'sysctl';
  subject: string;
  /** Where the spec says it (below the resource); a file the schema filled in is told at the resource. */
  at: string[];
  atKey?: boolean;
}

/** Fields of before.json, by their names in the lab's contract. */
export type BeforeFields = Record<string, number | boolean | number[]>;

/** Host readings a provider's observation holds; the first resource in plan order to hold one gives it (a map's, key by key). */
export interface HostFacts {
  /** SwapTotal of /proc/meminfo, kB. */
  swapTotalKb?: number;
  /** MemTotal of /proc/meminfo, kB (null: the kernel printed none). */
  memTotalKb?: number | null;
  /** The running kernel's release (null: it has none). */
  kernelRelease?: string | null;
  /** Live sysctl values by canonical dotted key (null: the kernel lacks the key). */
  sysctls?: ReadonlyMap<string, string | null>;
  /** Whether each module is loaded (or built in), by name as observed. */
  modules?: ReadonlyMap<string, boolean>;
  /** Ports looked at on the running host, and those a LISTEN socket holds. */
  listeners?: { ports: number[]; busy: number[] };
  /** The sysctl.d tree as systemd-sysctl and sysctl --system read it. */
  sysctlTree?: SysctlTree;
}

/** One thing the first-boot run waited for, as first-boot.json lists it; the resource adds its own fields. */
export interface FirstBootWait {
  unit: string;
  outcome: string;
  seconds: number;
}

export interface FirstBootWaitContext {
  progress: (message: string) => void;
  /** What earlier resources already waited for: a unit is waited for once. */
  waited: readonly FirstBootWait[];
  /** Tests replace the poll's pause. */
  sleep?: (ms: number) => Promise<unknown>;
}

/** One resource's share of an image's first-boot run. */
export interface FirstBootPart {
  /** What the first boot does, one line each. */
  work: string[];
  /** Services the first-boot unit starts after and waits for. */
  candidates: string[];
  /** The longest wait for one candidate, seconds. */
  timeoutSec: number;
}

/** A planned resource, as a derived provider sees the plan. */
export interface PlannedResource {
  name: string;
  type: string;
  spec: BaseSpec;
  provider: Provider<any, any, any>;
  changes: Change[];
}

export interface DeriveInput {
  desired: DesiredState;
  live: boolean;
  /** The desired resources' plan, in plan order. */
  resources: PlannedResource[];
  /** The desired-state file's bytes, read when asked. */
  desiredBytes(): ByteString;
  /** The run asked for the next boot to be watched (--watch-next-boot). */
  watchNextBoot?: boolean;
}
