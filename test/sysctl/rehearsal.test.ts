// The boot rehearsal (src/sysctl/rehearsal.ts) on this machine: the real
// systemd-sysctl and `sysctl --system` run in private mount + network
// namespaces over fixture trees laid where this host keeps its sysctl.d
// directories. The host's own files and values are never touched: every
// test checks a set of the host's values before and after.
// No skipping: we run as root here and in CI, so a missing unshare is a failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { observeSysctlTree } from '../../src/sysctl/observe.js';
import { verdict } from '../../src/sysctl/order.js';
import type { SysctlModel, SysctlTree } from '../../src/sysctl/order.js';
import { rehearsalAvailability, rehearsalOutput, runRehearsal } from '../../src/sysctl/rehearsal.js';
import { execFileSync } from 'node:child_process';
import type { RehearsalEnv } from '../../src/sysctl/rehearsal.js';
import { sysctlProcPath } from '../../src/observe/sysctl-live.js';
import { buildTree } from '../helpers/tree.js';
import type { Tree } from '../helpers/tree.js';
import { diffCases } from '../helpers/sysctl-cases.js';
import { afterEach } from 'vitest';
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { execStartProgram, layout, rehearsalText, systemdSysctlProgram } from '../../src/sysctl/rehearsal.js';

const live = new Host({ root: '/' });
let env: RehearsalEnv;
let work = '';

// Host values a rehearsal must leave alone: the net keys the fixtures write,
// and the global keys their filtered-out lines name.
const HOST_KEYS = [
  'net.ipv4.ip_forward',
  'net.ipv4.conf.all.forwarding',
  'net.ipv4.conf.default.forwarding',
  'net.ipv4.conf.all.rp_filter',
  'net.ipv4.conf.all.accept_redirects',
  'net.ipv6.conf.all.forwarding',
  'net.ipv6.conf.default.forwarding',
  'kernel.pid_max',
  'vm.swappiness',
  'fs.file-max',
  'kernel.kptr_restrict',
  'net.core.rmem_max',
];
const hostValues = () => Object.fromEntries(HOST_KEYS.map((k) => [k, readFileSync(sysctlProcPath(k), 'utf8')]));
let hostBefore: Record<string, string>;

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'sysctl-rehearsal-'));
  const a = await rehearsalAvailability(live);
  if (!a.ok) throw new Error(`the rehearsal must run on this test machine: ${a.reason}`);
  env = a.env;
  hostBefore = hostValues();
});
afterAll(async () => {
  expect(hostValues()).toEqual(hostBefore);
  if (work) await fs.rm(work, { recursive: true, force: true });
});

let n = 0;
async function treeOf(files: Tree): Promise<SysctlTree> {
  const root = path.join(work, `t${n++}`);
  await fs.mkdir(root, { recursive: true });
  buildTree(root, files);
  return (await observeSysctlTree(new Host({ root }))).tree;
}

type Values = Record<SysctlModel, Record<string, string | null>>;

/**
 * The rehearsal's outcome with the fixture's own semantics for "not set": two
 * trials that start every key at 0 and at 1 (before boot and before
 * `sysctl --system`); a key that comes out the same was written, otherwise it
 * kept the start value (null, as the engine says).
 */
async function rehearseValues(tree: SysctlTree, keys: string[]): Promise<Values> {
  const at = (v: string) => keys.map((k) => [k, v] as [string, string]);
  const r = await runRehearsal(
    live,
    env,
    [
      { tree, start: at('0'), seed: at('0') },
      { tree, start: at('1'), seed: at('1') },
    ],
    keys,
    { start: [], seed: [] },
  );
  if ('reason' in r) throw new Error(r.reason);
  const [zero, one] = r.results;
  const out: Values = { boot: {}, system: {} };
  for (const model of ['boot', 'system'] as SysctlModel[]) {
    for (const k of keys)
      out[model][k] = zero![model][k] === one![model][k] ? zero![model][k]! : zero![model][k] === '0' && one![model][k] === '1' ? null : 'inconsistent';
  }
  return out;
}

