// ansible_distribution and ansible_distribution_version, ported from
// ansible-core 2.14 (module_utils/facts/system/distribution.py and
// module_utils/common/sys_info.py) and the `distro` library it calls. Pure:
// the gatherer hands in every file and command output the Python code reads.
//
// The subtle part is the version on Debian. ansible asks distro for
// version(best=True), which takes the most precise candidate. Which candidates
// exist depends on WHICH distro runs: ansible imports the system `distro`
// package when the target's python3 has one and otherwise its bundled copy
// (1.6.0). Only distro >= 1.8.0 adds /etc/debian_version ("12.11") to the
// candidates; os-release and lsb_release on Debian 12 both say "12". So a host
// with python3-distro installed reports 12.11, a minimal one reports 12.
import { shlex } from '../lex/shlex.js';

export interface DistributionInputs {
  /** Target path -> raw content (null: missing). Every path in OSDIST_LIST plus /usr/lib/os-release and /etc/debian_version. */
  files: Record<string, string | null>;
  /** Regular files directly in /etc, basename -> first line; distro scans them for *-release / *_version. */
  etcFiles: Record<string, string>;
  /** stdout of `lsb_release -a`; null when it is missing or failed. */
  lsbRelease: string | null;
  /** Version of the system `distro` package the target's python3 imports; null: ansible's bundled copy. */
  systemDistroVersion: string | null;
  /** The distro bundled in the ansible-core that runs (src/facts/ansible-core.ts); default 2.14's 1.6.0. */
  bundledDistroVersion?: string;
  /** Resolved target of /etc/products.d/baseproduct when it is a symlink (SUSE only). */
  suseBaseproduct: string | null;
}

export interface Distribution {
  distribution: string;
  distribution_version: string;
  /**
   * Where it is certain: os-release's VERSION_CODENAME (or UBUNTU_CODENAME)
   * as get_distribution_codename reads it, and the Debian parser's
   * PRETTY_NAME "(codename)". Absent where ansible would ask distro.codename(),
   * dpkg's tzdata, or a parser that sets its own.
   */
  distribution_release?: string;
  /**
   * _guess_distribution's version split at the first dot ('NA' when empty),
   * which the Debian parser (for Debian, Raspbian and Ubuntu data) and the
   * search-string ones keep; absent where another parser may set its own.
   */
  distribution_major_version?: string;
}

/** distro's bundled version inside ansible-core 2.14 (module_utils/distro/_distro.py). */
export const BUNDLED_DISTRO_VERSION = '1.6.0';

/** Every file ansible's DistributionFiles.OSDIST_LIST looks at, in order. */
export const OSDIST_LIST: { path: string; name: string; allowEmpty?: boolean }[] = [
  { path: '/etc/altlinux-release', name: 'Altlinux' },
  { path: '/etc/oracle-release', name: 'OracleLinux' },
  { path: '/etc/slackware-version', name: 'Slackware' },
  { path: '/etc/centos-release', name: 'CentOS' },
  { path: '/etc/redhat-release', name: 'RedHat' },
  { path: '/etc/vmware-release', name: 'VMwareESX', allowEmpty: true },
  { path: '/etc/openwrt_release', name: 'OpenWrt' },
  { path: '/etc/os-release', name: 'Amazon' },
  { path: '/etc/system-release', name: 'Amazon' },
  { path: '/etc/alpine-release', name: 'Alpine' },
  { path: '/etc/arch-release', name: 'Archlinux', allowEmpty: true },
  { path: '/etc/os-release', name: 'Archlinux' },
  { path: '/etc/os-release', name: 'SUSE' },
  { path: '/etc/SuSE-release', name: 'SUSE' },
  { path: '/etc/gentoo-release', name: 'Gentoo' },
  { path: '/etc/os-release', name: 'Debian' },
  { path: '/etc/lsb-release', name: 'Debian' },
  { path: '/etc/lsb-release', name: 'Mandriva' },
  { path: '/etc/sourcemage-release', name: 'SMGL' },
  { path: '/usr/lib/os-release', name: 'ClearLinux' },
  { path: '/etc/coreos/update.conf', name: 'Coreos' },
  { path: '/etc/os-release', name: 'Flatcar' },
  { path: '/etc/os-release', name: 'NA' },
];

