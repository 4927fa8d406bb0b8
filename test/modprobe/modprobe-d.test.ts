import { describe, expect, it } from 'vitest';
import {
  commentOutDirectives,
  effectiveConfFiles,
  findBlockers,
  isNoopInstallCommand,
  logicalLines,
  MODPROBE_MARKER,
  overrideContent,
  parseModprobeConf,
} from '../../src/modprobe/modprobe-d.js';
import { dependenciesOf, parseModulesDep } from '../../src/modprobe/modules-dep.js';
import { afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findUnjudged, softdepsOf } from '../../src/modprobe/modprobe-d.js';
import { directiveLines, emptyModuleTree, kmodDirectives } from '../helpers/kmod.js';
import { spawnSync } from 'node:child_process';

const WANT = ['overlay', 'br_netfilter'];

describe('parseModprobeConf', () => {
  it('finds blacklist and install lines, skipping comments', () => {
    const text = [
      '# blacklist br_netfilter',
      '  # blacklist overlay',
      'blacklist br_netfilter',
      'blacklist\tpcspkr',
      'install overlay /bin/true',
      'options br_netfilter foo=1',
      'alias br-nf br_netfilter',
    ].join('\n');
    expect(parseModprobeConf(text).map((d) => [d.kind, d.module, d.firstLine])).toEqual([
      ['blacklist', 'br_netfilter', 3],
      ['blacklist', 'pcspkr', 4],
      ['install', 'overlay', 5],
    ]);
  });

  it('treats "-" and "_" in module names alike', () => {
    expect(findBlockers('/f', 'blacklist br-netfilter\n', WANT).map((b) => b.module)).toEqual(['br_netfilter']);
  });

  it('counts only true/false install commands as blockers', () => {
    for (const cmd of [
      '/bin/true',
      '/bin/false',
      '/usr/bin/true',
      '/usr/bin/false',
      'true',
      'false',
      '/bin/true  ',
      '/bin/false # CIS 1.1.1',
      ':',
      '/bin/sh -c "exit 0"',
    ])
      expect(isNoopInstallCommand(cmd), cmd).toBe(true);
    for (const cmd of ['/sbin/modprobe --ignore-install br_netfilter', '/bin/truex', '/opt/bin/true']) expect(isNoopInstallCommand(cmd), cmd).toBe(false);
    const text = 'install br_netfilter /sbin/modprobe --ignore-install br_netfilter && echo hi\ninstall overlay /usr/bin/false\n';
    expect(findBlockers('/f', text, WANT).map((b) => [b.kind, b.module])).toEqual([['install', 'overlay']]);
  });

  it('joins backslash continuations, and a continued comment stays a comment', () => {
    const text = 'install br_netfilter \\\n  /bin/true\n# note \\\nblacklist overlay\nblacklist \\\noverlay\n';
    expect(logicalLines(text).map((l) => [l.firstLine, l.lastLine])).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
      [7, 7],
    ]);
    const blockers = findBlockers('/f', text, WANT);
    expect(blockers.map((b) => [b.kind, b.module, b.firstLine, b.lastLine])).toEqual([
      ['install', 'br_netfilter', 1, 2],
      ['blacklist', 'overlay', 5, 6],
    ]);
  });

  it("counts a dependency's no-op install line, not its blacklist", () => {
    const dep = parseModulesDep(
      'kernel/net/bridge/br_netfilter.ko.xz: kernel/net/bridge/bridge.ko.xz kernel/net/802/stp.ko.xz kernel/net/llc/llc.ko.xz\n' +
        'kernel/fs/overlayfs/overlay.ko.xz:\nkernel/net/bridge/bridge.ko.xz: kernel/net/802/stp.ko.xz kernel/net/llc/llc.ko.xz\n',
    );
    expect(dep.get('br_netfilter')).toEqual(['bridge', 'stp', 'llc']);
    expect(dep.get('overlay')).toEqual([]);
    const deps = dependenciesOf(WANT, [dep]);
    expect([...deps.entries()]).toEqual([
      ['bridge', ['br_netfilter']],
      ['stp', ['br_netfilter']],
      ['llc', ['br_netfilter']],
    ]);
    const text = 'install bridge /bin/false\nblacklist stp\ninstall llc /sbin/modprobe --ignore-install llc\n';
    expect(findBlockers('/f', text, WANT, deps).map((b) => [b.kind, b.module, b.neededBy])).toEqual([['install', 'bridge', ['br_netfilter']]]);
    expect(findBlockers('/f', text, WANT)).toEqual([]);
  });

  it('ignores blockers of modules nobody asked for', () => {
    expect(findBlockers('/f', 'blacklist nouveau\ninstall cramfs /bin/false\n', WANT)).toEqual([]);
  });
});

