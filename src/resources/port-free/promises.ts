// PortFree's promise: each wanted port free, after apply and at the next boot.
import type { PromiseKind } from '../../promises.js';

export const portPromise = (port: number): string => `port:${port}`;

/** `seen.ports`: listening TCP port -> what the tier saw holding it (a process, a unit; possibly nothing shown). */
export const PORT_KIND: PromiseKind = {
  describe: (p) => `port ${p.subject} free`,
  judge: (p, seen) => {
    const ports = seen['ports'] as ReadonlyMap<number, string[]> | undefined;
    const holders = ports?.get(Number(p.subject));
    return holders ? `port ${p.subject} is listening (${holders.join('; ') || 'no process shown'})` : null;
  },
  held: true,
};
