// Reads the sysctl.d directories and /etc/sysctl.conf through Host and builds
// the ordering engine's input. Reads only; works live and on an image root.
import path from 'node:path';
import type { TargetFs, Host } from '../host.js';
import { readConfEntry } from '../systemd/conf-entry.js';
import { parseSysctlText } from './parse.js';
import type { SysctlParseIssue } from './parse.js';
import { SYSCTL_CONF, SYSCTL_DIRS } from './order.js';
import type { SysctlConfFile, SysctlTree } from './order.js';
import type { FileKind } from '../regular-file.js';

export interface ObservedSysctlTree {
  tree: SysctlTree;
  /** Directories that exist and are read (an alias of an earlier one, like /lib -> usr/lib, is left out). */
  dirs: string[];
  issues: SysctlParseIssue[];
  /**
   * Entries both programs list but cannot read, and so skip: a directory, a
   * dangling link, a link loop. Each still takes its name from a same-named
   * file in a later directory (test/sysctl/order.namespace.test.ts shows both programs
   * do). A file that exists but cannot be read is an error instead.
   */
  skipped: Array<{ path: string; why: string; notRegular?: FileKind }>;
}

type ReadEntry = SysctlConfFile & { skipped?: string; notRegular?: FileKind; issues: SysctlParseIssue[] };

async function readEntry(host: TargetFs, listed: string, isDir: boolean): Promise<ReadEntry> {
  const link = await host.readLink(listed);
  if (link !== null && path.posix.normalize(link) === '/dev/null') {
    return { path: listed, masked: true, realPath: '/dev/null', content: '', assignments: [], issues: [] };
  }
  const r = await readConfEntry(host, listed, isDir);
  if ('skipped' in r)
    return {
      path: listed,
      masked: false,
      realPath: listed,
      content: '',
      assignments: [],
      issues: [],
      skipped: r.skipped,
      ...(r.notRegular ? { notRegular: r.notRegular } : {}),
    };
  // Parsed once: the assignments for the engine, the issues for the plan.
  const parsed = parseSysctlText(r.content, listed);
  return { path: listed, masked: false, realPath: r.real, content: r.content, assignments: parsed.assignments, issues: parsed.issues };
}

export async function observeSysctlTree(host: TargetFs): Promise<ObservedSysctlTree> {
  const files: SysctlConfFile[] = [];
  const issues: SysctlParseIssue[] = [];
  const skipped: ObservedSysctlTree['skipped'] = [];
  const dirs: string[] = [];
  const seenReal = new Set<string>();
  for (const dir of SYSCTL_DIRS) {
    const entries = await host.readDir(dir);
    if (entries === null) continue;
    // systemd resolves and de-duplicates the directory list; procps reads an
    // alias again but every name in it is already taken, so both add nothing.
    const real = await host.realTarget(dir);
    if (seenReal.has(real)) continue;
    seenReal.add(real);
    dirs.push(dir);
    for (const de of entries) {
      if (!de.name.endsWith('.conf')) continue;
      const { skipped: why, notRegular, issues: own, ...entry } = await readEntry(host, path.posix.join(dir, de.name), de.isDirectory());
      if (why) skipped.push({ path: entry.path, why, ...(notRegular ? { notRegular } : {}) });
      issues.push(...own);
      files.push(entry);
    }
  }
  let sysctlConf: SysctlConfFile | null = null;
  const real = await host.realTarget(SYSCTL_CONF);
  const st = await host.lstat(real);
  if (st?.isFile()) {
    const content = (await host.readBytes(SYSCTL_CONF)) ?? '';
    const parsed = parseSysctlText(content, SYSCTL_CONF);
    sysctlConf = { path: SYSCTL_CONF, masked: false, realPath: real, content, assignments: parsed.assignments };
    issues.push(...parsed.issues);
  }
  return { tree: { files, sysctlConf }, dirs, issues, skipped };
}
