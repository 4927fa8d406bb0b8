// Who installs a program kubeadm looks up: the Debian package that ships it
// (dpkg -S on Debian 12: conntrack, iproute2 for ip and tc, iptables,
// ebtables, ethtool, socat, mount, util-linux for nsenter, coreutils for
// touch), and whether kubespray's system_packages role lists it with every
// condition true for this node. Fixture checkouts written by hand.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import type { Facts } from '../../src/facts/linux.js';
import { DEBIAN_PACKAGE_OF, SYSTEM_PACKAGES_VARS, whoInstalls } from '../../src/acceptance/packages.js';
import { fixtureNode } from '../helpers/kubespray-fixture.js';

const DEBIAN: Facts = {
  memtotal_mb: 1982,
  processor_vcpus: 2,
  distribution: 'Debian',
  distribution_version: '12',
  kernel: '6.1.0-31-cloud-amd64',
  default_ipv4: null,
  extra: { os_family: 'Debian' },
} as Facts;
const VARS = [
  '---',
  'ethtool_wanted: false',
  'pkgs:',
  '  conntrack: []',
  '  ebtables:',
  '    - "{{ 1 == 1 }}"',
  '    - "{{ ethtool_wanted is defined }}"',
  '  ethtool:',
  '    - "{{ ethtool_wanted }}"',
  '  socat:',
  '    - "{{ \'x\' }}"',
  '  mount: not-a-list',
  '',
].join('\n');

describe('whoInstalls', () => {
  it('a package listed with no condition, or with every condition true: kubespray, citing the entry line', async () => {
    const node = await fixtureNode({ [SYSTEM_PACKAGES_VARS]: VARS });
    expect(await whoInstalls('conntrack', node, DEBIAN)).toEqual({
      by: 'kubespray',
      package: 'conntrack',
      evidence: `${SYSTEM_PACKAGES_VARS}:4 pkgs.conntrack: no condition (all true here)`,
    });
    expect(await whoInstalls('ebtables', node, DEBIAN)).toEqual({
      by: 'kubespray',
      package: 'ebtables',
      evidence: `${SYSTEM_PACKAGES_VARS}:5 pkgs.ebtables: {{ 1 == 1 }} and {{ ethtool_wanted is defined }} (all true here)`,
    });
  });
  it("a condition false on this host, or a package kubespray's list lacks: the operator", async () => {
    const node = await fixtureNode({ [SYSTEM_PACKAGES_VARS]: VARS });
    expect(await whoInstalls('ethtool', node, DEBIAN)).toEqual({
      by: 'operator',
      package: 'ethtool',
      reason: `${SYSTEM_PACKAGES_VARS}:8 pkgs.ethtool: {{ ethtool_wanted }} is false on this host`,
      evidence: `${SYSTEM_PACKAGES_VARS}:8 pkgs.ethtool`,
    });
    // ip and tc are both iproute2, which this list does not name.
    for (const p of ['ip', 'tc'])
      expect(await whoInstalls(p, node, DEBIAN)).toEqual({
        by: 'operator',
        package: 'iproute2',
        reason: `kubespray's pkgs (${SYSTEM_PACKAGES_VARS}:3) has no iproute2`,
        evidence: `${SYSTEM_PACKAGES_VARS}:3 pkgs`,
      });
  });
  it('unknown: a condition that is no boolean, conditions that are no list, no facts, another OS family, no package list', async () => {
    const node = await fixtureNode({ [SYSTEM_PACKAGES_VARS]: VARS });
    expect(await whoInstalls('socat', node, DEBIAN)).toEqual({
      by: 'unknown',
      reason: `${SYSTEM_PACKAGES_VARS}:10 pkgs.socat: "{{ 'x' }}" gives "x", not a boolean`,
    });
    expect(await whoInstalls('mount', node, DEBIAN)).toEqual({ by: 'unknown', reason: `${SYSTEM_PACKAGES_VARS}:12 pkgs.mount is not a list of conditions` });
    expect(await whoInstalls('conntrack', node, undefined)).toEqual({ by: 'unknown', reason: "the host's facts (os_family) were not gathered" });
    expect(await whoInstalls('conntrack', node, { ...DEBIAN, extra: { os_family: 'RedHat' } } as Facts)).toEqual({
      by: 'unknown',
      reason: 'which package ships conntrack on os_family RedHat is not modelled',
    });
    const old = await fixtureNode({ 'roles/kubernetes/preinstall/defaults/main.yml': 'x: 1\n' });
    expect((await whoInstalls('conntrack', old, DEBIAN)).by).toBe('unknown');
  });
  it('the package of each program is the one dpkg says ships it on this machine (programs installed, not chosen by update-alternatives)', () => {
    let checked = 0;
    for (const [program, pkg] of Object.entries(DEBIAN_PACKAGE_OF)) {
      const which = spawnSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).stdout.trim();
      // iptables and ebtables are alternatives: iptables' own -nft programs may stand in for the ebtables package's.
      if (which === '' || spawnSync('readlink', [which], { encoding: 'utf8' }).stdout.startsWith('/etc/alternatives/')) continue;
      checked++;
      const real = spawnSync('readlink', ['-f', which], { encoding: 'utf8' }).stdout.trim();
      const owners = [which, real, which.replace(/^\/usr/, ''), real.replace(/^\/usr/, '')].map((f) =>
        spawnSync('dpkg-query', ['-S', f], { encoding: 'utf8' }).stdout.split(':')[0]!.trim(),
      );
      expect(owners.filter(Boolean), program).toContain(pkg);
    }
    // ip, tc, mount, nsenter, touch are on every Debian system.
    expect(checked).toBeGreaterThanOrEqual(5);
  });
});
