// ModulesLoad: the wanted modules are loaded now (live) and at every boot:
// listed in our modules-load.d file, and not stopped by a modprobe.d
// blacklist or no-op install line, which would make systemd-modules-load skip
// them silently at the next boot.
import path from 'node:path';
import type { Host } from '../host.js';
import type { ModulesLoadSpec } from '../desired-state.js';
import type { Change, Provider } from './types.js';
import type { WriteDoor } from '../door/door.js';
import { readConfEntry } from '../systemd/conf-entry.js';
import { HostError } from '../errors.js';
import { canonicalModuleName, moduleStates, type ModuleState } from '../observe/modules.js';
import { dependenciesOf, parseModulesDep } from '../modprobe/modules-dep.js';
import {
  commentOutDirectives,
  effectiveConfFiles,
  findBlockers,
  findUnjudged,
  softdepsOf,
  type ConfFile,
  type ModprobeUnjudged,
  MODPROBE_DIRS,
  MODPROBE_ETC,
  overrideContent,
  type ModprobeBlocker,
} from '../modprobe/modprobe-d.js';
import { modulesConcern, withBootScripts } from './boot-script-hook.js';

/** modules-load.d(5) search path, highest precedence first (the same scheme as sysctl.d). */
export const MODULES_LOAD_DIRS = [
  '/etc/modules-load.d',
  '/run/modules-load.d',
  '/usr/local/lib/modules-load.d',
  '/usr/lib/modules-load.d',
  '/lib/modules-load.d',
] as const;

/** A modprobe.d file holding blockers, and the file we write to neutralise them. */
export interface BlockerFile {
  /** The effective file that holds the blockers. */
  source: string;
  /** Where the fix goes: the source itself when it is a regular file in /etc, else a same-named /etc override. */
  target: string;
  /** The target is a symlink (to a vendor file) that must become a regular file. */
  replaceLink: boolean;
  sourceContent: string;
  /** Current content of the target; null when it does not exist. */
  targetContent: string | null;
  blockers: ModprobeBlocker[];
}

export interface ModulesObserved {
  live: boolean;
  /** null offline: an unbooted image has no loaded modules. */
  states: ModuleState[] | null;
  file: {
    path: string;
    /** Content as read (through a symlink); null when absent or masked. */
    content: string | null;
    /**
     * The path is a symlink (a /dev/null mask, or a link to another file such
     * as ../modules). Ours must be a regular file: the link is replaced, never written through.
     */
    link: string | null;
  };
  blockerFiles: BlockerFile[];
  /** install lines for the wanted modules (or what they need) whose effect cannot be judged: an operator decides. */
  unjudged?: ModprobeUnjudged[];
  /** Other modules-load.d files that already list a wanted module (harmless duplicates). */
  alsoListedIn: Array<{ module: string; files: string[] }>;
  /** modprobe.d and modules-load.d entries their readers skip (a directory, a dangling link, a loop). */
  skipped?: Array<{ path: string; why: string }>;
}

export type ModulesOp =
  | { kind: 'modprobe'; module: string }
  | { kind: 'write-file'; replaceLink: boolean }
  | { kind: 'neutralise'; source: string; target: string; replaceLink: boolean }
  | { kind: 'none' };

/** The owned file: one module per line, nothing else (modules-load.d(5); the lab reads the lines). */
export function modulesFileContent(modules: string[]): string {
  return modules.map((m) => m.trim()).join('\n') + '\n';
}

/** Module names listed in a modules-load.d file ("#" and ";" start comments). */
export function parseModulesLoad(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith(';'))
    .map(canonicalModuleName);
}

async function listConfDirs(host: Host, dirs: readonly string[]): Promise<Array<{ dir: string; names: string[] }>> {
  const out: Array<{ dir: string; names: string[] }> = [];
  for (const dir of dirs) out.push({ dir, names: ((await host.readDir(dir)) ?? []).map((e) => e.name) });
  return out;
}

async function isMasked(host: Host, p: string): Promise<boolean> {
  return (await host.readLink(p)) === '/dev/null';
}

/**
 * modules.dep of the running kernel (live), or of every kernel installed in
 * the image (offline: which one boots is not ours to know).
 */
async function readModulesDeps(host: Host): Promise<Array<Map<string, string[]>>> {
  let releases: string[];
  if (host.live) {
    releases = [((await host.readKernel('/proc/sys/kernel/osrelease')) ?? '').trim()].filter(Boolean);
  } else {
    releases = ((await host.readDir('/lib/modules')) ?? []).map((e) => e.name);
  }
  const out: Array<Map<string, string[]>> = [];
  for (const r of releases) {
    const text = await host.readFile(`/lib/modules/${r}/modules.dep`);
    if (text !== null) out.push(parseModulesDep(text));
  }
  return out;
}

