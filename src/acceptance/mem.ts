// Mem: kubeadm init (and join --control-plane) stops when the node has less
// memory than ControlPlaneMem. kubeadm reads sysinfo(2)'s Totalram in MB,
// the same number as MemTotal kB // 1024 (ansible_memtotal_mb), so kubespray's
// fact is reused rather than /proc/meminfo read again.
import type { Checker } from './checker.js';
import { atLeast } from './checker.js';

/** cmd/kubeadm/app/constants/constants.go ControlPlaneMem (MB). */
export const CONTROL_PLANE_MEM_MB = 1700;

export const memCheck: Checker = {
  name: 'Mem',
  runsOn: 'control-plane',
  source: 'cmd/kubeadm/app/preflight/checks_linux.go MemCheck.Check (InitNodeChecks); constants.go ControlPlaneMem = 1700',
  check: (f) => atLeast(f.memTotalMb, CONTROL_PLANE_MEM_MB, (mb) => `the system RAM (${mb} MB) is less than the minimum ${CONTROL_PLANE_MEM_MB} MB`),
};
