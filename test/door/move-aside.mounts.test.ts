// Mount points and the move aside, in a private mount namespace this test creates (unshare -m: the
// tmpfs mounts never reach this machine's own mount table). A rename would carry a mounted file system
// along unseen, so: the door refuses a tree with a mount below it and a mount point itself, moving
// nothing; the reset's reader finds the mount points /proc/self/mountinfo lists below a directory as
// findmnt(8) lists them (a space in a path included); and an offline reset plans the unmounts as an
// operator line instead of the move. The door runs inside the namespace as a small program esbuild
// bundles from src/ for this test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { mountsUnder } from '../../src/former-node/reset-targets.js';

if (process.getuid?.() !== 0) throw new Error('move-aside.mounts needs root (unshare -m, mount)');

let work: string;
let door: string;
beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), 'move-aside-mounts-'));
  door = path.join(work, 'door.mjs');
  buildSync({
    stdin: {
      contents: `
        import { Host } from './src/host.js';
        import { WriteDoor } from './src/door/door.js';
        const [root, target, runId] = process.argv.slice(2);
        const d = await WriteDoor.open(new Host({ root }), { runDir: '/var/lib/rt/runs/' + runId, runId, mode: 'apply', tool: 'test' });
        try { console.log(JSON.stringify({ moved: await d.moveAside(target) })); }
        catch (e) { console.log(JSON.stringify({ error: e.message })); }
        finally { await d.end('ok'); }`,
      resolveDir: path.resolve('.'),
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: door,
    logLevel: 'error',
  });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A fresh root with /var/lib/kubelet holding a pod's volume directory whose name has a space. */
function kubeletRoot(): { root: string; vol: string; plain: string } {
  const root = mkdtempSync(path.join(work, 'root-'));
  const vol = path.join(root, 'var/lib/kubelet/pods/a b/volumes');
  const plain = path.join(root, 'var/lib/kubelet/pods/c');
  mkdirSync(vol, { recursive: true });
  mkdirSync(plain, { recursive: true });
  writeFileSync(path.join(root, 'var/lib/kubelet/config.yaml'), 'kind: KubeletConfiguration\n');
  return { root, vol, plain };
}

/** Runs `script` (sh) in a new private mount namespace with tmpfs mounted on each of `mounts` first; `ok`: the exit codes it may end with. */
function inNamespace(mounts: string[], script: string, args: string[] = [], ok = [0]) {
  const mount = mounts.map((_m, i) => `mount -t tmpfs farm-tmpfs "$${i + 1}"`).join(' && ');
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `${mount} && ${script}`, 'sh', ...mounts, ...args], { encoding: 'utf8' });
  if (!ok.includes(r.status ?? -1)) throw new Error(`unshare: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

describe('a move aside and mount points', () => {
  it('reads the mount points below a directory from mountinfo as findmnt lists them', () => {
    const { root, vol, plain } = kubeletRoot();
    const out = inNamespace([vol, plain], 'cat /proc/self/mountinfo; echo ----; findmnt -rn -o TARGET');
    const [mountinfo, listed] = out.split('----\n') as [string, string];
    // findmnt -r writes a space as \x20.
    const kubelet = path.join(root, 'var/lib/kubelet');
    const byFindmnt = listed
      .split('\n')
      .filter(Boolean)
      .map((l) => l.replace(/\\x([0-9a-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))))
      .filter((t) => t.startsWith(kubelet + '/'));
    expect(byFindmnt.sort()).toEqual([vol, plain].sort());
    expect(mountsUnder(mountinfo, [kubelet]).get(kubelet)?.sort()).toEqual(byFindmnt.sort());
  });

  it('the door refuses a tree with a mount below it, and a mount point itself, moving nothing', () => {
    const { root, vol, plain } = kubeletRoot();
    let runs = 0;
    const run = (target: string) =>
      JSON.parse(inNamespace([vol, plain], `node "$3" "$4" "$5" "$6"`, [door, root, target, `r${++runs}`])) as { error?: string; moved?: unknown };
    expect(run('/var/lib/kubelet').error).toMatch(
      /refusing to move \/var\/lib\/kubelet aside: \/var\/lib\/kubelet\/pods\/(a b\/volumes|c) is a mount point under it; unmount it first; nothing was moved/,
    );
    expect(run('/var/lib/kubelet/pods/c').error).toMatch(/refusing to move \/var\/lib\/kubelet\/pods\/c aside: it is a mount point \(another file system\)/);
    expect(existsSync(path.join(root, 'var/lib/kubelet/config.yaml'))).toBe(true);
    // Outside the namespace nothing is mounted there, and the same tree moves.
    const free = JSON.parse(spawnSync('node', [door, root, '/var/lib/kubelet', 'r-free'], { encoding: 'utf8' }).stdout) as { moved?: { entry: string } };
    expect(free.moved?.entry).toBe('dir');
  });

  it('an offline reset plans the unmounts, deepest first, instead of moving the directory', () => {
    const { root, vol, plain } = kubeletRoot();
    writeFileSync(path.join(root, 'd.yaml'), 'reports_dir: /root/ks\nresources:\n  - type: PreviousCluster\n    policy: reset\n');
    const doc = JSON.parse(
      inNamespace([vol, plain], `node "$3" --plan --json -f "$4/d.yaml" --root "$4"`, [path.resolve('dist/reconcile.mjs'), root], [2]),
    ) as {
      resources: Array<{ type: string; changes: Array<{ id: string; action: string; operator: string | null }> }>;
    };
    const c = doc.resources.find((r) => r.type === 'PreviousCluster')!.changes.find((x) => x.id === 'aside-/var/lib/kubelet')!;
    expect(c.action).toBe('operator');
    expect(c.operator).toBe('unmount them, then apply again: umount /var/lib/kubelet/pods/c; umount /var/lib/kubelet/pods/a b/volumes');
  });
});
