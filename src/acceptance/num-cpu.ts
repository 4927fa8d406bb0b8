// NumCPU: kubeadm init (and join --control-plane) stops when the node has
// fewer CPUs than ControlPlaneNumCPU. kubeadm counts runtime.NumCPU (the CPUs
// the process may run on); the count here is kubespray's
// ansible_processor_vcpus, which a CPU affinity mask or cpuset can exceed.
import type { Checker } from './checker.js';
import { atLeast } from './checker.js';

/** cmd/kubeadm/app/constants/constants.go ControlPlaneNumCPU. */
export const CONTROL_PLANE_NUM_CPU = 2;

export const numCpuCheck: Checker = {
  name: 'NumCPU',
  runsOn: 'control-plane',
  source: 'cmd/kubeadm/app/preflight/checks.go NumCPUCheck.Check (InitNodeChecks); constants.go ControlPlaneNumCPU = 2',
  check: (f) => atLeast(f.cpus, CONTROL_PLANE_NUM_CPU, (n) => `the number of available CPUs ${n} is less than the required ${CONTROL_PLANE_NUM_CPU}`),
};
