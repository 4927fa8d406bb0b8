// Socket inode -> the processes holding it, from the /proc/PID/fd links
// "socket:[INODE]" (what ss -p and fuser do). Live only.
import type { TargetFs } from '../host.js';
import { HostError } from '../errors.js';

const SOCKET_LINK = /^socket:\[(\d+)\]$/;

/** Inode of a /proc/PID/fd link text, or null for anything that is not a socket. */
export function socketInodeOfLink(link: string): number | null {
  const m = SOCKET_LINK.exec(link);
  return m ? Number(m[1]) : null;
}

export interface InodeHolders {
  /** inode -> PIDs holding it, ascending; absent when no readable process holds it. */
  holders: Map<number, number[]>;
  /** PIDs whose fd directory could not be read (EACCES, hidepid): a missing holder may hide there. */
  unreadable: number[];
  /** True when the scan ended early because every wanted inode had a holder. */
  complete: boolean;
}

async function listPids(host: TargetFs): Promise<number[]> {
  const entries = (await host.readDir('/proc')) ?? [];
  return entries
    .map((e) => e.name)
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * Scans /proc/PID/fd for links to the wanted socket inodes, in PID order.
 * Stops as soon as every wanted inode has a holder: a listening socket shared
 * by several processes (PID 1 and the service it activated, a master and its
 * workers) is then known by its lowest PID, which is the one that created or
 * inherited it first. Processes that exit mid-scan or deny access are skipped.
 */
export async function findSocketHolders(host: TargetFs, inodes: Iterable<number>): Promise<InodeHolders> {
  host.assertLive('socket holders (/proc/PID/fd)');
  const wanted = new Set(inodes);
  const holders = new Map<number, number[]>();
  const unreadable: number[] = [];
  if (wanted.size === 0) return { holders, unreadable, complete: true };

  for (const pid of await listPids(host)) {
    let links: Map<string, string | null> | null;
    try {
      links = await host.readLinksIn(`/proc/${pid}/fd`);
    } catch (e) {
      // EACCES (another user's process without CAP_SYS_PTRACE) or hidepid.
      if (e instanceof HostError) {
        unreadable.push(pid);
        continue;
      }
      throw e;
    }
    if (links === null) continue; // exited since /proc was listed
    let readable = 0;
    for (const link of links.values()) {
      if (link === null) continue; // closed meanwhile, or not readable
      readable++;
      const inode = socketInodeOfLink(link);
      if (inode === null || !wanted.has(inode)) continue;
      const list = holders.get(inode) ?? [];
      if (!list.includes(pid)) list.push(pid);
      holders.set(inode, list);
    }
    // Some sandboxes list the fds but refuse every readlink, even to root.
    if (links.size > 0 && readable === 0) unreadable.push(pid);
    if (holders.size === wanted.size) return { holders, unreadable, complete: true };
  }
  return { holders, unreadable, complete: false };
}
