// supervisord's configuration against Python, which supervisord is written in:
// shlex.split for command=, configparser for sections, inline comments and
// continuation lines; and the first configuration file that exists with its
// [include] files followed, in a fixture tree.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { loadSupervisorPrograms, parseSupervisorConf } from '../../src/ports/supervisor.js';
import { shlexSplit } from '../../src/lex/shlex.js';
import { buildTree, type Tree } from '../helpers/tree.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'supervisor-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('supervisord configuration, against Python (shlex.split, configparser)', () => {
  const py = (code: string, ...args: string[]) => {
    const r = spawnSync('/usr/bin/python3', ['-c', code, ...args], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as unknown;
  };
  const commands = [`/usr/bin/python3 -m http.server 2379`, `/bin/sh -c "exec python3 'a b' \\"q\\""`, `node "/opt/my app/x.js" --name=it\\'s  --empty ""`];
  for (const c of commands) {
    it(`splits ${JSON.stringify(c)} as shlex.split does`, () => {
      expect(shlexSplit(c).tokens).toEqual(py('import json, shlex, sys; print(json.dumps(shlex.split(sys.argv[1])))', c));
    });
  }
  it('program command= values, inline comments and continuation lines as configparser reads them', () => {
    const text = [
      '; supervisor config',
      '[program:etcd-standin]',
      'command = /usr/bin/python3 -m http.server 2379 ; stand-in for etcd',
      'autorestart=true',
      '',
      '[program:multi]',
      'command: /usr/bin/node',
      '   /opt/x.js --port 6443',
      '# a comment',
      '[include]',
      'files = conf.d/*.conf other.ini',
    ].join('\n');
    const file = path.join(dir, 'supervisord.conf');
    writeFileSync(file, text);
    const expected = py(
      `import configparser, json, sys
c = configparser.RawConfigParser(inline_comment_prefixes=(';', '#'))
c.read(sys.argv[1])
print(json.dumps({s[8:]: c.get(s, 'command') for s in c.sections() if s.startswith('program:')}))`,
      file,
    ) as Record<string, string>;
    const conf = parseSupervisorConf(text, '/etc/supervisor/supervisord.conf');
    expect(Object.fromEntries(conf.programs.map((p) => [p.name, p.command]))).toEqual(expected);
    expect(conf.programs.map((p) => p.line)).toEqual([3, 7]);
    expect(conf.programs[1]!.argv).toEqual(['/usr/bin/node', '/opt/x.js', '--port', '6443']);
    expect(conf.includes).toEqual(['/etc/supervisor/conf.d/*.conf', '/etc/supervisor/other.ini']);
    expect(parseSupervisorConf('[program:t]\ncommand=/bin/x --name %(program_name)s\n', 'f').programs[0]!.argv).toEqual(['/bin/x', '--name', null]);
  });
});

function treeHost(tree: Tree): Host {
  const root = mkdtempSync(path.join(dir, 'root-'));
  buildTree(root, tree);
  return new Host({ root, live: false });
}

describe("loadSupervisorPrograms: supervisord's first configuration file and its includes", () => {
  it("Debian's supervisord.conf with [include] files = /etc/supervisor/conf.d/*.conf: each matching file, not the others", async () => {
    const host = treeHost({
      'etc/supervisor/supervisord.conf': '[supervisord]\nlogfile=/var/log/supervisor/supervisord.log\n\n[include]\nfiles = /etc/supervisor/conf.d/*.conf\n',
      'etc/supervisor/conf.d/etcd.conf': '[program:etcd]\ncommand=/usr/bin/etcd --listen-client-urls http://127.0.0.1:2379\n',
      'etc/supervisor/conf.d/api.conf': '[program:api]\ncommand=/usr/bin/python3 -m http.server 6443\n',
      'etc/supervisor/conf.d/notes.txt': '[program:ignored]\ncommand=/bin/false\n',
      'etc/supervisor/conf.d/dir.conf/x.conf': '[program:nested]\ncommand=/bin/false\n',
      // Not read: the first file that exists wins.
      'etc/supervisord.conf': '[program:second]\ncommand=/bin/false\n',
    });
    const r = await loadSupervisorPrograms(host);
    expect(r.programs.map((p) => [p.name, p.argv]).sort()).toEqual([
      ['api', ['/usr/bin/python3', '-m', 'http.server', '6443']],
      ['etcd', ['/usr/bin/etcd', '--listen-client-urls', 'http://127.0.0.1:2379']],
    ]);
    expect(r.read.sort()).toEqual(['/etc/supervisor/conf.d/api.conf', '/etc/supervisor/conf.d/etcd.conf', '/etc/supervisor/supervisord.conf']);
    expect(r.unreadable).toEqual([]);
  });
  it("without Debian's file, /etc/supervisord.conf; an include that names itself is read once", async () => {
    const host = treeHost({ 'etc/supervisord.conf': '[include]\nfiles = supervisord.conf\n\n[program:one]\ncommand=/bin/sleep 1\n' });
    const r = await loadSupervisorPrograms(host);
    expect([r.programs.map((p) => p.name), r.read]).toEqual([['one'], ['/etc/supervisord.conf']]);
  });
  it('no supervisord: nothing; an include under a file, not a directory, matches nothing (as the glob of supervisord finds nothing)', async () => {
    expect(await loadSupervisorPrograms(treeHost({ 'etc/hostname': 'x\n' }))).toEqual({ programs: [], read: [], unreadable: [] });
    const host = treeHost({ 'etc/supervisord.conf': '[include]\nfiles = /etc/notadir/*.conf\n', 'etc/notadir': 'a file\n' });
    const r = await loadSupervisorPrograms(host);
    expect([r.read, r.unreadable]).toEqual([['/etc/supervisord.conf'], []]);
  });
});
