// SysctlFile: the wanted sysctls hold in the running kernel, at the next boot
// (systemd-sysctl) and after someone runs `sysctl --system` (procps). We own
// one sysctl.d file; any assignment that would beat it under either program
// is a conflict, resolved the way the policy says. See src/sysctl/order.ts
// for the two programs' rules.
import path from 'node:path';
import type { Host } from '../host.js';
import type { SysctlFileSpec } from '../desired-state.js';
import type { WriteDoor } from '../door/door.js';
import type { Change, Provider } from './types.js';
import { resourceName } from './types.js';
import { ReconcileError, VerifyError } from '../errors.js';
import { normalizeSysctlKey, readLiveSysctl, sysctlProcPath } from '../observe/sysctl-live.js';
import { parseSysctlText, sameSysctlValue } from '../sysctl/parse.js';
import type { SysctlParseIssue } from '../sysctl/parse.js';
import {
  beatingAssignments,
  ownedFileProblem,
  SYSCTL_MODELS,
  verdicts,
  withFile,
} from '../sysctl/order.js';
import type { AppliedAssignment, SysctlConfFile, SysctlModel, SysctlTree, SysctlVerdict } from '../sysctl/order.js';
import { observeSysctlTree } from '../sysctl/observe.js';

export const TOOL_NAME = 'k8s-host-reconcile';

export interface SysctlFileObserved {
  live: boolean;
  owned: {
    path: string;
    /** Content as read (through a symlink); null when absent or masked. */
    content: string | null;
    /** Raw symlink text when the path is a symlink (a /dev/null mask, or a link elsewhere). */
    link: string | null;
  };
  tree: SysctlTree;
  /** sysctl.d directories that exist and are read. */
  dirs: string[];
  /** Lines both programs skip with a warning. */
  issues: SysctlParseIssue[];
  /** Entries systemd-sysctl and sysctl --system skip (a directory, a dangling link, a loop). */
  skipped: Array<{ path: string; why: string }>;
  /** What each program would set the wanted keys to, from the files as they are now. */
  verdicts: Record<SysctlModel, SysctlVerdict[]>;
  /** Live only: canonical key -> value in the running kernel; null when the key does not exist. */
  runtime: Record<string, string | null> | null;
}

/** One line that would beat ours, with every program under which it does. */
export interface SysctlConflict {
  key: string;
  wanted: string;
  /** The line's value; null for a "-key" line that cancels ours at boot. */
  value: string | null;
  /** Path the line is read through, and its line number there. */
  file: string;
  line: number;
  /** The file whose bytes hold the line. */
  realPath: string;
  models: SysctlModel[];
  explanation: string;
}

export type SysctlOp =
  | { kind: 'owned'; path: string; content: string; replaceLink: boolean }
  | {
      kind: 'resolve';
      /** File written: the conflicting file itself (under /etc) or a same-named /etc/sysctl.d override. */
      target: string;
      /** The effective entry the lines come from. */
      source: string;
      /** The target is a symlink to a vendor file that becomes a regular file. */
      replaceLink: boolean;
      lines: number[];
      content: string;
      conflicts: SysctlConflict[];
    }
  | { kind: 'conflict'; conflict: SysctlConflict }
  | { kind: 'owned-not-read'; problem: string }
  | { kind: 'runtime'; key: string; value: string }
  | { kind: 'deferred'; values: Record<string, string> };

/** Wanted settings, canonical key -> value, in the spec's order. */
export function wantedSettings(spec: SysctlFileSpec): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(spec.settings)) out.set(normalizeSysctlKey(k), String(v));
  return out;
}

export function renderOwnedFile(spec: SysctlFileSpec): string {
  const lines = [`# Managed by ${TOOL_NAME} (${resourceName(spec)}); edits here are overwritten.`];
  for (const [k, v] of wantedSettings(spec)) lines.push(`${k} = ${v}`);
  return lines.join('\n') + '\n';
}

export function disabledMarker(ownedPath: string): string {
  return `# disabled by ${TOOL_NAME}: conflicts with ${ownedPath}`;
}

/**
 * Comments out the given 1-based lines, each under a marker line. Every
 * other byte (line endings, a missing final newline) is kept.
 */
export function commentOutLines(content: string, lines: number[], marker: string): string {
  const parts = content.split('\n');
  const wanted = new Set(lines);
  return parts
    .map((text, i) => {
      if (!wanted.has(i + 1)) return text;
      const cr = text.endsWith('\r') ? '\r' : '';
      return `${marker}${cr}\n# ${text}`;
    })
    .join('\n');
}

