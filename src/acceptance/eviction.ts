// kubelet's hard eviction thresholds for the disk signals, as kubespray configures them for this node: its
// kubelet-config template (roles/kubernetes/node/templates/kubelet-config.v1beta1.yaml.j2) writes evictionHard
// only when eviction_hard is non-empty (roles/kubernetes/node/defaults/main.yml: {}), and kubelet fills in its
// defaults only when evictionHard is absent (pkg/kubelet/apis/config/v1beta1/defaults.go: EvictionHard nil ->
// DefaultEvictionHard, pkg/kubelet/eviction/defaults_linux.go). A value is a percentage of the file system or
// a resource.Quantity; anything else is not judged.
import type { Known } from './checker.js';
import { known, notKnown } from './checker.js';

/** The disk signals of kubelet's hard eviction on Linux. */
export const DISK_SIGNALS = ['nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree'] as const;
export type DiskSignal = (typeof DISK_SIGNALS)[number];

/** kubelet's DefaultEvictionHard (Linux), the disk signals of it. */
export const KUBELET_DEFAULT_EVICTION_HARD: Readonly<Record<DiskSignal, string>> = {
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
  'imagefs.inodesFree': '5%',
};

/** The thresholds in force for the disk signals, and where they come from (for the line's evidence). */
export interface EvictionThresholds {
  thresholds: Partial<Record<DiskSignal, string>>;
  from: string;
}

/**
 * eviction_hard's value for this node (templated) as the thresholds kubelet gets: empty or unset is kubelet's
 * defaults; a mapping is taken as it is (a disk signal it does not name has no threshold, as in kubelet).
 */
export function evictionThresholds(value: unknown, where: string): Known<EvictionThresholds> {
  if (value === undefined || value === null || value === '' || (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0))
    return known({ thresholds: { ...KUBELET_DEFAULT_EVICTION_HARD }, from: `kubelet's defaults (${where} is empty, so kubespray writes no evictionHard)` });
  if (typeof value !== 'object' || Array.isArray(value)) return notKnown(`${where} is ${JSON.stringify(value)}, not a mapping`);
  const thresholds: Partial<Record<DiskSignal, string>> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if ((DISK_SIGNALS as readonly string[]).includes(k)) thresholds[k as DiskSignal] = String(v);
  }
  return known({ thresholds, from: `kubespray's ${where}` });
}

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/**
 * A threshold as an amount against `total` (bytes or inodes): "10%" of it, or a resource.Quantity ("500Mi",
 * "2G", "1000"). Null for what is neither (a threshold this tool does not read is not judged).
 */
export function thresholdAmount(value: string, total: number): number | null {
  const v = value.trim();
  if (v.endsWith('%')) {
    const n = Number(v.slice(0, -1));
    return v.length > 1 && Number.isFinite(n) && n >= 0 && n <= 100 ? (n / 100) * total : null;
  }
  const unitAt = v.search(/[A-Za-z]/);
  const digits = unitAt === -1 ? v : v.slice(0, unitAt);
  const unit = unitAt === -1 ? '' : v.slice(unitAt);
  const n = Number(digits);
  const scale = BINARY[unit] ?? DECIMAL[unit];
  if (digits === '' || digits !== digits.trim() || !Number.isFinite(n) || n < 0 || scale === undefined) return null;
  return n * scale;
}
