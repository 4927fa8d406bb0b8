// /proc/PID/cgroup -> the systemd unit that owns the process. Pure.
//
// Follows systemd's own rule (cg_path_get_unit): skip the leading slices; the
// first path element after them that is a unit name (once unescaped) is the system unit. A
// process of a per-user manager sits below user@UID.service, and its own
// unit (cg_path_get_user_unit) is found the same way inside that subtree.

export type UnitKind = 'service' | 'socket' | 'scope' | 'slice' | 'mount' | 'swap' | 'other';

/** Where a process lives in the unit tree, as far as its cgroup path tells. */
export interface CgroupPlacement {
  /** The cgroup path used, e.g. "/system.slice/foo.service". */
  path: string;
  /** Which line the path came from: cgroup v2 ("0::"), v1 "name=systemd", or another v1 controller. */
  hierarchy: 'v2' | 'v1-systemd' | 'v1-controller';
  /** The system manager's unit (foo.service, session-3.scope, init.scope, user@1000.service); null outside any unit. */
  unit: string | null;
  unitKind: UnitKind | null;
  /** The innermost slice above the unit, e.g. "system.slice" or "foo.slice". */
  slice: string | null;
  /** Set when `unit` is a user manager (user@UID.service): the user's own unit inside it, if any. */
  userUnit: string | null;
  /**
   * A container runtime owns the process: a docker/podman/containerd/cri-o/machine
   * scope, an nspawn service, or a non-systemd cgroup such as /docker/ID,
   * /kubepods/..., /lxc.payload.NAME. Its text names the evidence.
   */
  container: string | null;
}

const UNIT_SUFFIXES: Record<string, UnitKind> = {
  service: 'service',
  socket: 'socket',
  scope: 'scope',
  slice: 'slice',
  mount: 'mount',
  swap: 'swap',
  target: 'other',
  device: 'other',
  automount: 'other',
  timer: 'other',
  path: 'other',
};

/** The kind of a unit name, or null when `name` is not a unit name. */
export function unitKind(name: string): UnitKind | null {
  const m = /^[A-Za-z0-9:_.\\@-]+\.([a-z]+)$/.exec(name);
  // A hidden file is no unit file, and unit_name_is_valid refuses a name that starts with '@'.
  if (!m || name.startsWith('.') || name.startsWith('@')) return null;
  return UNIT_SUFFIXES[m[1]!] ?? null;
}

/** The scope a container runtime makes for one container (conmon's own scope for podman and cri-o), with its id. */
const RUNTIME_SCOPES: { runtime: ContainerScope['runtime']; re: RegExp }[] = [
  { runtime: 'docker', re: /^docker-([0-9a-f]{12,})\.scope$/ },
  { runtime: 'libpod', re: /^libpod-(?:conmon-)?([0-9a-f]{12,})\.scope$/ },
  { runtime: 'cri-containerd', re: /^cri-containerd-([0-9a-f]{12,})\.scope$/ },
  { runtime: 'crio', re: /^crio-(?:conmon-)?([0-9a-f]{12,})\.scope$/ },
];

export interface ContainerScope {
  runtime: 'docker' | 'libpod' | 'cri-containerd' | 'crio';
  /** The container's id as the scope's name gives it (12 hex digits or more). */
  id: string;
}

/** The runtime and container id a unit name is the scope of, or null when it is no runtime's container scope. */
export function containerScopeOf(unit: string): ContainerScope | null {
  for (const s of RUNTIME_SCOPES) {
    const m = s.re.exec(unit);
    if (m) return { runtime: s.runtime, id: m[1]! };
  }
  return null;
}

const CONTAINER_UNIT = [...RUNTIME_SCOPES.map((s) => s.re), /^machine-.+\.scope$/, /^systemd-nspawn@.+\.service$/];

const CONTAINER_TOP = [/^docker$/, /^kubepods/, /^lxc\.payload/, /^lxc$/, /^machine$/, /^libpod_parent$/, /^podruntime/];

interface CgroupLine {
  id: string;
  controllers: string;
  path: string;
}