/** Files the port needs besides OSDIST_LIST. */
export const EXTRA_FILES = ['/usr/lib/os-release', '/etc/debian_version'];

const SEARCH_STRING: Record<string, string> = {
  OracleLinux: 'Oracle Linux',
  RedHat: 'Red Hat',
  Altlinux: 'ALT',
  SMGL: 'Source Mage GNU/Linux',
};
const OS_RELEASE_ALIAS: Record<string, string> = { Archlinux: 'Arch Linux' };

// ---- Python helpers -------------------------------------------------------

function pyStrip(s: string, chars?: string): string {
  if (chars === undefined) return s.replace(/^[\s\v\f]+|[\s\v\f]+$/g, '');
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a]!)) a++;
  while (b > a && chars.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

function pyCapitalize(s: string): string {
  return s.length === 0 ? s : s[0]!.toUpperCase() + s.slice(1).toLowerCase();
}

function countDots(s: string): number {
  return s.split('.').length - 1;
}

// ---- distro ---------------------------------------------------------------

const NORMALIZED_OS_ID: Record<string, string> = { ol: 'oracle', 'opensuse-leap': 'opensuse' };
const NORMALIZED_LSB_ID: Record<string, string> = {
  enterpriseenterpriseas: 'oracle',
  enterpriseenterpriseserver: 'oracle',
  redhatenterpriseworkstation: 'rhel',
  redhatenterpriseserver: 'rhel',
  redhatenterprisecomputenode: 'rhel',
};
const NORMALIZED_DISTRO_ID: Record<string, string> = { redhat: 'rhel' };
const DISTRO_RELEASE_CONTENT_REVERSED = /^(?:[^)]*\)(.*)\()? *(?:STL )?([\d.+\-a-z]*\d) *(?:esaeler *)?(.+)/;
const DISTRO_RELEASE_BASENAME = /^(\w+)[-_](release|version)$/;
const DISTRO_RELEASE_IGNORE = new Set(['debian_version', 'lsb-release', 'oem-release', 'os-release', 'system-release', 'plesk-release', 'iredmail-release']);

export function versionAtLeast(v: string, min: string): boolean {
  const a = v.split('.').map((x) => Number.parseInt(x, 10) || 0);
  const b = min.split('.').map((x) => Number.parseInt(x, 10) || 0);
  for (let k = 0; k < Math.max(a.length, b.length); k++) {
    if ((a[k] ?? 0) !== (b[k] ?? 0)) return (a[k] ?? 0) > (b[k] ?? 0);
  }
  return true;
}

export function parseOsRelease(text: string): Record<string, string> {
  const props: Record<string, string> = {};
  // distro: shlex.shlex(content, posix=True) with whitespace_split = True; a broken quote or escape reads as no properties.
  const lexed = shlex(text, { posix: true, whitespaceSplit: true });
  const tokens = lexed.error === null ? lexed.tokens : [];
  for (const t of tokens) {
    const eq = t.indexOf('=');
    if (eq >= 0) props[t.slice(0, eq).toLowerCase()] = t.slice(eq + 1);
  }
  return props;
}

function parseLsbRelease(text: string): Record<string, string> {
  const props: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const idx = line.indexOf(':');
    if (idx < 0) continue;
    props[line.slice(0, idx).replace(/ /g, '_').toLowerCase()] = line.slice(idx + 1).trim();
  }
  return props;
}

function parseDistroReleaseContent(line: string): Record<string, string> {
  const rev = [...pyStrip(line)].reverse().join('');
  const m = DISTRO_RELEASE_CONTENT_REVERSED.exec(rev);
  const info: Record<string, string> = {};
  const unrev = (s: string) => [...s].reverse().join('');
  if (m) {
    info.name = unrev(m[3]!);
    if (m[2]) info.version_id = unrev(m[2]);
    if (m[1]) info.codename = unrev(m[1]);
  } else if (line) {
    info.name = pyStrip(line);
  }
  return info;
}

/** The parts of distro.LinuxDistribution that ansible reaches. uname never counts on Linux (distro drops it). */
export class DistroPort {
  readonly osRelease: Record<string, string>;
  readonly lsb: Record<string, string>;
  readonly distroRelease: Record<string, string>;
  readonly debianVersion: string;
  readonly libVersion: string;

