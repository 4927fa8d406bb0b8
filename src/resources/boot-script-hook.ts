// Boot-time scripts, added to a provider: what a resource's boot-script
// concern (its folder's boot-scripts.ts: SwapOff's swapon, SysctlFile's
// sysctl writes and loads, ModulesLoad's modprobe -r) says undoes it becomes
// a change, a warning or an unknown. Not a provider itself: withBootScripts()
// wraps one, so each provider only wraps its export.
//
// Each hit is a blocker naming file:line. A person decides to edit a script,
// so by default it is an operator line (apply exits 1 while it stands). With
// `neutralise_scripts: true` the statement is commented out with a marker
// through the write door (journal, backup, --rollback); a line that cannot be
// commented out safely (inside a compound command, a unit's command line)
// stays an operator line with the reason.
import type { TargetFs } from '../host.js';
import type { BaseSpec, Change, Provider } from './types.js';
import type { WriteDoor } from '../door/door.js';
import { HostError } from '../errors.js';
import { scanBootScripts, type BootScriptHit, type BootScripts, type BootScriptUnknown } from '../boot-scripts/scan.js';
import { commentOutRanges, rangesIn, type LineRange } from '../boot-scripts/neutralise.js';
import type { ProviderUnknown, Withdrawal } from '../promises.js';

export interface ScriptSpec extends BaseSpec {
  /** Comment out boot-script lines that undo this resource, instead of leaving them to an operator. */
  neutralise_scripts?: boolean;
}

export type BootScriptOp =
  | { kind: 'boot-script'; file: string; ranges: LineRange[]; marker: string }
  | { kind: 'boot-script-operator'; file: string; line: number }
  /** A sysctl file a boot script or unit loads (sysctl -p FILE), with its offending lines commented out (conflict_policy: resolve). */
  | { kind: 'sysctl-load-resolve'; file: string; lines: number[]; before: string; content: string };

/** A loaded sysctl file as resolving leaves it: the file (its real path), its bytes before and after, the lines commented out. */
export interface LoadResolution {
  file: string;
  before: string;
  after: string;
  lines: number[];
}

/** Files the resource's own changes rewrite: target path -> the bytes after the plan. */
export type PlannedFiles = ReadonlyMap<string, string>;

/** What a resource cares about in the scripts. */
export interface ScriptConcern<S> {
  /**
   * Why the hit undoes the resource ("turns swap on: swapon /swap-extra"), or
   * null when it does not. `planned`: a file the hit reads (sysctl -p) is
   * judged as the resource's own changes leave it.
   */
  judge(spec: S, hit: BootScriptHit, planned?: PlannedFiles): string | null;
  /** Unknowns that may undo it (without a spec: any that may undo one). */
  relevant(u: BootScriptUnknown, spec?: S): boolean;
  /** The reason in the marker line. */
  marker(spec: S): string;
  /** The promises a hit (or, with null, an unknown line) takes back at the next boot; `planned` as for judge. */
  withdraws(spec: S, hit: BootScriptHit | null, planned?: PlannedFiles): Withdrawal[];
  /**
   * A hit the resource may resolve itself, as its policy says: the files it
   * rewrites so that the hit undoes nothing any more; null when it may not
   * (then the hit is an operator line, or commented out with neutralise_scripts).
   */
  resolve?(spec: S, hit: BootScriptHit, planned: PlannedFiles): LoadResolution[] | null;
}

/** A withdrawal from the next boot on: what a boot script undoes holds after apply. */
export const atBoot = (promise: string): Withdrawal => ({ promise, from: 'boot' });

/** Optional so an observation made without the scan (a test's hand-made one) still diffs. */
export interface WithScripts {
  bootScripts?: BootScripts;
}

function where(h: { file: string; line: number }): string {
  return h.line > 0 ? `${h.file}:${h.line}` : h.file;
}

