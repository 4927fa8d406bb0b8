// SysctlFile's promise: each wanted key at its value, after apply and at the next boot.
import type { PromiseKind } from '../../promises.js';

export const sysctlPromise = (key: string): string => `sysctl:${key}`;

/** `seen.sysctl`: dotted key -> the value the kernel showed (absent: not read). */
export const SYSCTL_KIND: PromiseKind = {
  describe: (p) => `${p.subject} = ${p.expect}`,
  judge: (p, seen) => {
    const values = seen['sysctl'] as Readonly<Record<string, string>> | undefined;
    if (!values) return null;
    const v = Object.hasOwn(values, p.subject) ? values[p.subject] : undefined;
    return v === p.expect ? null : `${p.subject} = ${v ?? 'unread'}`;
  },
};
