// What ContainerRuntimeCollision judges, read from the target tree (live or
// --root): Debian's own container runtime packages as dpkg's status file has
// them (src/lex/deb822.ts), and an existing /etc/containerd/config.toml's
// runc options (src/lex/toml.ts). A file that cannot be read, or that its
// reader refuses, is not known, naming the file and line: never a guess.
import type { TargetFs } from '../host.js';
import { installedPackages, parseDeb822 } from '../lex/deb822.js';
import { readToml, type TomlTable, type TomlValue } from '../lex/toml.js';
import type { Known, RuntimeCollisionFacts } from './checker.js';
import { known, unreadable } from './checker.js';

/** Debian's packages of a container runtime kubespray installs its own of (its containerd, runc; docker.io runs its own containerd). */
export const RUNTIME_PACKAGES = ['containerd', 'docker.io', 'runc'];
export const DPKG_STATUS = '/var/lib/dpkg/status';
export const CONTAINERD_CONFIG = '/etc/containerd/config.toml';
/** What kubespray's container-engine roles stat before deciding (is_ostree): read here so their conditions can be evaluated. */
export const STATTED = ['/run/ostree-booted'];

/**
 * The tables holding runc's options in each config version containerd reads:
 * version 2 (containerd 1.x), version 3 (2.x) and version 1 (no version
 * key, plugins.cri).
 */
const RUNC_OPTIONS: string[][] = [
  ['plugins', 'io.containerd.grpc.v1.cri', 'containerd', 'runtimes', 'runc', 'options'],
  ['plugins', 'io.containerd.cri.v1.runtime', 'containerd', 'runtimes', 'runc', 'options'],
  ['plugins', 'cri', 'containerd', 'runtimes', 'runc', 'options'],
];

/** The package names a Depends field names (alternatives, versions and architecture qualifiers dropped). */
export function dependsNames(field: string | undefined): string[] {
  if (field === undefined) return [];
  return field
    .split(/[,|]/)
    .map((d) => d.trim().split(/[\s(:[<]/)[0]!)
    .filter((n) => n !== '');
}

async function readPackages(host: TargetFs): Promise<Known<RuntimeCollisionFacts['packages']>> {
  const text = await host.readFile(DPKG_STATUS).catch((e: Error) => e);
  if (text instanceof Error) return unreadable(`${DPKG_STATUS} cannot be read: ${text.message}`);
  // No dpkg database: not a Debian system, nothing of Debian's installed.
  if (text === null) return known([]);
  const parsed = parseDeb822(text);
  if (!parsed.ok) return unreadable(`${DPKG_STATUS}:${parsed.line}: ${parsed.reason}`);
  const installed = installedPackages(parsed.stanzas);
  const byName = new Map(parsed.stanzas.map((s) => [s.fields.get('package'), s]));
  return known(
    RUNTIME_PACKAGES.filter((p) => installed.has(p)).map((p) => ({
      name: p,
      status: installed.get(p)!.status,
      line: installed.get(p)!.line,
      depends: dependsNames(byName.get(p)?.fields.get('depends')),
    })),
  );
}

const tableAt = (root: TomlTable, path: string[]): TomlValue | undefined =>
  path.reduce<TomlValue | undefined>((t, k) => (t && typeof t === 'object' && !Array.isArray(t) ? t[k] : undefined), root);

/** The runc options table of /etc/containerd/config.toml that sets SystemdCgroup = false, as a TOML key; null when none does or there is no file. */
async function readSystemdCgroup(host: TargetFs): Promise<Known<string | null>> {
  const text = await host.readFile(CONTAINERD_CONFIG).catch((e: Error) => e);
  if (text instanceof Error) return unreadable(`${CONTAINERD_CONFIG} cannot be read: ${text.message}`);
  if (text === null) return known(null);
  const doc = readToml(text);
  if (!doc.ok) return unreadable(`${CONTAINERD_CONFIG}:${doc.line}: ${doc.reason}`);
  for (const path of RUNC_OPTIONS) {
    const options = tableAt(doc.value, path);
    if (options && typeof options === 'object' && !Array.isArray(options) && options.SystemdCgroup === false)
      return known(path.map((k) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k))).join('.'));
  }
  return known(null);
}

export async function readRuntimeCollision(host: TargetFs): Promise<Known<RuntimeCollisionFacts>> {
  const packages = await readPackages(host);
  if (!packages.known) return packages;
  const systemdCgroupFalse = await readSystemdCgroup(host);
  if (!systemdCgroupFalse.known) return systemdCgroupFalse;
  const exists: Record<string, boolean> = {};
  for (const p of STATTED) exists[p] = await host.exists(p);
  return known({ packages: packages.value, systemdCgroupFalse: systemdCgroupFalse.value, exists });
}
