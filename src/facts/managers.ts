// ansible_service_mgr and ansible_pkg_mgr as ansible-core 2.14's setup computes
// them on Linux (module_utils/facts/system/service_mgr.py, pkg_mgr.py), from
// the same files. Where the answer would depend on something not read here
// (`ps` when /proc/1/comm is missing, the remote user's PATH, RedHat's version
// rules, the RPM database) the fact is left out: the audit then says unknown.
import path from 'node:path';
import type { TargetHost } from '../host.js';

/** What service_mgr.py and pkg_mgr.py read, gathered once (paths: does it exist, following links as os.path.exists does). */
export interface ManagerInputs {
  /** /proc/1/comm; null when it cannot be read (ansible then runs `ps`). */
  proc1Comm: string | null;
  /** The text of the /sbin/init symlink; null when it is not a link. */
  sbinInitLink: string | null;
  exists: (p: string) => boolean;
}

// service_mgr.py proc_1_map
const PROC_1_MAP: Record<string, string> = { procd: 'openwrt_init', 'runit-init': 'runit', svscan: 'svc', 'openrc-init': 'openrc' };
// get_bin_path: the module's PATH (the remote user's, unknown here) plus the sbin dirs; the standard dirs stand for it.
const BIN_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** ServiceMgrFactCollector.collect on Linux; undefined when ansible would ask `ps`. */
export function serviceMgr(i: ManagerInputs): string | undefined {
  let proc1: string | null = i.proc1Comm;
  if (proc1 === null) return undefined; // ansible runs `ps -p 1 -o comm`: not modelled
  proc1 = path.posix.basename(proc1).trim();
  // "init" cannot be trusted, a name ending in sh is a shell in a container.
  if (proc1 === 'init' || proc1.endsWith('sh')) proc1 = null;
  if (proc1 !== null && proc1 !== '') return PROC_1_MAP[proc1] ?? proc1;
  // Python: an empty name is falsy and falls through to 'service' below; the Linux branch is not taken for it.
  if (proc1 === '') return 'service';
  const bin = (name: string) => BIN_DIRS.some((d) => i.exists(`${d}/${name}`));
  const systemctl = bin('systemctl');
  if (systemctl && ['/run/systemd/system/', '/dev/.run/systemd/', '/dev/.systemd/'].some((c) => i.exists(c))) return 'systemd';
  if (bin('initctl') && i.exists('/etc/init/')) return 'upstart';
  if (i.exists('/sbin/openrc')) return 'openrc';
  if (systemctl && i.sbinInitLink !== null && path.posix.basename(i.sbinInitLink) === 'systemd') return 'systemd';
  if (i.exists('/etc/init.d/')) return 'sysvinit';
  return 'service';
}

// pkg_mgr.py PKG_MGRS, in order: the last one present wins.
const PKG_MGRS: [string, string][] = [
  ['/usr/bin/rpm-ostree', 'atomic_container'],
  ['/usr/bin/yum', 'yum'],
  ['/usr/bin/dnf', 'dnf'],
  ['/usr/bin/apt-get', 'apt'],
  ['/usr/bin/zypper', 'zypper'],
  ['/usr/sbin/urpmi', 'urpmi'],
  ['/usr/bin/pacman', 'pacman'],
  ['/bin/opkg', 'opkg'],
  ['/usr/pkg/bin/pkgin', 'pkgng'],
  ['/opt/local/bin/pkgin', 'pkgin'],
  ['/opt/local/bin/port', 'macports'],
  ['/usr/local/bin/brew', 'homebrew'],
  ['/opt/homebrew/bin/brew', 'homebrew'],
  ['/sbin/apk', 'apk'],
  ['/usr/sbin/pkg', 'pkgng'],
  ['/usr/sbin/swlist', 'swdepot'],
  ['/usr/bin/emerge', 'portage'],
  ['/usr/sbin/pkgadd', 'svr4pkg'],
  ['/usr/bin/pkg', 'pkg5'],
  ['/usr/bin/xbps-install', 'xbps'],
  ['/usr/local/sbin/pkg', 'pkgng'],
  ['/usr/bin/swupd', 'swupd'],
  ['/usr/sbin/sorcery', 'sorcery'],
  ['/usr/bin/installp', 'installp'],
  ['/QOpenSys/pkgs/bin/yum', 'yum'],
];

/** PkgMgrFactCollector.collect; undefined where ansible asks RPM or applies RedHat's version rules. */
export function pkgMgr(i: ManagerInputs, osFamily: string): string | undefined {
  let name = 'unknown';
  for (const [p, n] of PKG_MGRS) if (i.exists(p)) name = n;
  if (osFamily === 'RedHat') return undefined; // _check_rh_versions: not modelled
  if (osFamily === 'Debian')
    name = 'apt'; // yum or zypper installed on Debian does not make them its package manager
  else if (osFamily === 'Altlinux' && name === 'apt') name = 'apt_rpm';
  // _check_apt_flavor asks `rpm -q --whatprovides /usr/bin/apt-get` when rpm is there.
  if (name === 'apt' && i.exists('/usr/bin/rpm')) return undefined;
  return name;
}

const PATHS = [
  ...PKG_MGRS.map(([p]) => p),
  '/usr/bin/rpm',
  '/run/systemd/system/',
  '/dev/.run/systemd/',
  '/dev/.systemd/',
  '/etc/init/',
  '/sbin/openrc',
  '/etc/init.d/',
  ...BIN_DIRS.flatMap((d) => [`${d}/systemctl`, `${d}/initctl`]),
];

export async function managerInputs(host: TargetHost): Promise<ManagerInputs> {
  const present = new Set<string>();
  for (const p of PATHS) {
    try {
      const real = await host.realTarget(p.replace(/\/$/, ''));
      const st = await host.lstat(real);
      // os.path.exists('/etc/init/') with a trailing slash holds only for a directory.
      if (st && (!p.endsWith('/') || st.isDirectory())) present.add(p);
    } catch {
      // unresolvable: os.path.exists says False
    }
  }
  const comm = await host.readKernel('/proc/1/comm').catch(() => null);
  // get_file_content strips and gives None for an empty file.
  return { proc1Comm: comm === null || comm.trim() === '' ? null : comm, sbinInitLink: await host.readLink('/sbin/init'), exists: (p) => present.has(p) };
}
