// SysctlFile's diff: the owned file, the lines that would beat it (resolved
// or left to the operator as the policy says), and the running kernel. Pure.
import path from 'node:path';
import type { SysctlFileSpec } from './spec.js';
import type { Change } from '../types.js';
import { parseSysctlText, sameSysctlValue } from '../../sysctl/parse.js';
import { ownedFileProblem, SYSCTL_CONF, SYSCTL_MODELS, withFile } from '../../sysctl/order.js';
import type { SysctlConfFile, SysctlTree } from '../../sysctl/order.js';
import { findConflicts, modelPhrase, type SysctlConflict } from '../../sysctl/conflicts.js';
import { commentOutLines, disabledMarker, moduleFor, overrideHeader, renderOwnedFile, wantedSettings } from '../../sysctl/owned-file.js';
import type { RehearsalCulprit, SysctlFileObserved, SysctlOp, SysctlRehearsal } from './observed.js';
import { sysctlPromise } from './promises.js';

/** Under /etc, or under where /etc really is when /etc itself is a link (an image with /etc -> etc.real). */
function isUnderEtc(p: string, etcReal: string): boolean {
  return p.startsWith('/etc/') || p.startsWith(`${etcReal}/`);
}
/** What one diff works from, and the changes it has found so far (in plan order). */
interface SysctlDiff {
  spec: SysctlFileSpec;
  observed: SysctlFileObserved;
  wanted: Map<string, string>;
  owned: string;
  ownedPath: string;
  changes: Change<SysctlOp>[];
}

type SourcedConflict = SysctlConflict & { source: SysctlConfFile };
type RanRehearsal = Extract<SysctlRehearsal, { status: 'ran' }>;

/** The file a group of conflicting lines is resolved in, and the lines. */
interface ResolveGroup {
  target: string;
  source: SysctlConfFile;
  replaceLink: boolean;
  list: SourcedConflict[];
}

export function diff(spec: SysctlFileSpec, observed: SysctlFileObserved, ctx: { live: boolean }): Change<SysctlOp>[] {
  const owned = renderOwnedFile(spec);
  const d: SysctlDiff = { spec, observed, wanted: wantedSettings(spec), owned, ownedPath: spec.file, changes: [] };

  // 1. Our file.
  pushOwnedFileChange(d);

  // 2. Conflicts, judged against the files as they will be once ours is written.
  const prospective = withFile(observed.tree, d.ownedPath, owned, parseSysctlText(owned, d.ownedPath).assignments);
  pushOwnedNotRead(d, prospective);
  const conflicts = findConflicts(prospective, d.ownedPath, d.wanted);
  // Lines the rehearsal blames that the engine did not: the real programs win.
  const reh = observed.rehearsal?.status === 'ran' ? observed.rehearsal : null;
  addRehearsalCulprits(d, conflicts, reh);
  pushUnexplained(d, reh);
  const groups = groupResolvable(d, conflicts);
  for (const g of groups.sort((a, b) => (a.target < b.target ? -1 : 1))) d.changes.push(resolveChange(d, g));

  // 3. The running kernel.
  pushKernelChanges(d, ctx);
  return d.changes;
}

/** A symlink at our path (a mask, or a link elsewhere) is replaced, never written through. */
function pushOwnedFileChange(d: SysctlDiff): void {
  const { observed, ownedPath, owned, wanted } = d;
  const replaceLink = observed.owned.link !== null;
  if (observed.owned.content === owned && !replaceLink) return;
  const before = observed.owned.content;
  d.changes.push({
    id: `file:${ownedPath}`,
    action: before === null && !replaceLink ? 'create' : 'update',
    summary: replaceLink
      ? `replace the symlink ${ownedPath} -> ${observed.owned.link} with a file setting ${[...wanted.keys()].join(', ')}`
      : `${before === null ? 'create' : 'rewrite'} ${ownedPath} with ${[...wanted].map(([k, v]) => `${k} = ${v}`).join(', ')}`,
    file: { path: ownedPath, before, after: owned },
    op: { kind: 'owned', path: ownedPath, content: owned, replaceLink },
  });
}