describe('commentOutDirectives', () => {
  it('comments the blocker lines only, keeping every other byte', () => {
    const text = '# hardening\nblacklist nouveau\nblacklist br_netfilter\ninstall cramfs /bin/false\ninstall overlay /bin/true';
    const out = commentOutDirectives(text, findBlockers('/f', text, WANT));
    expect(out).toBe(
      `# hardening\nblacklist nouveau\n${MODPROBE_MARKER}\n#blacklist br_netfilter\ninstall cramfs /bin/false\n${MODPROBE_MARKER}\n#install overlay /bin/true`,
    );
    expect(findBlockers('/f', out, WANT)).toEqual([]);
    // the unrelated blockers still parse as before
    expect(parseModprobeConf(out).map((d) => d.module)).toEqual(['nouveau', 'cramfs']);
  });

  it('comments every physical line of a continued directive', () => {
    const text = 'install br_netfilter \\\n  /bin/true\nblacklist pcspkr\n';
    const out = commentOutDirectives(text, findBlockers('/f', text, WANT));
    expect(out).toBe(`${MODPROBE_MARKER}\n#install br_netfilter \\\n#  /bin/true\nblacklist pcspkr\n`);
    expect(findBlockers('/f', out, WANT)).toEqual([]);
    expect(parseModprobeConf(out).map((d) => d.module)).toEqual(['pcspkr']);
  });

  it('override content names the vendor file and neutralises its blockers', () => {
    const text = 'blacklist br_netfilter\n';
    const out = overrideContent('/usr/lib/modprobe.d/sec.conf', text, findBlockers('/f', text, WANT));
    expect(out.split('\n')[0]).toContain('/usr/lib/modprobe.d/sec.conf');
    expect(findBlockers('/f', out, WANT)).toEqual([]);
  });
});

describe('effectiveConfFiles', () => {
  it('lets the first directory win for a name and sorts by name', () => {
    const listing = [
      { dir: '/etc/modprobe.d', names: ['local.conf', 'sec.conf', 'README', '.hidden.conf'] },
      { dir: '/run/modprobe.d', names: ['sec.conf', 'a.conf'] },
      { dir: '/usr/lib/modprobe.d', names: ['sec.conf', 'systemd.conf', 'old.alias'] },
      { dir: '/lib/modprobe.d', names: ['aliases.conf'] },
    ];
    const files = effectiveConfFiles(listing.flatMap(({ dir, names }) => names.map((name) => ({ dir, name }))));
    expect(files.map((f) => f.path)).toEqual([
      '/run/modprobe.d/a.conf',
      '/lib/modprobe.d/aliases.conf',
      '/etc/modprobe.d/local.conf',
      '/usr/lib/modprobe.d/old.alias',
      '/etc/modprobe.d/sec.conf',
      '/usr/lib/modprobe.d/systemd.conf',
    ]);
  });
});

