// ModulesLoad: the wanted modules are loaded now (live) and at every boot:
// listed in our modules-load.d file, and not stopped by a modprobe.d
// blacklist or no-op install line, which would make systemd-modules-load skip
// them silently at the next boot.
import type { TargetHost } from '../../host.js';
import { MODULES_LOAD_SCHEMA, type ModulesLoadSpec } from './spec.js';
import type { ApplyOutcome, Change, Provider, SpecIssue } from '../types.js';
import { canonicalModuleName, moduleStates } from '../../observe/modules.js';
import type { WriteDoor } from '../../door/door.js';
import { HostError } from '../../errors.js';
import { commentOutDirectives, overrideContent, type ModprobeBlocker } from '../../modprobe/modprobe-d.js';
import { observeModules, type ModulesObserved } from '../../modprobe/observe.js';
import { withBootScripts } from '../boot-script-hook.js';
import { modulesConcern } from './boot-scripts.js';
import { cmdlineChanges, refusedNow, type CmdlineOp } from './cmdline.js';
import { notRegularWarning } from '../../systemd/conf-entry.js';
import { MODULE_KIND, modulePromise } from './promises.js';
import { ownedFileProblem } from '../../grammar.js';
import { moduleNameProblem } from './grammar.js';

export type ModulesOp =
  | { kind: 'modprobe'; module: string }
  | { kind: 'write-file'; replaceLink: boolean }
  | { kind: 'neutralise'; source: string; target: string; replaceLink: boolean }
  | CmdlineOp
  | { kind: 'none' };

/** The owned file: one module per line, nothing else (modules-load.d(5); the lab reads the lines). */
export function modulesFileContent(modules: string[]): string {
  return modules.map((m) => m.trim()).join('\n') + '\n';
}

function describeBlocker(b: ModprobeBlocker): string {
  const where = b.firstLine === b.lastLine ? `line ${b.firstLine}` : `lines ${b.firstLine}-${b.lastLine}`;
  const dep = b.neededBy ? `, a dependency of ${b.neededBy.join(', ')}` : '';
  return `\`${b.text.trim()}\` (${where}${dep})`;
}

export function diffModules(spec: ModulesLoadSpec, o: ModulesObserved, ctx: { live: boolean }): Change<ModulesOp>[] {
  const changes: Change<ModulesOp>[] = [];

  // Blockers first: an `install NAME /bin/true` would make the modprobe below succeed without loading anything.
  for (const bf of o.blockerFiles) {
    const lines = bf.blockers.map(describeBlocker).join(', ');
    const after =
      bf.target === bf.source && !bf.replaceLink
        ? commentOutDirectives(bf.sourceContent, bf.blockers)
        : overrideContent(bf.source, bf.sourceContent, bf.blockers);
    changes.push({
      id: `modprobe.d:${bf.target}`,
      action: bf.targetContent === null ? 'create' : 'update',
      summary:
        bf.target === bf.source && !bf.replaceLink
          ? `comment out ${lines} in ${bf.source}`
          : `override ${bf.source} with ${bf.target} that comments out ${lines}`,
      file: { path: bf.target, before: bf.targetContent, after },
      op: { kind: 'neutralise', source: bf.source, target: bf.target, replaceLink: bf.replaceLink },
    });
  }

  for (const u of o.unjudged ?? []) {
    const where = u.firstLine === u.lastLine ? `${u.file}:${u.firstLine}` : `${u.file}:${u.firstLine}-${u.lastLine}`;
    changes.push({
      id: `modprobe.d-unknown:${u.file}:${u.firstLine}`,
      action: 'operator',
      summary: `unknown: ${where} \`${u.text.trim()}\` may stop ${u.neededBy ? `${u.neededBy.join(', ')} (through ${u.module})` : u.module} from loading`,
      operator: `${where}: ${u.reason}; check the command and remove the line, or make it run modprobe --ignore-install ${u.module}`,
      op: { kind: 'none' },
    });
  }

  const want = modulesFileContent(spec.modules);
  if (o.file.content !== want || o.file.link !== null) {
    changes.push({
      id: `file:${spec.file}`,
      action: o.file.content === null ? 'create' : 'update',
      summary: `${o.file.content === null ? 'create' : 'rewrite'} ${spec.file} listing ${spec.modules.join(', ')}${o.file.link !== null ? ` (replacing its symlink to ${o.file.link})` : ''}`,
      file: { path: spec.file, before: o.file.content, after: want },
      op: { kind: 'write-file', replaceLink: o.file.link !== null },
    });
  }

  changes.push(...cmdlineChanges(o.cmdline, new Set((o.states ?? []).filter((s) => s.loaded).map((s) => s.name))));
  // A module the running kernel refuses gets no modprobe: the operator line above says why.
  const refused = refusedNow(o.cmdline);
  if (ctx.live && o.states) {
    for (const s of o.states.filter((s) => !s.loaded && !refused.has(s.name))) {
      changes.push({
        id: `modprobe:${s.name}`,
        action: 'runtime',
        runtime: true,
        summary: `modprobe ${s.name} (not loaded now)`,
        op: { kind: 'modprobe', module: s.name },
      });
    }
  } else if (!ctx.live) {
    // A module the boot's command line stops is not promised: its operator line above says why.
    const stopped = new Set((o.cmdline?.boot ?? []).map((b) => b.block.module));
    const loads = spec.modules.filter((m) => !stopped.has(canonicalModuleName(m)));
    if (loads.length > 0) {
      changes.push({
        id: 'modprobe:first-boot',
        action: 'deferred',
        summary: `${loads.join(', ')} load${loads.length === 1 ? 's' : ''} at first boot via systemd-modules-load (offline: modprobe skipped)`,
        op: { kind: 'none' },
      });
    }
  }
  return changes;
}

