// `lsb_release -a` answered from the files it reads. Oracles: the real
// command on this machine (lsb-release 12.0), and the real lsb_release script
// run over fixture os-release files (LSB_OS_RELEASE, which the script
// honours). Where the model is not certain it says so, and the command runs.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { recording, tempDir, tree, type Call } from '../helpers/installed-tree.js';
import { lsbReleaseOutput } from '../../src/facts/lsb-release.js';
import { gatherNativeFacts } from '../../src/facts/native.js';

describe('lsb_release -a from the files it reads', () => {
  const real = '/usr/bin/lsb_release';
  /** The real lsb_release (this machine's, the modelled one) over an os-release text. */
  function realOver(osRelease: string, dir: string): string {
    const f = path.join(dir, 'os-release.oracle');
    execFileSync('sh', ['-c', 'cat > "$1"', 'sh', f], { input: osRelease });
    return execFileSync(real, ['-a'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', LSB_OS_RELEASE: f } });
  }
  async function modelOver(osRelease: string): Promise<ReturnType<typeof lsbReleaseOutput>> {
    const root = await tree(
      { 'usr/lib/os-release': osRelease, 'usr/bin/lsb_release': await readFile(real, 'latin1') },
      { 'etc/os-release': '../usr/lib/os-release' },
      ['usr/bin/lsb_release'],
    );
    return lsbReleaseOutput(new Host({ root, live: true }), { PATH: '/usr/bin:/bin' });
  }

  const OS_RELEASES: Record<string, string> = {
    'Debian 12':
      'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\nHOME_URL="https://www.debian.org/"\n',
    'Debian sid (no VERSION_ID)': 'PRETTY_NAME="Debian GNU/Linux trixie/sid"\nNAME="Debian GNU/Linux"\nVERSION_CODENAME=trixie\nID=debian\n',
    'Ubuntu (NAME differs from ID in case only)': 'NAME="Ubuntu"\nVERSION_ID="24.04"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME="Ubuntu 24.04 LTS"\n',
    'quotes, escapes and comments': '# comment\n\n  ID=\'my os\'\nNAME="My \\"OS\\" \\$x \\y"   # trailing\nPRETTY_NAME=a\\ b\'c\'"d"\nVERSION_ID=\'\'\n',
    'NAME of exactly x': 'ID=x\nNAME=x\n',
    empty: '',
  };

  it('prints what the real lsb_release prints over the same os-release', async () => {
    const dir = await tempDir('lsb-oracle-');
    for (const [what, text] of Object.entries(OS_RELEASES)) {
      const got = await modelOver(text);
      expect({ what, stdout: got.known ? got.stdout : got.reason }).toEqual({ what, stdout: realOver(text, dir) });
    }
  });

  it('is unknown where the shell would evaluate os-release, or the script is another one', async () => {
    for (const text of [
      'VERSION_ID=$(cat /etc/debian_version)\n',
      'ID=debian; NAME=x\n',
      'PRETTY_NAME="a\nb"\n',
      'ID=~\n',
      'PATH=/opt\n',
      'export ID=debian\n',
    ]) {
      expect({ text, known: (await modelOver(text)).known }).toEqual({ text, known: false });
    }
    const root = await tree({ 'usr/bin/lsb_release': '#!/usr/bin/python3\n# Debian 11 lsb_release\n' }, {}, ['usr/bin/lsb_release']);
    expect((await lsbReleaseOutput(new Host({ root, live: true }), { PATH: '/usr/bin' })).known).toBe(false);
  });

  it('on this machine equals `lsb_release -a`', async () => {
    const r = spawnSync('lsb_release', ['-a'], { encoding: 'utf8' });
    const got = await lsbReleaseOutput(new Host());
    expect(got.known).toBe(true);
    expect(got.known && got.stdout).toBe(r.status === 0 ? r.stdout : null);
  });

  it('native facts run neither lsb_release nor anything else the model covers', async () => {
    const root = await tree(
      {
        'proc/meminfo': 'MemTotal: 2048 kB\n',
        'proc/cpuinfo': 'processor\t: 0\n',
        'usr/lib/os-release': OS_RELEASES['Debian 12']!,
        'usr/bin/lsb_release': await readFile(real, 'latin1'),
      },
      { 'etc/os-release': '../usr/lib/os-release' },
      ['usr/bin/lsb_release'],
    );
    const calls: Call[] = [];
    const facts = await gatherNativeFacts(new Host({ root, live: true, runner: recording(calls, { 'uname -m': 'x86_64\n', 'uname -r': '6.1.0\n' }) }));
    expect(facts.distribution_version).toBe('12');
    expect(calls).not.toContain('lsb_release -a');
  });
});
