// What a boot script can do to SysctlFile: a sysctl write or a loaded file
// that sets a wanted key (or one the kernel couples with it) to another
// value, or a module removal that takes a wanted key away.
import path from 'node:path';
import type { BootScriptHit, ReappliedSysctl } from '../../boot-scripts/scan.js';
import { scriptMarker } from '../../boot-scripts/neutralise.js';
import { normalizeSysctlKey, sysctlProcPath } from '../../observe/sysctl-live.js';
import { keysAffecting, sameKernelValue } from '../../sysctl/couplings.js';
import { followKey, loadWrites } from '../../sysctl/order.js';
import { commentOutLines as commentOutSysctlLines, disabledMarker, moduleFor } from '../../sysctl/owned-file.js';
import { parseSysctlText } from '../../sysctl/parse.js';
import { atBoot, type LoadResolution, type PlannedFiles, type ScriptConcern, type ScriptSpec } from '../boot-script-hook.js';
import { sysctlPromise } from './promises.js';

export interface SysctlLike extends ScriptSpec {
  settings: Record<string, string | number>;
  /** resolve: a loaded file's offending lines are commented out, as a sysctl.d conflict's are. */
  conflict_policy?: string;
  /** The owned file, named in the marker. */
  file?: string;
}

/**
 * conflict_policy: resolve for `sysctl -p FILE` at boot: every line of the
 * loaded files (as the plan leaves them) that writes a wanted key, directly
 * or through a coupled key, to another value is commented out under the
 * same marker SysctlFile puts on a sysctl.d conflict. Only files under /etc
 * (the admin's, as for sysctl.d); and only when, once they are, the load
 * undoes nothing (a glob line, say, still decides: then a person does).
 */
function resolveLoad(spec: SysctlLike, hit: BootScriptHit, planned: PlannedFiles): LoadResolution[] | null {
  if (spec.conflict_policy !== 'resolve' || hit.action.kind !== 'sysctl-load' || spec.file === undefined) return null;
  const out: LoadResolution[] = [];
  for (const l of hit.loaded ?? []) {
    if (planned.has(l.realPath) || planned.has(l.file)) return null; // another change of this plan rewrites it: a person decides
    const lines = parseSysctlText(l.content, l.file)
      .assignments.filter((a) => a.value !== null && undone(spec, a.key, a.value).length > 0)
      .map((a) => a.line);
    if (lines.length === 0) continue;
    if (!l.realPath.startsWith('/etc/')) return null;
    out.push({ file: l.realPath, before: l.content, after: commentOutSysctlLines(l.content, lines, disabledMarker(spec.file)), lines });
  }
  if (out.length === 0) return null;
  const after = new Map([...planned, ...out.map((r) => [r.file, r.after] as const)]);
  return loadUndoes(spec, hit, after) === null ? out : null;
}

/** The wanted keys a write undoes: it changes them, directly or through a key the kernel couples with them, to another value. */
function undone(spec: SysctlLike, key: string, value: string): Array<{ wanted: string; v: string | number }> {
  return Object.entries(spec.settings)
    .map(([k, v]) => ({ wanted: normalizeSysctlKey(k), v }))
    .filter(({ wanted, v }) => keysAffecting(wanted).includes(key) && !sameKernelValue(value, String(v)));
}

/** The files a program re-applies after its write (tuned's reapply_sysctl), as the plan leaves them: a file it adds to one of the directories is one more. */
export function reappliedFiles(r: ReappliedSysctl, planned?: PlannedFiles): Array<{ path: string; content: string }> {
  const byName = new Map<string, { path: string; content: string }>();
  const current = r.files.filter((f) => f.file !== r.last);
  for (const dir of r.dirs) {
    const here = [
      ...current
        .filter((f) => path.posix.dirname(f.file) === dir)
        .map((f) => ({ path: f.file, content: planned?.get(f.realPath) ?? planned?.get(f.file) ?? f.content })),
      ...[...(planned ?? [])].filter(([p]) => path.posix.dirname(p) === dir && p.endsWith('.conf')).map(([p, content]) => ({ path: p, content })),
    ];
    for (const f of here) if (!byName.has(path.posix.basename(f.path))) byName.set(path.posix.basename(f.path), f);
  }
  const last = r.files.find((f) => f.file === r.last);
  const lastContent = planned?.get(last?.realPath ?? r.last) ?? planned?.get(r.last) ?? last?.content;
  return [...[...byName.keys()].sort().map((n) => byName.get(n)!), ...(lastContent === undefined ? [] : [{ path: r.last, content: lastContent }])];
}

/**
 * Whether the files re-applied after an unknown write set the wanted key, the
 * resource's own file counted as it will be (its settings): then what the
 * write leaves does not last (tuned's reapply_sysctl).
 */
function reappliedSets(spec: SysctlLike, r: ReappliedSysctl, k: string): boolean {
  if (spec.file === undefined) return false;
  const own = Object.entries(spec.settings)
    .map(([key, v]) => `${key} = ${v}\n`)
    .join('');
  const wanted = normalizeSysctlKey(k);
  const files = reappliedFiles(r, new Map([[spec.file, own]]));
  return followKey(loadWrites(files, keysAffecting(wanted)), wanted, 'system').some((st) => st.touched);
}

/**
 * The wanted keys a write leaves at another value: those it undoes, less
 * those the files re-applied after it set (tuned re-applies sysctl.d after
 * its profile, plugins/plugin_sysctl.py _instance_apply_static): the value
 * such a key ends at is those files', judged as sysctl.d conflicts are.
 */
