// What a boot script can do to ModulesLoad: modprobe -r or rmmod of a wanted module.
import { scriptMarker } from '../../boot-scripts/neutralise.js';
import { canonicalModuleName } from '../../observe/modules.js';
import { atBoot, type ScriptConcern, type ScriptSpec } from '../boot-script-hook.js';
import { modulePromise } from './promises.js';

export interface ModulesLike extends ScriptSpec {
  modules: string[];
}

export const modulesConcern: ScriptConcern<ModulesLike> = {
  judge: (spec, h) => {
    if (h.action.kind !== 'module-remove') return null;
    const wanted = new Set(spec.modules.map(canonicalModuleName));
    return wanted.has(h.action.module) ? `removes ${h.action.module} (${h.action.program})` : null;
  },
  relevant: (u) => u.what === 'program' || u.what === 'module',
  marker: () => scriptMarker('this line would remove a module Kubernetes needs'),
  withdraws: (spec, h) =>
    h === null
      ? spec.modules.map((m) => atBoot(modulePromise(canonicalModuleName(m))))
      : h.action.kind === 'module-remove'
        ? [atBoot(modulePromise(h.action.module))]
        : [],
};
