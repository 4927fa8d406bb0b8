// uname -r and -m, read from /proc/sys/kernel without running uname; uname
// itself on this machine is the oracle, and it runs under a personality that
// rewrites uname(2).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { recording, tree, type Call } from '../helpers/installed-tree.js';
import { unameField } from '../../src/facts/native.js';

describe('uname -r and -m from /proc/sys/kernel', () => {
  it('on this machine equal what uname prints, with nothing run', async () => {
    const calls: Call[] = [];
    const host = new Host({ runner: recording(calls) });
    for (const flag of ['-r', '-m'] as const) {
      expect(await unameField(host, flag)).toBe(execFileSync('uname', [flag], { encoding: 'utf8' }).trim());
    }
    expect(calls).toEqual([]);
  });

  it('runs uname under a personality that rewrites uname(2)', async () => {
    const root = await tree({ 'proc/self/personality': '00000008\n', 'proc/sys/kernel/arch': 'x86_64\n' });
    const calls: Call[] = [];
    expect(await unameField(new Host({ root, live: true, runner: recording(calls, { 'uname -m': 'i686\n' }) }), '-m')).toBe('i686');
    expect(calls).toEqual(['uname -m']);
  });
});
