// A provider written only against the contract (src/resources/types.ts), as
// ARCHITECTURE.md's "Adding a provider" shows it: one file, and one line in a
// registry. It owns /etc/hostname; the running hostname is left to the
// image's first boot (offline) or to an operator (live).
import type { BaseSpec, Provider } from '../../src/resources/types.js';
import type { ByteString } from '../../src/bytes.js';
import { utf8Bytes } from '../../src/bytes.js';

export interface HostnameSpec extends BaseSpec {
  type: 'Hostname';
  hostname: string;
}

export const hostnameProvider: Provider<HostnameSpec, ByteString | null, null> = {
  type: 'Hostname',
  after: [],
  observe: (host) => host.readBytes('/etc/hostname'),
  diff: (spec, seen, ctx) => {
    const want = utf8Bytes(`${spec.hostname}\n`);
    if (seen === want) return [];
    return [
      {
        id: 'file',
        action: seen === null ? 'create' : 'update',
        summary: `set /etc/hostname to ${spec.hostname}`,
        file: { path: '/etc/hostname', before: seen, after: want },
        op: null,
      },
      ctx.live
        ? { id: 'running', action: 'operator', summary: `the running hostname stays until reboot`, operator: `run hostname ${spec.hostname}`, op: null }
        : { id: 'running', action: 'deferred', summary: `at first boot: the kernel takes ${spec.hostname} from /etc/hostname`, op: null },
    ];
  },
  apply: async (_host, _spec, changes, ctx) => {
    for (const c of changes) if (c.file) await ctx.door.writeFile({ path: c.file.path, expect: c.file.before, content: c.file.after! });
  },
  // Traits: the engine asks them without knowing this provider.
  claims: () => [{ kind: 'file', subject: '/etc/hostname', at: [] }],
  hostChecks: async (host) =>
    (await host.readLink('/etc/hostname')) !== null ? [{ at: [], message: '/etc/hostname is a symbolic link; replace it with a file first' }] : [],
};
