// The rehearsal's pure parts and its refusals, without creating a namespace:
// where it cannot run it says why in one line; the copy it lays out keeps
// line numbers and leaves out every non-net line; bisection finds a minimal
// set; apply's verification names a key the rehearsal shows wrong.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../src/host.js';
import { execStartProgram, layout, rehearsalAvailability, rehearsalText, systemdSysctlProgram } from '../src/sysctl/rehearsal.js';
import { minimalRemoval } from '../src/sysctl/bisect.js';
import { observeSysctlTree } from '../src/sysctl/observe.js';
import { sysctlFileProvider } from '../src/resources/sysctl-file.js';
import { rehearsalFailures, rehearsalNotes, rehearse } from '../src/resources/sysctl-file/rehearse.js';
import type { SysctlRehearsal } from '../src/resources/sysctl-file/observed.js';
import type { SysctlFileSpec } from '../src/desired-state.js';
import { buildTree } from './helpers/tree.js';
import type { Tree } from './helpers/tree.js';

function root(files: Tree): string {
  const r = mkdtempSync(path.join(os.tmpdir(), 'rehearsal-unit-'));
  buildTree(r, files);
  return r;
}

const spec = (settings: Record<string, number>): SysctlFileSpec => ({ type: 'SysctlFile', file: '/etc/sysctl.d/k8s.conf', settings, conflict_policy: 'resolve' });

describe('where the rehearsal cannot run, one line says why', () => {
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it('--root', async () => {
    const a = await rehearsalAvailability(new Host({ root: root({}) }));
    expect(a.ok).toBe(false);
    if (!a.ok) expect(a.reason).toMatch(/^offline \(--root .*\): the rehearsal would run this machine's programs, not the image's; the engine's prediction stands$/);
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

  it('a non-net key: nothing to rehearse, nothing run', async () => {
    const s = spec({ 'kernel.pid_max': 4194304 });
    const observed = await sysctlFileProvider.observe(new Host({ root: root({}) }), s);
    const r = await rehearse(new Host({ root: '/', runner: async () => { throw new Error('no command may run'); } }), s, observed);
    expect(r).toEqual({ status: 'skipped', reason: "no net.* key to rehearse (kernel.pid_max); the engine's prediction stands" });
    expect(rehearsalNotes(s, { ...observed, rehearsal: r })).toEqual(["rehearsal skipped: no net.* key to rehearse (kernel.pid_max); the engine's prediction stands"]);
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
        '/etc/systemd/system.control', '/run/systemd/system.control', '/run/systemd/transient', '/run/systemd/generator.early',
        '/etc/systemd/system', '/etc/systemd/system.attached', '/run/systemd/system', '/run/systemd/system.attached',
        '/run/systemd/generator', '/usr/local/lib/systemd/system', '/usr/lib/systemd/system', '/lib/systemd/system', '/run/systemd/generator.late',
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
    const text = '# c\nkernel.pid_max = 9\nnet.ipv4.ip_forward = 0\r\n-vm.swappiness = 1\n  net/ipv4/tcp_syncookies=1\nnet*.x = 1\nno equals\nnet.ipv4.conf.all.rp_filter = 2';
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
    const real = new Map([['/etc/sysctl.d', '/etc/sysctl.d'], ['/run/sysctl.d', '/run/sysctl.d'], ['/usr/local/lib/sysctl.d', '/usr/local/lib/sysctl.d'], ['/usr/lib/sysctl.d', '/usr/lib/sysctl.d'], ['/lib/sysctl.d', '/usr/lib/sysctl.d']]);
    const lay = layout([{ tree }], { real, existing: new Set(['/etc/sysctl.d', '/usr/lib/sysctl.d']), ancestors: new Map(), sysctlConf: '/etc/sysctl.conf' }, [], []);
    if ('reason' in lay) throw new Error(lay.reason);
    expect(lay.sources).toEqual([{ path: '/etc/sysctl.d', kind: 'dir' }, { path: '/usr/lib/sysctl.d', kind: 'dir' }, { path: '/etc/sysctl.conf', kind: 'file' }]);
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
    const tree = { files: [{ path: '/run/sysctl.d/x.conf', masked: false, realPath: '/run/sysctl.d/x.conf', content: 'net.ipv4.ip_forward=1\n', assignments: [] }], sysctlConf: null };
    const real = new Map([['/etc/sysctl.d', '/etc/sysctl.d'], ['/run/sysctl.d', '/run/sysctl.d']]);
    const ok = layout([{ tree }], { real, existing: new Set(['/etc/sysctl.d']), ancestors: new Map([['/run/sysctl.d', '/run']]), sysctlConf: null }, [], []);
    expect('reason' in ok ? ok.reason : ok.sources).toContainEqual({ path: '/run/sysctl.d', kind: 'dir', create: { ancestor: '/run' } });
    const refused = layout([{ tree }], { real, existing: new Set(['/etc/sysctl.d']), ancestors: new Map([['/run/sysctl.d', '/']]), sysctlConf: null }, [], []);
    expect(refused).toEqual({ reason: '/run/sysctl.d does not exist on this host and cannot be laid out' });
  });
});

describe('bisection (ddmin) over a stand-in oracle', () => {
  const oracle = (needed: number[], log: number[][][]) => async (sets: number[][]) => {
    log.push(sets);
    return sets.map((s) => needed.every((x) => s.includes(x)));
  };
  it('finds the one line', async () => {
    const log: number[][][] = [];
    expect((await minimalRemoval([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], oracle([7], log)))?.lines).toEqual([7]);
  });
  it('finds two lines that are both needed', async () => {
    const log: number[][][] = [];
    expect((await minimalRemoval([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], oracle([3, 8], log)))?.lines.sort((a, b) => a - b)).toEqual([3, 8]);
  });
  it('none when removing every line still fails', async () => {
    expect(await minimalRemoval([1, 2, 3], async (sets) => sets.map(() => false))).toBeNull();
  });
});

describe("apply's verification", () => {
  it('names each key the rehearsal shows wrong over the written files, with the program', () => {
    const r: SysctlRehearsal = {
      status: 'ran', ms: 1, runs: 1, programs: { boot: 'b', system: 's' }, notRehearsed: [], start: {},
      engine: { boot: { 'net.ipv4.ip_forward': '1' }, system: { 'net.ipv4.ip_forward': '1' } },
      enginePlan: { boot: { 'net.ipv4.ip_forward': '0' }, system: { 'net.ipv4.ip_forward': '1' } },
      culprits: [], final: { boot: { 'net.ipv4.ip_forward': '0' }, system: { 'net.ipv4.ip_forward': '1' } }, unexplained: [],
    };
    expect(rehearsalFailures(spec({ 'net.ipv4.ip_forward': 1 }), r)).toEqual(['rehearsal: net.ipv4.ip_forward comes out 0 at boot (systemd-sysctl), wanted 1']);
    expect(rehearsalFailures(spec({ 'net.ipv4.ip_forward': 1 }), { status: 'skipped', reason: 'x' })).toEqual([]);
  });
});
