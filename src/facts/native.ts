// Gathers the facts kubespray's preflight judges the host by, natively (no
// Python), reading exactly what ansible-core 2.14's setup module reads.
// What a provider already observed for the plan (MemTotal, the kernel
// release) is taken from there; the rest is read through Host with the same
// observers. The algorithms live in linux.ts and distribution.ts as pure functions.
import path from 'node:path';
import type { TargetFs, TargetHost, Host } from '../host.js';
import { HostError } from '../errors.js';
import { DEFAULT_ROUTE_TARGET_V4, memtotalMb, osFamily, parseRouteGet, processorVcpus } from './linux.js';
import type { Facts } from './linux.js';
import { EXTRA_FILES, OSDIST_LIST, linuxDistribution } from './distribution.js';
import type { DistributionInputs } from './distribution.js';
import { lsbReleaseOutput } from './lsb-release.js';
import { managerInputs, pkgMgr, serviceMgr } from './managers.js';
import { readMeminfo } from '../observe/meminfo.js';
import { readKernelRelease } from '../observe/kernel-release.js';

export interface FactsModel {
  /** The distro bundled in the ansible-core that will gather the facts (src/facts/ansible-core.ts). */
  bundledDistroVersion?: string;
}

/**
 * What the plan's providers observed of this host, this run; a field left
 * out (no such provider planned, or `--facts` with no plan) is read here.
 */
export interface ObservedFacts {
  /** MemTotal of /proc/meminfo in kB (SwapOff's reading); null: the kernel printed none. */
  memTotalKb?: number | null;
  /** /proc/sys/kernel/osrelease (ModulesLoad's reading); null: the kernel has none. */
  kernelRelease?: string | null;
}

export async function gatherNativeFacts(host: TargetHost, model: FactsModel = {}, seen: ObservedFacts = {}): Promise<Facts> {
  host.assertLive('native facts (/proc/meminfo, /proc/cpuinfo, uname, ip route)');
  const memTotalKb = seen.memTotalKb !== undefined ? seen.memTotalKb : ((await readMeminfo(host)).get('MemTotal') ?? null);
  const memtotal = memtotalMb(memTotalKb);
  if (memtotal === null) throw new HostError('/proc/meminfo has no MemTotal line', '/proc/meminfo');

  const architecture = await unameField(host, '-m');
  const kernel = await unameField(host, '-r', seen.kernelRelease);
  const cpuinfo = (await host.readKernel('/proc/cpuinfo')) ?? '';
  const vcpus = processorVcpus(cpuinfo, { architecture, xen: await isXen(host) });
  if (vcpus === null) throw new HostError(`ansible sets no processor_vcpus on ${architecture}`, '/proc/cpuinfo');

  const dist = linuxDistribution({ ...(await distributionInputs(host)), bundledDistroVersion: model.bundledDistroVersion });

  // network/linux.py: get_bin_path('ip') then `ip -4 route get 8.8.8.8`; no ip, no default_ipv4.
  const route = await host.run('ip', ['-4', 'route', 'get', DEFAULT_ROUTE_TARGET_V4], { env: { LANG: 'C', LC_ALL: 'C' } });
  const def = parseRouteGet(route.stdout);
  const family = osFamily(dist.distribution);
  const managers = await managerInputs(host);
  const service = serviceMgr(managers);
  const pkg = pkgMgr(managers, family);

  return {
    memtotal_mb: memtotal,
    processor_vcpus: vcpus,
    distribution: dist.distribution,
    distribution_version: dist.distribution_version,
    kernel,
    default_ipv4: def.address ?? null,
    // What follows from the same readings exactly as ansible computes it; anything else stays undefined.
    extra: {
      os_family: family,
      ...(dist.distribution_release !== undefined ? { distribution_release: dist.distribution_release } : {}),
      ...(dist.distribution_major_version !== undefined ? { distribution_major_version: dist.distribution_major_version } : {}),
      ...(service !== undefined ? { service_mgr: service } : {}),
      ...(pkg !== undefined ? { pkg_mgr: pkg } : {}),
      // platform.system() and platform.machine() on Linux: uname's sysname and machine.
      system: 'Linux',
      // platform.py: x86_64 stays, an i386..i686 (or i86pc) machine is reported as i386.
      architecture: architecture !== 'x86_64' && /i([3456]86|86pc)/.test(architecture) ? 'i386' : architecture,
      machine: architecture,
    },
  };
}

/**
 * `uname -r` / `uname -m`: read from /proc/sys/kernel (osrelease, arch: the
 * utsname uname(2) returns) when no personality flag rewrites what uname(2)
 * says (/proc/self/personality 0); else, or on a kernel without the file, run uname.
 * `release`: osrelease as a provider already read it this run.
 */
