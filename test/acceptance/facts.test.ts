// What the checkers judge, read from fixture roots: the cgroup controllers as
// system-validators' CgroupsValidator reads them (cgroup v2's
// /sys/fs/cgroup/cgroup.controllers, else v1's /proc/cgroups where the 4th
// column "enabled" is not 0), and PATH lookups as exec.LookPath does them
// (an executable regular file, links followed inside the root).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { lookUpPrograms, readCgroups } from '../../src/acceptance/facts.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
function host(tree: Tree, live: boolean, executable: string[] = []): Host {
  const root = mkdtempSync(path.join(tmpdir(), 'acceptance-facts-'));
  roots.push(root);
  buildTree(root, tree);
  for (const p of executable) chmodSync(path.join(root, p), 0o755);
  return new Host({ root, live });
}

describe('cgroup controllers', () => {
  it('v2: the words of cgroup.controllers', async () => {
    expect(await readCgroups(host({ 'sys/fs/cgroup/cgroup.controllers': 'cpuset cpu io memory pids\n' }, true))).toEqual({
      known: true,
      value: { version: 2, controllers: ['cpuset', 'cpu', 'io', 'memory', 'pids'] },
    });
  });
  it('v1: the enabled rows of /proc/cgroups (hugetlb disabled here is left out)', async () => {
    const cgroups = '#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t1\t1\ncpu\t1\t90\t1\nmemory\t4\t95\t1\nhugetlb\t0\t1\t0\n';
    expect(await readCgroups(host({ 'proc/cgroups': cgroups }, true))).toEqual({
      known: true,
      value: { version: 1, controllers: ['cpuset', 'cpu', 'memory'] },
    });
  });
  it('offline, and in a container: not known, with the reason', async () => {
    expect(await readCgroups(host({ 'sys/fs/cgroup/cgroup.controllers': 'cpu\n' }, false))).toMatchObject({
      known: false,
      reason: expect.stringContaining('offline'),
    });
    const c = await readCgroups(host({ 'sys/fs/cgroup/cgroup.controllers': '\n', 'run/systemd/container': 'systemd-nspawn\n' }, true));
    expect(c).toMatchObject({ known: false, reason: expect.stringContaining('this is a container') });
  });
});

describe('PATH lookups under the root', () => {
  it('an executable file is found, a file without an x bit is not, a link is followed inside the root', async () => {
    const h = host(
      { 'usr/sbin/iptables-nft': '#!/bin/sh\n', 'usr/sbin/iptables': { link: 'iptables-nft' }, 'usr/sbin/ip': 'x', 'usr/bin/mount': '#!/bin/sh\n' },
      false,
      ['usr/sbin/iptables-nft', 'usr/bin/mount'],
    );
    const found = await lookUpPrograms(h);
    expect([found.get('iptables'), found.get('mount'), found.get('ip'), found.get('socat')]).toEqual([
      { known: true, value: '/usr/sbin/iptables-nft' },
      { known: true, value: '/usr/bin/mount' },
      { known: true, value: null },
      { known: true, value: null },
    ]);
  });
});
