// /proc/PID/fd link texts ("socket:[INODE]", proc(5)) and the scan for the
// processes holding a socket inode: on the live /proc for this test's own
// listener (ss(8) gives its inode), on a fixture /proc for order, early stop
// and fds that cannot be read.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { findSocketHolders, socketInodeOfLink } from '../../src/ports/proc-fd.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
function procHost(tree: Tree, live = true): Host {
  const root = mkdtempSync(path.join(os.tmpdir(), 'proc-fd-'));
  roots.push(root);
  buildTree(root, tree);
  return new Host({ root, live });
}

describe('fd links', () => {
  it('takes the inode of socket links only', () => {
    expect(socketInodeOfLink('socket:[34008]')).toBe(34008);
    expect(socketInodeOfLink('pipe:[34008]')).toBeNull();
    expect(socketInodeOfLink('/dev/null')).toBeNull();
    expect(socketInodeOfLink('anon_inode:[eventpoll]')).toBeNull();
  });
});

describe('findSocketHolders', () => {
  it('this process holds the listening socket ss(8) names; the scan stops once it is found', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as net.AddressInfo).port;
      const ino = Number(/ino:(\d+)/.exec(spawnSync('ss', ['-Hltne', `sport = :${port}`], { encoding: 'utf8' }).stdout)?.[1]);
      expect(ino).toBeGreaterThan(0);
      const r = await findSocketHolders(new Host({ root: '/', live: true }), [ino]);
      expect(r.holders.get(ino)).toContain(process.pid);
      expect(r.complete).toBe(true);
    } finally {
      server.close();
    }
  });
  it('PIDs in numeric order (not by name): a shared socket is known by its lowest PID', async () => {
    const host = procHost({
      'proc/100/fd/3': { link: 'socket:[7]' },
      'proc/9/fd/5': { link: 'socket:[7]' },
      'proc/9/fd/6': { link: 'socket:[8]' },
      'proc/20/fd/1': { link: 'socket:[8]' },
      'proc/self': { link: '9' },
      'proc/meminfo': 'MemTotal: 1 kB\n',
    });
    const r = await findSocketHolders(host, [7, 8]);
    expect([[...r.holders], r.unreadable, r.complete]).toEqual([
      [
        [7, [9]],
        [8, [9]],
      ],
      [],
      true,
    ]);
  });
  it('an inode nobody holds: every process scanned, not complete; an fd directory of entries that are not links is unreadable', async () => {
    const host = procHost({ 'proc/1/fd/0': { link: '/dev/null' }, 'proc/2/fd/0': 'not a link', 'proc/3/cwd': { link: '/' } });
    expect(await findSocketHolders(host, [42])).toEqual({ holders: new Map(), unreadable: [2], complete: false });
  });
  it('nothing wanted is complete at once; offline it refuses, naming what it needs', async () => {
    expect(await findSocketHolders(procHost({}), [])).toEqual({ holders: new Map(), unreadable: [], complete: true });
    await expect(findSocketHolders(procHost({}, false), [1])).rejects.toThrow(/socket holders \(\/proc\/PID\/fd\) needs a running host/);
  });
});
