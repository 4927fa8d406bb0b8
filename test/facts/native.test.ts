import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import type { CommandRunner } from '../../src/host.js';
import { gatherNativeFacts } from '../../src/facts/native.js';
import { gatherAnsibleFacts } from '../../src/facts/ansible.js';
import { FACT_FIELDS } from '../../src/facts/linux.js';

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function tree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'facts-'));
  temps.push(root);
  for (const [p, content] of Object.entries(files)) {
    await mkdir(path.join(root, path.dirname(p)), { recursive: true });
    await writeFile(path.join(root, p), content);
  }
  return root;
}

type Call = { cmd: string; args: string[]; cwd?: string };

function fakeRunner(calls: Call[], answers: Record<string, { exitCode: number; stdout: string }>): CommandRunner {
  return async (cmd, args, opts) => {
    calls.push({ cmd, args, cwd: opts.cwd });
    const a = answers[[cmd, ...args].join(' ')] ?? { exitCode: 127, stdout: '' };
    return { command: [cmd, ...args].join(' '), exitCode: a.exitCode, stdout: a.stdout, stderr: '' };
  };
}

const CPUINFO = [0, 1]
  .map(
    (i) =>
      `processor\t: ${i}\nvendor_id\t: GenuineIntel\nmodel name\t: QEMU\nphysical id\t: 0\nsiblings\t: 2\ncore id\t\t: ${i}\ncpu cores\t: 2\nflags\t\t: fpu vme\n`,
  )
  .join('\n');
const OS_RELEASE =
  'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n';
const ANSWERS = {
  'uname -m': { exitCode: 0, stdout: 'x86_64\n' },
  'uname -r': { exitCode: 0, stdout: '6.1.0-31-cloud-amd64\n' },
  'ip -4 route get 8.8.8.8': { exitCode: 0, stdout: '8.8.8.8 via 192.0.2.1 dev eth0 src 192.0.2.10 uid 0 \n    cache \n' },
};

describe('native facts through Host', () => {
  it('reads /proc, /etc and commands of the target, never this machine', async () => {
    const root = await tree({
      'proc/meminfo': 'MemTotal:        2014128 kB\nMemFree:          100000 kB\n',
      'proc/cpuinfo': CPUINFO,
      'proc/1/comm': 'systemd\n',
      'usr/lib/os-release': OS_RELEASE,
      'etc/debian_version': '12.15\n',
    });
    // /etc/os-release is a relative symlink on Debian; Host resolves it inside the root
    await symlink('../usr/lib/os-release', path.join(root, 'etc/os-release'));
    const calls: Call[] = [];
    const host = new Host({ root, live: true, runner: fakeRunner(calls, ANSWERS) });
    expect(await gatherNativeFacts(host)).toEqual({
      memtotal_mb: 1966,
      processor_vcpus: 2,
      distribution: 'Debian',
      distribution_version: '12',
      kernel: '6.1.0-31-cloud-amd64',
      default_ipv4: '192.0.2.10',
      // ansible's os_family of Debian, platform.system() and uname -m (x86_64 stays x86_64).
      // service_mgr: pid 1 is systemd (the target's /proc/1/comm); pkg_mgr: apt on the Debian family, no rpm to ask;
      // distribution_release: os-release's PRETTY_NAME "(bookworm)" (ansible-core's service_mgr.py, pkg_mgr.py, distribution.py).
      // distribution_major_version: the guessed version up to its first dot, which Debian's parser keeps.
      extra: {
        os_family: 'Debian',
        system: 'Linux',
        architecture: 'x86_64',
        machine: 'x86_64',
        distribution_release: 'bookworm',
        distribution_major_version: '12',
        service_mgr: 'systemd',
        pkg_mgr: 'apt',
      },
    });
    // No lsb_release in this root: the model (src/facts/lsb-release.ts) finds none on PATH, as running it would, and runs nothing.
    expect(calls.map((c) => [c.cmd, ...c.args].join(' '))).toEqual(['uname -m', 'uname -r', 'ip -4 route get 8.8.8.8']);

    // python3-distro 1.8 on the target: ansible would report /etc/debian_version's 12.15
    await mkdir(path.join(root, 'usr/lib/python3/dist-packages/distro'), { recursive: true });
    await writeFile(path.join(root, 'usr/lib/python3/dist-packages/distro/__init__.py'), '');
    await mkdir(path.join(root, 'usr/lib/python3/dist-packages/distro-1.8.0.dist-info'));
    const withDistro = await gatherNativeFacts(host);
    expect([withDistro.distribution_version, withDistro.extra?.distribution_major_version]).toEqual(['12.15', '12']);
  });

  it('refuses offline: the build machine must not leak into an image', async () => {
    const root = await tree({ 'etc/os-release': OS_RELEASE });
    await expect(gatherNativeFacts(new Host({ root }))).rejects.toThrow(/needs a running host/);
  });

  it('has no default_ipv4 when there is no route', async () => {
    const root = await tree({ 'proc/meminfo': 'MemTotal: 1024 kB\n', 'proc/cpuinfo': CPUINFO, 'etc/os-release': OS_RELEASE });
    const host = new Host({ root, live: true, runner: fakeRunner([], { ...ANSWERS, 'ip -4 route get 8.8.8.8': { exitCode: 2, stdout: '' } }) });
    expect((await gatherNativeFacts(host)).default_ipv4).toBeNull();
  });
});

describe('on this machine', () => {
  it('native facts equal `ansible -m setup` in all six fields', async () => {
    // A one-node inventory with a local connection, as in the lab.
    const dir = await mkdtemp(path.join(tmpdir(), 'facts-ansible-'));
    temps.push(dir);
    await writeFile(path.join(dir, 'inventory.ini'), '[kube_control_plane]\nnode1 ansible_connection=local\n');
    const host = new Host();
    const native = await gatherNativeFacts(host);
    const viaAnsible = await gatherAnsibleFacts(host, { dir, inventory: path.join(dir, 'inventory.ini'), node: 'node1' });
    for (const k of FACT_FIELDS) expect({ [k]: native[k] }).toEqual({ [k]: viaAnsible[k] });
    // The further facts kubespray's conditions read: setup's whole answer is kept, and each one
    // modelled natively has setup's value.
    for (const k of ['os_family', 'distribution_major_version', 'distribution_release', 'architecture', 'pkg_mgr', 'service_mgr', 'system']) {
      expect(viaAnsible.extra, k).toHaveProperty(k);
    }
    // service_mgr, pkg_mgr and distribution_release are modelled too (src/facts/managers.ts, distribution.ts): on this Debian
    // machine each is certain, so each must be there with setup's value.
    expect(Object.keys(native.extra ?? {}).sort()).toEqual([
      'architecture',
      'distribution_major_version',
      'distribution_release',
      'machine',
      'os_family',
      'pkg_mgr',
      'service_mgr',
      'system',
    ]);
    for (const [k, v] of Object.entries(native.extra ?? {})) expect({ [k]: v }).toEqual({ [k]: viaAnsible.extra![k] });
  }, 120_000);
});
