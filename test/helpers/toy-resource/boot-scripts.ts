// What a boot script can do to the toy: set kernel.panic to another value.
import { scriptMarker } from '../../../src/boot-scripts/neutralise.js';
import { atBoot, type ScriptConcern } from '../../../src/resources/boot-script-hook.js';
import type { PanicRebootSpec } from './spec.js';
import { PANIC_PROMISE } from './promises.js';

export const panicConcern: ScriptConcern<PanicRebootSpec> = {
  judge: (spec, h) =>
    h.action.kind === 'sysctl-write' && h.action.key === 'kernel.panic' && h.action.value !== String(spec.seconds)
      ? `sets kernel.panic = ${h.action.value}, undoing the reboot ${spec.seconds} s after a panic`
      : null,
  relevant: (u) => u.what === 'program' || u.what === 'sysctl',
  marker: () => scriptMarker('this line would stop the reboot after a kernel panic'),
  withdraws: () => [atBoot(PANIC_PROMISE)],
};
