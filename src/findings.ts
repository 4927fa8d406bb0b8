/** Something the plan tells a person that is not a change: a risk, a verdict, a reason something was skipped. */
export interface Finding {
  level: 'info' | 'warning' | 'error';
  message: string;
  /** file:line references a person can check. */
  evidence?: string[];
}