function parseLines(text: string): CgroupLine[] {
  const out: CgroupLine[] = [];
  // No trimming: the kernel prints each path as the directory is named, and a
  // blank at its end is part of the name (which then is no unit name).
  for (const line of text.split('\n')) {
    if (!line) continue;
    // The path may itself contain ':' (rare, but legal), so split only twice.
    const a = line.indexOf(':');
    const b = a < 0 ? -1 : line.indexOf(':', a + 1);
    if (a < 0 || b < 0) continue;
    out.push({ id: line.slice(0, a), controllers: line.slice(a + 1, b), path: line.slice(b + 1) || '/' });
  }
  return out;
}

/**
 * The Kubernetes pod a cgroup path puts a process in, or null: kubelet makes
 * each pod a cgroup below "kubepods" (the cgroupfs driver: /kubepods/...) or
 * kubepods.slice (the systemd driver: kubepods-burstable-podUID.slice). The
 * pod's own component is returned (the one naming it, e.g.
 * "kubepods-burstable-pod1234.slice"), else the top one.
 */
export function kubePodOf(cgPath: string): string | null {
  const parts = cgPath.split('/').filter(Boolean);
  if (parts[0] !== 'kubepods' && parts[0] !== 'kubepods.slice') return null;
  return [...parts].reverse().find((p) => /^(kubepods.*-)?pod[0-9a-f_-]+(\.slice)?$/.test(p)) ?? parts[0]!;
}

/** Resolves a cgroup path (from any hierarchy) to its unit placement. */
export function placementOfPath(cgPath: string, hierarchy: CgroupPlacement['hierarchy']): CgroupPlacement {
  // cg_unescape: systemd writes a unit or slice whose name could clash with a kernel file (io.service,
  // cpu.slice, a name starting with '_' or '.') as "_NAME"; a reader drops one leading '_'.
  const parts = cgPath
    .split('/')
    .filter(Boolean)
    .map((p) => (p.startsWith('_') ? p.slice(1) : p));
  const base: CgroupPlacement = { path: cgPath, hierarchy, unit: null, unitKind: null, slice: null, userUnit: null, container: null };

  const first = parts[0];
  if (first !== undefined && unitKind(first) === null && CONTAINER_TOP.some((r) => r.test(first))) {
    return { ...base, container: `cgroup ${cgPath} belongs to a container runtime, not to a systemd unit` };
  }

  let i = 0;
  let slice: string | null = null;
  while (i < parts.length && unitKind(parts[i]!) === 'slice') slice = parts[i++]!;
  const unit = parts[i];
  if (unit === undefined) return { ...base, slice };
  const kind = unitKind(unit);
  if (kind === null) return { ...base, slice };

  let userUnit: string | null = null;
  if (/^user@\d+\.service$/.test(unit)) {
    let j = i + 1;
    while (j < parts.length && unitKind(parts[j]!) === 'slice') j++;
    const inner = parts[j];
    if (inner !== undefined && unitKind(inner) !== null) userUnit = inner;
  }
  const container = CONTAINER_UNIT.some((r) => r.test(unit)) ? `${unit} is a container's unit` : null;
  return { ...base, unit, unitKind: kind, slice, userUnit, container };
}

/**
 * Parses /proc/PID/cgroup. Prefers the unified (v2) line, then v1's
 * name=systemd hierarchy (legacy and hybrid setups), then any other v1
 * controller whose path names a unit (systems without a systemd hierarchy).
 * Returns null for empty text.
 */
export function parseCgroup(text: string): CgroupPlacement | null {
  const lines = parseLines(text);
  if (lines.length === 0) return null;
  const v2 = lines.find((l) => l.id === '0' && l.controllers === '');
  const v1sd = lines.find((l) => l.controllers.split(',').includes('name=systemd'));
  // A kernel with cgroup2 mounted anywhere always prints a "0::" line; at "/"
  // it says nothing on a legacy or hybrid host, where name=systemd is the truth.
  if (v2 && v2.path !== '/') return placementOfPath(v2.path, 'v2');
  if (v1sd) return placementOfPath(v1sd.path, 'v1-systemd');
  for (const l of lines) {
    if (l === v2) continue;
    const p = placementOfPath(l.path, 'v1-controller');
    if (p.unit !== null || p.container !== null) return p;
  }
  if (v2) return placementOfPath(v2.path, 'v2');
  return placementOfPath(lines[0]!.path, 'v1-controller');
}
