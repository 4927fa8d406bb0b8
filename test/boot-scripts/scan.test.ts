// Programs a boot-time runner starts, followed into their files (boot farm
// entry script-called-from-unit): a unit's ExecStart= or rc.local that runs a
// shell script in the root which writes ip_forward. The oracle is the kernel
// and the shell: each runner's command is exec'd as the runner would (a
// unit's path directly, so binfmt_script reads the "#!" line; rc.local's
// line under dash) in a private network and mount namespace, with the
// fixture's /usr/local/sbin and /usr/local/lib bind-mounted over this
// machine's, from ip_forward = 1. The plan (--root on the same files) must
// name a line of the script exactly when the oracle ends at 0, and a script
// this scan does not read (python) must be a loud unknown naming the unit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { IP_FORWARD_DESIRED, planJsonRun } from '../helpers/bundle-cli.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const SBIN = '/usr/local/sbin';
const LIB = '/usr/local/lib';
const WRITE0 = 'sysctl -w net.ipv4.ip_forward=0 >/dev/null';

interface Case {
  name: string;
  /** Files under /usr/local/sbin (name -> text), all executable; the runner starts `name`. */
  files: Record<string, string>;
  /** The file whose line the plan must name when the oracle ends at 0. */
  writer?: string;
  /** Run from rc.local's line (under sh) instead of a unit's ExecStart=. */
  rcLocal?: string;
  /** Only for what the scan does not read: why, the interpreter its warning shows, and ip_forward after the run (default '0'). */
  unknown?: string;
  shows?: string;
  after?: string;
}

const CASES: Case[] = [
  { name: 'sh-script', files: { 'sh-script': `#!/bin/sh\n${WRITE0}\n` } },
  { name: 'dash-blank-arg', files: { 'dash-blank-arg': `#! \t/bin/dash -e \n# set up\n${WRITE0}\n` } },
  { name: 'env-bash', files: { 'env-bash': `#!/usr/bin/env bash\nset -u\n${WRITE0}\n` } },
  { name: 'writes-one', files: { 'writes-one': '#!/bin/sh\nsysctl -w net.ipv4.ip_forward=1 >/dev/null\n' } },
  {
    name: 'nested-path',
    files: { 'nested-path': `#!/bin/sh\n${SBIN}/nested-path-b\n`, 'nested-path-b': `#!/bin/sh\necho start\n${WRITE0}\n` },
    writer: 'nested-path-b',
  },
  {
    name: 'nested-bare-name',
    files: { 'nested-bare-name': '#!/bin/sh\nexec nested-bare-name-b --now\n', 'nested-bare-name-b': `#!/bin/bash\n${WRITE0}\n` },
    writer: 'nested-bare-name-b',
  },
  // Runs itself once (the guard is the environment); then writes 1: the scan must end and find nothing.
  { name: 'cycle', files: { cycle: `#!/bin/sh\n[ -n "$AGAIN" ] || AGAIN=1 ${SBIN}/cycle\nsysctl -w net.ipv4.ip_forward=1 >/dev/null\n` } },
  { name: 'elf', files: {} },
  {
    name: 'python',
    files: { python: "#!/usr/bin/python3\nopen('/proc/sys/net/ipv4/ip_forward', 'w').write('0')\n" },
    unknown: 'a python script: the scan reads only POSIX shell',
    shows: '/usr/bin/python3',
  },
  // CRLF line ends: the kernel looks for "/bin/sh\r" ("bad interpreter") and the script never runs; not read as a shell script.
  {
    name: 'crlf',
    files: { crlf: `#!/bin/sh\r\n${WRITE0}\r\n` },
    unknown: 'a CRLF file: its interpreter is "/bin/sh\\r"',
    shows: '"/bin/sh\\r"',
    after: '1',
  },
  // rc.local runs a file without "#!" through sh: the shell reads it whatever its first line.
  { name: 'rc-sh-file', files: {}, rcLocal: `sh ${LIB}/fw-rules`, writer: `${LIB}/fw-rules` },
];

let fixture: string;
let root: string;
interface PlanDoc {
  resources: Array<{ type: string; changes: Array<{ id: string; action: string; summary: string }> }>;
  findings: Array<{ level: string; message: string }>;
}
let plan: PlanDoc;
const truth = new Map<string, string>();

/** ip_forward after the runner's command, run as the oracle describes. */
function oracle(c: Case): string {
  const run = c.rcLocal !== undefined ? `dash -c '${c.rcLocal}'` : `${SBIN}/${c.name}`;
  const setup = [
    'set -e',
    `mount --bind ${root}${SBIN} ${SBIN}`,
    `mount --bind ${root}${LIB} ${LIB}`,
    'echo 1 > /proc/sys/net/ipv4/ip_forward',
    'set +e',
    `PATH=${SBIN}:/usr/sbin:/usr/bin:/sbin:/bin ${run} >/dev/null 2>&1`,
    'cat /proc/sys/net/ipv4/ip_forward',
  ].join('\n');
  const r = spawnSync('unshare', ['-m', '-n', '--propagation', 'private', 'sh', '-c', setup], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`oracle run failed (${r.status}): ${r.stderr}`);
  return r.stdout.trim();
}

