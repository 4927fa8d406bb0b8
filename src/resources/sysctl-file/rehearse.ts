// The boot rehearsal of SysctlFile's plan: the real programs over the files
// as the plan leaves them, bisection of the lines that flip a key, and the
// notes and verification lines built from it.
import type { TargetHost } from '../../host.js';
import type { SysctlFileSpec } from './spec.js';
import type { Change } from '../types.js';
import { parseSysctlText, sameSysctlValue, sysctlLines } from '../../sysctl/parse.js';
import { applySequence, SYSCTL_CONF, SYSCTL_MODELS, treeAfterWrites, verdict, withFile } from '../../sysctl/order.js';
import type { SysctlModel, SysctlTree, SysctlVerdict } from '../../sysctl/order.js';
import { isNetKey, lineId, rehearsalAvailability, runRehearsal, startValue } from '../../sysctl/rehearsal.js';
import type { RehearsalEnv, RehearsalRun, RehearsalTrial, RehearsedValues } from '../../sysctl/rehearsal.js';
import { minimalRemoval } from '../../sysctl/bisect.js';
import { modelPhrase } from '../../sysctl/conflicts.js';
import { moduleFor, renderOwnedFile, wantedSettings } from '../../sysctl/owned-file.js';
import type { RehearsalCulprit, SysctlFileObserved, SysctlOp, SysctlRehearsal } from './observed.js';
import { diff } from './diff.js';
import type { WithScripts } from '../boot-script-hook.js';
import { sysctlConcern, type SysctlLike } from './boot-scripts.js';
import type { BootScripts } from '../../boot-scripts/scan.js';
import { keysAffecting } from '../../sysctl/couplings.js';

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

/** One rehearsal under way: what it replays, on which programs, and how many runs it has taken. */
interface Rehearsal {
  host: TargetHost;
  env: RehearsalEnv;
  spec: SysctlFileSpec;
  observed: SysctlFileObserved;
  engine: SysctlEngine;
  wanted: Map<string, string>;
  /** The keys replayed; a key a fresh network namespace lacks leaves after the first run. */
  keys: string[];
  notRehearsed: Array<{ key: string; reason: string }>;
  start: Array<[string, string]>;
  seed: Array<[string, string]>;
  runs: number;
  t0: number;
}

/** A line the bisection may leave out, named by where it is read. */
interface CandidateLine {
  id: string;
  file: string;
  line: number;
  realPath: string;
  text: string;
}

/** One bisection: a key that comes out wrong under one program, on the files as they are. */
interface KeySearch {
  rehearsal: Rehearsal;
  base: SysctlTree;
  /** Lines the engine's resolutions already leave out. */
  engineRemoved: Set<string>;
  model: SysctlModel;
  k: string;
}

/** `engine` is for tests: a deliberately broken one shows what the rehearsal catches. */
export async function rehearse(host: TargetHost, spec: SysctlFileSpec, observed: SysctlFileObserved, engine: SysctlEngine = ENGINE): Promise<SysctlRehearsal> {
  const avail = await rehearsalAvailability(host);
  if (!avail.ok) return { status: 'skipped', reason: avail.reason };
  const wanted = wantedSettings(spec);
  const { keys, notRehearsed } = netKeys(wanted);
  if (keys.length === 0)
    return { status: 'skipped', reason: `no net.* key to rehearse (${notRehearsed.map((n) => n.key).join(', ')}); the engine's prediction stands` };
  const start: Array<[string, string]> = keys.flatMap((k) => {
    const v = startValue(wanted.get(k)!);
    return v === null ? [] : [[k, v] as [string, string]];
  });
  const seed: Array<[string, string]> = keys.map((k) => [k, wanted.get(k)!]);
  const r: Rehearsal = { host, env: avail.env, spec, observed, engine, wanted, keys, notRehearsed, start, seed, runs: 0, t0: performance.now() };
  try {
    return await rehearsePlan(r);
  } catch (e) {
    if (e instanceof RehearsalUnavailable) return { status: 'skipped', reason: e.message };
    throw e;
  }
}