function writeUndone(spec: SysctlLike, h: BootScriptHit, planned?: PlannedFiles): Array<{ wanted: string; v: string | number }> {
  if (h.action.kind !== 'sysctl-write') return [];
  const list = undone(spec, h.action.key, h.action.value);
  if (!h.reapplied) return list;
  const files = reappliedFiles(h.reapplied, planned);
  return list.filter(({ wanted }) => !followKey(loadWrites(files, keysAffecting(wanted)), wanted, 'system').some((st) => st.touched));
}

/** A write undoes a wanted key when it changes it, directly or through a key the kernel couples with it, to another value. */
function undoes(spec: SysctlLike, h: BootScriptHit, planned?: PlannedFiles): string | null {
  if (h.action.kind !== 'sysctl-write') return null;
  const key = h.action.key;
  const value = h.action.value;
  const first = writeUndone(spec, h, planned)[0];
  return first
    ? `sets ${key} = ${value}${key === first.wanted ? '' : ` (the kernel couples it with ${first.wanted})`}, undoing ${first.wanted} = ${first.v}`
    : null;
}

/**
 * `sysctl -p FILE...` at boot: the files as they will be once this plan is
 * applied, read with the sysctl.d parser in procps's order; for each wanted
 * key, the last write that touches it (directly or through a coupled key)
 * decides. The script runs after systemd-sysctl (rc.local, cron, if-up.d and
 * units with default dependencies come after sysinit.target), so that value
 * is the one the key keeps.
 */
function loadUndoes(spec: SysctlLike, hit: BootScriptHit, planned?: PlannedFiles): string | null {
  return loadUndone(spec, hit, planned)[0]?.why ?? null;
}

/** Each wanted key the load leaves at another value, with the sentence that says so (the first one decides the text). */
function loadUndone(spec: SysctlLike, hit: BootScriptHit, planned?: PlannedFiles): Array<{ wanted: string; why: string }> {
  const files = (hit.loaded ?? []).map((l) => ({ path: l.file, content: planned?.get(l.realPath) ?? planned?.get(l.file) ?? l.content }));
  const names = files.map((f) => f.path).join(' ');
  const out: Array<{ wanted: string; why: string }> = [];
  for (const [k, v] of Object.entries(spec.settings)) {
    const wanted = normalizeSysctlKey(k);
    const steps = followKey(loadWrites(files, keysAffecting(wanted)), wanted, 'system');
    const last = [...steps].reverse().find((st) => st.touched);
    if (!last || last.value === null || sameKernelValue(last.value, String(v))) continue;
    const a = last.write.applied.assignment;
    const through = last.write.key === wanted ? '' : ` (it writes ${last.write.key}, which the kernel couples with ${wanted})`;
    out.push({ wanted, why: `loads ${names} (sysctl -p), whose ${a.file}:${a.line} leaves ${wanted} = ${last.value}${through}, undoing ${wanted} = ${v}` });
  }
  return out;
}

/** Whether a /proc/sys path known in part ("*": any text) can be the file of a key. */
function pathMayBe(pattern: string, key: string): boolean {
  const re = new RegExp(
    '^' +
      pattern
        .split('*')
        .map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
        .join('.*') +
      '$',
  );
  return re.test(sysctlProcPath(key));
}

/**
 * The wanted keys whose /proc/sys entry exists only while `module` is loaded
 * (net.bridge.* and br_netfilter): removing the module at boot takes them
 * away, whatever systemd-sysctl set before.
 */
function keysOfModule(spec: SysctlLike, module: string): string[] {
  return Object.keys(spec.settings)
    .map(normalizeSysctlKey)
    .filter((k) => moduleFor(k) === module);
}

export const sysctlConcern: ScriptConcern<SysctlLike> = {
  judge: (spec, h, planned) => {
    if (h.action.kind === 'sysctl-load') return loadUndoes(spec, h, planned);
    if (h.action.kind === 'module-remove') {
      const keys = keysOfModule(spec, h.action.module);
      return keys.length === 0
        ? null
        : `removes ${h.action.module} (${h.action.program}), and with it ${keys.join(', ')}: the kernel has those keys only while the module is loaded`;
    }
    if (h.action.kind !== 'sysctl-write') return null;
    const why = undoes(spec, h, planned);
    return why === null || h.action.how === undefined ? why : `${why} (${h.action.how})`;
  },
  relevant: (u, spec) => {
    if (u.what === 'program') return true;
    if (u.what !== 'sysctl') return false;
    if (u.path === undefined || spec === undefined) return true;
    const path = u.path;
    return Object.keys(spec.settings).some(
      (k) => keysAffecting(normalizeSysctlKey(k)).some((key) => pathMayBe(path, key)) && !(u.reapplied && reappliedSets(spec, u.reapplied, k)),
    );
  },
  marker: () => scriptMarker('this line would undo sysctl values Kubernetes needs'),
  resolve: resolveLoad,
  withdraws: (spec, h, planned) => {
    if (h !== null && h.action.kind === 'module-remove') return keysOfModule(spec, h.action.module).map((k) => atBoot(sysctlPromise(k)));
    // A file loaded: the keys it leaves at another value, as the plan leaves the file.
    if (h !== null && h.action.kind === 'sysctl-load') return loadUndone(spec, h, planned).map(({ wanted }) => atBoot(sysctlPromise(wanted)));
    // An unknown, or a hit of another kind (a file loaded): every wanted key, as the plan cannot tell which.
    if (h === null || h.action.kind !== 'sysctl-write') return Object.keys(spec.settings).map((k) => atBoot(sysctlPromise(normalizeSysctlKey(k))));
    return writeUndone(spec, h, planned).map(({ wanted }) => atBoot(sysctlPromise(wanted)));
  },
};