// ---------------------------------------------------------------------------
// More modprobe.d rules, with kmod as the oracle
// (`modprobe -C DIR -d BASE --showconfig` over an empty module tree: nothing
// is loaded): a backslash on the last line, tabs as separators, softdep
// lists, CRLF files commented out by us, and which softdep and dependency
// install lines stop a wanted module.
const work = mkdtempSync(path.join(tmpdir(), 'modprobe-domain-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const base = emptyModuleTree(work);

let n = 0;
/** kmod's directives for one file's text, the install lines as kmod prints them. */
function kmod(text: string): string[] {
  const dir = path.join(work, `conf-${n++}`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'x.conf'), text, 'latin1');
  return kmodDirectives(dir, base, 'as-printed');
}

const ours = (text: string): string[] => directiveLines(parseModprobeConf(text));

describe('modprobe.d forms against kmod --showconfig', () => {
  const forms: Record<string, string> = {
    'backslash on the last line, then a newline': 'install overlay /bin/true \\\n',
    'tabs and blanks between the words': '\tblacklist\toverlay\n  install \t br_netfilter\t/bin/false\t\n',
    'softdep lists switch at pre: and post:': 'softdep br-netfilter pre: nf-a nf_b post: nf_c\nsoftdep overlay post: x-y\nsoftdep nf_a post: z\n',
    'an install or blacklist line without a module': 'blacklist\ninstall\ninstall \t\n',
    'comment lines, also continued ones': '# blacklist overlay \\\nblacklist br_netfilter\n#install overlay /bin/true\n',
  };
  for (const [name, text] of Object.entries(forms)) {
    it(name, () => {
      expect(ours(text)).toEqual(kmod(text));
    });
  }

  it('the logical lines keep their first and last physical line numbers', () => {
    expect(logicalLines('a \\\nb\nc\\\n d \\\ne\nf\\')).toEqual([
      { firstLine: 1, lastLine: 2, text: 'a b' },
      { firstLine: 3, lastLine: 5, text: 'c d e' },
      { firstLine: 6, lastLine: 6, text: 'f\\' },
    ]);
  });
});

describe('commenting out keeps the file kmod reads otherwise identical', () => {
  it('in a CRLF file the marker line ends in CRLF too, and kmod no longer sees the directive', () => {
    const text = 'install overlay /bin/true\r\nblacklist br_netfilter\r\noptions foo bar=1\r\n';
    const out = commentOutDirectives(text, [{ firstLine: 1, lastLine: 1 }]);
    expect(out).toBe(`${MODPROBE_MARKER}\r\n#install overlay /bin/true\r\nblacklist br_netfilter\r\noptions foo bar=1\r\n`);
    expect(kmod(out)).toEqual(['blacklist br_netfilter\r']);
  });

  it('in an LF file the marker line has no CR', () => {
    const out = commentOutDirectives('blacklist overlay\ninstall br_netfilter /bin/false\n', [{ firstLine: 2, lastLine: 2 }]);
    expect(out).toBe(`blacklist overlay\n${MODPROBE_MARKER}\n#install br_netfilter /bin/false\n`);
    expect(kmod(out)).toEqual(['blacklist overlay']);
  });

  it('a continued directive is commented on every physical line, an already commented one is left as it is', () => {
    const text = 'install overlay \\\n#/bin/true\nblacklist x\n';
    const out = commentOutDirectives(text, [{ firstLine: 1, lastLine: 2 }]);
    expect(out).toBe(`${MODPROBE_MARKER}\n#install overlay \\\n#/bin/true\nblacklist x\n`);
    expect(kmod(out)).toEqual(['blacklist x']);
  });
});

describe('what stops a wanted module', () => {
  const WANT = ['overlay', 'br_netfilter'];

  it('softdeps of wanted modules only, each with the wanted modules that pull it in', () => {
    const a = 'softdep br_netfilter pre: nf-conntrack post: overlay\nsoftdep overlay pre: nf_conntrack helper\n';
    const b = 'softdep unrelated pre: other\n';
    const s = softdepsOf(WANT, [a, b]);
    expect([...s.entries()]).toEqual([
      ['nf_conntrack', ['br_netfilter', 'overlay']],
      ['helper', ['overlay']],
    ]);
  });

  it("a softdep's failing install command blocks, a succeeding one does not, an unknown one is listed", () => {
    const soft = new Map([
      ['a', ['overlay']],
      ['b', ['overlay']],
      ['c', ['br_netfilter']],
    ]);
    const text = 'install a /bin/false\ninstall b /bin/true\ninstall c /usr/local/bin/mystery\nblacklist a\n';
    expect(findBlockers('/etc/modprobe.d/s.conf', text, WANT, new Map(), soft).map((x) => [x.module, x.kind, x.firstLine, x.neededBy])).toEqual([
      ['a', 'install', 1, ['overlay']],
    ]);
    const unjudged = findUnjudged('/etc/modprobe.d/s.conf', text, WANT, new Map(), soft);
    expect(unjudged.map((x) => [x.module, x.firstLine, x.neededBy])).toEqual([['c', 3, ['br_netfilter']]]);
    expect(unjudged[0]!.reason).toContain('/usr/local/bin/mystery');
  });

  it('a softdep whose install command loads it is fine', () => {
    const soft = new Map([['a', ['overlay']]]);
    expect(findBlockers('/f', 'install a /sbin/modprobe --ignore-install a\n', WANT, new Map(), soft)).toEqual([]);
    expect(findUnjudged('/f', 'install a /sbin/modprobe --ignore-install a\n', WANT, new Map(), soft)).toEqual([]);
  });

  it("a dependency's no-op install blocks the module that needs it, its unknown install is listed with it", () => {
    const deps = new Map([
      ['bridge', ['br_netfilter']],
      ['stp', ['br_netfilter']],
    ]);
    const text = 'install bridge /bin/true\ninstall stp /opt/x.sh\nblacklist bridge\n';
    expect(findBlockers('/f', text, WANT, deps).map((x) => [x.module, x.firstLine, x.neededBy])).toEqual([['bridge', 1, ['br_netfilter']]]);
    expect(findUnjudged('/f', text, WANT, deps).map((x) => [x.module, x.neededBy])).toEqual([['stp', ['br_netfilter']]]);
    // The wanted module's own unknown install has no neededBy.
    const own = findUnjudged('/f', 'install overlay /opt/x.sh\n', WANT, deps);
    expect(own.map((x) => [x.module, 'neededBy' in x])).toEqual([['overlay', false]]);
  });
});

// ---------------------------------------------------------------------------
// modprobe.d as kmod reads it, and install commands judged by what they do.
// Oracles:
// - `modprobe -C DIR --showconfig` (kmod) lists the blacklist, install and
//   softdep directives it parsed from fixture trees written here; our parser
//   must find the same ones.
// - `modprobe -C DIR -d BASE -n -v MODULE` (a dry run: nothing is loaded)
//   prints the install command kmod would run instead of loading MODULE.
// - /bin/sh itself runs each install command in a private user and mount
//   namespace where modprobe and insmod are replaced by a script that only
//   records its arguments; a command "loads" the module when it ran that
//   script with the module's name. Nothing here can load a module: the user
//   namespace has no CAP_SYS_MODULE, and the script checks it is the fake.
describe('modprobe.d against kmod, install commands by what they do', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'modprobe-oracle-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const TREES: Record<string, Record<string, string>> = {
    issue: {
      'k8s-block.conf': 'install br_netfilter /bin/sh -c "exit 0"\ninstall overlay :\n',
    },
    cis: {
      'cis.conf': '# CIS\ninstall overlay /bin/true\ninstall br_netfilter /bin/false # disabled\nblacklist br_netfilter\n',
      'other.alias': 'blacklist overlay\n',
      'ignored.txt': 'install overlay /bin/false\n',
    },
    loads: {
      'a.conf':
        'install br_netfilter /sbin/modprobe --ignore-install br_netfilter $CMDLINE_OPTS && echo ok\ninstall overlay /usr/sbin/modprobe -i overlay; /bin/true\n',
    },
    continued: {
      'c.conf':
        'install overlay \\\n  /bin/true\n# comment \\\ninstall br_netfilter /bin/true\nblacklist \\\nbr-netfilter\n  # indented comment is a bad line for kmod\n',
    },
    crlf: {
      'w.conf': 'install overlay /bin/true\r\nblacklist br_netfilter\r\n',
    },
    bad: {
      'b.conf': 'install br_netfilter\nblacklist\nblacklist overlay extra words\ninstall  \t overlay  \t  /bin/false   \n',
    },
    // libkmod keeps what follows the name's one separator as the command: two
    // blanks leave a command of one blank (modprobe -n -v shows "install   "),
    // one blank leaves nothing, a bad line.
    blanks: {
      'blank.conf': 'install overlay  \ninstall br_netfilter \n',
    },
    softdep: {
      's1.conf': 'softdep br_netfilter pre: nf_conntrack post: xt_foo\nsoftdep overlay post: ovl_helper\n',
      's2.conf': 'install nf_conntrack /bin/false\ninstall xt_foo :\ninstall ovl_helper /usr/local/bin/helper\n',
    },
    shells: {
      'sh.conf': [
        "install overlay sh -c 'exit 0' || /sbin/modprobe --ignore-install overlay",
        'install br_netfilter false && /sbin/modprobe --ignore-install br_netfilter',
        '',
      ].join('\n'),
    },
  };

  function writeTree(name: string): string {
    const dir = path.join(work, 'conf', name);
    mkdirSync(dir, { recursive: true });
    for (const [f, text] of Object.entries(TREES[name]!)) writeFileSync(path.join(dir, f), text);
    return dir;
  }

  // An empty module tree: kmod then finds the wanted modules only through
  // their install lines, so no module file of this machine is involved.
  const base = emptyModuleTree(work);

  /** kmod's directives in `dir`; an install command is compared without the blanks around it. */
  const kmodConfig = (dir: string): string[] => kmodDirectives(dir, base, 'command-trimmed');

  function ourConfig(name: string): string[] {
    const files = Object.entries(TREES[name]!).filter(([f]) => f.endsWith('.conf') || f.endsWith('.alias'));
    return directiveLines(files.flatMap(([, text]) => parseModprobeConf(text)));
  }

  describe('modprobe.d against kmod', () => {
    for (const name of Object.keys(TREES)) {
      it(`${name}: --showconfig lists the directives we parse`, () => {
        const dir = writeTree(name);
        const ours = ourConfig(name);
        expect(ours).toEqual(kmodConfig(dir));
      });
    }

    for (const name of Object.keys(TREES)) {
      it(`${name}: modprobe -n -v runs the install command we read for each wanted module`, () => {
        const dir = writeTree(name);
        for (const mod of ['overlay', 'br_netfilter']) {
          const r = spawnSync('modprobe', ['-C', dir, '-d', base, '-n', '-v', mod], { encoding: 'latin1' });
          // "install CMD " per step; JS's multiline "$" would also stop at a "\r", so split on "\n" only.
          const step = r.stdout.split('\n').find((l) => l.startsWith('install '));
          const ran = step === undefined ? null : step.slice('install '.length).replace(/ $/, '');
          const ours = ourConfig(name)
            .filter((l) => l.startsWith(`install ${mod} `))
            .map((l) => l.slice(`install ${mod} `.length));
          if (ours.length === 0) {
            expect(ran, `${name} ${mod}: ${r.stdout}`).toBeNull();
          } else {
            expect(ran, `${name} ${mod}: ${r.stderr}`).not.toBeNull();
            expect(ours).toContain(ran!.replace(/^[\t ]+|[\t ]+$/g, ''));
            // What we judge is that same command.
            expect(ours.map((c) => c.replace(/^[\t ]+|[\t ]+$/g, ''))).toContain(ran!.replace(/^[\t ]+|[\t ]+$/g, ''));
          }
        }
      });
    }
  });

  describe('an install command of blanks alone', () => {
    it('is a command kmod runs instead of loading the module, so it blocks; one blank alone is a bad line kmod ignores', () => {
      const dir = writeTree('blanks');
      const run = (mod: string) => spawnSync('modprobe', ['-C', dir, '-d', base, '-n', '-v', mod], { encoding: 'latin1' });
      expect(run('overlay').stdout.split('\n')).toContain('install   ');
      expect(run('br_netfilter').stderr).toContain('ignoring bad line');
      const d = parseModprobeConf(TREES.blanks!['blank.conf']!);
      expect(d.map((x) => [x.kind, x.module, x.kind === 'install' && x.blocks])).toEqual([['install', 'overlay', true]]);
    });
  });

  describe('install commands that stop a wanted module or one it needs, found in modprobe.d trees', () => {
    it('the issue cases are blockers; a softdep whose install fails blocks, a succeeding one does not; unknown ones are listed', () => {
      const issue = TREES.issue!['k8s-block.conf']!;
      expect(findBlockers('/etc/modprobe.d/k8s-block.conf', issue, ['overlay', 'br_netfilter']).map((b) => [b.module, b.firstLine])).toEqual([
        ['br_netfilter', 1],
        ['overlay', 2],
      ]);
      const s1 = TREES.softdep!['s1.conf']!;
      const s2 = TREES.softdep!['s2.conf']!;
      const soft = softdepsOf(['overlay', 'br_netfilter'], [s1, s2]);
      expect(findBlockers('/s2', s2, ['overlay', 'br_netfilter'], new Map(), soft).map((b) => [b.module, b.neededBy])).toEqual([
        ['nf_conntrack', ['br_netfilter']],
      ]);
      expect(findUnjudged('/s2', s2, ['overlay', 'br_netfilter'], new Map(), soft).map((u) => [u.module, u.firstLine])).toEqual([['ovl_helper', 3]]);
    });
  });
});