describe('the rehearsal agrees with the engine on every ordering fixture', () => {
  for (const c of diffCases) {
    it(c.name, async () => {
      const tree = await treeOf(c.tree);
      const predicted: Values = { boot: {}, system: {} };
      for (const model of ['boot', 'system'] as SysctlModel[]) for (const k of c.keys) predicted[model][k] = verdict(tree, k, model).value;
      expect(await rehearseValues(tree, c.keys)).toEqual(predicted);
    });
  }
});

describe('kernel couplings: write one key in a fresh network namespace, read the other', () => {
  // Each row of docs/sysctl-couplings.md: the file systemd-sysctl applies, the
  // key read back, the start values, and what the kernel shows. The engine
  // must predict the same offline.
  const rows: Array<{ name: string; file: string; read: string; start: Array<[string, string]>; expect: string }> = [
    {
      name: 'conf.all.forwarding sets ip_forward',
      file: 'net.ipv4.conf.all.forwarding = 1',
      read: 'net.ipv4.ip_forward',
      start: [['net.ipv4.ip_forward', '0']],
      expect: '1',
    },
    {
      name: 'ip_forward sets conf.all.forwarding',
      file: 'net.ipv4.ip_forward = 1',
      read: 'net.ipv4.conf.all.forwarding',
      start: [['net.ipv4.conf.all.forwarding', '0']],
      expect: '1',
    },
    {
      name: 'conf.all.forwarding = 0 clears ip_forward',
      file: 'net.ipv4.conf.all.forwarding = 0',
      read: 'net.ipv4.ip_forward',
      start: [['net.ipv4.ip_forward', '1']],
      expect: '0',
    },
    {
      name: 'a change of ip_forward sets conf.default.forwarding',
      file: 'net.ipv4.ip_forward = 1',
      read: 'net.ipv4.conf.default.forwarding',
      start: [['net.ipv4.conf.default.forwarding', '0']],
      expect: '1',
    },
    {
      name: 'a change of ip_forward sets every device (lo)',
      file: 'net.ipv4.ip_forward = 1',
      read: 'net.ipv4.conf.lo.forwarding',
      start: [['net.ipv4.conf.lo.forwarding', '0']],
      expect: '1',
    },
    {
      name: 'a change of ip_forward sets conf.all.accept_redirects to its negation',
      file: 'net.ipv4.ip_forward = 1',
      read: 'net.ipv4.conf.all.accept_redirects',
      start: [['net.ipv4.conf.all.accept_redirects', '1']],
      expect: '0',
    },
    {
      name: 'conf.default.forwarding does not set ip_forward',
      file: 'net.ipv4.conf.default.forwarding = 1',
      read: 'net.ipv4.ip_forward',
      start: [['net.ipv4.ip_forward', '0']],
      expect: '0',
    },
    {
      name: 'ipv6 conf.all.forwarding sets ipv6 conf.default.forwarding',
      file: 'net.ipv6.conf.all.forwarding = 1',
      read: 'net.ipv6.conf.default.forwarding',
      start: [['net.ipv6.conf.default.forwarding', '0']],
      expect: '1',
    },
    {
      name: 'ipv6 conf.all.forwarding sets ipv6 conf.lo.forwarding',
      file: 'net.ipv6.conf.all.forwarding = 1',
      read: 'net.ipv6.conf.lo.forwarding',
      start: [['net.ipv6.conf.lo.forwarding', '0']],
      expect: '1',
    },
    {
      name: 'ipv6 conf.all.forwarding does not set ip_forward',
      file: 'net.ipv6.conf.all.forwarding = 1',
      read: 'net.ipv4.ip_forward',
      start: [['net.ipv4.ip_forward', '0']],
      expect: '0',
    },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      const tree = await treeOf({ '/etc/sysctl.d/50-coupling.conf': `${row.file}\n` });
      const r = await runRehearsal(live, env, [{ tree, start: row.start, seed: [] }], [row.read], { start: [], seed: [] });
      if ('reason' in r) throw new Error(r.reason);
      expect(r.results[0]!.boot[row.read]).toBe(row.expect);
      // Offline, the engine gets it from the model: at boot from the kernel default, 0.
      const v = verdict(tree, row.read, 'boot');
      expect(v.value ?? '0').toBe(row.expect);
    });
  }

  it('writing the value the group already holds changes nothing else', async () => {
    // ip_forward = 1, then default.forwarding = 0, then all.forwarding = 1 again: no change, so default stays 0.
    const tree = await treeOf({
      '/etc/sysctl.d/10-a.conf': 'net.ipv4.ip_forward = 1\n',
      '/etc/sysctl.d/20-b.conf': 'net.ipv4.conf.default.forwarding = 0\n',
      '/etc/sysctl.d/30-c.conf': 'net.ipv4.conf.all.forwarding = 1\n',
    });
    const key = 'net.ipv4.conf.default.forwarding';
    const r = await runRehearsal(live, env, [{ tree, start: [['net.ipv4.ip_forward', '0']], seed: [] }], [key, 'net.ipv4.ip_forward'], { start: [], seed: [] });
    if ('reason' in r) throw new Error(r.reason);
    expect(r.results[0]!.boot[key]).toBe('0');
    expect(verdict(tree, key, 'boot').value).toBe('0');
  });
});

