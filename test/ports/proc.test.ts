// /proc/PID/stat, cmdline and status read back from processes this test
// starts (the kernel itself is the oracle), and a process's ancestry and
// sockets: the live /proc (read only) for chains and fds the kernel made, a
// fixture /proc tree for the vanished parent and the loop it cannot make.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { MAX_ANCESTRY, holdsSocket, parseCmdline, parseStat, parseStatusUid, readAncestry, readProcess, showArgv } from '../../src/ports/proc.js';
import { buildTree, type Tree } from '../helpers/tree.js';

let dir: string;
const kids: ChildProcess[] = [];
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'identity-parse-'));
});
afterAll(() => {
  for (const k of kids) k.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function procText(pid: number, file: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const t = readFileSync(`/proc/${pid}/${file}`, 'latin1');
    // Until exec, the child still shows node's own command line.
    if (file !== 'cmdline' || !t.startsWith(process.argv[0]!) || t.includes('setInterval')) return t;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('process never exec’d');
}

describe('/proc/PID/stat, cmdline, status of processes this test starts', () => {
  it('a comm with spaces and parentheses, and the parent PID', async () => {
    const exe = path.join(dir, 'a (b) c');
    symlinkSync('/bin/sleep', exe);
    const k = spawn(exe, ['30'], { stdio: 'ignore' });
    kids.push(k);
    let st = await procText(k.pid!, 'stat');
    for (let i = 0; i < 50 && !st.includes('(a (b) c)'); i++) {
      await new Promise((r) => setTimeout(r, 20));
      st = await procText(k.pid!, 'stat');
    }
    expect(parseStat(st)).toEqual({ pid: k.pid, comm: 'a (b) c', ppid: process.pid });
    expect(parseStatusUid(readFileSync(`/proc/${k.pid}/status`, 'utf8'))).toBe(process.getuid!());
  });

  it('arguments with spaces and an empty one survive the NUL split', async () => {
    const args = ['-e', 'setInterval(() => {}, 1000)', '', 'a b', "it's"];
    const k = spawn(process.execPath, args, { stdio: 'ignore' });
    kids.push(k);
    expect(parseCmdline(await procText(k.pid!, 'cmdline'))).toEqual([process.execPath, ...args]);
    expect(parseCmdline('')).toBeNull();
  });
});

const LIVE = new Host({ root: '/', live: true });

/** The parent PIDs from `pid` up, as ps(1) reports them (procps, the oracle for the chain). */
function psChain(pid: number): number[] {
  const out: number[] = [];
  for (let p = pid; p > 0;) {
    out.push(p);
    const r = spawnSync('ps', ['-o', 'ppid=', '-p', String(p)], { encoding: 'utf8' });
    p = Number(r.stdout.trim());
  }
  return out;
}

/** A stat line of the kernel's shape (fields after PPID as in a real one). */
const stat = (pid: number, comm: string, ppid: number) => `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 57364\n`;

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
function fixtureHost(tree: Tree): Host {
  const root = mkdtempSync(path.join(os.tmpdir(), 'proc-tree-'));
  roots.push(root);
  buildTree(root, tree);
  return new Host({ root, live: true });
}

describe('showArgv: a command line a person can paste into a shell', () => {
  const argvs = [
    ['/bin/sh', '-c', 'a b'],
    ['x', '', "it's", 'x$y', 'back\\slash', 'q"q', '`tick`'],
    ['plain', '--flag=1'],
  ];
  for (const argv of argvs) {
    it(`/bin/sh reads ${JSON.stringify(argv)} back from it`, () => {
      const shown = showArgv(argv);
      const r = spawnSync('/bin/sh', ['-c', `printf '%s\\0' ${shown}`], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(r.stdout.split('\0').slice(0, -1)).toEqual(argv);
    });
  }
  it('words without special characters are bare; an unreadable command line says so', () => {
    expect(showArgv(['/usr/bin/python3', '-m', 'http.server', '2379'])).toBe('/usr/bin/python3 -m http.server 2379');
    expect(showArgv(['a b'])).toBe("'a b'");
    expect(showArgv(null)).toBe('(command line unreadable)');
  });
});

describe('readProcess: one process of the live /proc', () => {
  it('a "#!" script: argv as the kernel gives it, exe the interpreter, the script and its arguments', async () => {
    const script = path.join(dir, 'holder.sh');
    writeFileSync(script, '#!/bin/sh\nsleep 30\n');
    chmodSync(script, 0o755);
    const k = spawn(script, ['one arg'], { stdio: 'ignore' });
    kids.push(k);
    const pid = k.pid!;
    await procText(pid, 'cmdline');
    const p = await readProcess(LIVE, pid);
    expect(p).toEqual({
      pid,
      ppid: process.pid,
      comm: readFileSync(`/proc/${pid}/comm`, 'utf8').trimEnd(),
      argv: ['/bin/sh', script, 'one arg'],
      exe: readlinkSync(`/proc/${pid}/exe`),
      uid: process.getuid!(),
      script: [script, 'one arg'],
    });
  });
  it('a process that is gone is null', async () => {
    const k = spawn('/bin/true', [], { stdio: 'ignore' });
    const pid = k.pid!;
    await new Promise((r) => k.on('exit', r));
    expect(await readProcess(LIVE, pid)).toBeNull();
  });
  it('an unreadable stat keeps the process, its pid and comm unknown', async () => {
    const host = fixtureHost({ 'proc/40/stat': 'garbage', 'proc/40/cmdline': 'x\0', 'proc/40/status': 'Name:\tx\nUid:\t1000\t1000\t1000\t1000\n' });
    expect(await readProcess(host, 40)).toEqual({ pid: 40, ppid: null, comm: null, argv: ['x'], exe: null, uid: 1000, script: null });
  });
});

describe('readAncestry: the process and its parents up to PID 1', () => {
  it("a child of this test: itself, this process, then ps(1)'s chain up to PID 1, complete", async () => {
    const k = spawn('/bin/sleep', ['30'], { stdio: 'ignore' });
    kids.push(k);
    await procText(k.pid!, 'cmdline');
    const { chain, complete } = await readAncestry(LIVE, k.pid!);
    expect(chain.map((p) => p.pid)).toEqual(psChain(k.pid!));
    expect(chain[1]!.pid).toBe(process.pid);
    expect(complete).toBe(true);
  });
  it('a parent that vanished, and a loop no kernel makes: cut short, not complete', async () => {
    expect(await readAncestry(fixtureHost({ 'proc/20/stat': stat(20, 'orphan', 21) }), 20)).toMatchObject({ chain: [{ pid: 20, ppid: 21 }], complete: false });
    const loop = fixtureHost({ 'proc/10/stat': stat(10, 'a', 11), 'proc/11/stat': stat(11, 'b', 10) });
    const r = await readAncestry(loop, 10);
    expect([r.chain.map((p) => p.pid), r.complete]).toEqual([[10, 11], false]);
  });
  it("ppid 0 (a PID namespace's first process, or kthreadd) ends the chain complete", async () => {
    const host = fixtureHost({ 'proc/7/stat': stat(7, 'app', 5), 'proc/5/stat': stat(5, 'init in ns', 0) });
    const r = await readAncestry(host, 7);
    expect([r.chain.map((p) => [p.pid, p.comm]), r.complete]).toEqual([
      [
        [7, 'app'],
        [5, 'init in ns'],
      ],
      true,
    ]);
  });
  it(`a chain deeper than ${MAX_ANCESTRY} stops there, not complete`, async () => {
    const tree: Tree = {};
    for (let pid = 100; pid < 200; pid++) tree[`proc/${pid}/stat`] = stat(pid, `p${pid}`, pid + 1);
    const r = await readAncestry(fixtureHost(tree), 100);
    expect([r.chain.length, r.chain.at(-1)!.pid, r.complete]).toEqual([64, 163, false]);
  });
});

describe("holdsSocket: a socket inode among the process's fds", () => {
  it("this process's listening socket, by the inode ss(8) reports for it", async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as net.AddressInfo).port;
      const ss = spawnSync('ss', ['-Hltne', `sport = :${port}`], { encoding: 'utf8' }).stdout;
      const ino = Number(/ino:(\d+)/.exec(ss)?.[1]);
      expect(ino).toBeGreaterThan(0);
      expect(await holdsSocket(LIVE, process.pid, new Set([ino]))).toBe(true);
      expect(await holdsSocket(LIVE, process.pid, new Set([0]))).toBe(false);
    } finally {
      server.close();
    }
  });
  it('fd links of a fixture: a socket among files; no fd directory is null', async () => {
    const host = fixtureHost({ 'proc/30/fd/0': { link: '/dev/null' }, 'proc/30/fd/3': { link: 'socket:[555]' }, 'proc/30/fd/4': { link: 'pipe:[556]' } });
    expect(await holdsSocket(host, 30, new Set([555]))).toBe(true);
    expect(await holdsSocket(host, 30, new Set([556]))).toBe(false);
    expect(await holdsSocket(host, 31, new Set([555]))).toBeNull();
  });
});
