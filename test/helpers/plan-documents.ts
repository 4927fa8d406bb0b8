// Hand-written plan documents for the text renderers' tests: a used server
// with one mask, one deferred line, one operator line and one unknown
// boot-time line that two resources each report. Each promise carries its
// `what` (the wording a promise kind gives it) as well as its kind.
import type { JsonChange, PlanDocument } from '../../src/reconcile/plan-document.js';

const change = (c: Partial<JsonChange> & Pick<JsonChange, 'id' | 'action' | 'summary'>): JsonChange => ({
  runtime: false,
  deferred: c.action === 'deferred',
  operator: null,
  withdraws: [],
  path: null,
  before: null,
  after: null,
  redacted: false,
  detail: null,
  ...c,
});

const UNKNOWN = 'unknown: /etc/rc.local:2: rc-local.service runs it at boot: runs /usr/local/bin/tune.sh, a python3 script';

// Asserted through unknown: each promise carries `what`, which the PlanPromise type of this tree may not declare yet.
export const USED_SERVER: PlanDocument = {
  format_version: '1.0',
  tool: { name: 'k8s-host-reconcile', version: '0.0.0' },
  mode: 'plan',
  live: false,
  root: '/img',
  before_state: null,
  pending_changes: 2,
  operator_required: 1,
  kubespray_preflight_failures: 0,
  resources: [
    {
      name: 'SwapOff',
      type: 'SwapOff',
      in_sync: false,
      observed: null,
      notes: [],
      changes: [
        change({
          id: 'fstab',
          action: 'update',
          summary: 'comment out /swapfile in /etc/fstab',
          path: '/etc/fstab',
          before: '/swapfile none swap sw 0 0\n',
          after: '#/swapfile none swap sw 0 0\n',
        }),
        change({ id: 'mask', action: 'mask', summary: 'mask swap.target' }),
        change({
          id: 'boot-script:/etc/rc.local:3',
          action: 'operator',
          summary: '/etc/rc.local:3 turns swap on',
          operator: '/etc/rc.local:3: remove or comment out that line (or set neutralise_scripts: true to have it commented out)',
          withdraws: [{ promise: 'swap:off', from: 'boot' }],
        }),
      ],
    },
    {
      name: 'ModulesLoad',
      type: 'ModulesLoad',
      in_sync: true,
      observed: null,
      notes: [],
      changes: [change({ id: 'boot', action: 'deferred', summary: 'overlay loads at first boot' })],
    },
  ],
  promises: [
    {
      id: 'swap:off',
      kind: 'swap',
      what: 'swap off',
      subject: 'swap',
      expect: 'off',
      resource: 'SwapOff',
      after_apply: true,
      at_boot: false,
      held_by: null,
      withdrawn_by: [
        { by: 'operator', resource: 'SwapOff', line: 'boot-script:/etc/rc.local:3', from: 'boot' },
        { by: 'unknown', resource: 'SwapOff', line: UNKNOWN, from: 'boot' },
      ],
    },
    {
      id: 'module:overlay',
      kind: 'module',
      what: 'overlay loaded',
      subject: 'overlay',
      expect: 'loaded',
      resource: 'ModulesLoad',
      after_apply: true,
      at_boot: false,
      held_by: null,
      withdrawn_by: [{ by: 'unknown', resource: 'ModulesLoad', line: UNKNOWN, from: 'boot' }],
    },
  ],
  findings: [
    { level: 'warning', message: `SwapOff: ${UNKNOWN}`, unknown: true, withdraws: [{ promise: 'swap:off', from: 'boot' }] },
    { level: 'warning', message: `ModulesLoad: ${UNKNOWN}`, unknown: true, withdraws: [{ promise: 'module:overlay', from: 'boot' }] },
    { level: 'info', message: 'no kubespray section in desired-state' },
  ],
} as unknown as PlanDocument;
