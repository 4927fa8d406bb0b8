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
import { parseSysctlText, sameSysctlValue, sysctlLines } from '../sysctl/parse.js';
import type { SysctlParseIssue } from '../sysctl/parse.js';
import {
  applySequence,
  beatingAssignments,
  ownedFileProblem,
  SYSCTL_CONF,
  SYSCTL_MODELS,
  treeAfterWrites,
  verdict,
  verdicts,
  withFile,
} from '../sysctl/order.js';
import type { AppliedAssignment, SysctlConfFile, SysctlModel, SysctlTree, SysctlVerdict } from '../sysctl/order.js';
import { observeSysctlTree } from '../sysctl/observe.js';
import { couplingOf, followerValue } from '../sysctl/couplings.js';
import { isNetKey, lineId, rehearsalAvailability, runRehearsal, startValue } from '../sysctl/rehearsal.js';
import type { RehearsalTrial, RehearsedValues } from '../sysctl/rehearsal.js';
import { minimalRemoval } from '../sysctl/bisect.js';
import { sysctlConcern, withBootScripts } from './boot-script-hook.js';

export const TOOL_NAME = 'k8s-host-reconcile';

export interface SysctlFileObserved {
  live: boolean;
  /** Where /etc really is (itself when it is no link). */
  etcReal?: string;
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
  /** The boot rehearsal (live, as root): what the real programs make of the files with the planned changes. */
  rehearsal: SysctlRehearsal | null;
}

/** A line the rehearsal blames by bisection: leaving it out makes the key come out right. */
export interface RehearsalCulprit {
  key: string;
  wanted: string;
  models: SysctlModel[];
  /** The entry the line is read through, and its 1-based line. */
  file: string;
  line: number;
  realPath: string;
  text: string;
  /** What the key comes out as with the line in place. */
  value: string | null;
}

export type SysctlRehearsal =
  | { status: 'skipped'; reason: string }
  | {
      status: 'ran';
      /** Wall time of the whole rehearsal, bisection included. */
      ms: number;
      runs: number;
      programs: { boot: string; system: string };
      /** Keys left to the engine, each with why. */
      notRehearsed: Array<{ key: string; reason: string }>;
      /** What the rehearsal starts from: a value unlike the wanted one at boot; the wanted one (set by apply) before sysctl --system. */
      start: Record<string, string>;
      /** The engine's prediction with the planned changes (null: nothing sets the key). */
      engine: RehearsedValues;
      /** The real programs with the engine's planned changes. */
      enginePlan: RehearsedValues;
      culprits: RehearsalCulprit[];
      /** The real programs with every planned change, the culprits' resolutions included. */
      final: RehearsedValues;
      /** Keys still wrong with every planned change and no line to blame. */
      unexplained: Array<{ key: string; model: SysctlModel; value: string | null }>;
    };

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

/** What a coupled write makes the key: the written value, or its kernel-derived follower value. */
function couplingValue(key: string, through: string, written: string): string {
  const c = couplingOf(through);
  return (c && followerValue(c, key, written)) ?? written;
}