function overrideHeader(source: SysctlConfFile): string {
  return (
    `# Copy of ${source.realPath === source.path ? source.path : `${source.path} (${source.realPath})`} made by ${TOOL_NAME}:\n` +
    `# the same name in /etc/sysctl.d overrides it, so its other settings keep applying\n` +
    `# while a conflicting line stays disabled. Package updates to the original do not reach this copy.\n`
  );
}

function isUnderEtc(p: string): boolean {
  return p.startsWith('/etc/');
}

function modelPhrase(models: SysctlModel[]): string {
  const boot = models.includes('boot');
  const system = models.includes('system');
  return boot && system ? 'at next boot and after sysctl --system' : boot ? 'at next boot' : 'after sysctl --system';
}

function where(ap: AppliedAssignment): string {
  const at = `${ap.source.realPath}:${ap.assignment.line}`;
  return ap.source.realPath !== ap.source.path && !ap.tail ? `${at} (read as ${ap.source.path})` : at;
}

/** One sentence a person can act on. */
function explain(ownedPath: string, key: string, hits: Array<{ model: SysctlModel; applied: AppliedAssignment }>): string {
  const models = SYSCTL_MODELS.filter((m) => hits.some((h) => h.model === m));
  const first = hits[0]!.applied;
  const reasons = [...new Set(hits.map((h) => (h.applied.tail ? 'is applied last by sysctl --system' : `sorts after ${ownedPath}`)))];
  if (first.assignment.value === null) {
    return `${modelPhrase(models)} ${key} would keep the kernel's value: ${where(first)} (-${first.assignment.rawKey}) ${reasons.join(' and ')} and cancels it`;
  }
  return `${modelPhrase(models)} ${key} would be ${first.assignment.value}: ${where(first)} ${reasons.join(' and ')}`;
}

/** Every line that would beat the owned file, once the owned file holds the wanted settings. */
export function findConflicts(prospective: SysctlTree, ownedPath: string, wanted: Map<string, string>): Array<SysctlConflict & { source: SysctlConfFile }> {
  const grouped = new Map<string, { key: string; wanted: string; hits: Array<{ model: SysctlModel; applied: AppliedAssignment }> }>();
  for (const [key, value] of wanted) {
    for (const model of SYSCTL_MODELS) {
      for (const b of beatingAssignments(prospective, ownedPath, key, value, model)) {
        const id = `${b.applied.source.realPath}\0${b.applied.assignment.line}\0${key}`;
        const g = grouped.get(id) ?? { key, wanted: value, hits: [] };
        g.hits.push({ model, applied: b.applied });
        grouped.set(id, g);
      }
    }
  }
  return [...grouped.values()].map(({ key, wanted: w, hits }) => {
    // Prefer the sysctl.d entry over procps' trailing /etc/sysctl.conf pass for naming the file.
    const rep = hits.find((h) => !h.applied.tail)?.applied ?? hits[0]!.applied;
    return {
      key,
      wanted: w,
      value: rep.assignment.value,
      file: rep.source.path,
      line: rep.assignment.line,
      realPath: rep.source.realPath,
      models: SYSCTL_MODELS.filter((m) => hits.some((h) => h.model === m)),
      explanation: explain(ownedPath, key, [{ model: hits[0]!.model, applied: rep }, ...hits]),
      source: rep.source,
    };
  });
}

async function observe(host: Host, spec: SysctlFileSpec): Promise<SysctlFileObserved> {
  const { tree, dirs, issues, skipped } = await observeSysctlTree(host);
  const link = await host.readLink(spec.file);
  const masked = link !== null && path.posix.normalize(link) === '/dev/null';
  const content = masked ? null : await host.readBytes(spec.file);
  const keys = [...wantedSettings(spec).keys()];
  let runtime: Record<string, string | null> | null = null;
  if (host.live) {
    runtime = {};
    for (const k of keys) runtime[k] = await readLiveSysctl(host, k);
  }
  return { live: host.live, owned: { path: spec.file, content, link }, tree, dirs, issues, skipped, verdicts: verdicts(tree, keys), runtime };
}

