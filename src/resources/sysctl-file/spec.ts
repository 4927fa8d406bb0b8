// SysctlFile's entry in the desired state: its spec as the engine sees it after
// validation, and its branch of the JSON Schema (src/resources/schema.ts
// assembles schema/desired-state.schema.json from every provider's branch;
// shared pieces are `#/definitions/name`, `port` and `absPath`).
import type { BaseSpec } from '../../desired-state.js';

export type SysctlConflictPolicy = 'resolve' | 'fail';

export interface SysctlFileSpec extends BaseSpec {
  type: 'SysctlFile';
  /** sysctl.d file we own. */
  file: string;
  /** key (dotted or slashed) -> value. */
  settings: Record<string, string | number>;
  /** resolve: comment out / override conflicting assignments; fail: report them and change nothing. */
  conflict_policy: SysctlConflictPolicy;
  /** Comment out boot-script lines that set a wanted key to another value (sysctl -w); absent = false. */
  neutralise_scripts?: boolean;
}

export const SYSCTL_FILE_SCHEMA = {
  description: 'Kernel parameters right now, at the next boot, and after `sysctl --system`.',
  type: 'object',
  additionalProperties: false,
  properties: {
    type: {
      const: 'SysctlFile',
    },
    name: {
      $ref: '#/definitions/name',
    },
    file: {
      type: 'string',
      pattern: '^/etc/sysctl\\.d/[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]*\\.conf$',
      'x-message': 'must be a file /etc/sysctl.d/NAME.conf',
      default: '/etc/sysctl.d/k8s.conf',
    },
    settings: {
      type: 'object',
      minProperties: 1,
      propertyNames: {
        maxLength: 255,
        pattern: '^(?:[A-Za-z0-9_:@+%](?:[A-Za-z0-9_:@+%/-]*)(?:\\.[A-Za-z0-9_:@+%/-]+)*|[A-Za-z0-9_:@+%][A-Za-z0-9_:@+%.-]*(?:/[A-Za-z0-9_:@+%.-]+)+)$',
      },
      additionalProperties: {
        anyOf: [
          {
            type: 'integer',
          },
          {
            type: 'string',
            minLength: 1,
            maxLength: 4096,
            pattern: '^[^\\u0000-\\u001f\\u007f#;\\s](?:[^\\u0000-\\u001f\\u007f#;]*[^\\u0000-\\u001f\\u007f#;\\s])?$',
          },
        ],
      },
      default: {
        'net.ipv4.ip_forward': 1,
        'net.bridge.bridge-nf-call-iptables': 1,
        'net.bridge.bridge-nf-call-ip6tables': 1,
      },
    },
    conflict_policy: {
      description: 'resolve: comment out conflicting lines (overriding vendor files from /etc); fail: report and change nothing.',
      enum: ['resolve', 'fail'],
      default: 'resolve',
    },
    neutralise_scripts: {
      description:
        'Comment out boot-script lines that set a wanted key (or a key the kernel couples with it) to another value (sysctl -w, sysctl key=value). Off (absent): each is an operator line naming file:line.',
      type: 'boolean',
    },
  },
} as const;
