// The toy's one kind of promise: kernel.panic at the wanted number of seconds.
import type { PromiseKind } from '../../../src/promises.js';

export const PANIC_PROMISE = 'panic:reboot';

export const PANIC_KIND: PromiseKind = {
  describe: (p) => `reboot ${p.expect} s after a kernel panic`,
  judge: (p, seen) => {
    const values = seen['sysctl'] as Readonly<Record<string, string>> | undefined;
    if (!values) return null;
    const v = values['kernel.panic'];
    return v === p.expect ? null : `kernel.panic = ${v ?? 'unread'}, so no reboot ${p.expect} s after a panic`;
  },
};
