// What a reset of a former node moves aside and stops: the reset directories
// as they exist under a fixture root (sizes and counts worked out from the
// bytes written), the mount points /proc/self/mountinfo shows below them
// (lines written as proc(5) documents them: field 5 the mount point, a space
// escaped \040), and the node's service units on systemd's search path.
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { RESET_DIRS, mountsUnder, nodeUnits, resetDirs } from '../../src/former-node/reset-targets.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
async function rootWith(files: Tree): Promise<string> {
  const r = await mkdtemp(path.join(tmpdir(), 'reset-targets-'));
  temps.push(r);
  buildTree(r, files);
  return r;
}

describe('mountsUnder', () => {
  const MOUNTINFO = [
    '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
    '80 22 0:45 / /var/lib/kubelet/pods/a\\040b/volumes rw shared:30 - tmpfs tmpfs rw',
    '81 22 0:46 / /var/lib/kubelet rw shared:31 - ext4 /dev/sdb1 rw',
    '82 22 0:47 / /var/lib/kubelet-old rw shared:32 - tmpfs tmpfs rw',
    '83 22 0:48 / /var/lib/etcd/member rw shared:33 - tmpfs tmpfs rw',
    '',
  ].join('\n');
  it('the mount points at or below each directory, escapes undone; a sibling with the same prefix is not below it', () => {
    const m = mountsUnder(MOUNTINFO, ['/var/lib/kubelet', '/var/lib/etcd', '/etc/kubernetes']);
    expect(m.get('/var/lib/kubelet')).toEqual(['/var/lib/kubelet/pods/a b/volumes', '/var/lib/kubelet']);
    expect(m.get('/var/lib/etcd')).toEqual(['/var/lib/etcd/member']);
    expect(m.has('/etc/kubernetes')).toBe(false);
  });
  it('nothing from empty or short lines', () => {
    expect(mountsUnder('', RESET_DIRS).size).toBe(0);
    expect(mountsUnder('1 2 3\n', RESET_DIRS).size).toBe(0);
  });
});

describe('resetDirs (offline: no mountinfo read)', () => {
  it('each existing reset directory measured: bytes of regular files, every non-directory entry counted', async () => {
    const root = await rootWith({
      'etc/kubernetes/admin.conf': 'x'.repeat(100),
      'etc/kubernetes/pki/ca.crt': 'y'.repeat(20),
      'etc/kubernetes/pki/ca.link': { link: 'ca.crt' },
      'var/lib/etcd': { link: '/srv/etcd' },
      'etc/rancher': 'a file, not a directory\n',
    });
    const dirs = await resetDirs(new Host({ root }));
    expect(dirs).toEqual([
      // 100 + 20 bytes; admin.conf, ca.crt and the symlink are 3 entries (the link has no bytes counted).
      { path: '/etc/kubernetes', kind: 'dir', bytes: 120, files: 3, partial: false, mounts: [], packageFiles: [] },
      { path: '/var/lib/etcd', kind: 'link', link: '/srv/etcd' },
      { path: '/etc/rancher', kind: 'other' },
    ]);
  });
  // Seen in the boot farm: Debian's podman ships /etc/cni/net.d/87-podman-bridge.conflist, and a reset that moved the
  // directory would take podman's network from it. The oracle is dpkg-query -S over the same database.
  it('files a package owns below a reset directory are named with the package, as dpkg-query -S finds them', async () => {
    const root = await rootWith({
      'etc/cni/net.d/87-podman-bridge.conflist': '{"name":"podman"}\n',
      'etc/cni/net.d/10-calico.conflist': '{"name":"k8s-pod-network"}\n',
      'var/lib/dpkg/status':
        'Package: podman\nStatus: install ok installed\nVersion: 4.3.1+ds1-8+deb12u1\nArchitecture: amd64\nMaintainer: x <x@x>\nDescription: x\n\n',
      'var/lib/dpkg/info/podman.list': '/.\n/etc\n/etc/cni\n/etc/cni/net.d\n/etc/cni/net.d/87-podman-bridge.conflist\n/usr/bin/podman\n',
    });
    const owner = (p: string) => spawnSync('dpkg-query', [`--admindir=${root}/var/lib/dpkg`, '-S', p], { encoding: 'utf8' });
    expect(owner('/etc/cni/net.d/87-podman-bridge.conflist').stdout).toBe('podman: /etc/cni/net.d/87-podman-bridge.conflist\n');
    expect(owner('/etc/cni/net.d/10-calico.conflist').status).not.toBe(0);
    const cni = (await resetDirs(new Host({ root }))).find((d) => d.path === '/etc/cni/net.d');
    expect(cni).toMatchObject({ kind: 'dir', files: 2, packageFiles: [{ path: '/etc/cni/net.d/87-podman-bridge.conflist', package: 'podman' }] });
  });
  it('none of them: nothing', async () => {
    expect(await resetDirs(new Host({ root: await rootWith({ 'etc/hostname': 'n1\n' }) }))).toEqual([]);
  });
  it("the directories kubespray's reset removes that a reset moves aside", () => {
    expect([...RESET_DIRS]).toEqual(['/etc/kubernetes', '/var/lib/kubelet', '/var/lib/etcd', '/etc/cni/net.d', '/var/lib/rancher', '/etc/rancher']);
  });
});

