// What a plan promises to leave true, and what takes a promise back. The
// promises are the plan's outcome in a form a machine can check after apply
// and after the next boot (the boot farm's one oracle). Which kinds there
// are, how the plan says each and how a booted host is judged against it is
// each provider's own (Provider.promiseKinds): nothing here names one.

/** From when on a promise no longer holds: 'apply' (not even after apply) or 'boot' (after apply it holds; at the next boot it may not). */
export type PromiseMoment = 'apply' | 'boot';

/** A line (an operator change or an unknown) naming a promise it withdraws. */
export interface Withdrawal {
  promise: string;
  from: PromiseMoment;
}

/** What a provider promises for its spec; the engine adds whether it holds. */
export interface Promised {
  id: string;
  /** One of its provider's promiseKinds (e.g. PortFree's 'port'). */
  kind: string;
  /** What the promise is about, as its kind names it (a port number, a sysctl key). */
  subject: string;
  /** What the subject is to be, as its kind says it (e.g. 'free', the wanted value). */
  expect: string;
  /**
   * Promises (of any resource) this one cannot hold without: a net.bridge key
   * exists only while br_netfilter is loaded, so what takes back
   * module:br_netfilter takes the key back too, from the same moment.
   */
  needs?: string[];
}

/**
 * Something that decides a verdict and could not be judged, as a provider
 * reports it: the message (naming file and line) and what it withdraws.
 */
export interface ProviderUnknown {
  message: string;
  withdraws: Withdrawal[];
  /**
   * What shows it is gone once apply has run, but the unknown is not (a
   * transient unit stopped: what makes it again at boot is not traced). The
   * plan apply observes afterwards keeps its withdrawals.
   */
  outlivesApply?: boolean;
}

/**
 * What a tier recorded of a booted host, by the name of each observation
 * (the boot farm's `ports` and `sysctl`; the qemu suite adds `swap` and
 * `modules`). A tier leaves out what it cannot see (a container has no swap
 * of its own): the judge of a kind whose observation is absent has nothing
 * to judge.
 */
export type BootObservation = Readonly<Record<string, unknown>>;

/** One kind of promise: how the plan says it, and how a booted host is held against it. */
export interface PromiseKind {
  /** The promise in the plan's words ("port 6443 free"): the plan document's `what`. */
  describe(p: Promised): string;
  /** How the observation differs from the promise ("port 6443 is listening (…)"), or null when it holds or was not observed. */
  judge(p: Promised, seen: BootObservation): string | null;
  /** An operator line that takes the promise back from apply on names what holds it (`held_by`): a port's holder. */
  held?: boolean;
}