function pushOwnedNotRead(d: SysctlDiff, prospective: SysctlTree): void {
  for (const model of SYSCTL_MODELS) {
    const problem = ownedFileProblem(prospective, d.ownedPath, model);
    if (!problem) continue;
    d.changes.push({
      id: `owned-not-read:${model}`,
      action: 'operator',
      summary: `${model === 'boot' ? 'systemd-sysctl at boot' : 'sysctl --system'} would not read ${d.ownedPath}`,
      operator: `${problem}; choose another file name or remove the other entry`,
      op: { kind: 'owned-not-read', problem },
      // The running kernel gets the values from apply; the file is what the next boot and sysctl --system miss.
      withdraws: [...d.wanted.keys()].map((k) => ({ promise: sysctlPromise(k), from: 'boot' as const })),
    });
  }
}

function addRehearsalCulprits(d: SysctlDiff, conflicts: SourcedConflict[], reh: RanRehearsal | null): void {
  for (const c of reh?.culprits ?? []) {
    if (conflicts.some((x) => x.realPath === c.realPath && x.line === c.line && x.key === c.key)) continue;
    const source = d.observed.tree.files.find((f) => f.path === c.file) ?? (c.file === SYSCTL_CONF ? d.observed.tree.sysctlConf : null);
    if (!source) continue;
    conflicts.push(culpritConflict(c, source));
  }
}

function culpritConflict(c: RehearsalCulprit, source: SysctlConfFile): SourcedConflict {
  return {
    key: c.key,
    wanted: c.wanted,
    value: c.value,
    file: c.file,
    line: c.line,
    realPath: c.realPath,
    models: c.models,
    explanation:
      `the rehearsal (the real programs in a private namespace) shows ${c.key} = ${c.value ?? 'unset'} ${modelPhrase(c.models)}, which the engine did not predict; ` +
      `bisection names ${c.realPath}:${c.line} (${c.text.trim()}); the rehearsal wins`,
    source,
  };
}

function pushUnexplained(d: SysctlDiff, reh: RanRehearsal | null): void {
  const { wanted } = d;
  for (const u of reh?.unexplained ?? []) {
    d.changes.push({
      id: `rehearsal:${u.key}:${u.model}`,
      action: 'operator',
      summary: `the rehearsal shows ${u.key} = ${u.value ?? 'unset'} ${modelPhrase([u.model])} even with every planned change (wanted ${wanted.get(u.key)})`,
      operator: `no configuration line explains it (bisection in the namespace found none); check ${u.key} by hand with ${u.model === 'boot' ? 'systemd-sysctl' : 'sysctl --system'}`,
      op: {
        kind: 'conflict',
        conflict: { key: u.key, wanted: wanted.get(u.key)!, value: u.value, file: '', line: 0, realPath: '', models: [u.model], explanation: 'rehearsal' },
      },
      withdraws: [{ promise: sysctlPromise(u.key), from: 'boot' }],
    });
  }
}

/** The file that resolves a conflict (null: only the operator can), and whether it replaces a link there. */
function resolveTargetOf(c: SourcedConflict, etcReal: string): { target: string | null; replace: boolean } {
  if (isUnderEtc(c.realPath, etcReal)) return { target: c.realPath, replace: false };
  if (!c.source.path.startsWith('/etc/') || path.posix.dirname(c.source.path) === '/etc/sysctl.d') {
    // A vendor entry (/usr/lib, /run, /usr/local/lib), or an /etc/sysctl.d link to one:
    // the systemd way is a same-named regular file in /etc/sysctl.d.
    const target = path.posix.join('/etc/sysctl.d', path.posix.basename(c.source.path));
    return { target, replace: c.source.path === target };
  }
  return { target: null, replace: false };
}