function diff(spec: SysctlFileSpec, observed: SysctlFileObserved, ctx: { live: boolean }): Change<SysctlOp>[] {
  const changes: Change<SysctlOp>[] = [];
  const wanted = wantedSettings(spec);
  const owned = renderOwnedFile(spec);
  const ownedPath = spec.file;

  // 1. Our file. A symlink there (a mask, or a link elsewhere) is replaced, never written through.
  const replaceLink = observed.owned.link !== null;
  if (observed.owned.content !== owned || replaceLink) {
    const before = observed.owned.content;
    changes.push({
      id: `file:${ownedPath}`,
      action: before === null && !replaceLink ? 'create' : 'update',
      summary: replaceLink
        ? `replace the symlink ${ownedPath} -> ${observed.owned.link} with a file setting ${[...wanted.keys()].join(', ')}`
        : `${before === null ? 'create' : 'rewrite'} ${ownedPath} with ${[...wanted].map(([k, v]) => `${k} = ${v}`).join(', ')}`,
      file: { path: ownedPath, before, after: owned },
      op: { kind: 'owned', path: ownedPath, content: owned, replaceLink },
    });
  }

  // 2. Conflicts, judged against the files as they will be once ours is written.
  const prospective = withFile(observed.tree, ownedPath, owned, parseSysctlText(owned, ownedPath).assignments);
  for (const model of SYSCTL_MODELS) {
    const problem = ownedFileProblem(prospective, ownedPath, model);
    if (problem) {
      changes.push({
        id: `owned-not-read:${model}`,
        action: 'operator',
        summary: `${model === 'boot' ? 'systemd-sysctl at boot' : 'sysctl --system'} would not read ${ownedPath}`,
        operator: `${problem}; choose another file name or remove the other entry`,
        op: { kind: 'owned-not-read', problem },
      });
    }
  }
  const conflicts = findConflicts(prospective, ownedPath, wanted);
  const byTarget = new Map<string, { target: string; source: SysctlConfFile; replaceLink: boolean; list: typeof conflicts }>();
  for (const c of conflicts) {
    let target: string | null = null;
    let replace = false;
    if (isUnderEtc(c.realPath)) target = c.realPath;
    else if (!c.source.path.startsWith('/etc/') || path.posix.dirname(c.source.path) === '/etc/sysctl.d') {
      // A vendor entry (/usr/lib, /run, /usr/local/lib), or an /etc/sysctl.d link to one:
      // the systemd way is a same-named regular file in /etc/sysctl.d.
      target = path.posix.join('/etc/sysctl.d', path.posix.basename(c.source.path));
      replace = c.source.path === target;
    }
    if (spec.conflict_policy === 'fail' || target === null) {
      changes.push({
        id: `conflict:${c.realPath}:${c.line}:${c.key}`,
        action: 'operator',
        summary: c.explanation,
        operator:
          spec.conflict_policy === 'fail'
            ? `conflict_policy is fail: remove or comment out ${c.realPath}:${c.line}, or set conflict_policy: resolve`
            : `${c.realPath} is outside /etc and is not a sysctl.d entry that can be overridden; remove line ${c.line} by hand`,
        op: { kind: 'conflict', conflict: stripSource(c) },
      });
      continue;
    }
    const g = byTarget.get(target) ?? { target, source: c.source, replaceLink: replace, list: [] };
    g.list.push(c);
    byTarget.set(target, g);
  }
  for (const g of [...byTarget.values()].sort((a, b) => (a.target < b.target ? -1 : 1))) {
    const lines = [...new Set(g.list.map((c) => c.line))].sort((a, b) => a - b);
    const commented = commentOutLines(g.source.content, lines, disabledMarker(ownedPath));
    const inPlace = g.target === g.source.realPath;
    const after = inPlace ? commented : overrideHeader(g.source) + commented;
    const before = inPlace ? g.source.content : g.replaceLink ? g.source.content : null;
    const lineWord = `line${lines.length === 1 ? '' : 's'} ${lines.join(', ')}`;
    const action = inPlace
      ? `commenting out ${lineWord} of ${g.target}`
      : `overriding it with ${g.target}, a copy with ${lineWord} commented out`;
    changes.push({
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
    });
  }

  // 3. The running kernel.
  if (ctx.live && observed.runtime) {
    for (const [key, value] of wanted) {
      const now = observed.runtime[key] ?? null;
      if (now !== null && sameSysctlValue(now, value)) continue;
      changes.push({
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
  } else if (!ctx.live && changes.some((c) => c.file)) {
    // Offline the kernel is not ours to touch; systemd-sysctl applies the files at first boot.
    const values = Object.fromEntries(wanted);
    changes.push({
      id: 'deferred:runtime',
      action: 'deferred',
      deferred: true,
      summary: `at first boot systemd-sysctl applies ${[...wanted].map(([k, v]) => `${k} = ${v}`).join(', ')} from ${ownedPath}`,
      op: { kind: 'deferred', values },
    });
  }
  return changes;
}

function stripSource(c: SysctlConflict & { source: SysctlConfFile }): SysctlConflict {
  const { source: _source, ...rest } = c;
  return rest;
}

/** The module whose loading creates a key's /proc/sys entry, for the keys Kubernetes hosts need. */
export function moduleFor(key: string): string | null {
  if (key.startsWith('net.bridge.')) return 'br_netfilter';
  if (key.startsWith('net.netfilter.nf_conntrack') || key.startsWith('net.nf_conntrack')) return 'nf_conntrack';
  if (key.startsWith('net.ipv6.')) return 'ipv6';
  return null;
}

async function apply(host: Host, spec: SysctlFileSpec, changes: Change<SysctlOp>[], door: WriteDoor): Promise<void> {
  const ops = changes.map((c) => c.op);
  // 1. Our file.
  for (const c of changes) {
    const op = c.op;
    if (op.kind !== 'owned') continue;
    await door.writeFile({ path: op.path, expect: op.replaceLink ? undefined : (c.file?.before ?? null), content: op.content, mode: 0o644, replaceLink: op.replaceLink });
  }
  // 2. Conflicts. Each file must still be what the plan saw, or its line numbers mean nothing.
  for (const c of changes) {
    const op = c.op;
    if (op.kind !== 'resolve') continue;
    await door.writeFile({ path: op.target, expect: c.file?.before ?? null, content: op.content, mode: 0o644, replaceLink: op.replaceLink });
  }
  // 3. The running kernel, after ModulesLoad (`after` below) has loaded br_netfilter.
  for (const op of ops) {
    if (op.kind !== 'runtime') continue;
    const target = sysctlProcPath(op.key);
    if ((await readLiveSysctl(host, op.key)) === null) {
      const mod = moduleFor(op.key);
      throw new ReconcileError(
        `${op.key} does not exist in the running kernel (${target} is missing)` +
          (mod ? `: the ${mod} module must be loaded first (ModulesLoad, modprobe ${mod})` : ': check the key name against this kernel'),
      );
    }
    const before = await readLiveSysctl(host, op.key);
    await door.runtime({ step: 'sysctl', key: op.key, path: target, before, value: op.value }, () => host.writeKernel(target, op.value));
    const now = await readLiveSysctl(host, op.key);
    if (now === null || !sameSysctlValue(now, op.value)) {
      throw new ReconcileError(`the kernel did not keep ${op.key} = ${op.value} (it reads ${now ?? 'nothing'})`);
    }
  }
  // 4. Observe again: the files' verdicts and the kernel must now agree with what was applied.
  const again = diff(spec, await observe(host, spec), { live: host.live });
  const applied = new Set(changes.filter((c) => !c.operator && !c.deferred).map((c) => c.id));
  const left = again.filter((c) => applied.has(c.id));
  if (left.length > 0) throw new VerifyError(resourceName(spec), left.map((c) => c.summary));
}

/**
 * The engine's prediction per wanted key and model, plus the live value: what
 * `--json` shows, and what the VM suite compares with the kernel after a boot
 * and after `sysctl --system`.
 */
export function summarizeVerdicts(observed: SysctlFileObserved) {
  const verdictJson = (v: SysctlVerdict) => ({
    key: v.key,
    value: v.value,
    via: v.via,
    winner: v.winner ? `${v.winner.assignment.file}:${v.winner.assignment.line}` : null,
  });
  return {
    verdicts: { boot: observed.verdicts.boot.map(verdictJson), system: observed.verdicts.system.map(verdictJson) },
    runtime: observed.runtime,
  };
}

export const sysctlFileProvider: Provider<SysctlFileSpec, SysctlFileObserved, SysctlOp> = {
  type: 'SysctlFile',
  after: ['ModulesLoad'],
  observe,
  diff,
  summarize: (_spec, observed) => summarizeVerdicts(observed),
  warnings: (_spec, o) => [
    ...o.skipped.map((k) => `${k.path} is skipped, as systemd-sysctl and sysctl --system skip it: ${k.why}`),
    ...o.issues.map((i) => `${i.file}:${i.line}: ${i.message}; both programs ignore this line`),
  ],
  async apply(host, spec, changes, ctx) {
    await apply(host, spec, changes, ctx.door);
  },
};
