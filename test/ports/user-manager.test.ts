// How root reaches a user's manager: its session bus when
// /run/user/UID/bus is a socket (dbus-user-session), else the manager's own
// private socket, only when that socket is the user's. And the journal is
// untrusted input: a rollback takes the private route again only for an
// account /etc/passwd still has with the journaled UID and GID. (The route
// itself is proven on a booted host in test/resources/port-free/provider.booted.test.ts.)
import { afterEach, describe, expect, it } from 'vitest';
import net from 'node:net';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host, type CommandRunner } from '../../src/host.js';
import { userRouteOf } from '../../src/ports/user-manager.js';
import { planRollback } from '../../src/reconcile/rollback.js';
import { WriteDoor } from '../../src/door/door.js';

const roots: string[] = [];
const servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function scratch(): string {
  const r = mkdtempSync(path.join(tmpdir(), 'user-route-'));
  roots.push(r);
  return r;
}

async function socketAt(p: string, uid: number): Promise<void> {
  mkdirSync(path.dirname(p), { recursive: true });
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(p, () => r()));
  servers.push(s);
  chownSync(p, uid, uid);
}

describe('the route to a user manager', () => {
  it('private socket only without a bus socket, and only when the user owns it', async () => {
    const a = scratch();
    await socketAt(path.join(a, 'run/user/1000/systemd/private'), 1000);
    expect(await userRouteOf(new Host({ root: a, live: false }), 1000)).toBe('private');
    await socketAt(path.join(a, 'run/user/1000/bus'), 1000);
    expect(await userRouteOf(new Host({ root: a, live: false }), 1000)).toBe('bus');

    const b = scratch();
    await socketAt(path.join(b, 'run/user/1000/systemd/private'), 0);
    expect(await userRouteOf(new Host({ root: b, live: false }), 1000)).toBe('bus');
    const c = scratch();
    mkdirSync(path.join(c, 'run/user/1000/systemd'), { recursive: true });
    writeFileSync(path.join(c, 'run/user/1000/systemd/private'), '');
    chownSync(path.join(c, 'run/user/1000/systemd/private'), 1000, 1000);
    expect(await userRouteOf(new Host({ root: c, live: false }), 1000)).toBe('bus');
  });
});

describe('a rollback of a stop through the private route', () => {
  function journaled(passwd: string) {
    const root = scratch();
    mkdirSync(path.join(root, 'etc'), { recursive: true });
    writeFileSync(path.join(root, 'etc/passwd'), `root:x:0:0:root:/root:/bin/bash\n${passwd}`);
    const run = path.join(root, 'root/ks/preflight/runs/run-1');
    mkdirSync(run, { recursive: true });
    const recs = [
      { seq: 1, at: 'x', kind: 'begin', mode: 'apply', run: 'run-1', pid: 1, root: '/', live: true, tool: 'test' },
      { seq: 2, at: 'x', kind: 'runtime', action: { step: 'unit-stop', units: ['api.service'], user: 'alice', route: 'private', uid: 1000, gid: 1000 } },
      { seq: 3, at: 'x', kind: 'done', of: 2 },
    ];
    writeFileSync(path.join(run, 'journal'), recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const calls: string[][] = [];
    const runner: CommandRunner = async (cmd, args) => {
      calls.push([cmd, ...args]);
      return { command: cmd, exitCode: 0, stdout: '', stderr: '' };
    };
    return { host: new Host({ root, live: true, runner }), calls };
  }

  it('asks as alice, UID and GID as journaled and as /etc/passwd still says', async () => {
    const { host, calls } = journaled('alice:x:1000:1000:Alice:/home/alice:/bin/bash\n');
    const plan = await planRollback(host, '/root/ks/preflight', 'run-1');
    const start = plan.steps.find((s) => s.summary.startsWith('start api.service'))!;
    expect(start.conflict).toBeUndefined();
    const door = await WriteDoor.open(host, { runDir: '/root/ks/preflight/runs/rb-1', runId: 'rb-1', mode: 'rollback', tool: 'test' });
    await start.act!(door);
    await door.end('ok');
    // Not through -M alice@ (no bus there): as UID 1000, GID 1000 with her groups, on her runtime dir.
    expect(calls).toHaveLength(1);
    const [cmd, ...args] = calls[0]!;
    expect(cmd).toBe('setpriv');
    expect(args).toEqual(expect.arrayContaining(['--reuid=1000', '--regid=1000', '--init-groups', 'XDG_RUNTIME_DIR=/run/user/1000']));
    expect(args.slice(-4)).toEqual(['systemctl', '--user', 'start', 'api.service']);
    expect(args).not.toContain('-M');
  });

  it('refuses when /etc/passwd no longer gives alice that UID (the journal is not trusted on its own)', async () => {
    const { host, calls } = journaled('alice:x:1001:1001:Alice:/home/alice:/bin/bash\n');
    const plan = await planRollback(host, '/root/ks/preflight', 'run-1');
    const start = plan.steps.find((s) => s.summary.startsWith('start api.service'))!;
    expect(start.act).toBeUndefined();
    expect(start.conflict).toContain('UID 1000:1000');
    expect(calls).toEqual([]);
  });
});