/** Only net.* keys live in a network namespace; the rest are left to the engine. */
function netKeys(wanted: Map<string, string>): { keys: string[]; notRehearsed: Array<{ key: string; reason: string }> } {
  const notRehearsed: Array<{ key: string; reason: string }> = [];
  const keys: string[] = [];
  for (const k of wanted.keys()) {
    if (isNetKey(k)) keys.push(k);
    else notRehearsed.push({ key: k, reason: `${k} is not a key of the network namespace: rehearsing it would write this host's own value` });
  }
  return { keys, notRehearsed };
}

const elapsed = (r: Rehearsal) => Math.round(performance.now() - r.t0);

async function runTrials(r: Rehearsal, trials: RehearsalTrial[]): Promise<RehearsalRun['results']> {
  const got = await runRehearsal(r.host, r.env, trials, r.keys, { start: r.start, seed: r.seed });
  if ('reason' in got) throw new RehearsalUnavailable(got.reason);
  r.runs++;
  return got.results;
}

async function rehearsePlan(r: Rehearsal): Promise<SysctlRehearsal> {
  const { spec, observed, engine, keys, wanted } = r;
  const changes = engine.changes(spec, observed);
  const planned = plannedTree(observed, changes);
  const [first] = await runTrials(r, [{ tree: planned }]);
  const enginePlan = { boot: first!.boot, system: first!.system };
  dropAbsentKeys(r, enginePlan);
  const predicted: RehearsedValues = { boot: {}, system: {} };
  for (const model of SYSCTL_MODELS) for (const k of keys) predicted[model][k] = engine.verdict(planned, k, model).value;
  const culprits = await bisectCulprits(r, changes, enginePlan);
  const final = culprits.length > 0 ? await valuesWithCulpritsResolved(r, predicted, enginePlan, culprits) : enginePlan;
  const unexplained = SYSCTL_MODELS.flatMap((model) =>
    keys.filter((k) => !right(final[model][k], wanted.get(k)!)).map((k) => ({ key: k, model, value: final[model][k] ?? null })),
  );
  return {
    status: 'ran',
    ms: elapsed(r),
    runs: r.runs,
    programs: { boot: r.env.systemdSysctl, system: `${r.env.sysctl} --system` },
    notRehearsed: r.notRehearsed,
    start: Object.fromEntries(r.start),
    engine: predicted,
    enginePlan,
    culprits,
    final,
    unexplained,
  };
}

function dropAbsentKeys(r: Rehearsal, first: RehearsedValues): void {
  for (const k of [...r.keys]) {
    if (first.boot[k] === null && first.system[k] === null) {
      r.notRehearsed.push({
        key: k,
        reason: `${k} does not exist in a fresh network namespace${moduleFor(k) ? ` (it appears once ${moduleFor(k)} is loaded)` : ''}`,
      });
      r.keys.splice(r.keys.indexOf(k), 1);
    }
  }
}

async function bisectCulprits(r: Rehearsal, changes: Change<SysctlOp>[], enginePlan: RehearsedValues): Promise<RehearsalCulprit[]> {
  const { spec, observed, keys, wanted } = r;
  // Bisect on the files as they are, with the engine's resolutions as left-out lines, so a culprit is named by its line on the host.
  const owned = renderOwnedFile(spec);
  const base = withFile(observed.tree, spec.file, owned, parseSysctlText(owned, spec.file).assignments);
  const engineRemoved = new Set(changes.flatMap((c) => (c.op.kind === 'resolve' ? c.op.conflicts.map((x) => lineId(x.realPath, x.line)) : [])));
  // One search per wrong key and program, run side by side (each in namespaces of its own).
  const searches: KeySearch[] = SYSCTL_MODELS.flatMap((model) =>
    keys.filter((k) => !right(enginePlan[model][k], wanted.get(k)!)).map((k) => ({ rehearsal: r, base, engineRemoved, model, k })),
  );
  const results = await Promise.all(searches.map(searchKey));
  return mergeCulprits(r, results, enginePlan);
}

