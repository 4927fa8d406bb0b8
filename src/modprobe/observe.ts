// What ModulesLoad observes: the wanted modules' state, our modules-load.d
// file, the modprobe.d lines that would stop a wanted module from loading at
// boot, and the other modules-load.d files that list one. Reads only.
import path from 'node:path';
import type { TargetFs } from '../host.js';
import { readConfEntry } from '../systemd/conf-entry.js';
import type { FileKind } from '../regular-file.js';
import { listConfDirs } from '../systemd/conf-dirs.js';
import { canonicalModuleName, moduleStates, type ModuleState } from '../observe/modules.js';
import { readKernelRelease } from '../observe/kernel-release.js';
import { dependenciesOf, parseModulesDep } from './modules-dep.js';
import {
  effectiveConfFiles,
  findBlockers,
  findUnjudged,
  softdepsOf,
  type ConfFile,
  type ModprobeUnjudged,
  MODPROBE_DIRS,
  MODPROBE_ETC,
  type ModprobeBlocker,
} from './modprobe-d.js';
import { MODULES_LOAD_DIRS } from './modules-load-d.js';
import { cmdlineBlocks, type CmdlineBlock } from './kernel-cmdline.js';
import { pieceOf, readBootCmdlines, type BootCmdline, type CmdlinePiece, type CmdlineUnknown } from './boot-cmdline.js';

/** A wanted module the next boot's command line stops, with where the entry is written. */
export interface BootCmdlineBlock {
  loader: BootCmdline['loader'];
  block: CmdlineBlock;
  /** null: the entry's word was not found in one piece (it came from several); the loader's files are named instead. */
  piece: CmdlinePiece | null;
}

/** What the kernel command line does to the wanted modules: now (live) and at the next boot. */
export interface CmdlineObserved {
  /** /proc/cmdline and what it stops; null offline. */
  running: { text: string; blocks: CmdlineBlock[] } | null;
  /** The boot loaders' command lines found (none: no GRUB defaults, no /etc/kernel/cmdline). */
  loaders: Array<BootCmdline['loader']>;
  boot: BootCmdlineBlock[];
  /** Files read for the next boot's command line. */
  searched: string[];
  unknown: CmdlineUnknown[];
}

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
  /** The running kernel's release (/proc/sys/kernel/osrelease); null offline or when the kernel has none. */
  kernelRelease: string | null;
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
  /** The kernel command line's module_blacklist= and modprobe.blacklist= (optional: a hand-made observation may leave it out). */
  cmdline?: CmdlineObserved;
  /** modprobe.d and modules-load.d entries their readers skip (a directory, a dangling link, a loop). */
  skipped?: Array<{ path: string; why: string; notRegular?: FileKind }>;
}

/** Module names listed in a modules-load.d file ("#" and ";" start comments). */
export function parseModulesLoad(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith(';'))
    .map(canonicalModuleName);
}

async function isMasked(host: TargetFs, p: string): Promise<boolean> {
  return (await host.readLink(p)) === '/dev/null';
}

/**
 * modules.dep of the running kernel (live: `running`), or of every kernel
 * installed in the image (offline: which one boots is not ours to know).
 */
async function readModulesDeps(host: TargetFs, running: string | null): Promise<Array<Map<string, string[]>>> {
  let releases: string[];
  if (host.live) {
    releases = running === null ? [] : [running];
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

/** The other modules-load.d files that also list a wanted module: module -> files. */
async function listedElsewhere(
  host: TargetFs,
  file: string,
  wanted: Set<string>,
  skipped: NonNullable<ModulesObserved['skipped']>,
): Promise<Map<string, string[]>> {
  const listed = new Map<string, string[]>();
  const own = path.posix.normalize(file);
  for (const f of effectiveConfFiles(await listConfDirs(host, MODULES_LOAD_DIRS))) {
    if (f.path === own || !f.name.endsWith('.conf') || (await isMasked(host, f.path))) continue;
    const r = await readConfEntry(host, f.path);
    if ('skipped' in r) {
      skipped.push({ path: f.path, why: r.skipped, ...(r.notRegular ? { notRegular: r.notRegular } : {}) });
      continue;
    }
    for (const m of parseModulesLoad(r.content)) {
      if (wanted.has(m)) listed.set(m, [...(listed.get(m) ?? []), f.path]);
    }
  }
  return listed;
}

/** What the module observer needs of a wanted state: the modules-load.d file it owns and the modules. */
export interface WantedModules {
  file: string;
  modules: string[];
}

export async function observeModules(host: TargetFs, spec: WantedModules): Promise<ModulesObserved> {
  const kernelRelease = host.live ? await readKernelRelease(host) : null;
  const states = host.live ? await moduleStates(host, spec.modules, kernelRelease) : null;
  const link = await host.readLink(spec.file);
  const content = link === '/dev/null' ? null : await host.readBytes(spec.file);

  const dependencies = dependenciesOf(spec.modules, await readModulesDeps(host, kernelRelease));
  const blockerFiles: BlockerFile[] = [];
  const unjudged: ModprobeUnjudged[] = [];
  const confs: Array<{ f: ConfFile; text: string }> = [];
  const skipped: NonNullable<ModulesObserved['skipped']> = [];
  for (const f of effectiveConfFiles(await listConfDirs(host, MODPROBE_DIRS))) {
    if (await isMasked(host, f.path)) continue;
    const r = await readConfEntry(host, f.path);
    if ('skipped' in r) skipped.push({ path: f.path, why: r.skipped, ...(r.notRegular ? { notRegular: r.notRegular } : {}) });
    else confs.push({ f, text: r.content });
  }
  // softdep lines may sit in another file than the install lines of the modules they name.
  const softdeps = softdepsOf(
    spec.modules,
    confs.map((c) => c.text),
  );
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
  const listed = await listedElsewhere(host, spec.file, wanted, skipped);

  // module -> the modules it needs (dependenciesOf maps the other way).
  const needs = new Map<string, string[]>();
  for (const [dep, by] of dependencies) for (const m of by) needs.set(m, [...(needs.get(m) ?? []), dep]);
  const wantedList = [...wanted];
  const running = host.live ? await host.readKernel('/proc/cmdline') : null;
  const boot = await readBootCmdlines(host);
  const cmdline: CmdlineObserved = {
    running: running === null ? null : { text: running.trim(), blocks: cmdlineBlocks(running, wantedList, needs) },
    loaders: boot.cmdlines.map((c) => c.loader),
    boot: boot.cmdlines.flatMap((c) => cmdlineBlocks(c.text, wantedList, needs).map((block) => ({ loader: c.loader, block, piece: pieceOf(c, block.word) }))),
    searched: boot.searched,
    unknown: boot.unknown,
  };

  return {
    live: host.live,
    states,
    cmdline,
    kernelRelease,
    file: { path: spec.file, content, link },
    blockerFiles,
    unjudged,
    alsoListedIn: [...listed.entries()].map(([module, files]) => ({ module, files })),
    skipped,
  };
}
