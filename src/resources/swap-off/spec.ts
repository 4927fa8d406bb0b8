// SwapOff's entry in the desired state: its spec as the engine sees it after
// validation, and its branch of the JSON Schema (src/resources/schema.ts
// assembles schema/desired-state.schema.json from every provider's branch;
// shared pieces are `#/definitions/name`, `port` and `absPath`).
import type { BaseSpec } from '../../desired-state.js';

export interface SwapOffSpec extends BaseSpec {
  type: 'SwapOff';
  /** Mask swap.target so no swap source can be pulled in at boot (kubespray does this too). */
  mask_swap_target: boolean;
  /** Delete swap files after swapoff. Off by default: the lab allows keeping them. */
  remove_swap_files: boolean;
  /** Comment out boot-script lines that turn swap on (rc.local, crontabs, if-up.d); absent = false: operator lines. */
  neutralise_scripts?: boolean;
}

export const SWAP_OFF_SCHEMA = {
  description: 'No swap now, and none that can come back at boot.',
  type: 'object',
  additionalProperties: false,
  properties: {
    type: {
      const: 'SwapOff',
    },
    name: {
      $ref: '#/definitions/name',
    },
    mask_swap_target: {
      description: 'Mask swap.target so no swap source (fstab, .swap units, zram, gpt-auto) is pulled in at boot.',
      type: 'boolean',
      default: true,
    },
    remove_swap_files: {
      description: 'Delete swap files after swapoff.',
      type: 'boolean',
      default: false,
    },
    neutralise_scripts: {
      description:
        'Comment out boot-script lines that turn swap on (/etc/rc.local, crontabs, /etc/network/if-*.d), with a marker and a backup. Off (absent): each is an operator line naming file:line.',
      type: 'boolean',
    },
  },
} as const;