  constructor(inp: DistributionInputs) {
    const etc = inp.files['/etc/os-release'];
    const usr = inp.files['/usr/lib/os-release'];
    const osr = etc !== null && etc !== undefined ? etc : usr;
    this.osRelease = osr ? parseOsRelease(osr) : {};
    this.lsb = inp.lsbRelease ? parseLsbRelease(inp.lsbRelease) : {};
    this.distroRelease = {};
    for (const base of Object.keys(inp.etcFiles).sort()) {
      if (DISTRO_RELEASE_IGNORE.has(base)) continue;
      const m = DISTRO_RELEASE_BASENAME.exec(base);
      if (!m) continue;
      const info = parseDistroReleaseContent(inp.etcFiles[base]!);
      if (!('name' in info)) continue;
      info.id = m[1]!;
      if (info.name!.toLowerCase().includes('cloudlinux')) info.id = 'cloudlinux';
      this.distroRelease = info;
      break;
    }
    // distro 1.8: open(etc/debian_version).readline().rstrip()
    this.debianVersion = (inp.files['/etc/debian_version'] ?? '').split('\n')[0]!.replace(/\s+$/, '');
    this.libVersion = inp.systemDistroVersion ?? inp.bundledDistroVersion ?? BUNDLED_DISTRO_VERSION;
  }

  id(): string {
    const norm = (v: string, table: Record<string, string>) => {
      const x = v.toLowerCase().replace(/ /g, '_');
      return table[x] ?? x;
    };
    if (this.osRelease.id) return norm(this.osRelease.id, NORMALIZED_OS_ID);
    if (this.lsb.distributor_id) return norm(this.lsb.distributor_id, NORMALIZED_LSB_ID);
    if (this.distroRelease.id) return norm(this.distroRelease.id, NORMALIZED_DISTRO_ID);
    return '';
  }

  like(): string {
    return this.osRelease.id_like ?? '';
  }

  version(best: boolean): string {
    const versions = [
      this.osRelease.version_id ?? '',
      this.lsb.release ?? '',
      this.distroRelease.version_id ?? '',
      parseDistroReleaseContent(this.osRelease.pretty_name ?? '').version_id ?? '',
      parseDistroReleaseContent(this.lsb.description ?? '').version_id ?? '',
      '', // uname_attr("release"): empty on Linux
    ];
    if (versionAtLeast(this.libVersion, '1.8.0') && (this.id() === 'debian' || this.like().split(/\s+/).includes('debian'))) {
      versions.push(this.debianVersion);
    }
    let version = '';
    if (best) {
      for (const v of versions) if (countDots(v) > countDots(version) || version === '') version = v;
    } else {
      for (const v of versions) if (v !== '') return v;
    }
    return version;
  }
}

/** sys_info.get_distribution() */
function getDistribution(d: DistroPort): string {
  const dist = pyCapitalize(d.id());
  if (dist === 'Amzn') return 'Amazon';
  if (dist === 'Rhel') return 'Redhat';
  return dist || 'OtherLinux';
}

/** sys_info.get_distribution_version() */
function getDistributionVersion(d: DistroPort): string {
  let version = d.version(false);
  const id = d.id();
  if (id === 'centos' || id === 'debian') {
    const best = d.version(true);
    if (id === 'centos') version = best.split('.').slice(0, 2).join('.');
    if (id === 'debian') version = best;
  }
  return version;
}

// ---- ansible DistributionFiles ---------------------------------------------

type Facts = Record<string, string>;
type Parser = (name: string, data: string, path: string, collected: Facts, ctx: { d: DistroPort; inp: DistributionInputs }) => [boolean, Facts];

const firstGroup = (re: RegExp, s: string): string | undefined => re.exec(s)?.[1];

/** parse_distribution_file_OpenWrt and _Mandriva, the same code in ansible: the marker, then DISTRIB_RELEASE. */
const distribRelease =
  (marker: string): Parser =>
  (name, data) => {
    if (!data.includes(marker)) return [false, {}];
    const f: Facts = { distribution: name };
    const v = firstGroup(/DISTRIB_RELEASE="(.*)"/, data);
    if (v !== undefined) f.distribution_version = v;
    return [true, f];
  };

