// PreviousCluster's entry in the desired state: what to do with a former
// Kubernetes node's leftovers (src/former-node/). `report` (the default)
// leaves the host as it is and the plan's FormerNode finding says what is
// there; `reset` stops and disables the node's units and moves its
// directories aside through the door, where a rollback finds them.
import type { BaseSpec } from '../../desired-state.js';

export type PreviousClusterPolicy = 'report' | 'reset';

export interface PreviousClusterSpec extends BaseSpec {
  type: 'PreviousCluster';
  policy: PreviousClusterPolicy;
  /** A directory larger than this is named with its size in a warning before it is moved. */
  warn_above_bytes: number;
}

/** 1 GiB: an etcd or kubelet directory past it holds data someone may want (etcd's default quota is 2 GiB). */
export const DEFAULT_WARN_ABOVE_BYTES = 1024 ** 3;

export const PREVIOUS_CLUSTER_SCHEMA = {
  description:
    "A host that was a Kubernetes node before. policy report (the default) changes nothing: the plan's FormerNode finding names the evidence. policy reset stops and disables the node's units (kubelet, etcd, k3s, rke2) and moves /etc/kubernetes, /var/lib/kubelet, /var/lib/etcd, /etc/cni/net.d, /var/lib/rancher and /etc/rancher aside (renamed beside themselves, never deleted; --rollback puts them back).",
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { const: 'PreviousCluster' },
    name: { $ref: '#/definitions/name' },
    policy: {
      description: 'report: say what a former node left; reset: stop its units and move its directories aside.',
      enum: ['report', 'reset'],
      default: 'report',
    },
    warn_above_bytes: {
      description: 'A directory larger than this is named with its size in a warning before it is moved aside.',
      type: 'integer',
      minimum: 0,
      default: DEFAULT_WARN_ABOVE_BYTES,
    },
  },
} as const;
