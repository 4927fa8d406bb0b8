// The registry of acceptance checkers: kubeadm's check names, in the order
// the plan prints them, and a host that passes them all (every fact written
// out by hand in test/helpers/acceptance-facts.ts) gets no warning and no skip.
import { describe, expect, it } from 'vitest';
import { CHECKERS } from '../../src/acceptance/index.js';
import { passingFacts as facts } from '../helpers/acceptance-facts.js';

describe('the checkers are named as kubeadm names them', () => {
  it('NumCPU, Mem, FileExisting-<program> for every program addExecChecks lists, SystemVerification', () => {
    expect(CHECKERS.map((c) => c.name)).toEqual([
      'NumCPU',
      'Mem',
      'Firewalld',
      'HTTPProxy',
      'HTTPProxyCIDR',
      'FileExisting-conntrack',
      'FileExisting-ip',
      'FileExisting-iptables',
      'FileExisting-mount',
      'FileExisting-nsenter',
      'FileExisting-ebtables',
      'FileExisting-ethtool',
      'FileExisting-socat',
      'FileExisting-tc',
      'FileExisting-touch',
      'SystemVerification',
      'Hostname',
      'Service-Kubelet',
      'TimeSync',
      'ResolvConfLoop',
      'ContainerRuntimeCollision',
      'FreeSpace',
      'NetworkManagerCNI',
      'IptablesForwardDrop',
      'ControlPlanePortsFirewalled',
    ]);
    expect(CHECKERS.filter((c) => c.runsOn === 'control-plane').map((c) => c.name)).toEqual(['NumCPU', 'Mem', 'Firewalld', 'HTTPProxy', 'HTTPProxyCIDR']);
  });

  it('a host that passes them all: every check passes, none skipped', () => {
    expect(CHECKERS.map((c) => c.check(facts()))).toEqual(CHECKERS.map(() => ({ warnings: [], errors: [] })));
  });
});
