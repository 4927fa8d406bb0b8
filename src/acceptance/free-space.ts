// FreeSpace: not a kubeadm check, what breaks after the install. kubelet compares the file system of its root
// directory (nodefs) and the container runtime's image file system (imagefs) with its hard eviction thresholds;
// below one, the node reports DiskPressure, is tainted so nothing new is scheduled on it, and kubelet evicts
// pods. On a host already below a threshold that happens on kubelet's first start. A warning: the install
// goes on.
import type { Checker, CheckOutcome } from './checker.js';
import { pass } from './checker.js';
import { thresholdAmount, type DiskSignal } from './eviction.js';
import type { FsUsage } from '../host.js';

const GiB = 2 ** 30;
const size = (b: number) => (b >= GiB ? `${(b / GiB).toFixed(1)} GiB` : `${Math.round(b / 2 ** 20)} MiB`);
const pct = (part: number, total: number) => `${((100 * part) / total).toFixed(1)}%`;

/** One signal's line when the file system is under its threshold; null when it is not, or cannot be read. */
function underThreshold(signal: DiskSignal, value: string, fs: { dir: string; usage: FsUsage }): string | null {
  const inodes = signal.endsWith('.inodesFree');
  const total = inodes ? fs.usage.inodes : fs.usage.sizeBytes;
  const have = inodes ? fs.usage.freeInodes : fs.usage.availableBytes;
  // A file system without a fixed inode count (btrfs says 0) has no inode signal for kubelet either.
  if (total === 0) return null;
  const limit = thresholdAmount(value, total);
  if (limit === null || have >= limit) return null;
  const now = inodes ? `${have} inodes free (${pct(have, total)})` : `${size(have)} available (${pct(have, total)} of ${size(total)})`;
  return `${signal} on the file system of ${fs.dir}: ${now}, under kubelet's hard eviction threshold ${signal}<${value}`;
}

export const freeSpaceCheck: Checker = {
  name: 'FreeSpace',
  runsOn: 'every node',
  breaksLater: 'below a hard eviction threshold kubelet reports DiskPressure, taints the node and evicts pods',
  source: "kubelet's node-pressure eviction (pkg/kubelet/eviction: nodefs and imagefs signals); kubespray roles/kubernetes/node eviction_hard",
  check(f): CheckOutcome {
    if (!f.eviction.known) return { skipped: f.eviction.reason };
    if (!f.diskSpace.known) return { skipped: f.diskSpace.reason };
    const warnings: string[] = [];
    for (const [signal, value] of Object.entries(f.eviction.value.thresholds) as [DiskSignal, string][]) {
      const fs = signal.startsWith('nodefs.') ? f.diskSpace.value.nodefs : f.diskSpace.value.imagefs;
      if (fs === null) continue;
      const line = underThreshold(signal, value, fs);
      if (line !== null) warnings.push(`${line} (${f.eviction.value.from})`);
    }
    return warnings.length > 0 ? { warnings, errors: [] } : pass();
  },
};
