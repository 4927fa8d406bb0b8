// ModulesLoad's entry in the desired state: its spec as the engine sees it after
// validation, and its branch of the JSON Schema (src/resources/schema.ts
// assembles schema/desired-state.schema.json from every provider's branch;
// shared pieces are `#/definitions/name`, `port` and `absPath`).
import type { BaseSpec } from '../../desired-state.js';

export interface ModulesLoadSpec extends BaseSpec {
  type: 'ModulesLoad';
  /** modules-load.d file we own, one module per line. */
  file: string;
  modules: string[];
  /** Comment out boot-script lines that remove these modules (modprobe -r, rmmod); absent = false. */
  neutralise_scripts?: boolean;
}

export const MODULES_LOAD_SCHEMA = {
  description: 'Kernel modules loaded now and at every boot.',
  type: 'object',
  additionalProperties: false,
  properties: {
    type: {
      const: 'ModulesLoad',
    },
    name: {
      $ref: '#/definitions/name',
    },
    file: {
      type: 'string',
      pattern: '^/etc/modules-load\\.d/[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]*\\.conf$',
      'x-message': 'must be a file /etc/modules-load.d/NAME.conf',
      default: '/etc/modules-load.d/k8s.conf',
    },
    modules: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: {
        type: 'string',
        pattern: '^[A-Za-z0-9_][A-Za-z0-9_-]{0,54}$',
        'x-message': "must be a module name (letters, digits, '_' and '-')",
      },
      default: ['overlay', 'br_netfilter'],
    },
    neutralise_scripts: {
      description: 'Comment out boot-script lines that remove these modules (modprobe -r, rmmod). Off (absent): each is an operator line naming file:line.',
      type: 'boolean',
    },
  },
} as const;