describe('the script inside the namespaces (no second runtime): what it reads and writes, as procps does', () => {
  it('a key outside /proc/sys/net is refused before anything is written', async () => {
    const tree = await treeOf({ '/etc/sysctl.d/10-a.conf': 'net.ipv4.ip_forward = 1\n' });
    const r = await runRehearsal(live, env, [{ tree, start: [['kernel.pid_max', '4194304']], seed: [] }], ['kernel.pid_max'], { start: [], seed: [] });
    expect(r).toEqual({ reason: `the rehearsal failed (${env.unshare} exited 3): rehearsal: refusing key outside /proc/sys/net: /proc/sys/kernel/pid_max` });
  });

  it('a two-number value is written as sysctl -w writes it and read as sysctl -n reads it', async () => {
    const key = 'net.ipv4.ip_local_port_range';
    // The oracle: procps in a fresh network namespace of its own, its tab made one blank.
    const procps = execFileSync('unshare', ['-n', '--', 'sh', '-c', `sysctl -q -w ${key}='1024 65000' && sysctl -n ${key}`], { encoding: 'utf8' });
    const tree = await treeOf({ '/etc/sysctl.d/10-a.conf': 'net.ipv4.ip_forward = 1\n' });
    const r = await runRehearsal(live, env, [{ tree, start: [[key, '1024 65000']], seed: [[key, '2000 3000']] }], [key], { start: [], seed: [] });
    if ('reason' in r) throw new Error(r.reason);
    expect(procps).toBe('1024\t65000\n');
    expect([r.results[0]!.boot[key], r.results[0]!.system[key]]).toEqual(['1024 65000', '2000 3000']);
  });

  it("each program's stderr is its warning; a key no namespace has reads as null", async () => {
    const tree = await treeOf({ '/etc/sysctl.d/10-a.conf': 'net.ipv4.no_such_key = 1\nnet.ipv4.ip_forward = abc\n' });
    const keys = ['net.ipv4.no_such_key', 'net.ipv4.ip_forward'];
    const r = await runRehearsal(live, env, [{ tree, start: [['net.ipv4.ip_forward', '0']], seed: [] }], keys, { start: [], seed: [] });
    if ('reason' in r) throw new Error(r.reason);
    // Read off the two programs run by hand on this file in `unshare -n` (systemd 252, procps-ng 4.0.2): systemd-sysctl
    // warns of both lines; `sysctl --system` ignores a missing key (its --system sets IgnoreError), not a bad value.
    expect(r.results[0]!.warnings).toEqual({
      boot: "Couldn't write '1' to 'net/ipv4/no_such_key', ignoring: No such file or directory\nCouldn't write 'abc' to 'net/ipv4/ip_forward': Invalid argument",
      system: 'sysctl: setting key "net.ipv4.ip_forward": Invalid argument',
    });
    expect(r.results[0]!.boot).toEqual({ 'net.ipv4.no_such_key': null, 'net.ipv4.ip_forward': '0' });
  });
});

