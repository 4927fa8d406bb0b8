// Pure ports of the ansible-core 2.14 fact algorithms kubespray's preflight
// depends on (module_utils/facts/hardware/linux.py, network/linux.py).

/** The six fields of facts.json, named as in the lab. */
export interface Facts {
  memtotal_mb: number;
  processor_vcpus: number;
  distribution: string;
  distribution_version: string;
  kernel: string;
  /** Address of the default IPv4 route (ansible_default_ipv4.address); null when there is none. */
  default_ipv4: string | null;
  /**
   * More of ansible_facts (names without the ansible_ prefix) for the kubespray
   * audit's conditions (os_family, architecture, ...): all of them from
   * `ansible -m setup`, the ones modelled exactly from the native reading.
   * Not written to facts.json; a name left out is undefined to the audit (unknown).
   */
  extra?: Record<string, unknown>;
}

// distribution.py Distribution.OS_FAMILY_MAP (ansible-core 2.14): os_family is the family of the distribution, else the distribution.
const OS_FAMILY_MAP: Record<string, string[]> = {
  RedHat: [
    'RedHat',
    'RHEL',
    'Fedora',
    'CentOS',
    'Scientific',
    'SLC',
    'Ascendos',
    'CloudLinux',
    'PSBM',
    'OracleLinux',
    'OVS',
    'OEL',
    'Amazon',
    'Virtuozzo',
    'XenServer',
    'Alibaba',
    'EulerOS',
    'openEuler',
    'AlmaLinux',
    'Rocky',
    'TencentOS',
    'EuroLinux',
    'Kylin Linux Advanced Server',
  ],
  Debian: [
    'Debian',
    'Ubuntu',
    'Raspbian',
    'Neon',
    'KDE neon',
    'Linux Mint',
    'SteamOS',
    'Devuan',
    'Kali',
    'Cumulus Linux',
    'Pop!_OS',
    'Parrot',
    'Pardus GNU/Linux',
    'Uos',
    'Deepin',
    'OSMC',
  ],
  Suse: ['SuSE', 'SLES', 'SLED', 'openSUSE', 'openSUSE Tumbleweed', 'SLES_SAP', 'SUSE_LINUX', 'openSUSE Leap'],
  Archlinux: ['Archlinux', 'Antergos', 'Manjaro'],
  Mandrake: ['Mandrake', 'Mandriva'],
  Solaris: ['Solaris', 'Nexenta', 'OmniOS', 'OpenIndiana', 'SmartOS'],
  Slackware: ['Slackware'],
  Altlinux: ['Altlinux'],
  SGML: ['SGML'],
  Gentoo: ['Gentoo', 'Funtoo'],
  Alpine: ['Alpine'],
  AIX: ['AIX'],
  'HP-UX': ['HPUX'],
  Darwin: ['MacOSX'],
  FreeBSD: ['FreeBSD', 'TrueOS'],
  ClearLinux: ['Clear Linux OS', 'Clear Linux Mix'],
  DragonFly: ['DragonflyBSD', 'DragonFlyBSD', 'Gentoo/DragonflyBSD', 'Gentoo/DragonFlyBSD'],
  NetBSD: ['NetBSD'],
};

/** ansible_os_family for a distribution name. */
export function osFamily(distribution: string): string {
  for (const [family, names] of Object.entries(OS_FAMILY_MAP)) if (names.includes(distribution)) return family;
  return distribution;
}

export const FACT_FIELDS = ['memtotal_mb', 'processor_vcpus', 'distribution', 'distribution_version', 'kernel', 'default_ipv4'] as const;

/**
 * memtotal_mb: MemTotal's kB value integer-divided by 1024
 * (LinuxHardware.get_memory_facts). null when MemTotal is missing.
 */
export function memtotalMb(memTotalKb: number | null): number | null {
  return memTotalKb === null ? null : Math.floor(memTotalKb / 1024);
}

