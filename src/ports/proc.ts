// What /proc says about one process: parent, command line, executable, user.
// Parsing is pure; readProcess/readAncestry go through Host (live only).
import type { TargetFs, Host } from '../host.js';
import { socketInodeOfLink } from './proc-fd.js';
import { parseShebang, scriptCandidates, scriptCommand } from './shebang.js';

export interface ProcInfo {
  pid: number;
  /** Parent PID from /proc/PID/stat; null when it could not be read. */
  ppid: number | null;
  comm: string | null;
  /** /proc/PID/cmdline split at NUL; null when unreadable or empty (a kernel thread or a zombie). */
  argv: string[] | null;
  /** The /proc/PID/exe link text; null when unreadable. */
  exe: string | null;
  /** Real UID from /proc/PID/status; null when unreadable. */
  uid: number | null;
  /**
   * When the process runs a "#!" script: the command line as its caller wrote
   * it (SCRIPT ARGS), without the interpreter the kernel put in front.
   */
  script?: string[] | null;
}

/**
 * /proc/PID/stat: "PID (COMM) STATE PPID ...". COMM may hold spaces and
 * parentheses, so the fields after it start at the last ')'. Pure.
 */
export function parseStat(text: string): { pid: number; comm: string; ppid: number } | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const ppid = Number(rest[1]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || rest[0] === undefined) return null;
  return { pid, comm: text.slice(open + 1, close), ppid };
}

/** /proc/PID/cmdline: arguments separated (and terminated) by NUL. Pure. */
export function parseCmdline(text: string): string[] | null {
  if (text === '') return null;
  const parts = text.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts.length > 0 ? parts : null;
}

/** The real UID from /proc/PID/status ("Uid:\treal\teffective\tsaved\tfs"). Pure. */
export function parseStatusUid(text: string): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith('Uid:')) continue;
    const n = Number(line.slice(4).trim().split(/\s+/)[0]);
    return Number.isInteger(n) && n >= 0 ? n : null;
  }
  return null;
}

/** A command line as a person reads it: arguments with spaces are single-quoted. */
export function showArgv(argv: string[] | null): string {
  if (argv === null) return '(command line unreadable)';
  return argv.map((a) => (a === '' || /[\s'"\\$`]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a)).join(' ');
}

async function readOr(host: TargetFs, target: string): Promise<string | null> {
  try {
    return await host.readKernel(target);
  } catch {
    return null;
  }
}

/** Reads one process; null when it is gone. */
export async function readProcess(host: TargetFs, pid: number): Promise<ProcInfo | null> {
  const stat = await readOr(host, `/proc/${pid}/stat`);
  const parsed = stat === null ? null : parseStat(stat);
  if (stat === null) return null;
  const cmdline = await readOr(host, `/proc/${pid}/cmdline`);
  const status = await readOr(host, `/proc/${pid}/status`);
  const argv = cmdline === null ? null : parseCmdline(cmdline);
  return {
    pid,
    ppid: parsed?.ppid ?? null,
    comm: parsed?.comm ?? null,
    argv,
    exe: await host.readLink(`/proc/${pid}/exe`),
    uid: status === null ? null : parseStatusUid(status),
    script: argv === null ? null : await scriptOf(host, argv),
  };
}

/** The "SCRIPT ARGS" a process runs through a "#!" interpreter, read from the script's first line. */
async function scriptOf(host: TargetFs, argv: string[]): Promise<string[] | null> {
  for (const file of scriptCandidates(argv)) {
    let head: Buffer | null;
    try {
      // Only the first line matters: argv may name any file (a data file, a device).
      head = await host.readHead(file, 258);
    } catch {
      head = null;
    }
    const shebang = head === null ? null : parseShebang(head.toString('utf8'));
    const cmd = shebang === null ? null : scriptCommand(argv, file, shebang);
    if (cmd !== null) return cmd;
  }
  return null;
}

/** Longest parent chain followed; a deeper one is reported as cut short. */
export const MAX_ANCESTRY = 64;

/**
 * The process and its ancestors, nearest first, up to PID 1 (included) or the
 * first one that cannot be read. `complete` is false when the chain ended
 * early (a parent vanished, a loop, or MAX_ANCESTRY).
 */
export async function readAncestry(host: TargetFs, pid: number): Promise<{ chain: ProcInfo[]; complete: boolean }> {
  const chain: ProcInfo[] = [];
  const seen = new Set<number>();
  let next: number | null = pid;
  while (next !== null && next > 0 && chain.length < MAX_ANCESTRY) {
    if (seen.has(next)) return { chain, complete: false };
    seen.add(next);
    const p = await readProcess(host, next);
    if (p === null) return { chain, complete: false };
    chain.push(p);
    if (p.pid === 1 || p.ppid === 0) return { chain, complete: true };
    next = p.ppid;
  }
  return { chain, complete: false };
}

/** Whether `pid` holds any of the socket inodes (its /proc/PID/fd links); null when the fds cannot be read. */
export async function holdsSocket(host: TargetFs, pid: number, inodes: ReadonlySet<number>): Promise<boolean | null> {
  let links: Map<string, string | null> | null;
  try {
    links = await host.readLinksIn(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  if (links === null) return null;
  for (const l of links.values()) {
    const inode = l === null ? null : socketInodeOfLink(l);
    if (inode !== null && inodes.has(inode)) return true;
  }
  return false;
}
