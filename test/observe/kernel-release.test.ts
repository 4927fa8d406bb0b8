// The running kernel's release: /proc/sys/kernel/osrelease without its newline.
import { describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { liveFixtureHosts } from '../helpers/live-fixture-host.js';

/** Live hosts over fixture roots holding `files`, and an empty folder for an image host. */
const { live, work } = liveFixtureHosts('observe-');
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
