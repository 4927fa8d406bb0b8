// A toy resource, written only against the contract, as one folder: its
// spec and schema branch (spec.ts), its promise kind (promises.ts), what a
// boot script can do to it (boot-scripts.ts) and this provider. It owns one
// sysctl.d file; test/reconcile/toy-resource.test.ts registers it with one line.
import type { ByteString } from '../../../src/bytes.js';
import { utf8Bytes } from '../../../src/bytes.js';
import type { Provider } from '../../../src/resources/types.js';
import { withBootScripts } from '../../../src/resources/boot-script-hook.js';
import { PANIC_REBOOT_FILE, PANIC_REBOOT_SCHEMA, type PanicRebootSpec } from './spec.js';
import { PANIC_KIND, PANIC_PROMISE } from './promises.js';
import { panicConcern } from './boot-scripts.js';

const content = (spec: PanicRebootSpec): ByteString => utf8Bytes(`kernel.panic = ${spec.seconds}\n`);

const own: Provider<PanicRebootSpec, { file: ByteString | null }, null> = {
  type: 'PanicReboot',
  schema: PANIC_REBOOT_SCHEMA,
  after: [],
  observe: async (host) => ({ file: await host.readBytes(PANIC_REBOOT_FILE) }),
  diff: (spec, seen) =>
    seen.file === content(spec)
      ? []
      : [
          {
            id: 'file',
            action: seen.file === null ? 'create' : 'update',
            summary: `write ${PANIC_REBOOT_FILE}`,
            file: { path: PANIC_REBOOT_FILE, before: seen.file, after: content(spec) },
            op: null,
          },
        ],
  promised: (spec) => [{ id: PANIC_PROMISE, kind: 'panic', subject: 'kernel.panic', expect: String(spec.seconds) }],
  promiseKinds: { panic: PANIC_KIND },
  apply: async (_host, _spec, changes, ctx) => {
    for (const c of changes) if (c.file) await ctx.door.writeFile({ path: c.file.path, expect: c.file.before, content: c.file.after! });
  },
};

export const panicRebootProvider = withBootScripts(own, panicConcern);
