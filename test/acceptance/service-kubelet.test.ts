// Service-Kubelet: kubeadm's ServiceCheck for kubelet (cmd/kubeadm/app/preflight/checks.go), CheckIfActive false.
import { describe, expect, it } from 'vitest';
import { serviceKubeletCheck } from '../../src/acceptance/service-kubelet.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { passingFacts as facts } from '../helpers/acceptance-facts.js';

describe("Service-Kubelet: kubeadm's ServiceCheck for kubelet, without CheckIfActive", () => {
  const unit = (state: 'absent' | 'disabled' | 'enabled' | 'masked', how: string) =>
    facts({ kubeletService: known({ state, entry: state === 'absent' ? null : '/etc/systemd/system/kubelet.service', how }) });
  it("absent: kubeadm's 'does not exist' warning; not enabled or masked: its 'please run' warning; never an error", () => {
    expect(serviceKubeletCheck.check(unit('absent', 'no kubelet.service unit file'))).toEqual({ warnings: ['kubelet service does not exist'], errors: [] });
    expect(serviceKubeletCheck.check(unit('disabled', 'systemctl is-enabled: disabled'))).toEqual({
      warnings: ["kubelet service is not enabled, please run 'systemctl enable kubelet.service' (systemctl is-enabled: disabled)"],
      errors: [],
    });
    expect(serviceKubeletCheck.check(unit('masked', 'masked by /run/systemd/system/kubelet.service'))).toEqual({
      warnings: ["kubelet service is not enabled, please run 'systemctl enable kubelet.service' (masked by /run/systemd/system/kubelet.service)"],
      errors: [],
    });
  });
  it('enabled passes whether or not it runs (CheckIfActive is false); not known is skipped with the reason', () => {
    expect(serviceKubeletCheck.check(unit('enabled', 'systemctl is-enabled: enabled'))).toEqual({ warnings: [], errors: [] });
    expect(serviceKubeletCheck.check(facts({ kubeletService: notKnown('no bus') }))).toEqual({ skipped: 'no bus' });
    expect(serviceKubeletCheck.runsOn).toBe('every node');
  });
});
