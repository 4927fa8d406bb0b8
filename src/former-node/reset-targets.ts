// What a reset of a former node acts on, read only: the directories kubeadm,
// kubelet, etcd, CNI plugins and k3s/rke2 leave (each measured: bytes of its
// regular files, its file count, and the mount points below it, which a
// rename would carry along unseen), and the node's service units (kubelet,
// etcd, k3s*, rke2*, and a unit under another name that runs kubelet).
import path from 'node:path';
import type { TargetFs } from '../host.js';
import { isMaskEntry, SYSTEM_UNIT_PATH } from '../systemd/unit-dirs.js';
import type { NodeEvidence } from './evidence.js';

/** The directories a reset moves aside (kubespray's roles/reset deletes them, and more). */
export const RESET_DIRS = ['/etc/kubernetes', '/var/lib/kubelet', '/var/lib/etcd', '/etc/cni/net.d', '/var/lib/rancher', '/etc/rancher'] as const;

/** A walk stops counting here: the figures are then a lower bound, and the plan says so. */
const MAX_WALK = 200_000;

export type ResetDir =
  | { path: string; kind: 'dir'; bytes: number; files: number; partial: boolean; mounts: string[]; packageFiles: PackageFile[] }
  | { path: string; kind: 'link'; link: string }
  | { path: string; kind: 'other' };

/** A file below a reset directory that a Debian package's dpkg file list names: moving the directory would take it from its package. */
export interface PackageFile {
  path: string;
  package: string;
}

/**
 * The files dpkg's lists (/var/lib/dpkg/info/PKG.list, one path a line) name below each of `dirs`, the
 * directories themselves not counted (a package may own /etc/cni/net.d as a directory and ship nothing in it).
 * A package such as Debian's podman ships its own CNI configuration there (87-podman-bridge.conflist).
 */
export async function packageFilesUnder(host: TargetFs, dirs: readonly string[]): Promise<Map<string, PackageFile[]>> {
  const out = new Map<string, PackageFile[]>();
  if (dirs.length === 0) return out;
  for (const e of (await host.readDir('/var/lib/dpkg/info')) ?? []) {
    if (!e.name.endsWith('.list')) continue;
    const pkg = e.name.slice(0, -'.list'.length).replace(/:.*$/, '');
    const text = await host.readFile(`/var/lib/dpkg/info/${e.name}`).catch(() => null);
    for (const line of (text ?? '').split('\n'))
      for (const d of dirs)
        if (line.startsWith(`${d}/`) && (await host.lstat(line))?.isDirectory() === false) out.set(d, [...(out.get(d) ?? []), { path: line, package: pkg }]);
  }
  return out;
}

export interface NodeUnit {
  unit: string;
  /** Its unit file (the first on the search path). */
  file: string;
  /** That file is a mask (a link to /dev/null, or empty): systemd starts the unit from nothing. */
  masked: boolean;
}

/** Pure: the mount points of /proc/self/mountinfo (field 5, its octal escapes undone) at or below one of `dirs`. */
export function mountsUnder(mountinfo: string, dirs: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of mountinfo.split('\n')) {
    const field = line.split(' ')[4];
    if (field === undefined) continue;
    const at = field.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
    for (const d of dirs) if (at === d || at.startsWith(d + '/')) out.set(d, [...(out.get(d) ?? []), at]);
  }
  return out;
}

async function measure(host: TargetFs, top: string): Promise<{ bytes: number; files: number; partial: boolean; devs: string[] }> {
  let bytes = 0;
  let files = 0;
  let seen = 0;
  const devOf = (await host.lstat(top))!.dev;
  const devs: string[] = [];
  const todo = [top];
  for (let d = todo.pop(); d !== undefined; d = todo.pop()) {
    for (const e of (await host.readDir(d)) ?? []) {
      if (++seen > MAX_WALK) return { bytes, files, partial: true, devs };
      const p = path.posix.join(d, e.name);
      if (e.isDirectory()) {
        // A directory on another device is a mount point (offline, where no mountinfo is read).
        if ((await host.lstat(p))?.dev !== devOf) devs.push(p);
        else todo.push(p);
        continue;
      }
      files += 1;
      if (e.isFile()) bytes += (await host.lstat(p))?.size ?? 0;
    }
  }
  return { bytes, files, partial: false, devs };
}

/** Each of RESET_DIRS that exists, measured; live, with the mount points /proc/self/mountinfo shows below it. */
export async function resetDirs(host: TargetFs): Promise<ResetDir[]> {
  const mounts = host.live ? mountsUnder((await host.readKernel('/proc/self/mountinfo')) ?? '', RESET_DIRS) : new Map<string, string[]>();
  const out: ResetDir[] = [];
  const present: string[] = [];
  for (const p of RESET_DIRS) if ((await host.lstat(p))?.isDirectory()) present.push(p);
  const owned = await packageFilesUnder(host, present);
  for (const p of RESET_DIRS) {
    const st = await host.lstat(p);
    if (st === null) continue;
    if (st.isSymbolicLink()) out.push({ path: p, kind: 'link', link: (await host.readLink(p)) ?? '' });
    else if (!st.isDirectory()) out.push({ path: p, kind: 'other' });
    else {
      const m = await measure(host, p);
      out.push({
        path: p,
        kind: 'dir',
        bytes: m.bytes,
        files: m.files,
        partial: m.partial,
        mounts: [...new Set([...(mounts.get(p) ?? []), ...m.devs])].sort(),
        packageFiles: owned.get(p) ?? [],
      });
    }
  }
  return out;
}

const NODE_PREFIXES = ['k3s', 'rke2'];

/**
 * The node's service units: those the evidence names by their unit files (kubelet.service, k3s, rke2, a unit
 * running kubelet), etcd.service, and every k3s* or rke2* service on the search path. Each once, with the file
 * systemd loads: the first on the search path, so a mask in /etc names the unit, not the package file it hides.
 */
export async function nodeUnits(host: TargetFs, evidence: readonly NodeEvidence[]): Promise<NodeUnit[]> {
  const names = new Set<string>();
  const unitDirs = new Set<string>(SYSTEM_UNIT_PATH);
  for (const e of evidence) {
    const name = path.posix.basename(e.path);
    if (unitDirs.has(path.posix.dirname(e.path)) && name.endsWith('.service')) names.add(name);
  }
  for (const dir of SYSTEM_UNIT_PATH)
    for (const e of (await host.readDir(dir)) ?? [])
      if (e.name.endsWith('.service') && (e.name === 'etcd.service' || NODE_PREFIXES.some((p) => e.name.startsWith(p)))) names.add(e.name);
  const out: NodeUnit[] = [];
  for (const unit of [...names].sort((a, b) => a.localeCompare(b))) {
    const file = await firstOnSearchPath(host, unit);
    if (file !== null) out.push({ unit, file, masked: await isMaskEntry(host, file) });
  }
  return out;
}

async function firstOnSearchPath(host: TargetFs, unit: string): Promise<string | null> {
  for (const dir of SYSTEM_UNIT_PATH) {
    const p = path.posix.join(dir, unit);
    if ((await host.lstat(p)) !== null) return p;
  }
  return null;
}
