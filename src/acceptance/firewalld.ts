// Firewalld: kubeadm init (and join --control-plane) warns when firewalld is
// active, since its default zone drops the API server's and kubelet's ports
// between nodes. kubeadm asks the init system whether the service exists and
// is active (FirewalldCheck); offline, an image's firewalld that starts at
// boot is what kubeadm would find active. A warning: the install goes on.
import type { Checker } from './checker.js';
import { pass } from './checker.js';

/** cmd/kubeadm/app/constants/constants.go KubeletPort. */
export const KUBELET_PORT = 10250;

export const firewalldCheck: Checker = {
  name: 'Firewalld',
  runsOn: 'control-plane',
  source: 'cmd/kubeadm/app/preflight/checks.go FirewalldCheck.Check (InitNodeChecks: ports LocalAPIEndpoint.BindPort and KubeletPort)',
  check(f) {
    if (!f.firewalld.known) return { skipped: f.firewalld.reason };
    if (f.firewalld.value.state !== 'active') return pass();
    // Go's %v of []int: "[6443 10250]".
    const api = f.apiserverPort.known ? String(f.apiserverPort.value) : 'kube_apiserver_port';
    return {
      warnings: [
        `firewalld is active, please ensure ports [${api} ${KUBELET_PORT}] are open or your cluster may not function correctly (${f.firewalld.value.how})`,
      ],
      errors: [],
    };
  },
};
