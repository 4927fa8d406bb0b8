// The facts ContainerRuntimeCollision judges, read from a tree: dpkg's status
// database on Debian 12's own stanzas (test/helpers/debian-runtimes.ts) and
// containerd's config.toml; version 3 is containerd 2.x's table
// (plugins."io.containerd.cri.v1.runtime").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { known, notKnown, unreadable } from '../../src/acceptance/checker.js';
import { dependsNames, readRuntimeCollision } from '../../src/acceptance/runtime-facts.js';
import { buildTree, type Tree } from '../helpers/tree.js';
import { CONFIG_V2, CONTAINERD, DOCKER, RUNC, TZDATA } from '../helpers/debian-runtimes.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
function host(tree: Tree, live = true): Host {
  const root = mkdtempSync(path.join(tmpdir(), 'runtime-collision-'));
  roots.push(root);
  buildTree(root, tree);
  return new Host({ root, live });
}

describe('the runtime facts, read from the tree', () => {
  it("Debian's three packages with their Depends names, each stanza's line; other packages and config-files ones are not listed", async () => {
    const status = [RUNC, CONTAINERD, DOCKER, TZDATA, 'Package: containerd.io\nStatus: deinstall ok config-files\n'].join('\n');
    const r = await readRuntimeCollision(host({ 'var/lib/dpkg/status': status }));
    expect(r).toEqual({
      known: true,
      value: {
        packages: [
          { name: 'containerd', status: 'install ok installed', line: 10, depends: ['runc', 'libc6'] },
          { name: 'docker.io', status: 'install ok installed', line: 19, depends: ['adduser', 'containerd', 'iptables', 'runc', 'tini', 'libc6'] },
          { name: 'runc', status: 'install ok installed', line: 1, depends: ['libc6', 'libseccomp2'] },
        ],
        systemdCgroupFalse: null,
        exists: { '/run/ostree-booted': false },
      },
    });
  });
  it('Depends: alternatives, architecture qualifiers and build profiles dropped (deb-control(5))', () => {
    expect(dependsNames('libc6 (>= 2.34), runc | crun, python3:any, foo [amd64], bar <!nocheck>')).toEqual(['libc6', 'runc', 'crun', 'python3', 'foo', 'bar']);
    expect(dependsNames(undefined)).toEqual([]);
  });
  it("containerd's `config default` (version 2) and a containerd 2.x version 3 file with SystemdCgroup = false: the table, as a TOML key", async () => {
    const v2 = await readRuntimeCollision(host({ 'etc/containerd/config.toml': CONFIG_V2 }));
    expect(v2.known && v2.value.systemdCgroupFalse).toBe('plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options');
    const v3 = 'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]\n  SystemdCgroup = false\n';
    const r3 = await readRuntimeCollision(host({ 'etc/containerd/config.toml': v3 }));
    expect(r3.known && r3.value.systemdCgroupFalse).toBe('plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options');
  });
  it('SystemdCgroup = true, or not set, or the key on another runtime: nothing; no files at all: nothing; /run/ostree-booted read', async () => {
    for (const toml of [
      CONFIG_V2.replace('SystemdCgroup = false', 'SystemdCgroup = true'),
      CONFIG_V2.replace('        SystemdCgroup = false\n', ''),
      CONFIG_V2.replaceAll('runtimes.runc', 'runtimes.kata'),
    ]) {
      const r = await readRuntimeCollision(host({ 'etc/containerd/config.toml': toml }));
      expect(r.known && r.value.systemdCgroupFalse).toBeNull();
    }
    expect(await readRuntimeCollision(host({ 'run/ostree-booted': '' }))).toEqual({
      known: true,
      value: { packages: [], systemdCgroupFalse: null, exists: { '/run/ostree-booted': true } },
    });
  });
  it('a status file dpkg would refuse, or a config.toml the reader does not read: not known, naming the file and line', async () => {
    expect(await readRuntimeCollision(host({ 'var/lib/dpkg/status': `${RUNC} \nPackage: x\n` }))).toEqual({
      known: false,
      reason: '/var/lib/dpkg/status:10: a duplicate field Package',
      unreadable: true,
    });
    expect(await readRuntimeCollision(host({ 'etc/containerd/config.toml': 'version = 2\nimports = """x"""\n' }))).toEqual({
      known: false,
      reason: '/etc/containerd/config.toml:2: a multi-line string is not read here',
      unreadable: true,
    });
  });
});