const ORDER: Record<ModulesOp['kind'], number> = { neutralise: 0, 'write-file': 1, modprobe: 2, none: 3 };

/**
 * Writes a planned file change through the door, which refuses it when the
 * file changed since it was observed. A symlink at the path is replaced by a
 * plain file only when the plan saw it (never written through a /dev/null
 * mask or into the file a link points at).
 */
async function writePlanned(door: WriteDoor, c: Change<ModulesOp>, replaceLink: boolean): Promise<void> {
  const f = c.file;
  if (!f || f.after === null) return;
  const link = await door.host.readLink(f.path);
  if (link !== null && !replaceLink) throw new HostError(`${f.path} became a symlink since it was observed; plan again`, f.path);
  await door.writeFile({ path: f.path, expect: link !== null ? undefined : f.before, content: f.after, mode: 0o644, replaceLink: link !== null });
}

/** The fact a loaded module is to other resources' changes (SysctlFile's net.bridge.* writes need "module:br_netfilter"). */
export function moduleFact(module: string): string {
  return `module:${canonicalModuleName(module)}`;
}

/**
 * Files first (a failed write throws: nothing after it is safe), then each
 * modprobe on its own: one module that will not load leaves the others to
 * load, and is named as the fact that failed.
 */
export async function applyModules(host: TargetHost, changes: Change<ModulesOp>[], door: WriteDoor): Promise<ApplyOutcome | void> {
  const todo = [...changes].sort((a, b) => ORDER[a.op.kind] - ORDER[b.op.kind]);
  const failed: Array<{ change: string; module: string; message: string }> = [];
  for (const c of todo) {
    const op = c.op;
    switch (op.kind) {
      case 'neutralise':
        await writePlanned(door, c, op.replaceLink);
        break;
      case 'write-file':
        await writePlanned(door, c, op.replaceLink);
        break;
      case 'modprobe':
        try {
          await door.runtime({ step: 'modprobe', module: op.module }, () => host.runChecked('modprobe', [op.module]));
        } catch (e) {
          failed.push({ change: c.id, module: op.module, message: (e as Error).message });
        }
        break;
      case 'none':
        break;
    }
  }
  if (failed.length === 0) return;
  return {
    error: failed.map((f) => `modprobe ${f.module}: ${f.message}`).join('; '),
    failedChanges: failed.map((f) => f.change),
    failedFacts: failed.map((f) => moduleFact(f.module)),
    // The modules that would not load, alone: the others loaded and keep their promises.
    failedPromises: failed.map((f) => modulePromise(canonicalModuleName(f.module))),
  };
}

/** Its file's place and each module's name; a module twice under kmod's '-'/'_' equivalence. */
function grammar(raw: Record<string, unknown>): SpecIssue[] {
  const out: SpecIssue[] = [];
  const add = (at: string[], message: string | null) => {
    if (message) out.push({ at, atKey: false, message });
  };
  if (typeof raw.file === 'string') add(['file'], ownedFileProblem(raw.file, '/etc/modules-load.d', 'systemd-modules-load'));
  const modules: unknown = raw.modules;
  if (!Array.isArray(modules)) return out;
  const seen = new Map<string, number>();
  modules.forEach((m: unknown, j: number) => {
    if (typeof m !== 'string') return;
    const problem = moduleNameProblem(m);
    add(['modules', String(j)], problem);
    if (problem) return;
    const first = seen.get(canonicalModuleName(m));
    if (first !== undefined && modules[first] !== m) {
      add(['modules', String(j)], `is the same module as modules[${first}] (${JSON.stringify(modules[first])}): kmod treats '-' and '_' alike`);
    } else seen.set(canonicalModuleName(m), j);
  });
  return out;
}

const modulesLoadOwn: Provider<ModulesLoadSpec, ModulesObserved, ModulesOp> = {
  type: 'ModulesLoad',
  schema: MODULES_LOAD_SCHEMA,
  after: [],
  promised: (spec) =>
    spec.modules.map((m) => ({ id: modulePromise(canonicalModuleName(m)), kind: 'module', subject: canonicalModuleName(m), expect: 'loaded' })),
  promiseKinds: { module: MODULE_KIND },
  // before.json's br_netfilter: loaded (or built in) before anything changed.
  beforeState: async (host, seen) => ({
    br_netfilter: seen.modules?.get(canonicalModuleName('br_netfilter')) ?? (await moduleStates(host, ['br_netfilter']))[0]?.loaded ?? false,
  }),
  observe: (host, spec) => observeModules(host, spec),
  diff: (spec, observed, ctx) => diffModules(spec, observed, ctx),
  warnings: (_spec, o) =>
    (o.skipped ?? []).map((k) =>
      k.notRegular
        ? notRegularWarning(k.path, k.notRegular, k.path.includes('modprobe.d') ? 'modprobe' : 'systemd-modules-load')
        : `${k.path} is skipped, as ${k.path.includes('modprobe.d') ? 'modprobe' : 'systemd-modules-load'} skips it: ${k.why}`,
    ),
  apply: (host, _spec, changes, ctx) => applyModules(host, changes, ctx.door),
  grammar,
  claims: (spec) => [{ kind: 'file', subject: spec.file, at: ['file'] }],
  // Before.json's br_netfilter and facts.json's kernel release, as the running host showed them (the first state of a name counts).
  facts: (_spec, o) => {
    const modules = new Map<string, boolean>();
    for (const m of o.states ?? []) if (!modules.has(m.name)) modules.set(m.name, m.loaded);
    return o.live ? { modules, kernelRelease: o.kernelRelease } : { modules };
  },
};

/** With the boot-script scan (issue 17): script lines that would undo this resource at boot. */
export const modulesLoadProvider = withBootScripts(modulesLoadOwn, modulesConcern);