/** Conflicts left to the operator become changes now; the rest are grouped by the file that resolves them. */
function groupResolvable(d: SysctlDiff, conflicts: SourcedConflict[]): ResolveGroup[] {
  const byTarget = new Map<string, ResolveGroup>();
  for (const c of conflicts) {
    const { target, replace } = resolveTargetOf(c, d.observed.etcReal ?? '/etc');
    if (d.spec.conflict_policy === 'fail' || target === null) {
      d.changes.push(operatorConflictChange(d, c));
      continue;
    }
    const g = byTarget.get(target) ?? { target, source: c.source, replaceLink: replace, list: [] };
    g.list.push(c);
    byTarget.set(target, g);
  }
  return [...byTarget.values()];
}

function operatorConflictChange(d: SysctlDiff, c: SourcedConflict): Change<SysctlOp> {
  return {
    id: `conflict:${c.realPath}:${c.line}:${c.key}`,
    action: 'operator',
    summary: c.explanation,
    operator:
      d.spec.conflict_policy === 'fail'
        ? `conflict_policy is fail: remove or comment out ${c.realPath}:${c.line}, or set conflict_policy: resolve`
        : `${c.realPath} is outside /etc and is not a sysctl.d entry that can be overridden; remove line ${c.line} by hand`,
    op: { kind: 'conflict', conflict: stripSource(c) },
    withdraws: [{ promise: sysctlPromise(c.key), from: 'boot' }],
  };
}

function resolveChange(d: SysctlDiff, g: ResolveGroup): Change<SysctlOp> {
  const lines = [...new Set(g.list.map((c) => c.line))].sort((a, b) => a - b);
  const commented = commentOutLines(g.source.content, lines, disabledMarker(d.ownedPath));
  const inPlace = g.target === g.source.realPath;
  const after = inPlace ? commented : overrideHeader(g.source) + commented;
  const before = inPlace ? g.source.content : g.replaceLink ? g.source.content : null;
  const lineWord = `line${lines.length === 1 ? '' : 's'} ${lines.join(', ')}`;
  const action = inPlace ? `commenting out ${lineWord} of ${g.target}` : `overriding it with ${g.target}, a copy with ${lineWord} commented out`;
  return {
    id: `conflict:${g.target}`,
    action: before === null ? 'create' : 'update',
    summary: `${g.list.map((c) => c.explanation).join('; ')}; ${action}`,
    file: { path: g.target, before, after },
    op: {
      kind: 'resolve',
      target: g.target,
      source: g.source.path,
      replaceLink: g.replaceLink,
      lines,
      content: after,
      conflicts: g.list.map(stripSource),
    },
  };
}

function pushKernelChanges(d: SysctlDiff, ctx: { live: boolean }): void {
  const { observed, wanted } = d;
  if (ctx.live && observed.runtime) {
    for (const [key, value] of wanted) {
      const now = observed.runtime[key] ?? null;
      if (now !== null && sameSysctlValue(now, value)) continue;
      d.changes.push({
        id: `runtime:${key}`,
        action: 'runtime',
        runtime: true,
        summary:
          now === null
            ? `set ${key} = ${value} in the running kernel (the key does not exist yet${moduleFor(key) ? `; it appears once ${moduleFor(key)} is loaded` : ''})`
            : `set ${key} = ${value} in the running kernel (now ${now})`,
        op: { kind: 'runtime', key, value },
      });
    }
  } else if (!ctx.live && d.changes.some((c) => c.file)) {
    // Offline the kernel is not ours to touch; systemd-sysctl applies the files at first boot.
    const values = Object.fromEntries(wanted);
    d.changes.push({
      id: 'deferred:runtime',
      action: 'deferred',
      summary: `at first boot systemd-sysctl applies ${[...wanted].map(([k, v]) => `${k} = ${v}`).join(', ')} from ${d.ownedPath}`,
      op: { kind: 'deferred', values },
    });
  }
}

function stripSource(c: SourcedConflict): SysctlConflict {
  const { source: _source, ...rest } = c;
  return rest;
}