export async function unameField(host: TargetHost, flag: '-r' | '-m', release?: string | null): Promise<string> {
  const personality = await host.readKernel('/proc/self/personality').catch(() => null);
  if (personality !== null && /^[0-9a-f]+\n?$/.test(personality) && Number.parseInt(personality, 16) === 0) {
    const v =
      flag === '-r'
        ? release !== undefined
          ? release
          : await readKernelRelease(host).catch(() => null)
        : ((await host.readKernel('/proc/sys/kernel/arch').catch(() => null)) ?? '').trim() || null;
    if (v !== null) return v;
  }
  const r = await host.runChecked('uname', [flag]);
  return r.stdout.trim();
}

async function isXen(host: TargetFs): Promise<boolean> {
  if (await host.exists('/proc/xen')) return true;
  try {
    const t = await host.readKernel('/sys/hypervisor/type');
    return (t ?? '').split('\n')[0]!.trim() === 'xen';
  } catch {
    return false;
  }
}

const RELEASE_NAME = /^(\w+)[-_](release|version)$/;

/** Everything distribution.py and distro read, gathered once. */
export async function distributionInputs(host: TargetHost): Promise<DistributionInputs> {
  const files: Record<string, string | null> = {};
  for (const p of [...new Set([...OSDIST_LIST.map((e) => e.path), ...EXTRA_FILES])]) files[p] = await readRegular(host, p);

  const etcFiles: Record<string, string> = {};
  for (const e of (await host.readDir('/etc')) ?? []) {
    if (!RELEASE_NAME.test(e.name)) continue;
    const text = await readRegular(host, `/etc/${e.name}`);
    if (text !== null) etcFiles[e.name] = text.split('\n')[0]!;
  }

  // What `lsb_release -a` prints, from the files it reads (lsb-release.ts); run only where that is not certain.
  const modelled = await lsbReleaseOutput(host);
  let lsbRelease: string | null;
  if (modelled.known) lsbRelease = modelled.stdout;
  else {
    const lsb = await host.run('lsb_release', ['-a']);
    lsbRelease = lsb.exitCode === 0 ? lsb.stdout : null;
  }
  const baseproduct = (await host.readLink('/etc/products.d/baseproduct')) !== null ? await host.realTarget('/etc/products.d/baseproduct') : null;

  return {
    files,
    etcFiles,
    lsbRelease,
    systemDistroVersion: await systemDistroVersion(host),
    suseBaseproduct: baseproduct,
  };
}

/** A regular file's text (following symlinks); null when missing or not a file. */
async function readRegular(host: TargetFs, target: string): Promise<string | null> {
  try {
    return await host.readFile(target);
  } catch {
    return null; // a directory or unreadable: Python's open() would fail the same way and the file is skipped
  }
}

/**
 * The version of the `distro` package that the target's /usr/bin/python3
 * (ansible's discovered interpreter) would import, searched in sys.path
 * order; null when there is none and ansible falls back to its bundled copy.
 */
export async function systemDistroVersion(host: TargetFs): Promise<string | null> {
  const link = await host.readLink('/usr/bin/python3');
  const pinned = link ? /python3\.\d+/.exec(path.posix.basename(link))?.[0] : undefined;
  const versioned = async (base: string, leaf: string): Promise<string[]> => {
    const names = ((await host.readDir(base)) ?? []).map((e) => e.name).filter((n) => /^python3\.\d+$/.test(n) && (!pinned || n === pinned));
    return names.map((n) => `${base}/${n}/${leaf}`);
  };
  const dirs = [
    ...(await versioned('/usr/local/lib', 'dist-packages')),
    '/usr/lib/python3/dist-packages',
    ...(await versioned('/usr/lib', 'dist-packages')),
    ...(await versioned('/usr/local/lib64', 'site-packages')),
    ...(await versioned('/usr/local/lib', 'site-packages')),
    ...(await versioned('/usr/lib64', 'site-packages')),
    ...(await versioned('/usr/lib', 'site-packages')),
  ];
  for (const dir of dirs) {
    const entries = await host.readDir(dir);
    if (!entries) continue;
    const names = entries.map((e) => e.name);
    const pkg = names.includes('distro') && (await host.exists(`${dir}/distro/__init__.py`));
    const mod = names.includes('distro.py');
    if (!pkg && !mod) continue;
    for (const n of names) {
      const m = /^distro-([0-9][0-9.]*)\.(dist-info|egg-info)$/.exec(n);
      if (m) return m[1]!.replace(/\.$/, '');
    }
    const src = (await host.readFile(pkg ? `${dir}/distro/distro.py` : `${dir}/distro.py`)) ?? '';
    const v = /^__version__\s*=\s*["']([^"']+)["']/m.exec(src);
    return v ? v[1]! : '0';
  }
  return null;
}
