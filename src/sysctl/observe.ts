// Reads the sysctl.d directories and /etc/sysctl.conf through Host and builds
// the ordering engine's input. Reads only; works live and on an image root.
import path from 'node:path';
import type { Host } from '../host.js';
import { HostError } from '../errors.js';
import { parseSysctlText } from './parse.js';
import type { SysctlParseIssue } from './parse.js';
import { SYSCTL_CONF, SYSCTL_DIRS } from './order.js';
import type { SysctlConfFile, SysctlTree } from './order.js';

export interface ObservedSysctlTree {
  tree: SysctlTree;
  /** Directories that exist and are read (an alias of an earlier one, like /lib -> usr/lib, is left out). */
  dirs: string[];
  issues: SysctlParseIssue[];
}

async function readEntry(host: Host, listed: string, isDir: boolean): Promise<SysctlConfFile> {
  const link = await host.readLink(listed);
  if (link !== null && path.posix.normalize(link) === '/dev/null') {
    return { path: listed, masked: true, realPath: '/dev/null', content: '', assignments: [] };
  }
  const realPath = await host.realTarget(listed);
  let content: string | null = null;
  if (!isDir) {
    try {
      content = await host.readBytes(listed);
    } catch (e) {
      // A directory behind a link, or similar: both tools fail to read it and go on.
      if (!(e instanceof HostError)) throw e;
      content = null;
    }
  }
  const text = content ?? '';
  return { path: listed, masked: false, realPath, content: text, assignments: parseSysctlText(text, listed).assignments };
}

export async function observeSysctlTree(host: Host): Promise<ObservedSysctlTree> {
  const files: SysctlConfFile[] = [];
  const issues: SysctlParseIssue[] = [];
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
      const entry = await readEntry(host, path.posix.join(dir, de.name), de.isDirectory());
      issues.push(...parseSysctlText(entry.content, entry.path).issues);
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
  return { tree: { files, sysctlConf }, dirs, issues };
}