describe('nodeUnits', () => {
  it('etcd.service and every k3s*/rke2* service on the search path, the first file of a name winning; other units not', async () => {
    const root = await rootWith({
      'etc/systemd/system/k3s.service': '[Service]\n',
      'lib/systemd/system/k3s.service': '[Service]\n',
      'lib/systemd/system/rke2-server.service': '[Service]\n',
      'lib/systemd/system/etcd.service': '[Service]\n',
      'lib/systemd/system/k3s.socket': '[Socket]\n',
      'lib/systemd/system/ssh.service': '[Service]\n',
    });
    expect(await nodeUnits(new Host({ root }), [])).toEqual([
      { unit: 'etcd.service', file: '/lib/systemd/system/etcd.service', masked: false },
      { unit: 'k3s.service', file: '/etc/systemd/system/k3s.service', masked: false },
      { unit: 'rke2-server.service', file: '/lib/systemd/system/rke2-server.service', masked: false },
    ]);
  });
  // systemd loads a name from the first directory of its search path that has it (`systemd-analyze unit-paths`
  // order, which SYSTEM_UNIT_PATH mirrors): evidence found in a later directory names the unit, not its file.
  it('a unit the evidence names by a unit file is kept with the file systemd loads; evidence outside the unit path is not a unit', async () => {
    const root = await rootWith({ 'lib/systemd/system/kubelet.service': '[Service]\n', 'etc/systemd/system/kubelet.service': '[Service]\n' });
    const evidence = [
      { path: '/lib/systemd/system/kubelet.service', what: 'kubelet unit', strong: true },
      { path: '/etc/kubernetes/kubelet.service', what: 'a file', strong: false },
      { path: '/etc/systemd/system/kubelet.service.d', what: 'a drop-in dir', strong: false },
    ];
    expect(await nodeUnits(new Host({ root }), evidence)).toEqual([{ unit: 'kubelet.service', file: '/etc/systemd/system/kubelet.service', masked: false }]);
  });
  it('a mask in /etc names the unit: a link to /dev/null or an empty file, as systemctl is-enabled says masked', async () => {
    const root = await rootWith({
      'lib/systemd/system/kubelet.service': '[Service]\n',
      'etc/systemd/system/etcd.service': '',
      'lib/systemd/system/etcd.service': '[Service]\n',
    });
    await symlink('/dev/null', path.join(root, 'etc/systemd/system/kubelet.service'));
    for (const u of ['kubelet.service', 'etcd.service'])
      expect(spawnSync('systemctl', ['--root', root, 'is-enabled', u], { encoding: 'utf8' }).stdout.trim()).toBe('masked');
    const evidence = [{ path: '/lib/systemd/system/kubelet.service', what: 'kubelet unit', strong: true }];
    expect(await nodeUnits(new Host({ root }), evidence)).toEqual([
      { unit: 'etcd.service', file: '/etc/systemd/system/etcd.service', masked: true },
      { unit: 'kubelet.service', file: '/etc/systemd/system/kubelet.service', masked: true },
    ]);
  });
});
