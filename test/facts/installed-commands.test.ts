// The facts' two slow commands, `ansible --version` and `lsb_release -a`,
// answered from the files they read. Oracles: the real commands on this
// machine (Debian 12: ansible-core's /usr/bin/ansible, lsb-release 12.0),
// and the real lsb_release script run over fixture os-release files
// (LSB_OS_RELEASE, which the script honours). Where the model is not certain
// it says so, and the command runs.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import type { CommandRunner } from '../../src/host.js';
import { installedAnsibleCore } from '../../src/facts/ansible-install.js';
import { ansibleCoreFor, parseAnsibleVersion } from '../../src/facts/ansible-core.js';
import { lsbReleaseOutput } from '../../src/facts/lsb-release.js';
import { gatherNativeFacts, unameField } from '../../src/facts/native.js';

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function tree(files: Record<string, string>, links: Record<string, string> = {}, exec: string[] = []): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'facts-installed-'));
  temps.push(root);
  for (const [p, content] of Object.entries(files)) {
    await mkdir(path.join(root, path.dirname(p)), { recursive: true });
    await writeFile(path.join(root, p), content);
  }
  for (const [p, to] of Object.entries(links)) {
    await mkdir(path.join(root, path.dirname(p)), { recursive: true });
    await symlink(to, path.join(root, p));
  }
  for (const p of exec) await chmod(path.join(root, p), 0o755);
  return root;
}

type Call = string;
function recording(calls: Call[], answers: Record<string, string> = {}): CommandRunner {
  return async (cmd, args) => {
    const line = [cmd, ...args].join(' ');
    calls.push(line);
    return line in answers ? { command: line, exitCode: 0, stdout: answers[line]!, stderr: '' } : { command: line, exitCode: 127, stdout: '', stderr: '' };
  };
}

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/root' };
// What pip and Debian's ansible-core package write for the `ansible` console script.
const CONSOLE_SCRIPT =
  '#! /usr/bin/python3\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom ansible.cli.adhoc import main\nif __name__ == "__main__":\n    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])\n    sys.exit(main())\n';
const RELEASE_PY =
  "# Make coding more python3-ish\nfrom __future__ import (absolute_import, division, print_function)\n__metaclass__ = type\n\n__version__ = '2.17.1'\n__author__ = 'Ansible, Inc.'\n__codename__ = \"Gallows Pole\"\n";

function ansibleTree(extra: Record<string, string> = {}) {
  return tree(
    {
      'usr/bin/ansible': CONSOLE_SCRIPT,
      'usr/bin/python3.11': '',
      'usr/lib/python3/dist-packages/ansible/__init__.py': '',
      'usr/lib/python3/dist-packages/ansible/release.py': RELEASE_PY,
      ...extra,
    },
    { 'usr/bin/python3': 'python3.11' },
    ['usr/bin/ansible', 'usr/bin/python3.11'],
  );
}

describe('the ansible-core version from the installed package', () => {
  it("reads ansible/release.py on the sys.path of the console script's python, without running ansible", async () => {
    const root = await ansibleTree();
    const host = new Host({ root, live: true, runner: recording([]) });
    expect(await installedAnsibleCore(host, ENV)).toEqual({ known: true, version: '2.17.1', from: '/usr/lib/python3/dist-packages/ansible/release.py' });
  });

  it('gives ansibleCoreFor its version, naming the file, with nothing run', async () => {
    const calls: Call[] = [];
    const core = await ansibleCoreFor(new Host({ root: await ansibleTree(), live: true, runner: recording(calls) }), undefined);
    expect([core, calls]).toEqual([{ version: '2.17.1', from: '/usr/lib/python3/dist-packages/ansible/release.py, the version ansible --version prints' }, []]);
  });

  it('a package earlier on sys.path (/usr/local) wins, as it does for Python', async () => {
    const root = await ansibleTree({
      'usr/local/lib/python3.11/dist-packages/ansible/__init__.py': '',
      'usr/local/lib/python3.11/dist-packages/ansible/release.py': "__version__ = '2.18.3'\n",
    });
    expect(await installedAnsibleCore(new Host({ root, live: true }), ENV)).toMatchObject({ known: true, version: '2.18.3' });
  });

  it('no ansible on PATH is what running it would find: nothing', async () => {
    const root = await tree({ 'etc/hostname': 'x\n' });
    expect(await installedAnsibleCore(new Host({ root, live: true }), ENV)).toEqual({ known: true, version: null, from: 'no ansible on PATH' });
  });

  it('is unknown, and ansible --version runs, for what the model does not cover', async () => {
    const cases: Array<[string, () => Promise<string>, Record<string, string>]> = [
      ['a wrapper script', () => tree({ 'usr/bin/ansible': '#!/bin/sh\nexec /opt/ansible/bin/ansible "$@"\n' }, {}, ['usr/bin/ansible']), ENV],
      ['PYTHONPATH', () => ansibleTree(), { ...ENV, PYTHONPATH: '/opt/py' }],
      ['a .pth path ahead of the package', () => ansibleTree({ 'usr/local/lib/python3.11/dist-packages/extra.pth': '/opt/extra\n' }), ENV],
      [
        'release.py computing the version',
        () => ansibleTree({ 'usr/lib/python3/dist-packages/ansible/release.py': "__version__ = '.'.join(['2', '17'])\n" }),
        ENV,
      ],
      [
        'a venv interpreter',
        () => tree({ 'usr/bin/ansible': CONSOLE_SCRIPT.replace('/usr/bin/python3', '/opt/venv/bin/python') }, {}, ['usr/bin/ansible']),
        ENV,
      ],
    ];
    for (const [what, make, env] of cases) {
      const root = await make();
      const got = await installedAnsibleCore(new Host({ root, live: true }), env);
      expect({ what, known: got.known }).toEqual({ what, known: false });
    }
    // ansibleCoreFor then runs the command itself.
    const calls: Call[] = [];
    const root = await tree({ 'usr/bin/ansible': '#!/bin/sh\nexec /opt/ansible/bin/ansible "$@"\n' }, {}, ['usr/bin/ansible']);
    const core = await ansibleCoreFor(new Host({ root, live: true, runner: recording(calls, { 'ansible --version': 'ansible [core 2.16.5]\n' }) }), undefined);
    expect([core, calls]).toEqual([{ version: '2.16.5', from: 'ansible --version' }, ['ansible --version']]);
  });

  it('on this machine equals what `ansible --version` prints', async () => {
    const got = await installedAnsibleCore(new Host());
    const r = spawnSync('ansible', ['--version'], { encoding: 'utf8' });
    const expected = r.status === 0 ? parseAnsibleVersion(r.stdout) : null;
    expect(got.known).toBe(true);
    expect(got.known && got.version).toBe(expected);
  }, 60_000);
});

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
    const dir = await mkdtemp(path.join(tmpdir(), 'lsb-oracle-'));
    temps.push(dir);
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
