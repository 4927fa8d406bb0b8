// modprobe.d(5) as libkmod reads it, reduced to what stops a module from
// loading: `blacklist NAME` (ignored by an explicit `modprobe NAME`, but
// systemd-modules-load honours it at boot, silently), `install NAME CMD`
// whose command does not end up loading NAME (judged by what CMD does, see
// install-command.ts), and `softdep NAME pre: A post: B` where the install
// command of A or B fails (libkmod stops the whole probe on a failed step).
//
// libkmod details kept here: a trailing backslash joins the next physical line;
// a logical line whose first character is "#" is a comment (blanks then "#"
// make an unknown command, which is ignored too); "-" and "_" in module names
// are the same; files are *.conf (and *.alias) from the directories below, and
// for a given file name the first directory wins, a /dev/null link masking it.
import { canonicalModuleName } from '../observe/modules.js';
import { firstDirWins } from '../systemd/conf-dirs.js';
import { ANY_MODULE, judgeInstallCommand } from './install-command.js';
import type { InstallVerdict } from './install-command.js';

/** libkmod's search path, highest precedence first. */
export const MODPROBE_DIRS = ['/etc/modprobe.d', '/run/modprobe.d', '/usr/local/lib/modprobe.d', '/usr/lib/modprobe.d', '/lib/modprobe.d'] as const;

/** Only files here are edited in place; a file elsewhere gets a same-named override here. */
export const MODPROBE_ETC = '/etc/modprobe.d';

/** One logical line: physical lines firstLine..lastLine joined at trailing backslashes. */
export interface LogicalLine {
  firstLine: number;
  lastLine: number;
  /** Joined text, continuation backslashes removed (as libkmod does). */
  text: string;
}

export type ModprobeDirective =
  | { kind: 'blacklist'; module: string; firstLine: number; lastLine: number; text: string }
  | { kind: 'install'; module: string; command: string; blocks: boolean; verdict: InstallVerdict; firstLine: number; lastLine: number; text: string }
  | { kind: 'softdep'; module: string; pre: string[]; post: string[]; firstLine: number; lastLine: number; text: string };

/** A directive that stops a module we want. */
export interface ModprobeBlocker {
  /** Target path of the file that holds it. */
  file: string;
  module: string;
  kind: 'blacklist' | 'install';
  firstLine: number;
  lastLine: number;
  text: string;
  /** Set when `module` is a dependency: the wanted modules it stops. */
  neededBy?: string[];
}

export function logicalLines(text: string): LogicalLine[] {
  const phys = text.split('\n');
  const out: LogicalLine[] = [];
  let buf = '';
  let start = 0;
  let open = false;
  // No "\r" is removed: libkmod reads it as part of the line (a CRLF file's
  // `install overlay /bin/true\r` runs a program named "/bin/true\r").
  phys.forEach((line, i) => {
    if (!open) {
      start = i + 1;
      buf = '';
    }
    if (line.endsWith('\\') && i < phys.length - 1) {
      buf += line.slice(0, -1);
      open = true;
      return;
    }
    buf += line;
    open = false;
    out.push({ firstLine: start, lastLine: i + 1, text: buf });
  });
  return out;
}

/**
 * True when `install NAME CMD` certainly never loads NAME (true, false, :,
 * `sh -c "exit 0"`, ...). An unknown program is not "certainly": see
 * judgeInstallCommand for the three-way verdict.
 */
export function isNoopInstallCommand(command: string, module: string = ANY_MODULE): boolean {
  return judgeInstallCommand(module, command).loads === 'no';
}

export function parseModprobeConf(text: string): ModprobeDirective[] {
  const out: ModprobeDirective[] = [];
  for (const l of logicalLines(text)) {
    if (l.text === '' || l.text.startsWith('#')) continue;
    // libkmod's kmod_config_parse: strtok_r on "\t " for the command and the
    // module name; an install command is the rest after the name's separator.
    const m = /^[\t ]*([^\t ]+)[\t ]*([^\t ]*)(?:[\t ](.*))?$/s.exec(l.text);
    if (!m || !m[2]) continue; // "ignoring bad line"
    const [, cmd, name] = m as unknown as [string, string, string];
    const rest = m[3] ?? '';
    // Exactly as libkmod stores it: "-" becomes "_", nothing is trimmed (a "\r" stays part of the name).
    const module = name.replace(/-/g, '_');
    if (cmd === 'blacklist') {
      out.push({ kind: 'blacklist', module, firstLine: l.firstLine, lastLine: l.lastLine, text: l.text });
    } else if (cmd === 'install') {
      // libkmod takes everything after the name's one separator as the command
      // (strtok_r with no delimiters): nothing there is a bad line, but blanks
      // alone are a command, and running it (sh -c " ") loads nothing.
      if (rest === '') continue;
      const command = rest.replace(/^[\t ]+|[\t ]+$/g, '');
      const verdict: InstallVerdict =
        command === ''
          ? { loads: 'no', status: 0, reason: `the install command for ${module} is only blanks: modprobe runs it instead of loading ${module}` }
          : judgeInstallCommand(module, command);
      out.push({ kind: 'install', module, command, blocks: verdict.loads === 'no', verdict, firstLine: l.firstLine, lastLine: l.lastLine, text: l.text });
    } else if (cmd === 'softdep') {
      // libkmod: "pre:" and "post:" switch the list the following names go to.
      const pre: string[] = [];
      const post: string[] = [];
      let into: string[] | null = null;
      for (const w of rest.split(/[\t ]+/).filter(Boolean)) {
        if (w === 'pre:') into = pre;
        else if (w === 'post:') into = post;
        else if (into) into.push(w.replace(/-/g, '_'));
      }
      out.push({ kind: 'softdep', module, pre, post, firstLine: l.firstLine, lastLine: l.lastLine, text: l.text });
    }
  }
  return out;
}