export async function observeModules(host: Host, spec: ModulesLoadSpec): Promise<ModulesObserved> {
  const states = host.live ? await moduleStates(host, spec.modules) : null;
  const link = await host.readLink(spec.file);
  const content = link === '/dev/null' ? null : await host.readBytes(spec.file);

  const dependencies = dependenciesOf(spec.modules, await readModulesDeps(host));
  const blockerFiles: BlockerFile[] = [];
  const unjudged: ModprobeUnjudged[] = [];
  const confs: Array<{ f: ConfFile; text: string }> = [];
  const skipped: Array<{ path: string; why: string }> = [];
  for (const f of effectiveConfFiles(await listConfDirs(host, MODPROBE_DIRS))) {
    if (await isMasked(host, f.path)) continue;
    const r = await readConfEntry(host, f.path);
    if ('skipped' in r) skipped.push({ path: f.path, why: r.skipped });
    else confs.push({ f, text: r.content });
  }
  // softdep lines may sit in another file than the install lines of the modules they name.
  const softdeps = softdepsOf(spec.modules, confs.map((c) => c.text));
  for (const { f, text } of confs) {
    unjudged.push(...findUnjudged(f.path, text, spec.modules, dependencies, softdeps));
    const blockers = findBlockers(f.path, text, spec.modules, dependencies, softdeps);
    if (blockers.length === 0) continue;
    const inEtc = f.dir === MODPROBE_ETC;
    // An /etc entry that links elsewhere is replaced by a regular file, never written through.
    const etcLink = inEtc ? await host.readLink(f.path) : null;
    const target = inEtc ? f.path : `${MODPROBE_ETC}/${f.name}`;
    blockerFiles.push({
      source: f.path,
      target,
      replaceLink: etcLink !== null,
      sourceContent: text,
      targetContent: inEtc && etcLink === null ? text : null,
      blockers,
    });
  }

  const wanted = new Set(spec.modules.map(canonicalModuleName));
  const listed = new Map<string, string[]>();
  const own = path.posix.normalize(spec.file);
  for (const f of effectiveConfFiles(await listConfDirs(host, MODULES_LOAD_DIRS))) {
    if (f.path === own || !f.name.endsWith('.conf') || (await isMasked(host, f.path))) continue;
    const r = await readConfEntry(host, f.path);
    if ('skipped' in r) {
      skipped.push({ path: f.path, why: r.skipped });
      continue;
    }
    for (const m of parseModulesLoad(r.content)) {
      if (wanted.has(m)) listed.set(m, [...(listed.get(m) ?? []), f.path]);
    }
  }

  return {
    live: host.live,
    states,
    file: { path: spec.file, content, link },
    blockerFiles,
    unjudged,
    alsoListedIn: [...listed.entries()].map(([module, files]) => ({ module, files })),
    skipped,
  };
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

  if (ctx.live && o.states) {
    for (const s of o.states.filter((s) => !s.loaded)) {
      changes.push({
        id: `modprobe:${s.name}`,
        action: 'runtime',
        runtime: true,
        summary: `modprobe ${s.name} (not loaded now)`,
        op: { kind: 'modprobe', module: s.name },
      });
    }
  } else if (!ctx.live) {
    changes.push({
      id: 'modprobe:first-boot',
      action: 'deferred',
      deferred: true,
      summary: `${spec.modules.join(', ')} load at first boot via systemd-modules-load (offline: modprobe skipped)`,
      op: { kind: 'none' },
    });
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

export async function applyModules(host: Host, changes: Change<ModulesOp>[], door: WriteDoor): Promise<void> {
  const todo = changes.filter((c) => !c.operator && !c.deferred).sort((a, b) => ORDER[a.op.kind] - ORDER[b.op.kind]);
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
        await door.runtime({ step: 'modprobe', module: op.module }, () => host.runChecked('modprobe', [op.module]));
        break;
      case 'none':
        break;
    }
  }
}

const modulesLoadOwn: Provider<ModulesLoadSpec, ModulesObserved, ModulesOp> = {
  type: 'ModulesLoad',
  after: [],
  observe: (host, spec) => observeModules(host, spec),
  diff: (spec, observed, ctx) => diffModules(spec, observed, ctx),
  warnings: (_spec, o) => (o.skipped ?? []).map((k) => `${k.path} is skipped, as ${k.path.includes('modprobe.d') ? 'modprobe' : 'systemd-modules-load'} skips it: ${k.why}`),
  apply: (host, _spec, changes, ctx) => applyModules(host, changes, ctx.door),
};

/** With the boot-script scan (issue 17): script lines that would undo this resource at boot. */
export const modulesLoadProvider = withBootScripts(modulesLoadOwn, modulesConcern);
