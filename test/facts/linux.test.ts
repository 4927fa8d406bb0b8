// Pure fact algorithms. Expected values were produced by running
// ansible-core 2.14's own LinuxHardware.get_cpu_facts / distro on the same
// inputs, so these pin the port to ansible's behaviour, quirks included.
import { describe, expect, it } from 'vitest';
import { memtotalMb, parseRouteGet, processorVcpus } from '../../src/facts/linux.js';
import { linuxDistribution, parseOsRelease } from '../../src/facts/distribution.js';
import { shlex } from '../../src/lex/shlex.js';
import type { DistributionInputs } from '../../src/facts/distribution.js';
import { parseSetupOutput } from '../../src/facts/ansible.js';
import { parseMeminfo } from '../../src/observe/meminfo.js';

function x86(sockets: number, cores: number, threads: number, flags = 'fpu vme'): string {
  const out: string[] = [];
  let n = 0;
  for (let s = 0; s < sockets; s++)
    for (let c = 0; c < cores; c++)
      for (let t = 0; t < threads; t++)
        out.push(
          `processor\t: ${n++}\nvendor_id\t: GenuineIntel\nmodel name\t: Intel Xeon\nphysical id\t: ${s}\nsiblings\t: ${cores * threads}\ncore id\t\t: ${c}\ncpu cores\t: ${cores}\nflags\t\t: ${flags}\n`,
        );
  return out.join('\n');
}

const X86 = { architecture: 'x86_64', xen: false };

describe('memtotal_mb', () => {
  it('is MemTotal kB integer-divided by 1024', () => {
    const memTotal = (text: string) => memtotalMb(parseMeminfo(text).get('MemTotal') ?? null);
    expect(memTotal('MemTotal:        2047996 kB\nMemFree:  1 kB\n')).toBe(1999);
    expect(memTotal('MemTotal:        1048575 kB\n')).toBe(1023);
    expect(memTotal('MemFree: 5 kB\n')).toBeNull();
  });
});

describe('processor_vcpus', () => {
  it('multiplies threads per core, sockets and cores', () => {
    expect(processorVcpus(x86(2, 2, 2), X86)).toBe(8);
    expect(processorVcpus(x86(1, 4, 1), X86)).toBe(4);
  });
  it('falls back to the processor count without physical id', () => {
    const cpu = [0, 1, 2].map((i) => `processor\t: ${i}\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu\n`).join('\n');
    expect(processorVcpus(cpu, X86)).toBe(3);
    // Xen paravirt (no vme flag) counts processors the same way
    expect(processorVcpus(cpu, { architecture: 'x86_64', xen: true })).toBe(3);
  });
  it('counts "processor" lines on ARM', () => {
    const cpu = [0, 1, 2, 3].map((i) => `processor\t: ${i}\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n`).join('\n');
    expect(processorVcpus(cpu, { architecture: 'aarch64', xen: false })).toBe(4);
  });
  it('keeps the int-0 versus "0" key quirk (cpu cores before any physical id)', () => {
    const cpu = [0, 1]
      .map((i) => `processor\t: ${i}\nvendor_id\t: GenuineIntel\nmodel name\t: X\ncpu cores\t: 2\nsiblings\t: 2\ncore id\t\t: ${i}\n`)
      .join('\n');
    expect(processorVcpus(cpu, X86)).toBe(2);
  });
  it('is not set on s390x', () => {
    expect(processorVcpus(x86(1, 1, 1), { architecture: 's390x', xen: false })).toBeNull();
  });
});

describe('default_ipv4', () => {
  it('takes src/dev/via from `ip -4 route get 8.8.8.8`', () => {
    expect(parseRouteGet('8.8.8.8 via 192.0.2.1 dev eth0 src 192.0.2.10 uid 0 \n    cache \n')).toEqual({
      interface: 'eth0',
      address: '192.0.2.10',
      gateway: '192.0.2.1',
    });
    expect(parseRouteGet('8.8.8.8 dev dummy0 src 192.0.2.2 uid 0\n')).toEqual({ interface: 'dummy0', address: '192.0.2.2' });
    expect(parseRouteGet('RTNETLINK answers: Network is unreachable\n')).toEqual({});
    expect(parseRouteGet('')).toEqual({});
  });
});