/**
 * Directives in `file` that stop any of `modules` from loading: their
 * blacklist or no-op install lines, and no-op install lines of their
 * dependencies (`dependencies`: dependency -> wanted modules that need it;
 * modprobe runs a dependency's install command, but a dependency's blacklist
 * does not apply).
 */
export function findBlockers(
  file: string,
  text: string,
  modules: string[],
  dependencies: Map<string, string[]> = new Map(),
  softdeps: Map<string, string[]> = new Map(),
): ModprobeBlocker[] {
  return judgeDirectives(file, text, modules, dependencies, softdeps).blockers;
}

/** An install line of a wanted module (or one it needs) whose effect cannot be judged. */
export interface ModprobeUnjudged {
  file: string;
  module: string;
  firstLine: number;
  lastLine: number;
  text: string;
  reason: string;
  neededBy?: string[];
}

export function findUnjudged(
  file: string,
  text: string,
  modules: string[],
  dependencies: Map<string, string[]> = new Map(),
  softdeps: Map<string, string[]> = new Map(),
): ModprobeUnjudged[] {
  return judgeDirectives(file, text, modules, dependencies, softdeps).unjudged;
}

/** softdep module -> the wanted modules whose probe runs it, from every effective file's softdep lines. */
export function softdepsOf(modules: string[], texts: string[]): Map<string, string[]> {
  const want = new Set(modules.map(canonicalModuleName));
  const out = new Map<string, string[]>();
  for (const t of texts) {
    for (const d of parseModprobeConf(t)) {
      if (d.kind !== 'softdep' || !want.has(d.module)) continue;
      for (const m of [...d.pre, ...d.post]) if (!want.has(m)) out.set(m, [...new Set([...(out.get(m) ?? []), d.module])]);
    }
  }
  return out;
}

function judgeDirectives(
  file: string,
  text: string,
  modules: string[],
  dependencies: Map<string, string[]>,
  softdeps: Map<string, string[]>,
): { blockers: ModprobeBlocker[]; unjudged: ModprobeUnjudged[] } {
  const want = new Set(modules.map(canonicalModuleName));
  const blockers: ModprobeBlocker[] = [];
  const unjudged: ModprobeUnjudged[] = [];
  for (const d of parseModprobeConf(text)) {
    if (d.kind === 'softdep') continue;
    const base = { file, module: d.module, kind: d.kind, firstLine: d.firstLine, lastLine: d.lastLine, text: d.text };
    if (d.kind === 'blacklist') {
      // A dependency's or softdep's blacklist does not apply: libkmod filters only the module asked for.
      if (want.has(d.module)) blockers.push(base);
      continue;
    }
    const v = d.verdict;
    if (want.has(d.module) || dependencies.has(d.module)) {
      const neededBy = want.has(d.module) ? undefined : dependencies.get(d.module)!;
      if (v.loads === 'no') blockers.push(neededBy ? { ...base, neededBy } : base);
      else if (v.loads === 'unknown') unjudged.push({ ...base, reason: v.reason, ...(neededBy ? { neededBy } : {}) });
    } else if (softdeps.has(d.module)) {
      // A soft dependency need not load, but a failing install command stops the probe of the module that wants it.
      const neededBy = softdeps.get(d.module)!;
      if (v.loads === 'yes') continue;
      if (v.status === 1) blockers.push({ ...base, neededBy });
      else if (v.status === '?')
        unjudged.push({
          ...base,
          neededBy,
          reason: `cannot tell whether \`${d.command}\` succeeds; libkmod stops the probe when a softdep's install command fails`,
        });
    }
  }
  return { blockers, unjudged };
}

export interface ConfFile {
  name: string;
  /** Target path of the copy that wins. */
  path: string;
  dir: string;
}

/** Same-name precedence across directories (first wins), sorted by the bytes of the file name. */
export function effectiveConfFiles(listing: Iterable<{ dir: string; name: string }>): ConfFile[] {
  const files = [...listing]
    .filter(({ name }) => !name.startsWith('.') && (name.endsWith('.conf') || name.endsWith('.alias')))
    .map(({ dir, name }) => ({ name, path: `${dir}/${name}`, dir }));
  return firstDirWins(files, (f) => f.name);
}

/** Deterministic (no date), so a second run writes the same bytes and finds nothing to do. */
export const MODPROBE_MARKER = '# k8s-host-reconcile: disabled, it stops a module Kubernetes needs (overlay, br_netfilter) from loading at boot';

/**
 * Comments out each logical line that starts at one of `firstLines` ("#" on
 * every physical line it spans, marker line above). Every other byte stays.
 */
export function commentOutDirectives(text: string, blockers: Array<{ firstLine: number; lastLine: number }>, marker: string = MODPROBE_MARKER): string {
  const starts = new Map(blockers.map((b) => [b.firstLine, b.lastLine]));
  const phys = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < phys.length; i++) {
    const last = starts.get(i + 1);
    if (last === undefined) {
      out.push(phys[i]!);
      continue;
    }
    const cr = phys[i]!.endsWith('\r') ? '\r' : '';
    out.push(marker + cr);
    for (; i < last; i++) out.push(phys[i]!.startsWith('#') ? phys[i]! : '#' + phys[i]!);
    i--;
  }
  return out.join('\n');
}

/** Content for an /etc override of a vendor file: the same file with the blockers commented out. */
export function overrideContent(vendorPath: string, text: string, blockers: Array<{ firstLine: number; lastLine: number }>): string {
  return `# k8s-host-reconcile: copy of ${vendorPath}, which it overrides (same name, /etc wins)\n` + commentOutDirectives(text, blockers);
}
