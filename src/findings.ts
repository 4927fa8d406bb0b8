import type { Withdrawal } from './promises.js';

/** Something the plan tells a person that is not a change: a risk, a verdict, a reason something was skipped. */
export interface Finding {
  level: 'info' | 'warning' | 'error';
  message: string;
  /** file:line references a person can check. */
  evidence?: string[];
  /**
   * Something that decides a verdict could not be judged (a condition, a
   * variable, an include). `--plan` exits 2 while such a finding stands.
   */
  unknown?: boolean;
  /**
   * kubespray's own preflight will stop on this host (an assert fails):
   * `--plan` exits 1 while such a finding stands.
   */
  stops?: boolean;
  /**
   * A check of the tool's own, by a stable name a user can grep for
   * (FormerNode): the plan's summary names it rather than counting it among
   * kubespray's findings.
   */
  check?: string;
  /** The plan's promises this unknown takes back (src/promises.ts). */
  withdraws?: Withdrawal[];
}