/** Pure: the script changes of one resource. */
export function scriptChanges<S extends ScriptSpec>(spec: S, scripts: BootScripts, concern: ScriptConcern<S>, planned?: PlannedFiles): Change<BootScriptOp>[] {
  const changes: Change<BootScriptOp>[] = [];
  const byFile = new Map<string, Array<{ h: BootScriptHit; why: string }>>();
  const seen = new Set<string>();
  // Files resolved here are judged as resolved by the hits after (two scripts loading one file: one change).
  const local = new Map(planned ?? []);
  for (const h of scripts.hits) {
    const why = concern.judge(spec, h, local);
    if (why === null) continue;
    const id = `${h.file}:${h.line}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const fixes = concern.resolve?.(spec, h, local) ?? null;
    if (fixes !== null) {
      for (const f of fixes) {
        local.set(f.file, f.after);
        const lineWord = `line${f.lines.length === 1 ? '' : 's'} ${f.lines.join(', ')}`;
        changes.push({
          id: `boot-script-resolve:${f.file}`,
          action: 'update',
          summary: `${where(h)} ${why} (${h.runBy}); conflict_policy is resolve: commenting out ${lineWord} of ${f.file}`,
          file: { path: f.file, before: f.before, after: f.after },
          op: { kind: 'sysctl-load-resolve', file: f.file, lines: f.lines, before: f.before, content: f.after },
        });
      }
      continue;
    }
    const content = scripts.contents[h.file];
    if (spec.neutralise_scripts && h.neutralisable === true && content !== undefined) {
      byFile.set(h.file, [...(byFile.get(h.file) ?? []), { h, why }]);
      continue;
    }
    // neutralise_scripts comments out only what is safe to comment out: for anything else, the reason is the fix.
    const how =
      h.neutralisable !== true
        ? `${spec.neutralise_scripts ? 'not commented out: ' : ''}${h.neutralisable}`
        : spec.neutralise_scripts
          ? 'not commented out: the file could not be read again; edit it by hand'
          : `remove or comment out that line (or set neutralise_scripts: true to have it commented out)`;
    changes.push({
      id: `boot-script:${id}`,
      action: 'operator',
      summary: `${where(h)} ${why}; ${h.runBy}: \`${h.text}\``,
      operator: `${where(h)}: ${how}`,
      op: { kind: 'boot-script-operator', file: h.file, line: h.line },
      withdraws: concern.withdraws(spec, h, local),
    });
  }
  for (const [file, list] of byFile) {
    const before = scripts.contents[file]!;
    const ranges = list.map(({ h }) => ({ first: h.first, last: h.last }));
    const marker = concern.marker(spec);
    const lines = [...new Set(list.map(({ h }) => (h.first === h.last ? `${h.first}` : `${h.first}-${h.last}`)))].join(', ');
    changes.push({
      id: `boot-script:${file}`,
      action: 'update',
      summary: `comment out ${file} line${list.length === 1 && list[0]!.h.first === list[0]!.h.last ? '' : 's'} ${lines}: ${list.map(({ h, why }) => `${where(h)} ${why} (${h.runBy})`).join('; ')}`,
      file: { path: file, before, after: commentOutRanges(before, ranges, marker) },
      op: { kind: 'boot-script', file, ranges, marker },
    });
  }
  return changes;
}

/** One warning per file and reason, naming every line (a script with many `$PROG ...` lines stays one line). */
export function scriptWarnings<S extends ScriptSpec>(scripts: BootScripts, concern: ScriptConcern<S>, spec?: S): string[] {
  const groups = new Map<string, { file: string; message: string; lines: number[] }>();
  for (const u of scripts.unknown.filter((x) => concern.relevant(x, spec))) {
    const key = `${u.file}\0${u.message}`;
    const g = groups.get(key) ?? { file: u.file, message: u.message, lines: [] };
    if (u.line > 0 && !g.lines.includes(u.line)) g.lines.push(u.line);
    groups.set(key, g);
  }
  return [...groups.values()].map((g) => {
    const at = g.lines.length === 0 ? g.file : g.lines.length === 1 ? `${g.file}:${g.lines[0]}` : `${g.file} lines ${g.lines.join(', ')}`;
    return `unknown: ${at}: ${g.message}; whether it undoes this resource at boot cannot be judged`;
  });
}

