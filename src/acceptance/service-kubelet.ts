// Service-Kubelet: kubeadm init and join warn when the kubelet service does
// not exist or is not enabled (ServiceCheck{Service: "kubelet",
// CheckIfActive: false}: whether it runs is not asked). kubespray writes
// /etc/systemd/system/kubelet.service and enables it before kubeadm runs, so
// who fixes it is evaluated from its tasks (service-kubelet-who.ts): on most
// hosts the warning never shows in kubespray's install, and the plan says
// nothing.
import type { Checker } from './checker.js';
import { pass } from './checker.js';

export const serviceKubeletCheck: Checker = {
  name: 'Service-Kubelet',
  runsOn: 'every node',
  source: 'cmd/kubeadm/app/preflight/checks.go ServiceCheck.Check (addCommonChecks: Service "kubelet", CheckIfActive false)',
  check(f) {
    if (!f.kubeletService.known) return { skipped: f.kubeletService.reason };
    const k = f.kubeletService.value;
    // kubeadm's init system: a masked unit exists (systemctl status loads it) but is not enabled.
    if (k.state === 'absent') return { warnings: ['kubelet service does not exist'], errors: [] };
    if (k.state === 'enabled') return pass();
    return { warnings: [`kubelet service is not enabled, please run 'systemctl enable kubelet.service' (${k.how})`], errors: [] };
  },
};
