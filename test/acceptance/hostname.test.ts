// Hostname: kubeadm's HostnameCheck on kubespray's node name: IsQualifiedName (k8s.io/apimachinery) and a lookup that resolves.
import { describe, expect, it } from 'vitest';
import { hostnameCheck, qualifiedNameProblems } from '../../src/acceptance/hostname.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { passingFacts as facts } from '../helpers/acceptance-facts.js';

describe("Hostname: kubespray's node name, a qualified name that resolves", () => {
  it('a name that does not resolve is a warning; one that does passes', () => {
    expect(hostnameCheck.check(facts({ nodeNameLookup: known({ resolves: false, how: 'not in /etc/hosts, and DNS has no address for it' }) }))).toEqual({
      warnings: ['hostname "node1" could not be reached (not in /etc/hosts, and DNS has no address for it)'],
      errors: [],
    });
  });
  it('an invalid name is a warning even when the lookup is not known', () => {
    const r = hostnameCheck.check(facts({ nodeName: known('-node1'), nodeNameLookup: notKnown('offline') }));
    expect(r).toMatchObject({ errors: [], warnings: [expect.stringContaining('invalid node name format "-node1": name part must consist of alphanumeric')] });
    expect(hostnameCheck.check(facts({ nodeNameLookup: notKnown('offline') }))).toEqual({ skipped: 'offline' });
  });
  it("IsQualifiedName: apimachinery's own examples", () => {
    // Valid and invalid cases from k8s.io/apimachinery/pkg/util/validation's TestIsQualifiedName, written out by hand.
    for (const ok of [
      'simple',
      'now-with-dashes',
      '1-starts-with-num',
      '1234',
      'simple/simple',
      'now-with-dashes/simple',
      'example.com/Uppercase',
      'a'.repeat(63),
      'node_1.lab',
    ])
      expect(qualifiedNameProblems(ok), ok).toEqual([]);
    for (const bad of [
      'nospecialchars%^=@',
      'cantendwithadash-',
      '-cantstartwithadash',
      'only/one/slash',
      'Example.com/abc',
      'example_com/abc',
      '/simple',
      'simple/',
      'a'.repeat(64),
      '',
    ])
      expect(qualifiedNameProblems(bad).length, bad).toBeGreaterThan(0);
  });
});