// ---------------------------------------------------------------------------
// softdep lines with stray blanks, against kmod (`modprobe -C DIR -d BASE
// --showconfig` over an empty module tree, see helpers/kmod.ts): libkmod
// splits the list on runs of blanks and tabs, so a blank at the end of a
// list, or two between names, adds no module. The lists are compared as
// lists (not joined into a line), so an empty name shows wherever it sits.
describe('softdep lists against kmod', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'modprobe-softdep-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const base = emptyModuleTree(work);

  interface Softdep {
    module: string;
    pre: string[];
    post: string[];
  }

  let n = 0;
  /** kmod's softdeps for one file's text, each list as the names kmod prints. */
  function kmodSoftdeps(text: string): Softdep[] {
    const dir = path.join(work, `conf-${n++}`);
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'x.conf'), text, 'latin1');
    return kmodDirectives(dir, base, 'as-printed')
      .filter((l) => l.startsWith('softdep '))
      .map((l) => {
        const m = /^softdep (\S+) pre:(.*?)(?: post:(.*))?$/.exec(l)!;
        const names = (s: string | undefined) => (s ?? '').split(' ').filter((w) => w !== '');
        return { module: m[1]!, pre: names(m[2]), post: names(m[3]) };
      });
  }

  const ours = (text: string): Softdep[] =>
    parseModprobeConf(text)
      .flatMap((d) => (d.kind === 'softdep' ? [{ module: d.module, pre: d.pre, post: d.post }] : []))
      .sort((a, b) => (a.module < b.module ? -1 : a.module > b.module ? 1 : 0));

  describe('softdep lists with stray blanks, against kmod --showconfig', () => {
    const forms: Record<string, string> = {
      'a blank after the last pre: name': 'softdep br_netfilter pre: nf_conntrack \n',
      'a tab after the last pre: name': 'softdep br_netfilter pre: nf_conntrack\t\n',
      'a blank after the last post: name': 'softdep overlay post: ovl_helper \n',
      'two blanks and a tab between names': 'softdep br_netfilter pre: nf_a  \tnf_b post:  nf_c\t \n',
      'blanks before pre:': 'softdep br_netfilter \t pre: nf_conntrack\n',
      'a list continued onto the next line': 'softdep br_netfilter pre: nf_a \\\n  post: nf_b \n',
    };
    for (const [name, text] of Object.entries(forms)) {
      it(name, () => {
        const oracle = kmodSoftdeps(text);
        expect(oracle.length).toBe(1);
        expect(ours(text)).toEqual(oracle);
      });
    }
  });
});
