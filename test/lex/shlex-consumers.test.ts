// Each reader that splits with src/lex/shlex.ts, held against its real consumer:
// Ansible's INI inventory (ansible-inventory --list), supervisord's command=
// (shlex.split, as supervisor/options.py calls it) and distro's os-release
// (shlex.shlex(posix=True) with whitespace_split, as distro.py calls it).
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { parseIniInventory } from '../../src/kubespray/inventory.js';
import { parseSupervisorConf } from '../../src/ports/supervisor.js';
import { parseOsRelease } from '../../src/facts/distribution.js';

function python(code: string, input: string): unknown {
  const r = spawnSync('/usr/bin/python3', ['-c', code], { input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as unknown;
}

describe('INI inventory host lines, as ansible-inventory reads them', () => {
  const lines = [`h1 a=x#y b=2`, `h2 c="p\\q" d=r\\ s e='t#u' f=1`, `h3 g="a b"#c h=2`, `h4 # all of it a comment`];
  it('the same host variables', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'inv-shlex-'));
    try {
      const text = `[g]\n${lines.join('\n')}\n`;
      await fs.writeFile(path.join(dir, 'inv.ini'), text);
      const r = await execa('ansible-inventory', ['-i', path.join(dir, 'inv.ini'), '--list'], {
        env: { ANSIBLE_HOME: path.join(dir, '.ansible'), ANSIBLE_LOCAL_TEMP: path.join(dir, 'tmp'), ANSIBLE_NOCOLOR: '1' },
      });
      const want = (JSON.parse(r.stdout) as { _meta: { hostvars: Record<string, Record<string, unknown>> } })._meta.hostvars;
      const inv = parseIniInventory(text, 'inv.ini');
      for (const h of ['h1', 'h2', 'h3', 'h4']) expect(inv.hosts.get(h)?.vars ?? {}, h).toEqual(want[h] ?? {});
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('a dangling backslash or an open quote is the line error ansible reports', async () => {
    for (const [line, message] of [
      ['h5 a=b\\', 'No escaped character'],
      ['h6 a="b', 'No closing quotation'],
    ] as const) {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'inv-shlex-'));
      try {
        await fs.writeFile(path.join(dir, 'inv.ini'), `[g]\n${line}\n`);
        const r = await execa('ansible-inventory', ['-i', path.join(dir, 'inv.ini'), '--list'], {
          env: { ANSIBLE_HOME: path.join(dir, '.ansible'), ANSIBLE_LOCAL_TEMP: path.join(dir, 'tmp'), ANSIBLE_NOCOLOR: '1' },
          reject: false,
        });
        expect(r.stderr.replace(/\s+/g, ' ')).toContain(message);
        expect(() => parseIniInventory(`[g]\n${line}\n`, 'inv.ini')).toThrow(`inv.ini:2: ${message}`);
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    }
  });
});

describe("supervisord's command=, as shlex.split reads it", () => {
  const commands = ['/bin/x a\\', '/bin/x a\x0bb', '/bin/x "a\\$b" \'c\\d\'', '/bin/x a#b', '/bin/x "open'];
  it('the same argv, or none where Python raises', () => {
    const want = python(
      'import json, shlex, sys\nout = []\nfor c in json.load(sys.stdin):\n    try: out.append(shlex.split(c))\n    except ValueError: out.append(None)\nprint(json.dumps(out))',
      JSON.stringify(commands),
    ) as Array<string[] | null>;
    commands.forEach((c, i) => {
      const conf = `[program:p]\ncommand=${c}\n`;
      expect(parseSupervisorConf(conf, '/etc/supervisor/conf.d/p.conf').programs[0]?.argv, JSON.stringify(c)).toEqual(want[i]);
    });
  });
});

describe("os-release, as distro's shlex reads it", () => {
  const texts = ['ID=debian\nNAME="Debian GNU/Linux"#x\nVERSION_ID="12"\n', "ID='a b'\\\nc\n", 'ID=x\nBROKEN="open\n', 'ID=a\x0bb PRETTY_NAME=\\"q\n'];
  it('the same properties', () => {
    const want = python(
      [
        'import json, shlex, sys',
        'out = []',
        'for text in json.load(sys.stdin):',
        '    lx = shlex.shlex(text, posix=True); lx.whitespace_split = True',
        '    try: tokens = list(lx)',
        '    except ValueError: tokens = []',
        "    out.append({t.split('=', 1)[0].lower(): t.split('=', 1)[1] for t in tokens if '=' in t})",
        'print(json.dumps(out))',
      ].join('\n'),
      JSON.stringify(texts),
    ) as Array<Record<string, string>>;
    texts.forEach((t, i) => expect(parseOsRelease(t), JSON.stringify(t)).toEqual(want[i]));
  });
});