describe("rehearsalOutput: the script's records", () => {
  const keys = ['net.a', 'net.b'];
  it("values by trial and model from grep's lines; warnings joined; a key without a line is null", () => {
    const out = [
      'r 0 boot',
      '/proc/sys/net/a:1',
      'r 0 system',
      '/proc/sys/net/a:0',
      '/proc/sys/net/b: 32768\t60999 ',
      '/proc/sys/net/b:a second line',
      'w 0 system sysctl: one',
      'w 0 system two',
      'e 0 0 1',
      'r 1 boot',
      '/proc/sys/net/b:5',
      'r 1 system',
      'e 1 0 0',
      '',
    ];
    expect(rehearsalOutput(out.join('\n'), keys, 2)).toEqual([
      { boot: { 'net.a': '1', 'net.b': null }, system: { 'net.a': '0', 'net.b': '32768 60999' }, warnings: { boot: '', system: 'sysctl: one\ntwo' } },
      { boot: { 'net.a': null, 'net.b': '5' }, system: { 'net.a': null, 'net.b': null }, warnings: { boot: '', system: '' } },
    ]);
  });
  it('a trial without its closing record did not finish', () => {
    expect(rehearsalOutput('r 0 boot\n/proc/sys/net/a:1\ne 0 0 0\nr 1 boot\n', keys, 2)).toEqual({
      reason: 'the rehearsal stopped before trial 2 of 2 finished',
    });
  });
});

// ---------------------------------------------------------------------------
// The rehearsal's pure parts and its refusals, without creating a namespace:
// where it cannot run it says why in one line; the copy it lays out keeps
// line numbers and leaves out every non-net line; bisection finds a minimal
// set (SysctlFile's use of it: test/resources/sysctl-file/rehearse.test.ts).
function root(files: Tree): string {
  const r = mkdtempSync(path.join(os.tmpdir(), 'rehearsal-unit-'));
  buildTree(r, files);
  return r;
}

