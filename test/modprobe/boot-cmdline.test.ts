// The next boot's kernel command line from GRUB's defaults and /etc/kernel/cmdline.
// GRUB's defaults are shell: the oracle is sh sourcing the same files as
// grub-mkconfig does and printing "$GRUB_CMDLINE_LINUX $GRUB_CMDLINE_LINUX_DEFAULT".
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cmdlineBlocks } from '../../src/modprobe/kernel-cmdline.js';
import { expandValue, pieceOf, readBootCmdlines } from '../../src/modprobe/boot-cmdline.js';
import { Host } from '../../src/host.js';
import { buildTree } from '../helpers/tree.js';

const work = mkdtempSync(path.join(tmpdir(), 'boot-cmdline-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** What grub-mkconfig's shell makes of the files: sourced in its order, the default entry's command line. */
function shOracle(root: string): string {
  const d = path.join(root, 'etc/default/grub.d');
  const cfgs = (() => {
    try {
      return readdirSync(d)
        .filter((n) => n.endsWith('.cfg'))
        .sort();
    } catch {
      return [];
    }
  })();
  const script = [
    '. ./etc/default/grub',
    ...cfgs.map((n) => `. ./etc/default/grub.d/${n}`),
    'printf %s "$GRUB_CMDLINE_LINUX $GRUB_CMDLINE_LINUX_DEFAULT"',
  ].join('\n');
  return execFileSync('sh', ['-c', script], { cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
}

const STOCK_GRUB = [
  "# If you change this file, run 'update-grub' afterwards to update",
  'GRUB_DEFAULT=0',
  'GRUB_TIMEOUT=5',
  'GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`',
  'GRUB_CMDLINE_LINUX_DEFAULT="quiet"',
  'GRUB_CMDLINE_LINUX="module_blacklist=br_netfilter"',
  '',
].join('\n');

describe('the next boot: /etc/default/grub, grub.d and /etc/kernel/cmdline', () => {
  const cases: Array<{ name: string; files: Record<string, string>; blocked: string[] }> = [
    { name: 'stock Debian file with a blacklist in GRUB_CMDLINE_LINUX', files: { 'etc/default/grub': STOCK_GRUB }, blocked: ['br_netfilter'] },
    {
      name: 'a grub.d drop-in appending to the variable',
      files: {
        'etc/default/grub': 'GRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n',
        'etc/default/grub.d/50-hardening.cfg': 'GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} modprobe.blacklist=overlay,usb_storage"\n',
      },
      blocked: ['overlay'],
    },
    {
      name: 'a later drop-in replacing the kernel list (the last module_blacklist= wins)',
      files: {
        'etc/default/grub': "GRUB_CMDLINE_LINUX='module_blacklist=br_netfilter'\n",
        'etc/default/grub.d/90-gpu.cfg': 'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT module_blacklist=nouveau"\n',
      },
      blocked: [],
    },
    {
      name: 'export and a comment',
      files: { 'etc/default/grub': 'export GRUB_CMDLINE_LINUX="quiet module_blacklist=x,br_netfilter" # keep\n' },
      blocked: ['br_netfilter'],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const root = mkdtempSync(path.join(work, 'grub-'));
      buildTree(root, c.files);
      const read = await readBootCmdlines(new Host({ root }));
      expect(read.unknown).toEqual([]);
      const grub = read.cmdlines.find((x) => x.loader === 'grub')!;
      // The text the shell builds, word for word.
      expect(grub.text.split(/\s+/).filter(Boolean)).toEqual(shOracle(root).split(/\s+/).filter(Boolean));
      expect(cmdlineBlocks(grub.text, ['overlay', 'br_netfilter']).map((b) => b.module)).toEqual(c.blocked);
    });
  }

  it('names the file and line of the assignment that holds the entry', async () => {
    const root = mkdtempSync(path.join(work, 'grub-'));
    buildTree(root, { 'etc/default/grub': STOCK_GRUB, 'etc/kernel/cmdline': 'root=UUID=1 ro\nmodprobe.blacklist=br_netfilter\n' });
    const read = await readBootCmdlines(new Host({ root }));
    expect(read.cmdlines.map((c) => [c.loader, c.pieces.map((p) => `${p.file}:${p.line}`)])).toEqual([
      ['grub', ['/etc/default/grub:6', '/etc/default/grub:5']],
      ['kernel-install', ['/etc/kernel/cmdline:1', '/etc/kernel/cmdline:2']],
    ]);
    expect(read.searched).toEqual(['/etc/default/grub', '/etc/default/grub.d/*.cfg', '/etc/kernel/cmdline']);
  });

  it('an assignment it cannot evaluate is unknown, naming file and line; other variables do not matter', async () => {
    const root = mkdtempSync(path.join(work, 'grub-'));
    buildTree(root, {
      'etc/default/grub': STOCK_GRUB,
      'etc/default/grub.d/10-cloud.cfg': 'if [ -e /x ]; then\n  GRUB_CMDLINE_LINUX="a"\nfi\nGRUB_CMDLINE_LINUX_DEFAULT="$(cat /etc/extra)"\n',
    });
    const read = await readBootCmdlines(new Host({ root }));
    expect(read.unknown.map((u) => `${u.file}:${u.line}`)).toEqual(['/etc/default/grub.d/10-cloud.cfg:2', '/etc/default/grub.d/10-cloud.cfg:4']);
    expect(expandValue('"$A b"', new Map([['A', 'a']]))).toBe('a b');
    expect(expandValue('"${A:-x}"', new Map())).toBeNull();
  });
});

/** What sh makes of `NAME=raw` after A=a and B='b c' (the variables the value may expand). */
function shValue(raw: string): string {
  return execFileSync('sh', ['-c', `A=a; B='b c'; X=${raw}; printf %s "$X"`], { encoding: 'utf8' });
}

describe('expandValue, against sh', () => {
  const vars = new Map([
    ['A', 'a'],
    ['B', 'b c'],
  ]);
  for (const raw of [
    'plain',
    '"quiet splash"',
    "'single $A'",
    '"$A x"',
    '"${A}y$B"',
    '$A',
    '"$UNSET"z',
    String.raw`a\ b`,
    String.raw`"a\\$A\"q"`,
    String.raw`"back\slash \n"`,
    String.raw`'x'\''y'`,
    String.raw`"1"'2'3`,
  ]) {
    it(raw, () => {
      expect(expandValue(raw, vars)).toBe(shValue(raw));
    });
  }
  it('is null for what needs running or the file system: substitutions, default values, globs, tilde, unterminated quotes', () => {
    for (const raw of ['"$(cat /x)"', '`id`', '"${A:-x}"', '*.cfg', '~/x', 'a?', '"open', "'open", '$', 'x\\']) {
      expect(expandValue(raw, vars), raw).toBeNull();
    }
  });
});

describe('readBootCmdlines: which files, in which order', () => {
  /** sh sourcing /etc/default/grub, then grub.d/*.cfg in the C locale's glob order, as grub-mkconfig does. */
  function globOracle(root: string): string {
    const script =
      '. ./etc/default/grub; for f in ./etc/default/grub.d/*.cfg; do [ -e "$f" ] && . "$f"; done; printf %s "$GRUB_CMDLINE_LINUX $GRUB_CMDLINE_LINUX_DEFAULT"';
    return execFileSync('sh', ['-c', script], { cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } });
  }

  it('drop-ins are read in byte order (upper case before lower case), the last assignment winning; other names are not read', async () => {
    const root = mkdtempSync(path.join(work, 'grub-'));
    buildTree(root, {
      'etc/default/grub': 'GRUB_CMDLINE_LINUX_DEFAULT="quiet"\n',
      'etc/default/grub.d/a.cfg': 'GRUB_CMDLINE_LINUX="from-a"\n',
      'etc/default/grub.d/B.cfg': 'GRUB_CMDLINE_LINUX="from-B"\n',
      'etc/default/grub.d/c.cfg.bak': 'GRUB_CMDLINE_LINUX="from-bak"\n',
    });
    const read = await readBootCmdlines(new Host({ root }));
    expect(read.searched).toEqual(['/etc/default/grub', '/etc/default/grub.d/B.cfg', '/etc/default/grub.d/a.cfg', '/etc/kernel/cmdline']);
    const grub = read.cmdlines.find((c) => c.loader === 'grub')!;
    expect(grub.text).toBe(globOracle(root));
    expect(pieceOf(grub, 'from-a')).toEqual({ file: '/etc/default/grub.d/a.cfg', line: 1, variable: 'GRUB_CMDLINE_LINUX', text: 'from-a' });
    expect(pieceOf(grub, 'nowhere')).toBeNull();
  });

  it('without any of the files there is no command line, and the searched list says where it looked', async () => {
    const root = mkdtempSync(path.join(work, 'grub-'));
    const read = await readBootCmdlines(new Host({ root }));
    expect(read).toEqual({ cmdlines: [], searched: ['/etc/default/grub', '/etc/default/grub.d/*.cfg', '/etc/kernel/cmdline'], unknown: [] });
  });

  it('/etc/kernel/cmdline alone: its lines joined by blanks, one piece per non-empty line', async () => {
    const root = mkdtempSync(path.join(work, 'grub-'));
    buildTree(root, { 'etc/kernel/cmdline': 'root=UUID=1 ro\n\nquiet\n' });
    const read = await readBootCmdlines(new Host({ root }));
    expect(read.cmdlines).toEqual([
      {
        loader: 'kernel-install',
        text: 'root=UUID=1 ro  quiet ',
        pieces: [
          { file: '/etc/kernel/cmdline', line: 1, variable: null, text: 'root=UUID=1 ro' },
          { file: '/etc/kernel/cmdline', line: 3, variable: null, text: 'quiet' },
        ],
      },
    ]);
  });

  it('sourcing another file, or an unterminated quote, makes both variables unknown at that line', async () => {
    const root = mkdtempSync(path.join(work, 'grub-'));
    buildTree(root, {
      'etc/default/grub': 'GRUB_CMDLINE_LINUX="a"\n. /etc/default/grub.local\n',
      'etc/default/grub.d/z.cfg': 'GRUB_TIMEOUT=1\nGRUB_CMDLINE_LINUX_DEFAULT="open\n',
    });
    const read = await readBootCmdlines(new Host({ root }));
    expect(read.unknown.map((u) => [u.file, u.line])).toEqual([
      ['/etc/default/grub.d/z.cfg', 2],
      ['/etc/default/grub.d/z.cfg', 2],
    ]);
    expect(read.unknown[0]!.message).toMatch(/unterminated quote/);
    const sourced = mkdtempSync(path.join(work, 'grub-'));
    buildTree(sourced, { 'etc/default/grub': 'GRUB_CMDLINE_LINUX="a"\n. /etc/default/grub.local\n' });
    const r2 = await readBootCmdlines(new Host({ root: sourced }));
    expect(r2.unknown.map((u) => `${u.file}:${u.line}`)).toEqual(['/etc/default/grub:2', '/etc/default/grub:2']);
    expect(r2.unknown[0]!.message).toContain('`.`');
  });
});
