// ansible-core's version as `ansible --version` would print it, read from the
// installed package without running ansible. Oracle: the real command on this
// machine (Debian 12's ansible-core). Where the model is not certain it says
// so, and the command runs.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { recording, tree, type Call } from '../helpers/installed-tree.js';
import { installedAnsibleCore } from '../../src/facts/ansible-install.js';
import { ansibleCoreFor, parseAnsibleVersion } from '../../src/facts/ansible-core.js';

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
