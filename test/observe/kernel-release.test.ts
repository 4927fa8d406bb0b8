// The running kernel's release: /proc/sys/kernel/osrelease without its newline.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const work = mkdtempSync(path.join(tmpdir(), 'observe-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A live host over a fixture root holding `files`. */
function live(files: Tree): Host {
  const root = mkdtempSync(path.join(work, 'root-'));
  buildTree(root, files);
  return new Host({ root, live: true });
}
import { readKernelRelease } from '../../src/observe/kernel-release.js';

describe('readKernelRelease', () => {
  it('is the file without its newline; an empty or missing file is null', async () => {
    expect(await readKernelRelease(live({ 'proc/sys/kernel/osrelease': '6.1.0-31-cloud-amd64\n' }))).toBe('6.1.0-31-cloud-amd64');
    expect(await readKernelRelease(live({ 'proc/sys/kernel/osrelease': ' \n' }))).toBeNull();
    expect(await readKernelRelease(live({}))).toBeNull();
  });
  it("refuses an image: the build machine's kernel is not the one it boots", async () => {
    await expect(readKernelRelease(new Host({ root: work }))).rejects.toThrow(/needs a running host/);
  });
});