const PARSERS: Record<string, Parser> = {
  Slackware: (name, data) => {
    if (!data.includes('Slackware')) return [false, {}];
    const f: Facts = { distribution: name };
    const v = /\w+[.]\w+\+?/.exec(data);
    if (v) f.distribution_version = v[0];
    return [true, f];
  },
  Amazon: (_n, data, path) => {
    if (!data.includes('Amazon')) return [false, {}];
    const f: Facts = { distribution: 'Amazon' };
    if (path === '/etc/os-release') {
      const v = firstGroup(/VERSION_ID="(.*)"/, data);
      if (v !== undefined) f.distribution_version = v;
    } else {
      f.distribution_version = data.split(/\s+/).find((w) => /^\d+$/.test(w)) ?? 'NA';
    }
    return [true, f];
  },
  OpenWrt: distribRelease('OpenWrt'),
  Alpine: (_n, data) => [true, { distribution: 'Alpine', distribution_version: data }],
  SUSE: (_n, data, path, collected, { inp }) => {
    const f: Facts = {};
    if (!data.toLowerCase().includes('suse')) return [false, f];
    if (path === '/etc/os-release') {
      for (const line of data.split(/\r?\n/)) {
        const dist = firstGroup(/^NAME=(.*)/, line);
        if (dist !== undefined) f.distribution = pyStrip(dist, '"');
        const ver = firstGroup(/^VERSION_ID="?([0-9]+\.?[0-9]*)"?/, line);
        if (ver !== undefined) f.distribution_version = ver;
      }
    } else if (path === '/etc/SuSE-release') {
      const lower = data.toLowerCase();
      if (lower.includes('open')) {
        f.distribution = data.split(/\r?\n/)[0]!.trim().split(/\s+/)[0]!;
      } else if (lower.includes('enterprise')) {
        if (data.includes('Server')) f.distribution = 'SLES';
        else if (data.includes('Desktop')) f.distribution = 'SLED';
        for (const line of data.split(/\r?\n/)) {
          const pl = firstGroup(/PATCHLEVEL = ([0-9]+)/, line);
          if (pl !== undefined) f.distribution_version = `${collected.distribution_version}.${pl}`;
        }
      }
    }
    if (inp.suseBaseproduct?.endsWith('SLES_SAP.prod')) f.distribution = 'SLES_SAP';
    return [true, f];
  },
  Debian: (_n, data, path) => {
    const f: Facts = {};
    const vid = () => firstGroup(/VERSION_ID="(.*)"/, data);
    if (data.includes('Debian') || data.includes('Raspbian')) f.distribution = 'Debian';
    else if (data.includes('Ubuntu')) f.distribution = 'Ubuntu';
    else if (data.includes('SteamOS')) f.distribution = 'SteamOS';
    else if ((path === '/etc/lsb-release' || path === '/etc/os-release') && (data.includes('Kali') || data.includes('Parrot'))) {
      f.distribution = data.includes('Kali') ? 'Kali' : 'Parrot';
    } else if (data.includes('Devuan')) {
      f.distribution = 'Devuan';
      const v = vid();
      if (v !== undefined) f.distribution_version = v;
    } else if (data.includes('Cumulus')) {
      f.distribution = 'Cumulus Linux';
      const v = firstGroup(/VERSION_ID=(.*)/, data);
      if (v !== undefined) f.distribution_version = v;
    } else if (data.includes('Mint')) {
      f.distribution = 'Linux Mint';
      const v = vid();
      if (v !== undefined) f.distribution_version = v;
    } else if (data.includes('UOS') || data.includes('Uos') || data.includes('uos')) {
      f.distribution = 'Uos';
      const v = vid();
      if (v !== undefined) f.distribution_version = v;
    } else if (data.includes('Deepin') || data.includes('deepin')) {
      f.distribution = 'Deepin';
      const v = vid();
      if (v !== undefined) f.distribution_version = v;
    } else return [false, f];
    return [true, f];
  },
  Mandriva: distribRelease('Mandriva'),
  NA: (name, data, _p, collected) => {
    const f: Facts = {};
    for (const line of data.split(/\r?\n/)) {
      const dist = firstGroup(/^NAME=(.*)/, line);
      if (dist !== undefined && name === 'NA') f.distribution = pyStrip(dist, '"');
      const ver = firstGroup(/^VERSION=(.*)/, line);
      if (ver !== undefined && collected.distribution_version === 'NA') f.distribution_version = pyStrip(ver, '"');
    }
    return [true, f];
  },
  Coreos: (_n, data, _p, _c, { d }) => [getDistribution(d).toLowerCase() === 'coreos' && data !== '', {}],
  Flatcar: (_n, data, _p, _c, { d }) => {
    if (getDistribution(d).toLowerCase() !== 'flatcar' || !data) return [false, {}];
    const f: Facts = {};
    const v = firstGroup(/VERSION=(.*)/, data);
    if (v !== undefined) f.distribution_version = pyStrip(v, '"');
    return [true, f];
  },
  ClearLinux: (name, data) => {
    const f: Facts = {};
    if (!name.toLowerCase().includes('clearlinux')) return [false, f];
    const pname = firstGroup(/NAME="(.*)"/, data);
    if (pname !== undefined) {
      if (!pname.includes('Clear Linux')) return [false, f];
      f.distribution = pname;
    }
    const v = firstGroup(/VERSION_ID=(.*)/, data);
    if (v !== undefined) f.distribution_version = v;
    return [true, f];
  },
  CentOS: (_n, data) => {
    if (data.includes('CentOS Stream')) return [true, {}];
    if (data.includes('TencentOS Server')) return [true, { distribution: 'TencentOS' }];
    return [false, {}];
  },
};