beforeAll(() => {
  fixture = mkdtempSync(path.join(tmpdir(), 'boot-follow-'));
  root = path.join(fixture, 'root');
  const tree: Tree = { 'etc/fstab': '', [`usr/local/lib/fw-rules`]: `# firewall rules, no "#!" line\n${WRITE0}\n` };
  const rc: string[] = ['#!/bin/sh'];
  for (const c of CASES) {
    for (const [n, text] of Object.entries(c.files)) tree[`usr/local/sbin/${n}`] = text;
    if (c.rcLocal !== undefined) {
      rc.push(c.rcLocal);
      continue;
    }
    tree[`etc/systemd/system/${c.name}.service`] =
      `[Unit]\nDescription=${c.name}\n\n[Service]\nType=oneshot\nExecStart=${SBIN}/${c.name}\n\n[Install]\nWantedBy=multi-user.target\n`;
    tree[`etc/systemd/system/multi-user.target.wants/${c.name}.service`] = { link: `/etc/systemd/system/${c.name}.service` };
  }
  tree['etc/rc.local'] = rc.join('\n') + '\nexit 0\n';
  buildTree(root, tree);
  copyFileSync('/bin/true', path.join(root, 'usr/local/sbin/elf'));
  chmodSync(path.join(root, 'etc/rc.local'), 0o755);
  for (const c of CASES) for (const n of Object.keys(c.files)) chmodSync(path.join(root, 'usr/local/sbin', n), 0o755);
  chmodSync(path.join(root, 'usr/local/sbin/elf'), 0o755);
  for (const c of CASES) truth.set(c.name, oracle(c));
  const desired = path.join(fixture, 'desired.yaml');
  const r = planJsonRun(desired, IP_FORWARD_DESIRED, root);
  expect(r.status, r.stderr).toBe(2);
  plan = JSON.parse(r.stdout) as PlanDoc;
}, 120_000);
afterAll(() => rmSync(fixture, { recursive: true, force: true }));

const writerOf = (c: Case) => (c.writer?.startsWith('/') ? c.writer : `${SBIN}/${c.writer ?? c.name}`);
const scriptLines = () => plan.resources.find((r) => r.type === 'SysctlFile')!.changes.filter((c) => c.id.startsWith('boot-script:'));
const linesIn = (file: string) => scriptLines().filter((c) => c.id.startsWith(`boot-script:${file}:`));
const warningsAbout = (c: Case) =>
  plan.findings.filter((f) => f.level === 'warning' && (f.message.includes(`${c.name}.service`) || f.message.includes(`${SBIN}/${c.name}`)));

describe('a program a boot-time runner starts is read when it is a shell script in the root', () => {
  for (const c of CASES.filter((x) => x.unknown === undefined)) {
    it(c.name, () => {
      const undone = truth.get(c.name) !== '1';
      const lines = linesIn(writerOf(c));
      expect(
        lines.map((x) => x.action),
        `oracle: ip_forward = ${truth.get(c.name)}`,
      ).toEqual(undone ? ['operator'] : []);
      if (undone && c.rcLocal === undefined) expect(lines[0]!.summary).toContain(`${c.name}.service`);
      expect(warningsAbout(c)).toEqual([]);
    });
  }
  it('the oracle itself: both outcomes occur', () => {
    expect(new Set(truth.values())).toEqual(new Set(['0', '1']));
  });
  it('no other file gets a line', () => {
    const files = new Set(CASES.filter((c) => truth.get(c.name) === '0' && c.unknown === undefined).map(writerOf));
    expect(scriptLines().filter((l) => ![...files].some((f) => l.id.startsWith(`boot-script:${f}:`)))).toEqual([]);
  });
});

describe('a script in another language is a loud unknown naming the unit', () => {
  for (const c of CASES.filter((x) => x.unknown !== undefined)) {
    it(`${c.name} (${c.unknown})`, () => {
      expect(truth.get(c.name)).toBe(c.after ?? '0');
      const shows = c.shows!.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
      expect(warningsAbout(c).map((w) => w.message)).toEqual([
        expect.stringMatching(new RegExp(`^SysctlFile: unknown: /etc/systemd/system/${c.name}\\.service:\\d+: .*${SBIN}/${c.name}, a ${shows} script`)),
      ]);
      expect(linesIn(writerOf(c))).toEqual([]);
    });
  }
});

describe("a shell script of a Debian package's paths", () => {
  it('is read (the kernel runs it by its "#!" as any other), but not commented out: the next upgrade of the package would put the line back', () => {
    const pkgRoot = mkdtempSync(path.join(tmpdir(), 'boot-follow-pkg-'));
    try {
      buildTree(pkgRoot, {
        'etc/fstab': '',
        'usr/lib/pkgx/setup': `#!/bin/sh\n${WRITE0}\n`,
        'etc/systemd/system/pkgx.service': '[Service]\nType=oneshot\nExecStart=/usr/lib/pkgx/setup\n[Install]\nWantedBy=multi-user.target\n',
        'etc/systemd/system/multi-user.target.wants/pkgx.service': { link: '/etc/systemd/system/pkgx.service' },
      });
      chmodSync(path.join(pkgRoot, 'usr/lib/pkgx/setup'), 0o755);
      const desired = path.join(pkgRoot, 'desired.yaml');
      const r = planJsonRun(
        desired,
        'reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SysctlFile\n    file: /etc/sysctl.d/k8s.conf\n    neutralise_scripts: true\n    settings:\n      net.ipv4.ip_forward: 1\n',
        pkgRoot,
      );
      const doc = JSON.parse(r.stdout) as PlanDoc;
      const lines = doc.resources.find((x) => x.type === 'SysctlFile')!.changes.filter((c) => c.id.startsWith('boot-script:'));
      expect(lines.map((c) => [c.id, c.action])).toEqual([['boot-script:/usr/lib/pkgx/setup:2', 'operator']]);
      expect(JSON.stringify(lines[0])).toContain('Debian package');
    } finally {
      rmSync(pkgRoot, { recursive: true, force: true });
    }
  });
});
