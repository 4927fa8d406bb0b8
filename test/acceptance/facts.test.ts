// What the checkers judge, read from fixture roots: the cgroup controllers as
// system-validators' CgroupsValidator reads them (cgroup v2's
// /sys/fs/cgroup/cgroup.controllers, else v1's /proc/cgroups where the 4th
// column "enabled" is not 0), and PATH lookups as exec.LookPath does them
// (an executable regular file, links followed inside the root).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Host, type CommandRunner } from '../../src/host.js';
import { lookUpPrograms, readCgroups, readDiskSpace, readKubeletService, readResolvConf, readTimeSync } from '../../src/acceptance/facts.js';
import { known } from '../../src/acceptance/checker.js';
import { execa } from 'execa';
import { cannedRunner } from '../helpers/canned-runner.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
function host(tree: Tree, live: boolean, executable: string[] = [], runner?: CommandRunner): Host {
  const root = mkdtempSync(path.join(tmpdir(), 'acceptance-facts-'));
  roots.push(root);
  buildTree(root, tree);
  for (const p of executable) chmodSync(path.join(root, p), 0o755);
  return new Host({ root, live, ...(runner ? { runner } : {}) });
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

describe('time clients as systemd sees them', () => {
  // The units as Debian ships them (the lines that matter here: [Install], Alias=), and the targets from default.target to sysinit.target.
  const TARGETS: Tree = {
    'lib/systemd/system/sysinit.target': '[Unit]\nDescription=System Initialization\n',
    'lib/systemd/system/basic.target': '[Unit]\nDescription=Basic System\nRequires=sysinit.target\nAfter=sysinit.target\n',
    'lib/systemd/system/multi-user.target': '[Unit]\nDescription=Multi-User System\nRequires=basic.target\nAfter=basic.target\n',
    'etc/systemd/system/default.target': { link: '/lib/systemd/system/multi-user.target' },
  };
  const TIMESYNCD =
    '[Unit]\nDescription=Network Time Synchronization\n\n[Service]\nExecStart=/lib/systemd/systemd-timesyncd\n\n[Install]\nWantedBy=sysinit.target\n';
  const CHRONY =
    '[Unit]\nDescription=chrony, an NTP client/server\n\n[Service]\nType=forking\nExecStart=/usr/sbin/chronyd $DAEMON_OPTS\n\n[Install]\nAlias=chronyd.service\nWantedBy=multi-user.target\n';
  const NTPSEC =
    '[Unit]\nDescription=Network Time Service\n\n[Service]\nExecStart=/usr/libexec/ntpsec/ntp-systemd-wrapper\n\n[Install]\nWantedBy=multi-user.target\nAlias=ntp.service ntpd.service\n';

  it('offline: systemd-timesyncd enabled from sysinit.target runs; chrony installed but not enabled does not', async () => {
    const h = host(
      {
        ...TARGETS,
        'lib/systemd/system/systemd-timesyncd.service': TIMESYNCD,
        'etc/systemd/system/sysinit.target.wants/systemd-timesyncd.service': { link: '/lib/systemd/system/systemd-timesyncd.service' },
        'lib/systemd/system/chrony.service': CHRONY,
      },
      false,
    );
    expect(await readTimeSync(h)).toEqual({
      known: true,
      value: {
        container: null,
        clients: [
          { unit: 'chrony.service', runs: false, how: '/lib/systemd/system/chrony.service does not start at boot' },
          { unit: 'systemd-timesyncd.service', runs: true, how: '/lib/systemd/system/systemd-timesyncd.service starts at boot' },
        ],
      },
    });
  });
  it('offline without a default target: an installed client is not known to start or not (never called off); none installed is still none', async () => {
    const noTarget = host({ 'lib/systemd/system/chrony.service': CHRONY }, false);
    expect(await readTimeSync(noTarget)).toEqual({
      known: false,
      reason:
        '/lib/systemd/system/chrony.service is installed, and there is no default.target on the unit search path, so whether it starts at boot is unknown',
    });
    expect(await readTimeSync(host({}, false))).toEqual({ known: true, value: { container: null, clients: [] } });
  });
  it('none installed: no client; a masked one is named as masked', async () => {
    expect(await readTimeSync(host(TARGETS, false))).toEqual({ known: true, value: { container: null, clients: [] } });
    const masked = host({ ...TARGETS, 'lib/systemd/system/chrony.service': CHRONY, 'etc/systemd/system/chrony.service': { link: '/dev/null' } }, false);
    expect(await readTimeSync(masked)).toEqual({ known: true, value: { container: null, clients: [{ unit: 'chrony.service', runs: false, how: 'masked' }] } });
  });
  it("live: one not enabled but started by hand runs, as systemctl says; ntpsec's alias ntp.service is not counted twice", async () => {
    const runner = cannedRunner({
      'systemctl show -p ActiveState --value chrony.service': 'active\n',
      'systemctl show -p ActiveState --value ntpsec.service': 'inactive\n',
    });
    const h = host({ ...TARGETS, 'lib/systemd/system/chrony.service': CHRONY, 'lib/systemd/system/ntpsec.service': NTPSEC }, true, [], runner);
    expect(await readTimeSync(h)).toEqual({
      known: true,
      value: {
        container: null,
        clients: [
          { unit: 'chrony.service', runs: true, how: 'does not start at boot; systemctl: active' },
          { unit: 'ntpsec.service', runs: false, how: 'does not start at boot; systemctl: inactive' },
        ],
      },
    });
  });
  it('live in a container: the marker is named; systemctl failing is not known, never guessed', async () => {
    const c = await readTimeSync(host({ ...TARGETS, 'run/systemd/container': 'systemd-nspawn\n' }, true, [], cannedRunner({})));
    expect(c).toEqual({ known: true, value: { container: '/run/systemd/container: "systemd-nspawn"', clients: [] } });
    const failing = await readTimeSync(host({ ...TARGETS, 'lib/systemd/system/chrony.service': CHRONY }, true, [], cannedRunner({})));
    expect(failing).toEqual({ known: false, reason: 'systemctl show -p ActiveState chrony.service failed (exit 127)' });
  });
});

describe('kubelet.service as kubeadm asks systemd', () => {
  const TARGET: Tree = {
    'lib/systemd/system/multi-user.target': '[Unit]\nDescription=Multi-User System\n',
    'etc/systemd/system/default.target': { link: '/lib/systemd/system/multi-user.target' },
  };
  // The unit a kubelet package ships (pkgs.k8s.io's kubelet .deb: /lib/systemd/system/kubelet.service, WantedBy=multi-user.target).
  const KUBELET = '[Unit]\nDescription=kubelet: The Kubernetes Node Agent\n\n[Service]\nExecStart=/usr/bin/kubelet\n\n[Install]\nWantedBy=multi-user.target\n';
  it('no unit file: absent', async () => {
    expect(await readKubeletService(host(TARGET, false))).toEqual({
      known: true,
      value: { state: 'absent', entry: null, how: 'no kubelet.service unit file' },
    });
  });
  it('offline: a package unit not enabled is disabled; enabled from multi-user.target it is enabled', async () => {
    const off = host({ ...TARGET, 'lib/systemd/system/kubelet.service': KUBELET }, false);
    expect(await readKubeletService(off)).toMatchObject({ known: true, value: { state: 'disabled', entry: '/lib/systemd/system/kubelet.service' } });
    const on = host(
      {
        ...TARGET,
        'lib/systemd/system/kubelet.service': KUBELET,
        'etc/systemd/system/multi-user.target.wants/kubelet.service': { link: '/lib/systemd/system/kubelet.service' },
      },
      false,
    );
    expect(await readKubeletService(on)).toMatchObject({ known: true, value: { state: 'enabled' } });
  });
  it('live: systemctl is-enabled decides (exit 0 enabled, 1 with a state disabled, anything else not known); a mask is read from the files', async () => {
    const tree = { ...TARGET, 'lib/systemd/system/kubelet.service': KUBELET };
    const enabled = cannedRunner({ 'systemctl is-enabled kubelet.service': 'enabled\n' });
    expect(await readKubeletService(host(tree, true, [], enabled))).toEqual({
      known: true,
      value: { state: 'enabled', entry: '/lib/systemd/system/kubelet.service', how: 'systemctl is-enabled: enabled' },
    });
    const disabled: CommandRunner = async (cmd, args) => ({ command: [cmd, ...args].join(' '), exitCode: 1, stdout: 'disabled\n', stderr: '' });
    expect(await readKubeletService(host(tree, true, [], disabled))).toMatchObject({
      known: true,
      value: { state: 'disabled', how: 'systemctl is-enabled: disabled' },
    });
    expect(await readKubeletService(host(tree, true, [], cannedRunner({})))).toEqual({
      known: false,
      reason: 'systemctl is-enabled kubelet.service failed (exit 127)',
    });
    const masked = host({ ...tree, 'run/systemd/system/kubelet.service': { link: '/dev/null' } }, true, [], cannedRunner({}));
    expect(await readKubeletService(masked)).toEqual({
      known: true,
      value: { state: 'masked', entry: '/run/systemd/system/kubelet.service', how: 'masked by /run/systemd/system/kubelet.service' },
    });
  });
});

describe('/etc/resolv.conf, its links resolved inside the root', () => {
  // systemd-resolved's two files as it writes them (resolved's src/resolve/resolved-resolv-conf.c): the stub, and the upstream list.
  const STUB = '# This is /run/systemd/resolve/stub-resolv.conf managed by man:systemd-resolved(8).\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n';
  const UPSTREAM = '# This is /run/systemd/resolve/resolv.conf managed by man:systemd-resolved(8).\nnameserver 10.0.0.2\nnameserver fe80::1%eth0\nsearch .\n';
  const RESOLVED: Tree = {
    'etc/resolv.conf': { link: '../run/systemd/resolve/stub-resolv.conf' },
    'run/systemd/resolve/stub-resolv.conf': STUB,
    'run/systemd/resolve/resolv.conf': UPSTREAM,
  };
  const states = (resolved: string, nm: string | null): CommandRunner =>
    cannedRunner({
      'systemctl show -p ActiveState --value systemd-resolved.service': `${resolved}\n`,
      ...(nm === null ? {} : { 'systemctl show -p ActiveState --value NetworkManager.service': `${nm}\n` }),
    });

  it("a cloud image's file with a real server: its address, and nothing else read (no command run)", async () => {
    const h = host({ 'etc/resolv.conf': 'search c.internal.\nnameserver 169.254.169.254\n' }, true, [], cannedRunner({}));
    expect(await readResolvConf(h)).toEqual({
      known: true,
      value: { path: '/etc/resolv.conf', real: '/etc/resolv.conf', addresses: ['169.254.169.254'], beside: null },
    });
  });
  it("live, systemd-resolved's stub through a relative link: 127.0.0.53, the upstream list and both services' states", async () => {
    expect(await readResolvConf(host(RESOLVED, true, [], states('active', 'inactive')))).toEqual({
      known: true,
      value: {
        path: '/etc/resolv.conf',
        real: '/run/systemd/resolve/stub-resolv.conf',
        addresses: ['127.0.0.53'],
        beside: {
          upstream: {
            known: true,
            value: { path: '/run/systemd/resolve/resolv.conf', real: '/run/systemd/resolve/resolv.conf', addresses: ['10.0.0.2', 'fe80::1'] },
          },
          active: { 'systemd-resolved.service': { known: true, value: true }, 'NetworkManager.service': { known: true, value: false } },
        },
      },
    });
  });
  it('a state systemctl does not give is not known, with the command', async () => {
    const r = await readResolvConf(host(RESOLVED, true, [], states('active', null)));
    expect(r.known && r.value.beside?.active['NetworkManager.service']).toEqual({
      known: false,
      reason: 'systemctl show -p ActiveState NetworkManager.service failed (exit 127)',
    });
  });
  it('an absolute link leaving the root is read inside it: /../../ stays at the root', async () => {
    const tree: Tree = { 'etc/resolv.conf': { link: '/../../../run/systemd/resolve/stub-resolv.conf' }, 'run/systemd/resolve/stub-resolv.conf': STUB };
    const r = await readResolvConf(host(tree, false));
    expect(r.known && [r.value.real, r.value.addresses]).toEqual(['/run/systemd/resolve/stub-resolv.conf', ['127.0.0.53']]);
  });
  it('offline, a link to the stub resolved writes at boot: not known, naming the link and where it points', async () => {
    const h = host({ 'etc/resolv.conf': { link: '../run/systemd/resolve/stub-resolv.conf' } }, false);
    expect(await readResolvConf(h)).toEqual({
      known: false,
      reason: `/etc/resolv.conf is a link to /run/systemd/resolve/stub-resolv.conf, which does not exist (offline, --root ${h.root}: what is in /run is written at boot)`,
    });
  });
  it('a link loop, a fifo, a directory: not known, naming the file; no file at all: no nameserver', async () => {
    const loop = await readResolvConf(host({ 'etc/resolv.conf': { link: 'resolv.conf' } }, true));
    expect(loop).toMatchObject({
      known: false,
      unreadable: true,
      reason: expect.stringContaining('/etc/resolv.conf cannot be resolved: too many levels of symbolic links'),
    });
    const fifo = host({}, true);
    mkdirSync(path.join(fifo.root, 'etc'));
    execFileSync('mkfifo', [path.join(fifo.root, 'etc/resolv.conf')]);
    expect(await readResolvConf(fifo)).toMatchObject({ known: false, unreadable: true, reason: expect.stringContaining('/etc/resolv.conf cannot be read') });
    const dir = await readResolvConf(host({ 'etc/resolv.conf/x': '' }, true));
    expect(dir).toMatchObject({ known: false, unreadable: true, reason: expect.stringContaining('/etc/resolv.conf cannot be read') });
    expect(await readResolvConf(host({ 'etc/hosts': '' }, true))).toEqual({
      known: true,
      value: { path: '/etc/resolv.conf', real: '/etc/resolv.conf', addresses: [], beside: null },
    });
  });
});

describe('the free space kubelet will measure (statfs, as df reports it)', () => {
  it("nodefs and imagefs before the install: the nearest existing directory's file system, with df's figures", async () => {
    const h = host({ 'var/lib/containerd/io.containerd.content.v1.content/.keep': '' }, true);
    const r = await readDiskSpace(h, known('/var/lib/containerd'));
    expect(r.known).toBe(true);
    if (!r.known) return;
    expect(r.value.nodefs.dir).toBe('/var/lib/kubelet (not there yet: /var/lib)');
    expect(r.value.imagefs!.dir).toBe('/var/lib/containerd');
    // The oracle: df on the same directory (GNU coreutils), bytes and inodes. Size and inode count are fixed;
    // what is free moves with whatever else writes on this file system meanwhile, so it is compared to 1 %.
    const df = await execa('df', ['-B1', '--output=size,avail,itotal,iavail', path.join(h.root, 'var/lib/containerd')]);
    const [size, avail, itotal, iavail] = df.stdout.trim().split('\n')[1]!.trim().split(/\s+/).map(Number) as [number, number, number, number];
    const u = r.value.imagefs!.usage;
    expect([u.sizeBytes, u.inodes]).toEqual([size, itotal]);
    expect(Math.abs(u.availableBytes - avail)).toBeLessThan(size / 100);
    expect(Math.abs(u.freeInodes - iavail)).toBeLessThanOrEqual(Math.max(1, itotal / 100));
    expect(r.value.nodefs.usage.sizeBytes).toBe(size);
  });
  it('offline: not known (an image is not the disk it will boot on); a runtime not judged has no imagefs', async () => {
    expect(await readDiskSpace(host({}, false), known('/var/lib/containerd'))).toMatchObject({ known: false, reason: expect.stringMatching(/^offline/) });
    expect(await readDiskSpace(host({}, true), known(null))).toMatchObject({ known: true, value: { imagefs: null } });
  });
});
