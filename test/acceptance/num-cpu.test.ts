// NumCPU: kubeadm's ControlPlaneNumCPU = 2 (cmd/kubeadm/app/constants/constants.go), its message from preflight/checks.go.
import { describe, expect, it } from 'vitest';
import { numCpuCheck } from '../../src/acceptance/num-cpu.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { passingFacts as facts } from '../helpers/acceptance-facts.js';

describe('NumCPU: at least 2 CPUs on a control-plane node', () => {
  it("1 CPU is an error with kubeadm's words; 2 pass", () => {
    expect(numCpuCheck.check(facts({ cpus: known(1) }))).toEqual({ warnings: [], errors: ['the number of available CPUs 1 is less than the required 2'] });
    expect(numCpuCheck.check(facts({ cpus: known(2) }))).toEqual({ warnings: [], errors: [] });
  });
  it('an unknown count is skipped with its reason, never guessed', () => {
    expect(numCpuCheck.check(facts({ cpus: notKnown('offline') }))).toEqual({ skipped: 'offline' });
  });
});
