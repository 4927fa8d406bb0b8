// ModulesLoad's promise: each wanted module loaded, after apply and at the next boot.
import type { PromiseKind } from '../../promises.js';

export const modulePromise = (module: string): string => `module:${module}`;

/** `seen.modules`: module name -> whether /sys/module has it; only a tier with a kernel of its own has it. */
export const MODULE_KIND: PromiseKind = {
  describe: (p) => `${p.subject} loaded`,
  judge: (p, seen) => {
    const modules = seen['modules'] as Readonly<Record<string, boolean>> | undefined;
    if (!modules) return null;
    const loaded = Object.hasOwn(modules, p.subject) ? modules[p.subject] : undefined;
    return loaded === true ? null : `${p.subject} ${loaded === false ? 'not loaded (no /sys/module entry)' : 'unread'}`;
  },
};