describe('where the rehearsal cannot run, one line says why', () => {
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it('--root', async () => {
    const a = await rehearsalAvailability(new Host({ root: root({}) }));
    expect(a.ok).toBe(false);
    if (!a.ok)
      expect(a.reason).toMatch(/^offline \(--root .*\): the rehearsal would run this machine's programs, not the image's; the engine's prediction stands$/);
  });

  it('not root', async () => {
    class NotRoot extends Host {
      override isRoot(): boolean {
        return false;
      }
    }
    const a = await rehearsalAvailability(new NotRoot({ root: '/' }));
    expect(a).toEqual({ ok: false, reason: "not root: creating the private mount and network namespace needs root; the engine's prediction stands" });
  });

  it('no unshare on PATH', async () => {
    process.env.PATH = mkdtempSync(path.join(os.tmpdir(), 'empty-path-'));
    const a = await rehearsalAvailability(new Host({ root: '/' }));
    expect(a).toEqual({ ok: false, reason: "no unshare (util-linux) on PATH; the engine's prediction stands" });
  });

  describe('the systemd-sysctl program, from systemd-sysctl.service', () => {
    const unit = (exec: string) => `[Unit]\nDescription=Apply Kernel Variables\n\n[Service]\nType=oneshot\nExecStart=${exec}\n`;
    it('found through ExecStart=, a drop-in in /etc replacing it', async () => {
      const r = root({
        'lib/systemd/system/systemd-sysctl.service': unit('/lib/systemd/systemd-sysctl'),
        'etc/systemd/system/systemd-sysctl.service.d/10-local.conf': '[Service]\nExecStart=\nExecStart=-/usr/local/sbin/my-sysctl --strict\n',
        'usr/local/sbin/my-sysctl': '#!/bin/true\n',
      });
      expect(await systemdSysctlProgram(new Host({ root: r }))).toEqual({ path: '/usr/local/sbin/my-sysctl' });
    });
    it('a program that does not exist', async () => {
      const r = root({ 'usr/lib/systemd/system/systemd-sysctl.service': unit('/lib/systemd/systemd-sysctl') });
      expect(await systemdSysctlProgram(new Host({ root: r }))).toEqual({
        reason: '/lib/systemd/systemd-sysctl (ExecStart= of /usr/lib/systemd/system/systemd-sysctl.service:6) does not exist',
      });
    });
    it('no unit at all', async () => {
      const got = await systemdSysctlProgram(new Host({ root: root({}) }));
      // systemd.unit(5), "System Unit Search Path" (with /lib for Debian's unmerged images).
      const searchPath = [
        '/etc/systemd/system.control',
        '/run/systemd/system.control',
        '/run/systemd/transient',
        '/run/systemd/generator.early',
        '/etc/systemd/system',
        '/etc/systemd/system.attached',
        '/run/systemd/system',
        '/run/systemd/system.attached',
        '/run/systemd/generator',
        '/usr/local/lib/systemd/system',
        '/usr/lib/systemd/system',
        '/lib/systemd/system',
        '/run/systemd/generator.late',
      ];
      expect(got).toEqual({ reason: `no systemd-sysctl.service on the unit search path (${searchPath.join(', ')})` });
    });
    it('masked in /etc: it does not run at boot, so there is nothing to rehearse', async () => {
      const r = root({ 'lib/systemd/system/systemd-sysctl.service': unit('/lib/systemd/systemd-sysctl'), 'lib/systemd/systemd-sysctl': '#!/bin/true\n' });
      mkdirSync(path.join(r, 'etc/systemd/system'), { recursive: true });
      symlinkSync('/dev/null', path.join(r, 'etc/systemd/system/systemd-sysctl.service'));
      expect(await systemdSysctlProgram(new Host({ root: r }))).toEqual({
        reason: 'systemd-sysctl.service is masked (/etc/systemd/system/systemd-sysctl.service): systemd-sysctl does not run at boot',
      });
    });
    it('a drop-in in /run outranks one of the same name in /usr/lib, whichever sorts first', async () => {
      const r = root({
        'usr/lib/systemd/system/systemd-sysctl.service': unit('/lib/systemd/systemd-sysctl'),
        'usr/lib/systemd/system/systemd-sysctl.service.d/50-x.conf': '[Service]\nExecStart=\nExecStart=/opt/vendor-sysctl\n',
        'run/systemd/system/systemd-sysctl.service.d/50-x.conf': '[Service]\nExecStart=\nExecStart=/opt/runtime-sysctl\n',
        'opt/vendor-sysctl': '#!/bin/true\n',
        'opt/runtime-sysctl': '#!/bin/true\n',
      });
      expect(await systemdSysctlProgram(new Host({ root: r }))).toEqual({ path: '/opt/runtime-sysctl' });
    });
    it('ExecStart= prefixes and quoting', () => {
      expect(execStartProgram('/lib/systemd/systemd-sysctl')).toBe('/lib/systemd/systemd-sysctl');
      expect(execStartProgram('-@/usr/lib/systemd/systemd-sysctl systemd-sysctl --x')).toBe('/usr/lib/systemd/systemd-sysctl');
      expect(execStartProgram('!!"/opt/my sysctl" a')).toBe('/opt/my sysctl');
      expect(execStartProgram('')).toBeNull();
      // systemd's unquoting and escapes: systemd 252's --test dump shows these two as "Command Line: "/opt/my sysctl" --flag" and ""/opt/a b/c" x".
      expect(execStartProgram('"/opt/my"\\x20sysctl --flag')).toBe('/opt/my sysctl');
      expect(execStartProgram("'/opt/a b'/c x")).toBe('/opt/a b/c');
      expect(execStartProgram('%p/sysctl')).toBeNull();
    });
  });
});

describe("the rehearsal's copy of the files", () => {
  it('blanks every non-net line and the removed ones, keeping line numbers and the other bytes', () => {
    const text =
      '# c\nkernel.pid_max = 9\nnet.ipv4.ip_forward = 0\r\n-vm.swappiness = 1\n  net/ipv4/tcp_syncookies=1\nnet*.x = 1\nno equals\nnet.ipv4.conf.all.rp_filter = 2';
    const out = rehearsalText(text, '/etc/sysctl.d/a.conf', new Set(['/etc/sysctl.d/a.conf:8']));
    expect(out.split('\n')).toEqual(['# c', '', 'net.ipv4.ip_forward = 0\r', '', '  net/ipv4/tcp_syncookies=1', '', '', '']);
  });

  it('masks and links to laid-out files stay links; other links become filtered copies', async () => {
    const r = root({
      'etc/sysctl.conf': 'net.ipv4.ip_forward = 0\nfs.file-max = 5\n',
      'etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' },
      'etc/sysctl.d/zz-vendor.conf': { link: '/dev/null' },
      'etc/sysctl.d/60-shared.conf': { link: '/opt/shared/sysctl.conf' },
      'opt/shared/sysctl.conf': 'vm.swappiness = 1\nnet.ipv4.tcp_syncookies = 1\n',
    });
    const tree = (await observeSysctlTree(new Host({ root: r }))).tree;
    const real = new Map([
      ['/etc/sysctl.d', '/etc/sysctl.d'],
      ['/run/sysctl.d', '/run/sysctl.d'],
      ['/usr/local/lib/sysctl.d', '/usr/local/lib/sysctl.d'],
      ['/usr/lib/sysctl.d', '/usr/lib/sysctl.d'],
      ['/lib/sysctl.d', '/usr/lib/sysctl.d'],
    ]);
    const lay = layout(
      [{ tree }],
      { real, existing: new Set(['/etc/sysctl.d', '/usr/lib/sysctl.d']), ancestors: new Map(), sysctlConf: '/etc/sysctl.conf' },
      [],
      [],
    );
    if ('reason' in lay) throw new Error(lay.reason);
    expect(lay.sources).toEqual([
      { path: '/etc/sysctl.d', kind: 'dir' },
      { path: '/usr/lib/sysctl.d', kind: 'dir' },
      { path: '/etc/sysctl.conf', kind: 'file' },
    ]);
    const [etc, usr, conf] = lay.trials[0]!.sources as [{ entries: Array<Record<string, string>> }, { entries: unknown[] }, { content: string }];
    const dec = (b: string) => Buffer.from(b, 'base64').toString('latin1');
    expect(etc.entries.map((e) => (e.link !== undefined ? [e.name, 'link', e.link] : [e.name, 'file', dec(e.content!)]))).toEqual([
      ['60-shared.conf', 'file', '\nnet.ipv4.tcp_syncookies = 1\n'],
      ['99-sysctl.conf', 'link', '/etc/sysctl.conf'],
      ['zz-vendor.conf', 'link', '/dev/null'],
    ]);
    expect(usr.entries).toEqual([]);
    expect(dec(conf.content)).toBe('net.ipv4.ip_forward = 0\n\n');
  });

  it('a directory missing on the host is laid through its nearest ancestor, never / or /tmp', () => {
    const tree = {
      files: [{ path: '/run/sysctl.d/x.conf', masked: false, realPath: '/run/sysctl.d/x.conf', content: 'net.ipv4.ip_forward=1\n', assignments: [] }],
      sysctlConf: null,
    };
    const real = new Map([
      ['/etc/sysctl.d', '/etc/sysctl.d'],
      ['/run/sysctl.d', '/run/sysctl.d'],
    ]);
    const ok = layout([{ tree }], { real, existing: new Set(['/etc/sysctl.d']), ancestors: new Map([['/run/sysctl.d', '/run']]), sysctlConf: null }, [], []);
    expect('reason' in ok ? ok.reason : ok.sources).toContainEqual({ path: '/run/sysctl.d', kind: 'dir', create: { ancestor: '/run' } });
    const refused = layout([{ tree }], { real, existing: new Set(['/etc/sysctl.d']), ancestors: new Map([['/run/sysctl.d', '/']]), sysctlConf: null }, [], []);
    expect(refused).toEqual({ reason: '/run/sysctl.d does not exist on this host and cannot be laid out' });
  });
});
