// PreviousCluster: a host that was a Kubernetes node, reset or only reported. Under `report` it adds nothing
// to the plan (the FormerNode finding, src/former-node/finding.ts, names the evidence and what clears it);
// under `reset` it stops and disables the node's units and moves its directories aside through the door,
// and promises them absent and down at the next boot.
import type { Provider } from '../types.js';
import { PREVIOUS_CLUSTER_SCHEMA, type PreviousClusterSpec } from './spec.js';
import { observePreviousCluster, type PreviousClusterObserved } from './observe.js';
import { diffPreviousCluster, movedByReset } from './diff.js';
import { applyPreviousCluster } from './apply.js';
import { humanBytes, type PreviousClusterOp } from './ops.js';
import { PATH_ABSENT_KIND, resetPromises, UNIT_DOWN_KIND } from './promises.js';
import { RESET_DIRS } from '../../former-node/reset-targets.js';

const UP = new Set(['active', 'activating', 'reloading', 'refreshing']);
const under = (p: string, d: string) => p === d || p.startsWith(d + '/');

export const previousClusterProvider: Provider<PreviousClusterSpec, PreviousClusterObserved, PreviousClusterOp> = {
  type: 'PreviousCluster',
  schema: PREVIOUS_CLUSTER_SCHEMA,
  // After PortFree: it stops (and may disable) a unit by the name whose file a reset then sets aside; the other
  // way round its systemctl disable would meet no unit file. Nothing a reset does needs what PortFree establishes.
  after: ['PortFree'],
  needs: () => [],
  observe: observePreviousCluster,
  diff: (_spec, o) => diffPreviousCluster(o),
  promised: (spec) => (spec.policy === 'reset' ? resetPromises() : []),
  promiseKinds: { 'path-absent': PATH_ABSENT_KIND, 'unit-down': UNIT_DOWN_KIND },

  // Never a silent move of much data: a directory above the threshold is named with its size first.
  warnings: (spec, o) => [
    ...o.chains.flatMap((c) =>
      'error' in c
        ? [`PreviousCluster: ${c.error}; Kubernetes' ${c.program} chains are not known`]
        : c.chains.unread.map((l) => `PreviousCluster: ${c.program}-save printed a rule line that does not split (an unclosed quote): ${l}`),
    ),
    ...(o.nftTables !== null && 'error' in o.nftTables ? [`PreviousCluster: ${o.nftTables.error}; kube-proxy's nftables tables are not known`] : []),
    ...o.dirs.flatMap((d) =>
      d.kind === 'dir' && d.bytes > spec.warn_above_bytes
        ? [
            `PreviousCluster: ${d.path} holds ${humanBytes(d.bytes)} (${d.bytes} bytes in ${d.files} files), above warn_above_bytes (${humanBytes(spec.warn_above_bytes)}); it is moved aside whole on its own file system, not copied: move it elsewhere afterwards if it is data you need`,
          ]
        : [],
    ),
  ],

  // After apply: the evidence a reset clears (under its directories, or an admin unit file it set aside) and no node unit running.
  unconverged: (_spec, o) => {
    if (o.policy === 'report') return [];
    const aside = new Set(o.units.flatMap((u) => u.files));
    // A directory the plan left to a person (an operator line) is not the reset's to clear.
    const personal = o.dirs.filter((d) => !movedByReset(d)).map((d) => d.path);
    const left = o.evidence
      .filter((e) => (RESET_DIRS.some((d) => under(e.path, d)) && !personal.some((d) => under(e.path, d))) || aside.has(e.path))
      .map((e) => `${e.path} is still there (${e.what})`);
    const running = o.units.filter((u) => u.active !== null && UP.has(u.active)).map((u) => `${u.unit} is still ${u.active}`);
    return [...left, ...running];
  },
  apply: (host, _spec, changes, ctx) => applyPreviousCluster(host, changes, ctx),
};