export interface CpuContext {
  /** ansible_architecture (platform.machine() on Linux). */
  architecture: string;
  /** /proc/xen exists or /sys/hypervisor/type starts with "xen". */
  xen: boolean;
}

/**
 * processor_vcpus exactly as LinuxHardware.get_cpu_facts computes it,
 * including its quirks: `core id` is checked against the sockets dict, the
 * first socket's `cpu cores` and first core's `siblings` stand for all, and
 * Python's int 0 and str "0" are different keys (a Map keeps them apart).
 * null on s390x, where ansible sets no processor_vcpus.
 */
export function processorVcpus(cpuinfo: string, ctx: CpuContext): number | null {
  let i = 0;
  let vendorIdOccurrence = 0;
  let modelNameOccurrence = 0;
  let processorOccurrence = 0;
  let physid: string | number = 0;
  let coreid: string | number = 0;
  const sockets = new Map<string | number, number>();
  const cores = new Map<string | number, number>();
  let xenParavirt = false;

  for (const line of cpuinfo.split('\n')) {
    const key = line.split(':')[0]!.trim();
    const val = line.includes(':') ? line.slice(line.indexOf(':') + 1).trim() : '';
    if (ctx.xen && key === 'flags' && !val.includes('vme')) xenParavirt = true;
    if (['model name', 'Processor', 'vendor_id', 'cpu', 'Vendor', 'processor'].includes(key)) {
      if (key === 'vendor_id') vendorIdOccurrence++;
      if (key === 'model name') modelNameOccurrence++;
      if (key === 'processor') processorOccurrence++;
      i++;
    } else if (key === 'physical id') {
      physid = val;
      if (!sockets.has(physid)) sockets.set(physid, 1);
    } else if (key === 'core id') {
      coreid = val;
      if (!sockets.has(coreid)) cores.set(coreid, 1);
    } else if (key === 'cpu cores') {
      sockets.set(physid, pyInt(val));
    } else if (key === 'siblings') {
      cores.set(coreid, pyInt(val));
    } else if (key === 'ncpus active') {
      i = pyInt(val);
    }
  }
  if (vendorIdOccurrence > 0 && vendorIdOccurrence === modelNameOccurrence) i = vendorIdOccurrence;
  if (/^(armv|aarch|ppc)/.test(ctx.architecture)) i = processorOccurrence;
  if (ctx.architecture === 's390x') return null;
  if (xenParavirt) return i;
  const processorCount = sockets.size > 0 ? sockets.size : i;
  const socketValues = [...sockets.values()];
  const processorCores = socketValues.length > 0 && socketValues[0] ? socketValues[0] : 1;
  const coreValues = [...cores.values()];
  const threadsPerCore = coreValues.length > 0 ? Math.floor(coreValues[0]! / processorCores) : Math.floor(1 / processorCores);
  return threadsPerCore * processorCount * processorCores;
}

function pyInt(s: string): number {
  if (!/^[+-]?\d+$/.test(s.trim())) throw new Error(`invalid literal for int(): '${s}'`);
  return Number.parseInt(s, 10);
}

export interface DefaultRoute {
  interface?: string;
  address?: string;
  gateway?: string;
}

/** The target ansible asks about: `ip -4 route get 8.8.8.8` (only reads the routing table). */
export const DEFAULT_ROUTE_TARGET_V4 = '8.8.8.8';

/** LinuxNetwork.get_default_interfaces for v4: words of the first line after the queried address. */
export function parseRouteGet(output: string, target = DEFAULT_ROUTE_TARGET_V4): DefaultRoute {
  const out: DefaultRoute = {};
  if (!output) return out;
  const words = output.split(/\r?\n/)[0]!.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0 || words[0] !== target) return out;
  for (let i = 0; i < words.length - 1; i++) {
    if (words[i] === 'dev') out.interface = words[i + 1];
    else if (words[i] === 'src') out.address = words[i + 1];
    else if (words[i] === 'via' && words[i + 1] !== target) out.gateway = words[i + 1];
  }
  return out;
}