const DEBIAN_OS_RELEASE = `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
`;

function inputs(p: Partial<DistributionInputs> & { files?: Record<string, string | null> }): DistributionInputs {
  return { etcFiles: {}, lsbRelease: null, systemDistroVersion: null, suseBaseproduct: null, ...p, files: { ...p.files } };
}

describe('distribution and distribution_version', () => {
  const debian = { '/etc/os-release': DEBIAN_OS_RELEASE, '/etc/debian_version': '12.15\n' };
  it('Debian 12 without a system distro package: bundled distro 1.6 gives "12"', () => {
    // distribution_release: Debian's PRETTY_NAME "(bookworm)", as setup reports it (test/facts/native.test.ts on this machine).
    expect(linuxDistribution(inputs({ files: debian }))).toEqual({
      distribution: 'Debian',
      distribution_version: '12',
      distribution_release: 'bookworm',
      distribution_major_version: '12',
    });
  });
  it("distribution_release: VERSION_CODENAME, overridden by Debian's PRETTY_NAME; left out where ansible would ask distro.codename() or dpkg", () => {
    const noPretty = DEBIAN_OS_RELEASE.replace(/^PRETTY_NAME=.*\n/, '').replace('VERSION_CODENAME=bookworm', 'VERSION_CODENAME=trixie');
    expect(linuxDistribution(inputs({ files: { '/etc/os-release': noPretty } })).distribution_release).toBe('trixie');
    expect(
      linuxDistribution(inputs({ files: { '/etc/os-release': DEBIAN_OS_RELEASE.replace('VERSION_CODENAME=bookworm', 'VERSION_CODENAME=other') } }))
        .distribution_release,
    ).toBe('bookworm');
    const bare = noPretty.replace(/^VERSION_CODENAME=.*\n/m, '');
    expect(linuxDistribution(inputs({ files: { '/etc/os-release': bare } })).distribution_release).toBeUndefined();
    const ubuntu =
      'NAME="Ubuntu"\nVERSION_ID="22.04"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\nUBUNTU_CODENAME=jammy\n';
    expect(linuxDistribution(inputs({ files: { '/etc/os-release': ubuntu } })).distribution_release).toBe('jammy');
  });
  it('lsb_release on bookworm says 12 too, so it changes nothing', () => {
    const lsb = 'Distributor ID:\tDebian\nDescription:\tDebian GNU/Linux 12 (bookworm)\nRelease:\t12\nCodename:\tbookworm\n';
    expect(linuxDistribution(inputs({ files: debian, lsbRelease: lsb })).distribution_version).toBe('12');
  });
  it('with python3-distro >= 1.8, /etc/debian_version joins the candidates: "12.15"', () => {
    expect(linuxDistribution(inputs({ files: debian, systemDistroVersion: '1.8.0' })).distribution_version).toBe('12.15');
    expect(linuxDistribution(inputs({ files: debian, systemDistroVersion: '1.7.0' })).distribution_version).toBe('12');
  });
  it('Ubuntu is found through the Debian parser and keeps VERSION_ID', () => {
    const os = 'NAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n';
    expect(linuxDistribution(inputs({ files: { '/etc/os-release': os, '/etc/debian_version': 'bookworm/sid\n' }, systemDistroVersion: '1.8.0' }))).toEqual({
      distribution: 'Ubuntu',
      distribution_version: '22.04',
      // _guess_distribution splits the version; the Debian parser's Ubuntu branch sets no major of its own.
      distribution_major_version: '22',
    });
  });
  it('Rocky: redhat-release names the distribution by its first word', () => {
    const os =
      'NAME="Rocky Linux"\nVERSION="9.3 (Blue Onyx)"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.3"\nPRETTY_NAME="Rocky Linux 9.3 (Blue Onyx)"\n';
    const rel = 'Rocky Linux release 9.3 (Blue Onyx)\n';
    expect(
      linuxDistribution(
        inputs({ files: { '/etc/os-release': os, '/etc/redhat-release': rel }, etcFiles: { 'redhat-release': rel.trim(), 'rocky-release': rel.trim() } }),
      ),
    ).toEqual({ distribution: 'Rocky', distribution_version: '9.3', distribution_major_version: '9' });
  });
  it('distribution_major_version: the guessed version up to its first dot (12 from 12.15 with distro >= 1.8); left out where a parser may set its own', () => {
    expect(linuxDistribution(inputs({ files: debian, systemDistroVersion: '1.8.0' })).distribution_major_version).toBe('12');
    const devuan = 'PRETTY_NAME="Devuan GNU/Linux 5 (daedalus)"\nNAME="Devuan GNU/Linux"\nVERSION_ID="5"\nID=devuan\nID_LIKE=debian\n';
    expect(linuxDistribution(inputs({ files: { '/etc/os-release': devuan } })).distribution_major_version).toBeUndefined();
  });
  it('Alpine takes the whole alpine-release file as the version', () => {
    expect(linuxDistribution(inputs({ files: { '/etc/os-release': 'ID=alpine\nVERSION_ID=3.19.1\n', '/etc/alpine-release': '3.19.1\n' } }))).toEqual({
      distribution: 'Alpine',
      distribution_version: '3.19.1',
    });
  });
  it('os-release is parsed with shell quoting rules', () => {
    expect(shlex(`A="x y" B='z'\n# comment C=1\nD=a\\ b E="q\\"r"`, { posix: true, whitespaceSplit: true }).tokens).toEqual(['A=x y', 'B=z', 'D=a b', 'E=q"r']);
    expect(parseOsRelease('ID="debian"\nVERSION_ID=""\n')).toEqual({ id: 'debian', version_id: '' });
  });
});

