// What a plan promises to leave true, and what takes a promise back. The
// promises are the plan's outcome in a form a machine can check after apply
// and after the next boot (the boot farm's one oracle): each control-plane
// port free, each wanted sysctl value, swap off, each module loaded.

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
  kind: 'port' | 'sysctl' | 'swap' | 'module';
  /** Port number, sysctl key (dotted), module name; 'swap' for swap. */
  subject: string;
  /** 'free', the wanted value, 'off', 'loaded'. */
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

export const portPromise = (port: number): string => `port:${port}`;
export const sysctlPromise = (key: string): string => `sysctl:${key}`;
export const SWAP_PROMISE = 'swap:off';
export const modulePromise = (module: string): string => `module:${module}`;