/** Under /etc, or under where /etc really is when /etc itself is a link (an image with /etc -> etc.real). */
function isUnderEtc(p: string, etcReal: string): boolean {
  return p.startsWith('/etc/') || p.startsWith(`${etcReal}/`);
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
function explain(ownedPath: string, key: string, hits: Array<{ model: SysctlModel; applied: AppliedAssignment; through?: string }>): string {
  const models = SYSCTL_MODELS.filter((m) => hits.some((h) => h.model === m));
  const first = hits[0]!.applied;
  const through = hits.find((h) => h.through)?.through;
  const reasons = [...new Set(hits.map((h) => (h.applied.tail ? 'is applied last by sysctl --system' : through ? 'is written later' : `sorts after ${ownedPath}`)))];
  if (through) {
    return `${modelPhrase(models)} ${key} would be ${first.assignment.value === null ? "the kernel's value" : couplingValue(key, through, first.assignment.value)}: ${where(first)} sets ${through}, which the kernel couples with ${key}, and ${reasons.join(' and ')}`;
  }
  if (first.assignment.value === null) {
    return `${modelPhrase(models)} ${key} would keep the kernel's value: ${where(first)} (-${first.assignment.rawKey}) ${reasons.join(' and ')} and cancels it`;
  }
  return `${modelPhrase(models)} ${key} would be ${first.assignment.value}: ${where(first)} ${reasons.join(' and ')}`;
}

/** The tree with the given lines (lineId of the file holding their bytes) gone, as once they are commented out. */
function withoutLines(tree: SysctlTree, ids: ReadonlySet<string>): SysctlTree {
  const drop = (f: SysctlConfFile): SysctlConfFile => ({ ...f, assignments: f.assignments.filter((a) => !ids.has(lineId(f.realPath, a.line))) });
  return { files: tree.files.map(drop), sysctlConf: tree.sysctlConf ? drop(tree.sysctlConf) : null };
}

/** Every line that would beat the owned file, once the owned file holds the wanted settings. */
export function findConflicts(prospective: SysctlTree, ownedPath: string, wanted: Map<string, string>): Array<SysctlConflict & { source: SysctlConfFile }> {
  const grouped = new Map<string, { key: string; wanted: string; hits: Array<{ model: SysctlModel; applied: AppliedAssignment; through?: string }> }>();
  // Per program, until nothing new turns up: at boot a repeated value keeps
  // its first slot, so a later duplicate of a beaten line only shows once
  // that line is gone.
  for (const model of SYSCTL_MODELS) {
    let tree = prospective;
    for (let round = 0; round < 8; round++) {
      const found: string[] = [];
      for (const [key, value] of wanted) {
        for (const b of beatingAssignments(tree, ownedPath, key, value, model)) {
          const id = `${b.applied.source.realPath}\0${b.applied.assignment.line}\0${key}`;
          const g = grouped.get(id) ?? { key, wanted: value, hits: [] };
          g.hits.push({ model, applied: b.applied, ...(b.through ? { through: b.through } : {}) });
          grouped.set(id, g);
          found.push(lineId(b.applied.source.realPath, b.applied.assignment.line));
        }
      }
      if (found.length === 0) break;
      tree = withoutLines(tree, new Set(found));
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
      explanation: explain(ownedPath, key, [{ model: hits[0]!.model, applied: rep, ...(hits[0]!.through ? { through: hits[0]!.through } : {}) }, ...hits]),
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
  const observed: SysctlFileObserved = { live: host.live, etcReal: await host.realTarget('/etc'), owned: { path: spec.file, content, link }, tree, dirs, issues, skipped, verdicts: verdicts(tree, keys), runtime, rehearsal: null };
  observed.rehearsal = await rehearse(host, spec, observed);
  return observed;
}

/** The engine's own file changes (owned file, resolved conflicts), without the rehearsal's. */
function engineChanges(spec: SysctlFileSpec, observed: SysctlFileObserved): Change<SysctlOp>[] {
  return diff(spec, { ...observed, rehearsal: null }, { live: false });
}

function plannedTree(observed: SysctlFileObserved, changes: Change<SysctlOp>[]): SysctlTree {
  const writes = changes.filter((c) => c.file && c.file.after !== null && !c.operator).map((c) => ({ path: c.file!.path, content: c.file!.after! }));
  return treeAfterWrites(observed.tree, writes);
}

const right = (v: string | null | undefined, wanted: string) => v !== null && v !== undefined && sameSysctlValue(v, wanted);

/**
 * Runs the real programs over the files as the plan leaves them; when a key
 * comes out wrong, bisects the lines (in the namespace) down to the ones that
 * flip it, and runs once more with those resolved too.
 */
export interface SysctlEngine {
  /** The file changes the engine plans (owned file, resolved conflicts). */
  changes(spec: SysctlFileSpec, observed: SysctlFileObserved): Change<SysctlOp>[];
  verdict(tree: SysctlTree, key: string, model: SysctlModel): SysctlVerdict;
}

const ENGINE: SysctlEngine = { changes: engineChanges, verdict };

/** `engine` is for tests: a deliberately broken one shows what the rehearsal catches. */
export async function rehearse(host: Host, spec: SysctlFileSpec, observed: SysctlFileObserved, engine: SysctlEngine = ENGINE): Promise<SysctlRehearsal> {
  const avail = await rehearsalAvailability(host);
  if (!avail.ok) return { status: 'skipped', reason: avail.reason };
  const wanted = wantedSettings(spec);
  const notRehearsed: Array<{ key: string; reason: string }> = [];
  const keys: string[] = [];
  for (const k of wanted.keys()) {
    if (isNetKey(k)) keys.push(k);
    else notRehearsed.push({ key: k, reason: `${k} is not a key of the network namespace: rehearsing it would write this host's own value` });
  }
  if (keys.length === 0) return { status: 'skipped', reason: `no net.* key to rehearse (${notRehearsed.map((n) => n.key).join(', ')}); the engine's prediction stands` };
  const start: Array<[string, string]> = keys.flatMap((k) => {
    const v = startValue(wanted.get(k)!);
    return v === null ? [] : [[k, v] as [string, string]];
  });
  const seed: Array<[string, string]> = keys.map((k) => [k, wanted.get(k)!]);
  let runs = 0;
  const t0 = performance.now();
  const elapsed = () => Math.round(performance.now() - t0);
  const run = async (trials: RehearsalTrial[]) => {
    const r = await runRehearsal(host, avail.env, trials, keys, { start, seed });
    if ('reason' in r) throw new RehearsalUnavailable(r.reason);
    runs++;
    return r.results;
  };
  try {
    const changes = engine.changes(spec, observed);
    const planned = plannedTree(observed, changes);
    const [first] = await run([{ tree: planned }]);
    const enginePlan = { boot: first!.boot, system: first!.system };
    for (const k of [...keys]) {
      if (first!.boot[k] === null && first!.system[k] === null) {
        notRehearsed.push({ key: k, reason: `${k} does not exist in a fresh network namespace${moduleFor(k) ? ` (it appears once ${moduleFor(k)} is loaded)` : ''}` });
        keys.splice(keys.indexOf(k), 1);
      }
    }
    const predicted: RehearsedValues = { boot: {}, system: {} };
    for (const model of SYSCTL_MODELS) for (const k of keys) predicted[model][k] = engine.verdict(planned, k, model).value;

    // Bisect on the files as they are, with the engine's resolutions as left-out lines, so a culprit is named by its line on the host.
    const owned = renderOwnedFile(spec);
    const base = withFile(observed.tree, spec.file, owned, parseSysctlText(owned, spec.file).assignments);
    const engineRemoved = new Set(changes.flatMap((c) => (c.op.kind === 'resolve' ? c.op.conflicts.map((x) => lineId(x.realPath, x.line)) : [])));
    // One search per wrong key and program, run side by side (each in namespaces of its own).
    const searches = SYSCTL_MODELS.flatMap((model) => keys.filter((k) => !right(enginePlan[model][k], wanted.get(k)!)).map((k) => ({ model, k })));
    const results = await Promise.all(searches.map(async ({ model, k }) => {
      const seen = new Set<string>();
      const candidates: Array<{ id: string; file: string; line: number; realPath: string; text: string }> = [];
      for (const ap of applySequence(base, model)) {
        const id = lineId(ap.source.realPath, ap.assignment.line);
        if (ap.source.path === spec.file || ap.source.realPath === spec.file || engineRemoved.has(id) || seen.has(id) || !isNetKey(ap.assignment.key)) continue;
        seen.add(id);
        const text = sysctlLines(ap.source.content)[ap.assignment.line - 1] ?? '';
        candidates.push({ id, file: ap.tail ? SYSCTL_CONF : ap.source.path, line: ap.assignment.line, realPath: ap.source.realPath, text });
      }
      const found = await minimalRemoval(candidates, async (sets) => {
        const got = await run(sets.map((set) => ({ tree: base, removed: new Set([...engineRemoved, ...set.map((c) => c.id)]) })));
        return got.map((r) => right(r[model][k], wanted.get(k)!));
      });
      return { model, k, lines: found?.lines ?? [] };
    }));
    const culprits = new Map<string, RehearsalCulprit>();
    for (const { model, k, lines } of results) {
      for (const c of lines) {
        const id = `${c.id}\0${k}`;
        const had = culprits.get(id);
        if (had) had.models.push(model);
        else culprits.set(id, { key: k, wanted: wanted.get(k)!, models: [model], file: c.file, line: c.line, realPath: c.realPath, text: c.text, value: enginePlan[model][k] ?? null });
      }
    }
    const list = [...culprits.values()];
    let final = enginePlan;
    if (list.length > 0) {
      const withCulprits: SysctlFileObserved = { ...observed, rehearsal: { status: 'ran', ms: elapsed(), runs, programs: { boot: '', system: '' }, notRehearsed, start: {}, engine: predicted, enginePlan, culprits: list, final: enginePlan, unexplained: [] } };
      const [last] = await run([{ tree: plannedTree(observed, [...engine.changes(spec, observed), ...diff(spec, withCulprits, { live: false }).filter((c) => c.op.kind === 'resolve')]) }]);
      final = { boot: last!.boot, system: last!.system };
    }
    const unexplained = SYSCTL_MODELS.flatMap((model) => keys.filter((k) => !right(final[model][k], wanted.get(k)!)).map((k) => ({ key: k, model, value: final[model][k] ?? null })));
    return {
      status: 'ran', ms: elapsed(), runs,
      programs: { boot: avail.env.systemdSysctl, system: `${avail.env.sysctl} --system` },
      notRehearsed, start: Object.fromEntries(start), engine: predicted, enginePlan, culprits: list, final, unexplained,
    };
  } catch (e) {
    if (e instanceof RehearsalUnavailable) return { status: 'skipped', reason: e.message };
    throw e;
  }
}

class RehearsalUnavailable extends Error {}

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
  // Lines the rehearsal blames that the engine did not: the real programs win.
  const reh = observed.rehearsal?.status === 'ran' ? observed.rehearsal : null;
  for (const c of reh?.culprits ?? []) {
    if (conflicts.some((x) => x.realPath === c.realPath && x.line === c.line && x.key === c.key)) continue;
    const source = observed.tree.files.find((f) => f.path === c.file) ?? (c.file === SYSCTL_CONF ? observed.tree.sysctlConf : null);
    if (!source) continue;
    conflicts.push({
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
    });
  }
  for (const u of reh?.unexplained ?? []) {
    changes.push({
      id: `rehearsal:${u.key}:${u.model}`,
      action: 'operator',
      summary: `the rehearsal shows ${u.key} = ${u.value ?? 'unset'} ${modelPhrase([u.model])} even with every planned change (wanted ${wanted.get(u.key)})`,
      operator: `no configuration line explains it (bisection in the namespace found none); check ${u.key} by hand with ${u.model === 'boot' ? 'systemd-sysctl' : 'sysctl --system'}`,
      op: { kind: 'conflict', conflict: { key: u.key, wanted: wanted.get(u.key)!, value: u.value, file: '', line: 0, realPath: '', models: [u.model], explanation: 'rehearsal' } },
    });
  }
  const byTarget = new Map<string, { target: string; source: SysctlConfFile; replaceLink: boolean; list: typeof conflicts }>();
  for (const c of conflicts) {
    let target: string | null = null;
    let replace = false;
    if (isUnderEtc(c.realPath, observed.etcReal ?? '/etc')) target = c.realPath;
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
  const seen = await observe(host, spec);
  const again = diff(spec, seen, { live: host.live });
  const applied = new Set(changes.filter((c) => !c.operator && !c.deferred).map((c) => c.id));
  const left = again.filter((c) => applied.has(c.id));
  // The rehearsal, run again over the written files, must show every key right under both programs.
  const rehearsed = rehearsalFailures(spec, seen.rehearsal);
  if (left.length > 0 || rehearsed.length > 0) throw new VerifyError(resourceName(spec), [...left.map((c) => c.summary), ...rehearsed]);
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

/** Where the engine and the real programs disagree about the plan's outcome. */
export function rehearsalDisagreements(spec: SysctlFileSpec, r: Extract<SysctlRehearsal, { status: 'ran' }>) {
  const wanted = wantedSettings(spec);
  const out: Array<{ key: string; model: SysctlModel; engine: string | null; rehearsal: string | null }> = [];
  for (const model of SYSCTL_MODELS) {
    for (const key of Object.keys(r.engine[model])) {
      const e = r.engine[model][key] ?? null;
      const real = r.enginePlan[model][key] ?? null;
      // null from the engine: nothing writes the key; under sysctl --system it keeps what apply set.
      const engineOk = e !== null ? sameSysctlValue(e, wanted.get(key)!) : model === 'system';
      const realOk = right(real, wanted.get(key)!);
      if (engineOk !== realOk || (e !== null && real !== null && !sameSysctlValue(e, real))) out.push({ key, model, engine: e, rehearsal: real });
    }
  }
  return out;
}

/** Lines under the resource in the plan: the rehearsed outcome, or why there is none. */
export function rehearsalNotes(spec: SysctlFileSpec, observed: SysctlFileObserved): string[] {
  const r = observed.rehearsal;
  if (!r) return [];
  if (r.status === 'skipped') return [`rehearsal skipped: ${r.reason}`];
  const out = [`rehearsal with the planned changes (${r.programs.boot} and ${r.programs.system} in a private namespace, ${r.runs} run${r.runs === 1 ? '' : 's'}, ${r.ms} ms):`];
  const skipped = new Set(r.notRehearsed.map((n) => n.key));
  for (const key of Object.keys(r.final.boot).filter((k) => !skipped.has(k))) out.push(`  ${key}: at boot ${r.final.boot[key] ?? 'missing'}, after sysctl --system ${r.final.system[key] ?? 'missing'}`);
  for (const d of rehearsalDisagreements(spec, r)) {
    const program = d.model === 'boot' ? 'systemd-sysctl at boot' : 'sysctl --system';
    out.push(`  the engine predicted ${d.key} = ${d.engine ?? (d.model === 'boot' ? 'unset' : 'unchanged')} under ${program}; the real program gives ${d.rehearsal ?? 'missing'}: the rehearsal wins`);
  }
  for (const c of r.culprits) out.push(`  culprit (bisected in the namespace): ${c.realPath}:${c.line} ${c.text.trim()} flips ${c.key} ${modelPhrase(c.models)}`);
  for (const n of r.notRehearsed) out.push(`  ${n.key} left to the engine: ${n.reason}`);
  return out;
}

/** Keys the rehearsal shows wrong with the files as they are (nothing left to plan): what apply's verification names. */
export function rehearsalFailures(spec: SysctlFileSpec, r: SysctlRehearsal | null): string[] {
  if (!r || r.status !== 'ran') return [];
  const wanted = wantedSettings(spec);
  const out: string[] = [];
  for (const model of SYSCTL_MODELS) {
    for (const [key, value] of Object.entries(r.enginePlan[model])) {
      if (!wanted.has(key) || right(value, wanted.get(key)!) || r.notRehearsed.some((n) => n.key === key)) continue;
      out.push(`rehearsal: ${key} comes out ${value ?? 'missing'} ${model === 'boot' ? 'at boot (systemd-sysctl)' : 'after sysctl --system'}, wanted ${wanted.get(key)}`);
    }
  }
  return out;
}

const sysctlFileOwn: Provider<SysctlFileSpec, SysctlFileObserved, SysctlOp> = {
  type: 'SysctlFile',
  after: ['ModulesLoad'],
  observe,
  diff,
  summarize: (_spec, observed) => ({ ...summarizeVerdicts(observed), rehearsal: observed.rehearsal }),
  notes: rehearsalNotes,
  warnings: (_spec, o) => [
    ...o.skipped.map((k) => `${k.path} is skipped, as systemd-sysctl and sysctl --system skip it: ${k.why}`),
    ...o.issues.map((i) => `${i.file}:${i.line}: ${i.message}; both programs ignore this line`),
  ],
  async apply(host, spec, changes, ctx) {
    await apply(host, spec, changes, ctx.door);
  },
};

/** With the boot-script scan (issue 17): script lines that would undo this resource at boot. */
export const sysctlFileProvider = withBootScripts(sysctlFileOwn, sysctlConcern);