async function searchKey(s: KeySearch): Promise<{ model: SysctlModel; k: string; lines: CandidateLine[] }> {
  const found = await minimalRemoval(candidateLines(s), (sets) => fixedByRemoving(s, sets));
  return { model: s.model, k: s.k, lines: found?.lines ?? [] };
}

/** The net.* lines the program reads, once each, other than ours and those the engine already resolves. */
function candidateLines(s: KeySearch): CandidateLine[] {
  const file = s.rehearsal.spec.file;
  const seen = new Set<string>();
  const candidates: CandidateLine[] = [];
  for (const ap of applySequence(s.base, s.model)) {
    const id = lineId(ap.source.realPath, ap.assignment.line);
    if (ap.source.path === file || ap.source.realPath === file || s.engineRemoved.has(id) || seen.has(id) || !isNetKey(ap.assignment.key)) continue;
    seen.add(id);
    const text = sysctlLines(ap.source.content)[ap.assignment.line - 1] ?? '';
    candidates.push({ id, file: ap.tail ? SYSCTL_CONF : ap.source.path, line: ap.assignment.line, realPath: ap.source.realPath, text });
  }
  return candidates;
}

/** Per set of left-out lines: does the key come out right without them? */
async function fixedByRemoving(s: KeySearch, sets: CandidateLine[][]): Promise<boolean[]> {
  const r = s.rehearsal;
  const got = await runTrials(
    r,
    sets.map((set) => ({ tree: s.base, removed: new Set([...s.engineRemoved, ...set.map((c) => c.id)]) })),
  );
  return got.map((v) => right(v[s.model][s.k], r.wanted.get(s.k)!));
}

/** A line that flips a key under both programs is one culprit with both models. */
function mergeCulprits(
  r: Rehearsal,
  results: Array<{ model: SysctlModel; k: string; lines: CandidateLine[] }>,
  enginePlan: RehearsedValues,
): RehearsalCulprit[] {
  const culprits = new Map<string, RehearsalCulprit>();
  for (const { model, k, lines } of results) {
    for (const c of lines) {
      const id = `${c.id}\0${k}`;
      const had = culprits.get(id);
      if (had) had.models.push(model);
      else
        culprits.set(id, {
          key: k,
          wanted: r.wanted.get(k)!,
          models: [model],
          file: c.file,
          line: c.line,
          realPath: c.realPath,
          text: c.text,
          value: enginePlan[model][k] ?? null,
        });
    }
  }
  return [...culprits.values()];
}

/** One more run, with the culprits resolved as diff would resolve them. */
async function valuesWithCulpritsResolved(
  r: Rehearsal,
  predicted: RehearsedValues,
  enginePlan: RehearsedValues,
  culprits: RehearsalCulprit[],
): Promise<RehearsedValues> {
  const { spec, observed, engine } = r;
  const withCulprits: SysctlFileObserved = {
    ...observed,
    rehearsal: {
      status: 'ran',
      ms: elapsed(r),
      runs: r.runs,
      programs: { boot: '', system: '' },
      notRehearsed: r.notRehearsed,
      start: {},
      engine: predicted,
      enginePlan,
      culprits,
      final: enginePlan,
      unexplained: [],
    },
  };
  const [last] = await runTrials(r, [
    {
      tree: plannedTree(observed, [...engine.changes(spec, observed), ...diff(spec, withCulprits, { live: false }).filter((c) => c.op.kind === 'resolve')]),
    },
  ]);
  return { boot: last!.boot, system: last!.system };
}

class RehearsalUnavailable extends Error {}

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

/**
 * The writers of `key` at boot the rehearsal does not replay, as the
 * boot-script scan found them (scripts, hooks, unit commands, files a unit
 * applies): each as file:line and what it does; a line the scan could not
 * judge makes the answer "unknown". The plan's lines decide the promise (a
 * writer that leaves another value takes it back); this says what the
 * rehearsal's figure rests on.
 */
