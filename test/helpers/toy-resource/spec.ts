// The toy resource's desired-state entry and its JSON-schema branch: a host
// that reboots N seconds after a kernel panic (kernel.panic = N).
import type { BaseSpec } from '../../../src/desired-state.js';

export interface PanicRebootSpec extends BaseSpec {
  type: 'PanicReboot';
  seconds: number;
  neutralise_scripts?: boolean;
}

export const PANIC_REBOOT_FILE = '/etc/sysctl.d/60-panic-reboot.conf';

export const PANIC_REBOOT_SCHEMA = {
  description: 'Reboot this many seconds after a kernel panic, now and at every boot.',
  type: 'object',
  additionalProperties: false,
  required: ['seconds'],
  properties: {
    type: { const: 'PanicReboot' },
    name: { $ref: '#/definitions/name' },
    seconds: { type: 'integer', minimum: 1, maximum: 3600, 'x-message': 'must be an integer 1..3600' },
    neutralise_scripts: { type: 'boolean' },
  },
} as const;
