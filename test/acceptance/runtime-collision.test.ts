// The ContainerRuntimeCollision checker on its facts (read from a tree in
// runtime-facts.test.ts): one warning per collision, naming where it was read.
import { describe, expect, it } from 'vitest';
import type { AcceptanceFacts } from '../../src/acceptance/checker.js';
import { known, notKnown, unreadable } from '../../src/acceptance/checker.js';
import { containerRuntimeCollisionCheck } from '../../src/acceptance/runtime-collision.js';

describe('the ContainerRuntimeCollision checker', () => {
  const facts = (r: AcceptanceFacts['runtimeCollision']) => ({ runtimeCollision: r }) as AcceptanceFacts;
  it('one warning per collision, each naming where it was read', () => {
    const f = {
      packages: [{ name: 'runc', status: 'install ok installed', line: 1, depends: [] }],
      systemdCgroupFalse: 'plugins.cri.containerd.runtimes.runc.options',
      exists: {},
    };
    expect(containerRuntimeCollisionCheck.check(facts(known(f)))).toEqual({
      warnings: [
        "Debian's runc package is installed (/var/lib/dpkg/status:1: install ok installed)",
        '/etc/containerd/config.toml sets SystemdCgroup = false in [plugins.cri.containerd.runtimes.runc.options] (cgroupfs, where kubelet uses systemd)',
      ],
      errors: [],
    });
  });
  it('nothing: no warning; not known: skipped with the reason, unreadable: unknown; a name of ours', () => {
    expect(containerRuntimeCollisionCheck.check(facts(known({ packages: [], systemdCgroupFalse: null, exists: {} })))).toEqual({ warnings: [], errors: [] });
    expect(containerRuntimeCollisionCheck.check(facts(notKnown('x')))).toEqual({ skipped: 'x' });
    // A file that decides it and cannot be read: unknown, loudly, not skipped.
    expect(containerRuntimeCollisionCheck.check(facts(unreadable('/var/lib/dpkg/status:3: x')))).toEqual({ unknown: '/var/lib/dpkg/status:3: x' });
    expect(containerRuntimeCollisionCheck.breaksLater).toBeDefined();
  });
});