export function otherWriters(key: string, scripts: BootScripts | undefined): string {
  if (scripts === undefined) return 'not searched';
  const keys = keysAffecting(key);
  const module = moduleFor(key);
  const found: string[] = [];
  for (const h of scripts.hits) {
    const a = h.action;
    const at = `${h.file}:${h.line}`;
    if (a.kind === 'sysctl-write' && keys.includes(a.key))
      // A writer that re-reads sysctl files after its write (tuned's reapply_sysctl) leaves a key those files set at their value.
      found.push(`${at} sets ${a.key} = ${a.value}${h.reapplied ? `, then re-applies ${[...h.reapplied.dirs, h.reapplied.last].join(', ')}` : ''}`);
    else if (a.kind === 'module-remove' && module === a.module) found.push(`${at} removes ${a.module}`);
    else if (a.kind === 'sysctl-load') {
      const lines = (h.loaded ?? []).flatMap((l) =>
        parseSysctlText(l.content, l.file)
          .assignments.filter((x) => x.value !== null && (keys.includes(x.key) || x.isGlob))
          .map((x) => `${l.file}:${x.line}`),
      );
      if (lines.length > 0) found.push(`${at} loads ${lines.join(', ')}`);
    }
  }
  const one: SysctlLike = { type: 'SysctlFile', settings: { [key]: '' } };
  const unknown = scripts.unknown.some((u) => sysctlConcern.relevant(u, one));
  const list = [...new Set(found)];
  if (list.length === 0) return unknown ? 'unknown, see the warnings' : 'none known';
  return list.join('; ') + (unknown ? '; others unknown, see the warnings' : '');
}

/** Lines under the resource in the plan: the rehearsed outcome, or why there is none. */
export function rehearsalNotes(spec: SysctlFileSpec, observed: SysctlFileObserved): string[] {
  const r = observed.rehearsal;
  if (!r) return [];
  if (r.status === 'skipped') return [`rehearsal skipped: ${r.reason}`];
  const out = [
    `rehearsal with the planned changes (${r.programs.boot} and ${r.programs.system} in a private namespace, ${r.runs} run${r.runs === 1 ? '' : 's'}, ${r.ms} ms):`,
  ];
  const skipped = new Set(r.notRehearsed.map((n) => n.key));
  const scripts = (observed as SysctlFileObserved & WithScripts).bootScripts;
  // The programs by name (the header gives their paths): "systemd-sysctl and sysctl --system".
  const named = (cmd: string) => cmd.replace(/^\S*\//, '');
  const replayed = `${named(r.programs.boot)} and ${named(r.programs.system)}`;
  for (const key of Object.keys(r.final.boot).filter((k) => !skipped.has(k)))
    out.push(
      `  ${key}: at boot ${r.final.boot[key] ?? 'missing'}, after sysctl --system ${r.final.system[key] ?? 'missing'} (${replayed} replayed; other writers: ${otherWriters(key, scripts)})`,
    );
  for (const d of rehearsalDisagreements(spec, r)) {
    const program = d.model === 'boot' ? 'systemd-sysctl at boot' : 'sysctl --system';
    out.push(
      `  the engine predicted ${d.key} = ${d.engine ?? (d.model === 'boot' ? 'unset' : 'unchanged')} under ${program}; the real program gives ${d.rehearsal ?? 'missing'}: the rehearsal wins`,
    );
  }
  for (const c of r.culprits)
    out.push(`  culprit (bisected in the namespace): ${c.realPath}:${c.line} ${c.text.trim()} flips ${c.key} ${modelPhrase(c.models)}`);
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
      out.push(
        `rehearsal: ${key} comes out ${value ?? 'missing'} ${model === 'boot' ? 'at boot (systemd-sysctl)' : 'after sysctl --system'}, wanted ${wanted.get(key)}`,
      );
    }
  }
  return out;
}
