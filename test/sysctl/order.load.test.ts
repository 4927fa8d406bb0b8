// What `sysctl -p A B ...` leaves a key at (loadWrites, the model the boot
// scripts' `sysctl -p FILE` lines are judged by), against procps itself: each
// case runs `sysctl -p` over its files in a fresh network + private mount
// namespace (`unshare -n -m`; net.ipv4 keys are per namespace, so this
// machine's own values are never written), from ip_forward at 0 and at 1, and
// reads the key back. The model's answer is the last write that touches the
// key (directly or through a coupled key); none: the starting value stays.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { followKey, loadWrites } from '../../src/sysctl/order.js';
import { keysAffecting } from '../../src/sysctl/couplings.js';

const KEY = 'net.ipv4.ip_forward';
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** procps over `files` in order, from ip_forward = start: the key's value afterwards. */
function procps(files: Array<{ name: string; content: string }>, start: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sysctl-load-'));
  dirs.push(dir);
  const paths = files.map((f) => {
    const p = path.join(dir, f.name);
    writeFileSync(p, f.content);
    return p;
  });
  // Positional parameters carry the paths: the script text itself is fixed.
  const script = 'echo "$0" > /proc/sys/net/ipv4/ip_forward && sysctl -q -p "$@" >/dev/null 2>&1; cat /proc/sys/net/ipv4/ip_forward';
  return execFileSync('unshare', ['-n', '-m', '--propagation', 'private', 'sh', '-c', script, start, ...paths], { encoding: 'utf8' }).trim();
}

/** The model: the last write to the key or a key coupled with it; none leaves `start`. */
function model(files: Array<{ name: string; content: string }>, start: string): string {
  const writes = loadWrites(
    files.map((f) => ({ path: `/etc/${f.name}`, content: f.content })),
    keysAffecting(KEY),
  );
  const last = [...followKey(writes, KEY, 'system')].reverse().find((s) => s.touched);
  return last?.value ?? start;
}

const cases: Array<{ name: string; files: Array<{ name: string; content: string }> }> = [
  {
    name: 'the later file wins',
    files: [
      { name: 'a.conf', content: `${KEY} = 1\n` },
      { name: 'b.conf', content: `${KEY} = 0\n` },
    ],
  },
  {
    name: 'a glob in B skips the key A names',
    files: [
      { name: 'a.conf', content: `${KEY} = 0\n` },
      { name: 'b.conf', content: 'net.ipv4.ip_forw* = 1\n' },
    ],
  },
  { name: 'a glob alone writes the key', files: [{ name: 'a.conf', content: 'net.ipv4.ip_forw* = 0\n' }] },
  {
    name: 'a bare "-key" writes nothing and keeps a glob off the key',
    files: [
      { name: 'a.conf', content: `-${KEY}\n` },
      { name: 'b.conf', content: 'net.ipv4.ip_forw* = 0\n' },
    ],
  },
  {
    name: 'the forwarding switch written through its other name, after the key',
    files: [
      { name: 'a.conf', content: `${KEY} = 1\n` },
      { name: 'b.conf', content: 'net.ipv4.conf.all.forwarding = 0\n' },
    ],
  },
  {
    name: 'the key after its coupled name',
    files: [
      { name: 'a.conf', content: 'net.ipv4.conf.all.forwarding = 0\n' },
      { name: 'b.conf', content: `${KEY} = 1\n` },
    ],
  },
  { name: 'a comment and an unrelated key', files: [{ name: 'a.conf', content: `# ${KEY} = 0\nnet.ipv4.tcp_syncookies = 1\n` }] },
];

describe('loadWrites: what `sysctl -p A B` leaves net.ipv4.ip_forward at, against procps in a namespace', () => {
  for (const c of cases) {
    it(c.name, () => {
      for (const start of ['0', '1']) expect({ start, value: model(c.files, start) }).toEqual({ start, value: procps(c.files, start) });
    });
  }
});
