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
import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseModprobeConf, findBlockers, findUnjudged, softdepsOf } from '../src/modprobe/modprobe-d.js';
import { judgeInstallCommand } from '../src/modprobe/install-command.js';
import { directiveLines, emptyModuleTree, kmodDirectives } from './helpers/kmod.js';

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
    'a.conf': 'install br_netfilter /sbin/modprobe --ignore-install br_netfilter $CMDLINE_OPTS && echo ok\ninstall overlay /usr/sbin/modprobe -i overlay; /bin/true\n',
  },
  continued: {
    'c.conf': 'install overlay \\\n  /bin/true\n# comment \\\ninstall br_netfilter /bin/true\nblacklist \\\nbr-netfilter\n  # indented comment is a bad line for kmod\n',
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

// ---- install commands, run by the real shell with a recording modprobe ----

const fake = path.join(work, 'fake-modprobe');
const log = path.join(work, 'calls.log');
writeFileSync(fake, `#!/bin/sh\nif [ "$1" = --is-fake ]; then echo fake; exit 0; fi\necho "$0 $*" >> "${log}"\nexit 0\n`);
chmodSync(fake, 0o755);

function unshareWorks(): boolean {
  const r = spawnSync('unshare', ['-rm', 'true']);
  return r.status === 0;
}

/** What /bin/sh does with `command`: the modprobe/insmod calls it made, or null when the sandbox did not hold. */
function shellCalls(command: string): string[] {
  rmSync(log, { force: true });
  const script = [
    'set -e',
    `mount --bind ${fake} /usr/sbin/modprobe`,
    `mount --bind ${fake} /usr/sbin/insmod`,
    // Refuse to run anything unless both names now reach the recorder.
    '[ "$(/usr/sbin/modprobe --is-fake)" = fake ] && [ "$(/sbin/modprobe --is-fake)" = fake ] && [ "$(/usr/sbin/insmod --is-fake)" = fake ] || exit 99',
    'set +e',
    'PATH=/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c "$1" >/dev/null 2>&1',
    'exit 0',
  ].join('\n');
  const r = spawnSync('unshare', ['-rm', '/bin/sh', '-c', script, 'sandbox', command], { encoding: 'utf8', timeout: 10_000 });
  expect(r.status, r.stderr).toBe(0);
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
}

/** The recorder saw `modprobe ... MODULE` (loading: no -r/-n) or `insmod .../MODULE.ko`. */
function loadedBy(calls: string[], module: string): boolean {
  return calls.some((c) => {
    const [prog, ...args] = c.split(' ');
    const words = args.filter((a) => !a.startsWith('-'));
    if (prog!.endsWith('insmod')) return words.some((w) => path.basename(w).replace(/\.ko.*$/, '').replace(/-/g, '_') === module);
    if (args.some((a) => /^-[a-zA-Z]*[rn]/.test(a) || a === '--remove' || a === '--dry-run')) return false;
    return (args.includes('-a') ? words : words.slice(0, 1)).some((w) => w.replace(/-/g, '_') === module);
  });
}

const COMMANDS: Array<[string, string]> = [
  ['br_netfilter', '/bin/sh -c "exit 0"'],
  ['overlay', ':'],
  ['overlay', '/bin/true'],
  ['overlay', '/bin/false'],
  ['overlay', 'true'],
  ['overlay', 'false'],
  ['overlay', '/usr/bin/true'],
  ['overlay', '/bin/sh -c "exit 0" $CMDLINE_OPTS'],
  ['overlay', "/bin/sh -c 'echo overlay is disabled'"],
  ['overlay', 'echo "overlay disabled" >/dev/null 2>&1'],
  ['overlay', 'exit 0'],
  ['overlay', 'exit 1; /sbin/modprobe --ignore-install overlay'],
  ['overlay', 'false && /sbin/modprobe --ignore-install overlay'],
  ['overlay', 'false || /sbin/modprobe --ignore-install overlay'],
  ['overlay', 'true && /sbin/modprobe --ignore-install overlay'],
  ['overlay', 'true || /sbin/modprobe --ignore-install overlay'],
  ['overlay', '/sbin/modprobe --ignore-install overlay $CMDLINE_OPTS'],
  ['overlay', '/sbin/modprobe --ignore-install overlay; /bin/true'],
  ['overlay', '/usr/sbin/modprobe -i overlay && echo loaded'],
  ['overlay', 'modprobe -i over-lay'],
  ['over_lay', 'modprobe -i over-lay'],
  ['overlay', '/sbin/modprobe -r overlay'],
  ['overlay', '/sbin/modprobe -n -i overlay'],
  ['overlay', '/sbin/modprobe -i bridge overlay'],
  ['overlay', '/sbin/modprobe -a -i bridge overlay'],
  ['overlay', 'sh -c "/sbin/modprobe --ignore-install overlay"'],
  ['overlay', "sh -c 'exit 0' && /sbin/modprobe -i overlay"],
  ['overlay', "sh -c 'exit 3' && /sbin/modprobe -i overlay"],
  ['overlay', "/bin/sh -c 'sh -c \"exit 0\"'"],
  ['overlay', 'insmod /lib/modules/6.1.0/kernel/fs/overlayfs/overlay.ko'],
  ['overlay', 'insmod /lib/modules/6.1.0/kernel/net/bridge/bridge.ko'],
  ['br_netfilter', '/sbin/modprobe --ignore-install br_netfilter; echo 1 > /dev/null'],
  ['br_netfilter', 'false; /sbin/modprobe --ignore-install br_netfilter'],
  ['br_netfilter', '/bin/true | /sbin/modprobe --ignore-install br_netfilter'],
  ['br_netfilter', 'FOO=1 /sbin/modprobe --ignore-install br_netfilter'],
  ['br_netfilter', '/sbin/modprobe -q -i br_netfilter || /bin/true'],
  ['br_netfilter', ': ; : ; exit'],
  ['br_netfilter', '/bin/false || /bin/false || exit 1'],
];

describe('install commands judged by what they do, against /bin/sh', () => {
  it('the sandbox works here (the oracle must run, not be skipped)', () => {
    expect(unshareWorks()).toBe(true);
  });

  for (const [module, command] of COMMANDS) {
    it(`install ${module} ${command}`, () => {
      const verdict = judgeInstallCommand(module, command);
      expect(verdict.loads, JSON.stringify(verdict)).not.toBe('unknown');
      expect(verdict.loads === 'yes').toBe(loadedBy(shellCalls(command), module));
    });
  }

  it('commands of unknown effect are unknown, never guessed', () => {
    for (const c of ['/usr/local/bin/load-bridge.sh', 'test -e /etc/x && modprobe -i overlay', '$LOADER overlay', 'if true; then :; fi', 'modprobe -i $(echo overlay)', 'bash /root/x.sh', '/bin/true\r']) {
      expect(judgeInstallCommand('overlay', c).loads, c).toBe('unknown');
    }
  });

  it('the issue cases are blockers; a softdep whose install fails blocks, a succeeding one does not; unknown ones are listed', () => {
    const issue = TREES.issue!['k8s-block.conf']!;
    expect(findBlockers('/etc/modprobe.d/k8s-block.conf', issue, ['overlay', 'br_netfilter']).map((b) => [b.module, b.firstLine])).toEqual([
      ['br_netfilter', 1],
      ['overlay', 2],
    ]);
    const s1 = TREES.softdep!['s1.conf']!;
    const s2 = TREES.softdep!['s2.conf']!;
    const soft = softdepsOf(['overlay', 'br_netfilter'], [s1, s2]);
    expect(findBlockers('/s2', s2, ['overlay', 'br_netfilter'], new Map(), soft).map((b) => [b.module, b.neededBy])).toEqual([['nf_conntrack', ['br_netfilter']]]);
    expect(findUnjudged('/s2', s2, ['overlay', 'br_netfilter'], new Map(), soft).map((u) => [u.module, u.firstLine])).toEqual([['ovl_helper', 3]]);
  });
});
