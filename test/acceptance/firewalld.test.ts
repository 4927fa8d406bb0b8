// Firewalld: kubeadm's FirewalldCheck warning (cmd/kubeadm/app/preflight/checks.go), with the API server's port and 10250.
import { describe, expect, it } from 'vitest';
import { firewalldCheck } from '../../src/acceptance/firewalld.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { passingFacts as facts } from '../helpers/acceptance-facts.js';

describe('Firewalld: a warning when firewalld is active, naming the API server and kubelet ports', () => {
  it("active: kubeadm's warning with kube_apiserver_port and 10250; absent or inactive: nothing", () => {
    expect(
      firewalldCheck.check(facts({ firewalld: known({ state: 'active', how: 'systemctl: firewalld.service is active' }), apiserverPort: known(8443) })),
    ).toEqual({
      warnings: [
        'firewalld is active, please ensure ports [8443 10250] are open or your cluster may not function correctly (systemctl: firewalld.service is active)',
      ],
      errors: [],
    });
    for (const state of ['absent', 'inactive'] as const)
      expect(firewalldCheck.check(facts({ firewalld: known({ state, how: '' }) }))).toEqual({ warnings: [], errors: [] });
  });
  it('not known: skipped with the reason', () => {
    expect(firewalldCheck.check(facts({ firewalld: notKnown('unit files unreadable') }))).toEqual({ skipped: 'unit files unreadable' });
  });
});
