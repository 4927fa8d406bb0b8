// remove_swap_files deletes only real swap files. The signature check is
// compared with libblkid (`blkid -p`, util-linux) over files made by mkswap
// with each page size and over files that only look like swap.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, symlinkSync, mkdirSync, linkSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { swapSignature, SIGNATURE_SPAN } from '../../src/swap/signature.js';
import { Host } from '../../src/host.js';
import { observeSwap, diffSwap } from '../../src/resources/swap-off/provider.js';
import type { SwapOffSpec } from '../../src/resources/swap-off/spec.js';
import { makeSwapFile } from '../helpers/swap.js';

const work = mkdtempSync(path.join(tmpdir(), 'swapsig-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function blkidType(file: string): string {
  const r = spawnSync('blkid', ['-p', '-o', 'value', '-s', 'TYPE', file], { encoding: 'utf8' });
  return r.stdout.trim();
}

function head(file: string): Buffer {
  return readFileSync(file).subarray(0, SIGNATURE_SPAN);
}

describe('swap signature against blkid', () => {
  const files: Array<[string, () => void]> = [];
  for (const page of [4096, 8192, 16384, 32768, 65536]) {
    const f = path.join(work, `swap-${page}`);
    files.push([
      f,
      () => {
        writeFileSync(f, Buffer.alloc(1024 * 1024));
        execFileSync('mkswap', ['-p', String(page), f], { stdio: 'ignore' });
      },
    ]);
  }
  const text = path.join(work, 'passwd');
  files.push([text, () => writeFileSync(text, 'root:x:0:0:root:/root:/bin/bash\n')]);
  const zeros = path.join(work, 'zeros');
  files.push([zeros, () => writeFileSync(zeros, Buffer.alloc(128 * 1024))]);
  const magicOnly = path.join(work, 'magic-only');
  files.push([
    magicOnly,
    () => {
      const b = Buffer.alloc(8192);
      b.write('SWAPSPACE2', 4086, 'latin1');
      writeFileSync(magicOnly, b);
    },
  ]);
  const shifted = path.join(work, 'shifted');
  files.push([
    shifted,
    () => {
      const b = Buffer.alloc(8192);
      b.write('SWAPSPACE2', 4000, 'latin1');
      b.writeUInt32LE(1, 1024);
      b.writeUInt32LE(10, 1028);
      writeFileSync(shifted, b);
    },
  ]);
  const short = path.join(work, 'short');
  files.push([short, () => writeFileSync(short, 'SWAPSPACE2')]);

  for (const [f, make] of files) {
    it(`${path.basename(f)}: swap exactly when blkid says TYPE=swap`, () => {
      make();
      const ours = swapSignature(head(f));
      expect(ours.swap).toBe(blkidType(f) === 'swap');
    });
  }

  it('the corpus has both kinds', () => {
    expect(files.filter(([f]) => blkidType(f) === 'swap')).toHaveLength(5);
  });
});

describe('remove_swap_files refuses what is not a swap file', () => {
  const SPEC: SwapOffSpec = { type: 'SwapOff', mask_swap_target: true, remove_swap_files: true };

  it('deletes a mkswap file, refuses /etc/passwd, a symlink, a directory, a hard link and a non-swap file, each with its reason', async () => {
    const root = path.join(work, 'root');
    mkdirSync(path.join(root, 'etc'), { recursive: true });
    writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
    makeSwapFile(path.join(root, 'swapfile'));
    symlinkSync('/swapfile', path.join(root, 'swaplink'));
    mkdirSync(path.join(root, 'swapdir'));
    writeFileSync(path.join(root, 'notswap'), Buffer.alloc(70000));
    makeSwapFile(path.join(root, 'linked'));
    linkSync(path.join(root, 'linked'), path.join(root, 'linked2'));
    writeFileSync(
      path.join(root, 'etc/fstab'),
      [
        '/etc/passwd none swap sw 0 0',
        '/swapfile none swap',
        '/swaplink none swap sw',
        '/swapdir none swap sw',
        '/notswap none swap sw 0 0 # x',
        '/linked none swap',
        '/../../etc/passwd none swap',
        '/dev/sdb3 none swap',
        '/missing none swap',
        '',
      ].join('\n'),
    );
    const o = await observeSwap(new Host({ root }));
    expect(o.swapFiles).toEqual(['/swapfile']);
    const refused = Object.fromEntries((o.refusedSwapFiles ?? []).map((r) => [r.path, r.reason]));
    expect(Object.keys(refused).sort()).toEqual(['/../../etc/passwd', '/etc/passwd', '/linked', '/notswap', '/swapdir', '/swaplink']);
    expect(refused['/etc/passwd']).toMatch(/no swap signature/);
    expect(refused['/../../etc/passwd']).toMatch(/no swap signature/);
    expect(refused['/swaplink']).toMatch(/symlink/);
    expect(refused['/swapdir']).toMatch(/directory/);
    expect(refused['/linked']).toMatch(/hard links/);
    const changes = diffSwap(SPEC, o, { live: false });
    expect(changes.filter((c) => c.action === 'delete').map((c) => c.id)).toEqual(['remove:/swapfile']);
    const op = changes.find((c) => c.id === 'remove-refused:/etc/passwd')!;
    expect(op.operator).toContain('/etc/fstab:1 names /etc/passwd as swap');
    // Without remove_swap_files nothing is refused because nothing is deleted.
    expect(diffSwap({ ...SPEC, remove_swap_files: false }, o, { live: false }).some((c) => c.operator)).toBe(false);
    expect(existsSync(path.join(root, 'etc/passwd'))).toBe(true);
  });
});
