// linuxDistribution ports ansible's distribution facts (ansible-core's
// module_utils/facts/system/distribution.py over its bundled distro). Expected
// values were produced by running ansible-core 2.14's own distribution facts
// on the same inputs, so these pin the port to ansible's behaviour, quirks included.
import { describe, expect, it } from 'vitest';
import { linuxDistribution, parseOsRelease, versionAtLeast } from '../../src/facts/distribution.js';
import type { DistributionInputs } from '../../src/facts/distribution.js';
import { shlex } from '../../src/lex/shlex.js';

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

describe('versionAtLeast (the python3-distro version gate)', () => {
  it('compares dotted numbers field by field, numerically, a missing field being 0', () => {
    expect(versionAtLeast('1.8.0', '1.8')).toBe(true);
    expect(versionAtLeast('1.8', '1.8.0')).toBe(true);
    // 10 > 8 as numbers, though "1.10" < "1.8" as strings
    expect(versionAtLeast('1.10.0', '1.8')).toBe(true);
    expect(versionAtLeast('1.7.9', '1.8')).toBe(false);
    expect(versionAtLeast('2', '1.8')).toBe(true);
    expect(versionAtLeast('0.9', '1.8')).toBe(false);
  });
});

describe('parseOsRelease', () => {
  it('lower-cases keys and keeps the text after the first "="', () => {
    expect(parseOsRelease('NAME="Debian GNU/Linux"\nHOME_URL="https://x/?a=b"\n')).toEqual({ name: 'Debian GNU/Linux', home_url: 'https://x/?a=b' });
  });
  it('an unterminated quote reads as no properties at all, as python shlex raises and distro gives up', () => {
    expect(parseOsRelease('ID=debian\nNAME="Debian\n')).toEqual({});
  });
});