/** Distribution.get_distribution_facts() on Linux, reduced to the two fields facts.json needs. */
export function linuxDistribution(inp: DistributionInputs): Distribution {
  const d = new DistroPort(inp);
  const facts: Facts = {
    distribution: getDistribution(d) || 'NA',
    distribution_version: getDistributionVersion(d) || 'NA',
  };
  // _guess_distribution's release: sys_info.get_distribution_codename (distro.codename() after these is not modelled).
  let release: string | undefined = d.osRelease.version_codename ?? d.osRelease.ubuntu_codename;
  let parserSetsRelease = false;
  let parserSetsMajor = false;
  for (const { path, name, allowEmpty } of OSDIST_LIST) {
    const raw = inp.files[path];
    const has = raw !== null && raw !== undefined && (allowEmpty || raw.length > 0);
    if (has && allowEmpty) {
      facts.distribution = name;
      break;
    }
    if (!has) continue;
    // get_file_content strips, then _parse_dist_file strips quotes and backslashes.
    const data = pyStrip(pyStrip(raw), '\'"\\');
    let parsed: boolean;
    let found: Facts;
    if (name in SEARCH_STRING) {
      parsed = true;
      found = { distribution: data.includes(SEARCH_STRING[name]!) ? name : (data.split(/\s+/).filter(Boolean)[0] ?? '') };
    } else if (name in OS_RELEASE_ALIAS) {
      parsed = data.includes(OS_RELEASE_ALIAS[name]!);
      found = parsed ? { distribution: name } : {};
    } else if (PARSERS[name]) {
      [parsed, found] = PARSERS[name]!(name, data, path, facts, { d, inp });
    } else {
      parsed = false;
      found = {};
    }
    if (parsed) {
      facts.distribution = name;
      Object.assign(facts, found);
      if (name !== 'Debian') parserSetsRelease = true; // other parsers may set their own release: not modelled
      // parse_distribution_file_Debian sets a major version only in its branches after Debian/Raspbian and Ubuntu.
      if (name in PARSERS && !(name === 'Debian' && /Debian|Raspbian|Ubuntu/.test(data))) parserSetsMajor = true;
      else if (data.includes('Debian') || data.includes('Raspbian')) {
        // parse_distribution_file_Debian: PRETTY_NAME's "(codename)"; failing that, with no guess, dpkg --status tzdata.
        const m = /PRETTY_NAME=[^(]+ \(?([^)]+?)\)/.exec(data);
        if (m) release = m[1];
      }
      break;
    }
  }
  const out: Distribution = { distribution: facts.distribution!, distribution_version: facts.distribution_version! };
  if (release !== undefined && !parserSetsRelease) out.distribution_release = release;
  if (!parserSetsMajor) out.distribution_major_version = (getDistributionVersion(d) || 'NA').split('.')[0] || 'NA';
  return out;
}
