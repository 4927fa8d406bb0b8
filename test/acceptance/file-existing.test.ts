// FileExisting-<program>: kubeadm's InPathCheck ("<program> not found in system
// path"), with addExecChecks' mandatory and optional lists written out by hand
// from cmd/kubeadm/app/preflight/checks_linux.go.
import { describe, expect, it } from 'vitest';
import type { Checker } from '../../src/acceptance/checker.js';
import { fileExistingChecks, majorMinor } from '../../src/acceptance/file-existing.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { passingFacts as facts } from '../helpers/acceptance-facts.js';

const byName = (name: string): Checker => fileExistingChecks.find((c) => c.name === name)!;

describe('FileExisting: the programs kubeadm looks up in PATH', () => {
  it('a missing mandatory program (ip, iptables, mount, nsenter) is an error', () => {
    for (const p of ['ip', 'iptables', 'mount', 'nsenter']) {
      expect(byName(`FileExisting-${p}`).check(facts({}, [p]))).toEqual({ warnings: [], errors: [`${p} not found in system path`] });
    }
  });
  it('a missing optional one (ebtables, ethtool, socat, tc, touch) is a warning', () => {
    for (const p of ['ebtables', 'ethtool', 'socat', 'tc', 'touch']) {
      expect(byName(`FileExisting-${p}`).check(facts({}, [p]))).toEqual({ warnings: [`${p} not found in system path`], errors: [] });
    }
  });
  it('conntrack: an error for Kubernetes 1.31, not checked for 1.32, skipped when kube_version is not known', () => {
    const c = byName('FileExisting-conntrack');
    expect(c.check(facts({ kubeVersion: known('v1.31.4') }, ['conntrack']))).toEqual({ warnings: [], errors: ['conntrack not found in system path'] });
    expect(c.check(facts({ kubeVersion: known('v1.32.0') }, ['conntrack']))).toEqual({ warnings: [], errors: [] });
    expect(c.check(facts({ kubeVersion: known('1.33.1') }, ['conntrack']))).toEqual({ warnings: [], errors: [] });
    expect(c.check(facts({ kubeVersion: notKnown('no checkout') }, ['conntrack']))).toMatchObject({ skipped: expect.stringContaining('no checkout') });
    // Present: nothing to say whatever the version.
    expect(c.check(facts({ kubeVersion: notKnown('no checkout') }))).toEqual({ warnings: [], errors: [] });
  });
  it('versions are read as major.minor', () => {
    expect([majorMinor('v1.31.4'), majorMinor('1.32'), majorMinor('latest'), majorMinor('1.')]).toEqual([[1, 31], [1, 32], null, null]);
  });
  it('a lookup that could not be done is skipped with its reason', () => {
    const f = facts();
    (f.programs as Map<string, ReturnType<typeof notKnown<string | null>>>).set('iptables', notKnown('PATH has the relative entry "bin"'));
    expect(fileExistingChecks.find((c) => c.name === 'FileExisting-iptables')!.check(f)).toEqual({ skipped: 'PATH has the relative entry "bin"' });
  });
});
