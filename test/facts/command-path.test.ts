// commandFile looks a command name up as execvp(3) does. The oracle is the
// shell's own lookup, `command -v NAME`, over the same directories of a
// fixture root (run as root here, like the tool: any x bit will do).
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { commandFile, commandScript } from '../../src/facts/command-path.js';

const root = mkdtempSync(path.join(tmpdir(), 'command-path-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function file(p: string, mode: number, text = '#!/bin/sh\n'): void {
  mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
  writeFileSync(path.join(root, p), text);
  chmodSync(path.join(root, p), mode);
}
file('usr/local/bin/notexec', 0o644);
file('usr/bin/notexec', 0o755, 'second\n');
file('usr/bin/lsb_release', 0o700, '#!/usr/bin/python3\n');
file('usr/sbin/tool', 0o755, 'tool\n');
mkdirSync(path.join(root, 'usr/local/bin/adir'), { recursive: true });
file('usr/bin/adir', 0o755, 'the file, not the directory\n');
mkdirSync(path.join(root, 'bin'), { recursive: true });
symlinkSync('../usr/sbin/tool', path.join(root, 'bin/linked'));

const DIRS = ['/usr/local/bin', '/usr/bin', '/bin'];
const host = new Host({ root });

/** The shell's answer for `name` over DIRS inside the root, as a target path; null when it finds none. */
function shLookup(name: string): string | null {
  const PATH = DIRS.map((d) => path.join(root, d)).join(':');
  try {
    const out = execFileSync('/bin/sh', ['-c', `command -v "$1"`, 'sh', name], { env: { PATH }, encoding: 'utf8' }).trim();
    return out.startsWith(root) ? out.slice(root.length) : out;
  } catch {
    return null;
  }
}

describe('commandFile against command -v', () => {
  for (const name of ['notexec', 'lsb_release', 'adir', 'linked', 'missing']) {
    it(name, async () => {
      const ours = await commandFile(host, name, { PATH: DIRS.join(':') });
      const theirs = shLookup(name);
      if (theirs === null) expect(ours).toEqual({ kind: 'missing' });
      else {
        expect(ours.kind).toBe('file');
        expect(ours.kind === 'file' && ours.named).toBe(theirs);
      }
    });
  }
  it('resolves a link inside the root to the file that runs', async () => {
    expect(await commandFile(host, 'linked', { PATH: DIRS.join(':') })).toEqual({ kind: 'file', path: '/usr/sbin/tool', named: '/bin/linked' });
  });
});

describe('what the lookup cannot model is unknown, so the caller runs the command', () => {
  it('no PATH, or a relative entry before a hit', async () => {
    expect(await commandFile(host, 'tool', {})).toEqual({ kind: 'unknown', reason: 'PATH is not set' });
    expect(await commandFile(host, 'tool', { PATH: '/usr/local/bin:bin:/usr/sbin' })).toEqual({ kind: 'unknown', reason: 'PATH has the relative entry "bin"' });
    // An empty entry is the current directory, relative too.
    expect((await commandFile(host, 'tool', { PATH: ':/usr/sbin' })).kind).toBe('unknown');
  });
});

describe('commandScript', () => {
  it("reads the file's content as text or as bytes", async () => {
    const t = await commandScript(host, 'tool', { PATH: '/usr/sbin' }, 'text');
    expect(t).toEqual({ kind: 'file', path: '/usr/sbin/tool', named: '/usr/sbin/tool', content: 'tool\n' });
    expect(await commandScript(host, 'nothing', { PATH: '/usr/sbin' }, 'bytes')).toEqual({ kind: 'missing' });
  });
});
