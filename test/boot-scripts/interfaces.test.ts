// /etc/network/interfaces (boot farm entry ifupdown-post-up-sysctl): the
// pre-up/up/post-up lines of the interfaces ifupdown brings up at boot run
// through /bin/sh. The oracle is ifupdown itself and the shell: `ifquery -i
// FILE --list -a` and `--list --allow hotplug` name the interfaces brought up
// at boot (networking.service's `ifup -a`, udev for allow-hotplug), `ifquery
// -i FILE IFACE` prints the options ifup runs (sources, source-directory,
// continuation lines and inherits read by ifupdown's own parser), and each
// pre-up/up line runs under dash in a private network namespace from
// ip_forward = 1. Every command carries a tag (`: TAG;`), so the plan's
// file:line is checked against where the fixture put that tag. After apply
// with neutralise_scripts, ifquery must still read the file and no command
// it runs at boot may leave ip_forward at 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTree, type Tree } from '../helpers/tree.js';

const BUNDLE = path.resolve('dist/reconcile.mjs');
const W0 = '/sbin/sysctl -w net.ipv4.ip_forward=0 >/dev/null';

// Relative sources: ifupdown reads them relative to the file's directory, so ifquery stays inside the fixture.
const FILES: Record<string, string> = {
  'etc/network/interfaces': [
    '# The loopback network interface is brought up by ifupdown without an "auto lo"',
    'source interfaces.d/*',
    'source-directory more.d',
    '',
    'allow-hotplug eth0',
    'iface eth0 inet manual',
    `    pre-up : B; echo 0 > /proc/sys/net/ipv4/ip_forward`,
    `    post-down : C; ${W0}`,
    '',
    'iface eth9 inet manual',
    `    up : D; ${W0}`,
    '',
    'auto br0',
    'iface br0 inet manual',
    '    up : E; /sbin/sysctl -w \\',
    '        net.ipv4.ip_forward=0 >/dev/null',
    '    up : F; /sbin/sysctl -w net.ipv4.ip_forward=1 >/dev/null',
    '',
    'iface base inet manual',
    `    up : J; ${W0}`,
    'auto eth8',
    'iface eth8 inet manual inherits base',
    '    up : K; true',
    '',
  ].join('\n'),
  'etc/network/interfaces.d/lo-tuning': `iface lo inet loopback\n    post-up : A; ${W0}\n`,
  'etc/network/interfaces.d/.hidden': `auto eth7\niface eth7 inet manual\n    up : I; ${W0}\n`,
  'etc/network/more.d/ok_1': `auto eth5\niface eth5 inet manual\n    # up : X; ${W0}\n    up : G; ${W0}\n`,
  'etc/network/more.d/skip.conf': `auto eth6\niface eth6 inet manual\n    up : H; ${W0}\n`,
};

let fixture: string;
let root: string;
let desired: string;
interface PlanDoc {
  resources: Array<{ type: string; changes: Array<{ id: string; action: string; summary: string }> }>;
  findings: Array<{ level: string; message: string }>;
}
let plan: PlanDoc;

function ifquery(args: string[]): string {
  const r = spawnSync('ifquery', ['-i', path.join(root, 'etc/network/interfaces'), ...args], { encoding: 'utf8', cwd: '/' });
  if (r.error || r.status !== 0) throw new Error(`ifquery ${args.join(' ')} failed (install ifupdown): ${r.error?.message ?? r.stderr}`);
  return r.stdout;
}

/** The commands ifup runs through /bin/sh when it brings up the interfaces brought up at boot. */
function bootCommands(): string[] {
  const names = new Set([...ifquery(['--list', '-a']).split('\n'), ...ifquery(['--list', '--allow', 'hotplug']).split('\n')].filter((x) => x !== ''));
  const out: string[] = [];
  for (const n of names) {
    for (const l of ifquery([n]).split('\n')) {
      const m = /^(pre-up|up|post-up): (.*)$/.exec(l);
      if (m) out.push(m[2]!);
    }
  }
  return out;
}