/**
 * The same groups as scriptWarnings, as unknowns: a line the scan cannot
 * judge decides whether the resource holds at the next boot, so each takes
 * back the resource's promises at boot (the plan cannot tell which).
 */
export function scriptUnknowns<S extends ScriptSpec>(spec: S, scripts: BootScripts, concern: ScriptConcern<S>): ProviderUnknown[] {
  const withdraws = concern.withdraws(spec, null);
  return scriptWarnings(scripts, concern, spec).map((message) => ({ message, withdraws }));
}

/** Writes each planned comment-out through the door; a file another resource of this run commented out first is taken as it is now. */
export async function applyScriptChanges(host: TargetFs, changes: Change<BootScriptOp>[], door: WriteDoor): Promise<void> {
  for (const c of changes) {
    const op = c.op;
    if (op.kind === 'sysctl-load-resolve') {
      const now = await host.readBytes(op.file);
      if (now !== op.before) throw new HostError(`${op.file} changed since it was observed; plan again`, op.file);
      await door.writeFile({ path: op.file, expect: op.before, content: op.content });
      continue;
    }
    if (op.kind !== 'boot-script' || !c.file || c.file.before === null) continue;
    const before = c.file.before;
    const now = await host.readBytes(op.file);
    if (now === before || now === null) {
      await door.writeFile({ path: op.file, expect: before, content: c.file.after! });
      continue;
    }
    const ranges = rangesIn(before, now, op.ranges);
    if (ranges === null) throw new HostError(`${op.file} changed since it was observed; plan again`, op.file);
    if (ranges.length > 0) await door.writeFile({ path: op.file, expect: now, content: commentOutRanges(now, ranges, op.marker) });
  }
}

function isScriptOp(op: unknown): op is BootScriptOp {
  const k = (op as { kind?: string } | null)?.kind;
  return k === 'boot-script' || k === 'boot-script-operator' || k === 'sysctl-load-resolve';
}

/**
 * The provider with the boot-script scan added to its observe, diff, warnings
 * and apply. It keeps the provider's own type: the engine treats ops as
 * opaque, and the script changes (BootScriptOp) never reach the wrapped
 * provider's apply, which this one splits them from.
 */
export function withBootScripts<S extends C, C extends ScriptSpec, O extends object, Op>(p: Provider<S, O, Op>, concern: ScriptConcern<C>): Provider<S, O, Op> {
  const wrapped: Provider<S, O & WithScripts, Op | BootScriptOp> = {
    ...p,
    observe: async (host, spec) => ({ ...(await p.observe(host, spec)), bootScripts: await scanBootScripts(host) }),
    diff: (spec, o, ctx) => {
      const own = p.diff(spec, o, ctx);
      // A script that loads a file this plan rewrites (sysctl -p /etc/sysctl.conf) loads the rewritten bytes.
      const planned = new Map(
        own.flatMap((c) => (c.file && c.file.after !== null && c.file.after !== undefined ? [[c.file.path, c.file.after] as const] : [])),
      );
      return [...own, ...(o.bootScripts ? scriptChanges(spec, o.bootScripts, concern, planned) : [])];
    },
    unknowns: (spec, o) => [...(p.unknowns?.(spec, o) ?? []), ...(o.bootScripts ? scriptUnknowns(spec, o.bootScripts, concern) : [])],
    apply: async (host, spec, changes, ctx) => {
      const mine = changes.filter((c): c is Change<BootScriptOp> => isScriptOp(c.op));
      const theirs = changes.filter((c): c is Change<Op> => !isScriptOp(c.op));
      // Scripts first: the provider's own apply may throw, and a script line left for later would outlive it.
      await applyScriptChanges(host, mine, ctx.door);
      return theirs.length > 0 ? p.apply(host, spec, theirs, ctx) : undefined;
    },
  };
  return wrapped as unknown as Provider<S, O, Op>;
}
