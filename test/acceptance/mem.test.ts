// Mem: kubeadm's ControlPlaneMem = 1700 MB (cmd/kubeadm/app/constants/constants.go), its message from preflight/checks_linux.go.
import { describe, expect, it } from 'vitest';
import { memCheck } from '../../src/acceptance/mem.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { passingFacts as facts } from '../helpers/acceptance-facts.js';

describe('Mem: at least 1700 MB on a control-plane node', () => {
  it('1699 MB is an error; 1700 MB passes', () => {
    expect(memCheck.check(facts({ memTotalMb: known(1699) }))).toEqual({ warnings: [], errors: ['the system RAM (1699 MB) is less than the minimum 1700 MB'] });
    expect(memCheck.check(facts({ memTotalMb: known(1700) }))).toEqual({ warnings: [], errors: [] });
  });
  it('an unknown total is skipped with its reason; only a control-plane node is checked', () => {
    expect(memCheck.check(facts({ memTotalMb: notKnown('/proc/meminfo: no MemTotal line') }))).toEqual({ skipped: '/proc/meminfo: no MemTotal line' });
    expect(memCheck.runsOn).toBe('control-plane');
  });
});