/** ip_forward after one command under dash, from 1, in a private network namespace. */
function oracle(cmd: string): string {
  const r = spawnSync(
    'unshare',
    ['-n', 'sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward; dash -c "$1" >/dev/null 2>&1; cat /proc/sys/net/ipv4/ip_forward', 'oracle', cmd],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`oracle failed: ${r.stderr}`);
  return r.stdout.trim();
}

const tagOf = (cmd: string) => /^: ([A-Z]);/.exec(cmd)?.[1] ?? null;

/** Where the fixture put a tag: file and line of its option. */
function whereIs(tag: string): string {
  for (const [f, text] of Object.entries(FILES)) {
    const i = text.split('\n').findIndex((l) => /^\s*(pre-up|up|post-up) /.test(l) && l.includes(`: ${tag};`));
    if (i >= 0) return `/${f}:${i + 1}`;
  }
  throw new Error(`no tag ${tag}`);
}

beforeAll(() => {
  fixture = mkdtempSync(path.join(tmpdir(), 'boot-ifaces-'));
  root = path.join(fixture, 'root');
  const tree: Tree = { 'etc/fstab': '', 'usr/sbin/ifup': '' };
  Object.assign(tree, FILES);
  buildTree(root, tree);
  const state = (neutralise: boolean) =>
    `reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SysctlFile\n    file: /etc/sysctl.d/k8s.conf\n    neutralise_scripts: ${neutralise}\n    settings:\n      net.ipv4.ip_forward: 1\n`;
  desired = path.join(fixture, 'desired.yaml');
  writeFileSync(desired, state(true));
  // Without neutralise_scripts each script line is an operator line of its own: file:line in its id.
  const operator = path.join(fixture, 'operator.yaml');
  writeFileSync(operator, state(false));
  const r = spawnSync(process.execPath, [BUNDLE, '--plan', '--json', '-f', operator, '--root', root], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(2);
  plan = JSON.parse(r.stdout) as PlanDoc;
}, 120_000);
afterAll(() => rmSync(fixture, { recursive: true, force: true }));

const scriptLines = () => plan.resources.find((r) => r.type === 'SysctlFile')!.changes.filter((c) => c.id.startsWith('boot-script:'));

describe('interfaces(5): the plan names exactly the up lines ifupdown runs at boot that leave ip_forward at 0', () => {
  it('file:line of each such command, and no other', () => {
    const cmds = bootCommands();
    const undoing = cmds.filter((c) => oracle(c) === '0').map((c) => tagOf(c)!);
    // The oracle reaches what the fixture means to test (sources, implicit lo, continuation, inherits, hotplug) and leaves out the rest.
    expect(new Set(cmds.map(tagOf))).toEqual(new Set(['A', 'B', 'E', 'F', 'G', 'J', 'K']));
    expect(
      scriptLines()
        .map((c) => c.id.slice('boot-script:'.length))
        .sort(),
    ).toEqual(undoing.map(whereIs).sort());
    expect(plan.findings.filter((f) => f.level === 'warning')).toEqual([]);
  });
  it('the line says ifupdown runs it and for which interface', () => {
    const lo = scriptLines().find((c) => c.id === `boot-script:${whereIs('A')}`)!;
    expect(lo.summary).toMatch(/ifupdown.*iface lo/);
  });
});

describe('neutralise_scripts comments the lines out; ifupdown still reads the file', () => {
  it('after apply, no command ifup runs at boot leaves ip_forward at 0, and the others are still there', () => {
    const r = spawnSync(process.execPath, [BUNDLE, '--apply', '-f', desired, '--root', root], { encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const cmds = bootCommands();
    expect(cmds.map((c) => oracle(c))).toEqual(cmds.map(() => '1'));
    expect(new Set(cmds.map(tagOf))).toEqual(new Set(['F', 'K']));
    // Bytes outside the commented lines are unchanged.
    const after = readFileSync(path.join(root, 'etc/network/interfaces.d/lo-tuning'), 'utf8');
    expect(after.split('\n')[0]).toBe('iface lo inet loopback');
  });
});