describe('ansible -m setup output', () => {
  it('takes the six fields from ansible_facts after "node | SUCCESS => "', () => {
    const out = `[WARNING]: something\nnode1 | SUCCESS => {\n    "ansible_facts": {\n        "ansible_default_ipv4": {"address": "192.0.2.10", "interface": "eth0"},\n        "ansible_distribution": "Debian",\n        "ansible_distribution_version": "12",\n        "ansible_kernel": "6.1.0-31-cloud-amd64",\n        "ansible_memtotal_mb": 1967,\n        "ansible_processor_vcpus": 2,\n        "ansible_hostname": "x{y}"\n    },\n    "changed": false\n}\n`;
    expect(parseSetupOutput(out, 'node1')).toEqual({
      memtotal_mb: 1967,
      processor_vcpus: 2,
      distribution: 'Debian',
      distribution_version: '12',
      kernel: '6.1.0-31-cloud-amd64',
      default_ipv4: '192.0.2.10',
      // All of ansible_facts, without the prefix, for the audit's conditions.
      extra: {
        default_ipv4: { address: '192.0.2.10', interface: 'eth0' },
        distribution: 'Debian',
        distribution_version: '12',
        kernel: '6.1.0-31-cloud-amd64',
        memtotal_mb: 1967,
        processor_vcpus: 2,
        hostname: 'x{y}',
      },
    });
  });
  it('reports an unreachable node with its message', () => {
    const out = 'node1 | UNREACHABLE! => {\n    "changed": false,\n    "msg": "Failed to connect",\n    "unreachable": true\n}\n';
    expect(() => parseSetupOutput(out, 'node1')).toThrow(/UNREACHABLE! Failed to connect/);
    expect(() => parseSetupOutput('nothing', 'node1')).toThrow(/no "node1 \| SUCCESS => " line/);
  });
});
