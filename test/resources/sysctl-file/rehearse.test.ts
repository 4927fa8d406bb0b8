// SysctlFile's boot rehearsal (rehearse.ts): the real systemd-sysctl and
// `sysctl --system` run in private mount + network namespaces over the files
// as the plan leaves them (the runner itself is test/sysctl/rehearsal.test.ts's
// subject). A broken engine stands in for ours to show that the rehearsal
// catches what an engine misses and that bisection names the line; the
// expected culprits are the lines each hand-made tree was written to hold.
// The host's own values are never touched: they are checked before and after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../../src/host.js';
import type { SysctlModel, SysctlVerdict } from '../../../src/sysctl/order.js';
import { rehearsalAvailability } from '../../../src/sysctl/rehearsal.js';
import { sysctlProcPath } from '../../../src/observe/sysctl-live.js';
import { sysctlFileProvider } from '../../../src/resources/sysctl-file/provider.js';
import { rehearsalFailures, rehearsalNotes, rehearse, type SysctlEngine } from '../../../src/resources/sysctl-file/rehearse.js';
import type { SysctlFileObserved, SysctlRehearsal } from '../../../src/resources/sysctl-file/observed.js';
import type { SysctlFileSpec } from '../../../src/resources/sysctl-file/spec.js';
import { buildTree, type Tree } from '../../helpers/tree.js';

const live = new Host({ root: '/' });
let work = '';
let n = 0;

// Host values a rehearsal must leave alone: the net keys the fixtures write.
const HOST_KEYS = ['net.ipv4.ip_forward', 'net.ipv4.conf.all.forwarding', 'net.ipv4.conf.default.forwarding', 'net.ipv4.conf.all.rp_filter', 'kernel.pid_max'];
const hostValues = () => Object.fromEntries(HOST_KEYS.map((k) => [k, readFileSync(sysctlProcPath(k), 'utf8')]));
let hostBefore: Record<string, string>;

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'sysctl-rehearse-'));
  // No skipping: we run as root here and in CI, so a rehearsal that cannot run is a failure.
  const a = await rehearsalAvailability(live);
  if (!a.ok) throw new Error(`the rehearsal must run on this test machine: ${a.reason}`);
  hostBefore = hostValues();
});
afterAll(async () => {
  expect(hostValues()).toEqual(hostBefore);
  if (work) await fs.rm(work, { recursive: true, force: true });
});

function root(files: Tree): string {
  const r = path.join(work, `r${n++}`);
  buildTree(r, files);
  return r;
}

const spec = (settings: Record<string, number>): SysctlFileSpec => ({
  type: 'SysctlFile',
  file: '/etc/sysctl.d/k8s.conf',
  settings,
  conflict_policy: 'resolve',
});

async function observedFor(s: SysctlFileSpec, files: Tree): Promise<SysctlFileObserved> {
  const root = path.join(work, `o${n++}`);
  await fs.mkdir(root, { recursive: true });
  buildTree(root, files);
  const o = await sysctlFileProvider.observe(new Host({ root }), s);
  return { ...o, live: true };
}

/** A test-only broken engine: it plans our file and nothing else, and believes our file always wins. */
const blindEngine: SysctlEngine = {
  changes: (s, o) => sysctlFileProvider.diff(s, { ...o, rehearsal: null }, { live: false }).filter((c) => c.op.kind === 'owned'),
  verdict: (_tree, key, model): SysctlVerdict => ({ key, model, value: '1', winner: null, via: 'explicit' }),
};

describe('the rehearsal catches what an engine misses, and bisection names the line', () => {
  const cases: Array<{ name: string; files: Tree; culprits: string[]; models: SysctlModel[] }> = [
    {
      name: 'a later vendor file among other net lines',
      files: {
        '/usr/lib/sysctl.d/zz-vendor.conf':
          '# vendor\nnet.ipv4.conf.all.rp_filter = 2\nnet.ipv4.tcp_syncookies = 1\nnet.ipv4.ip_forward = 0\nnet.ipv4.conf.default.rp_filter = 2\n',
        '/etc/sysctl.d/10-local.conf': 'net.ipv4.tcp_fin_timeout = 30\nkernel.pid_max = 99999\n',
      },
      culprits: ['/usr/lib/sysctl.d/zz-vendor.conf:4'],
      models: ['boot', 'system'],
    },
    {
      name: 'a coupled key in a later /etc file',
      files: {
        '/etc/sysctl.d/zz-hardening.conf':
          'net.ipv4.conf.all.rp_filter = 1\nnet.ipv4.conf.all.send_redirects = 0\nvm.swappiness = 1\nnet.ipv4.conf.all.forwarding = 0\nnet.ipv4.conf.all.log_martians = 1\n',
      },
      culprits: ['/etc/sysctl.d/zz-hardening.conf:4'],
      models: ['boot', 'system'],
    },
    {
      name: 'two lines that each flip it: both are needed',
      files: {
        '/etc/sysctl.d/zz-a.conf': 'net.ipv4.conf.all.rp_filter = 1\nnet.ipv4.ip_forward = 0\n',
        '/etc/sysctl.d/zz-b.conf': 'fs.file-max = 100000\nnet.ipv4.conf.all.forwarding = 0\nnet.ipv4.tcp_syncookies = 1\n',
      },
      culprits: ['/etc/sysctl.d/zz-a.conf:2', '/etc/sysctl.d/zz-b.conf:2'],
      models: ['boot', 'system'],
    },
    {
      name: '/etc/sysctl.conf, which sysctl --system applies last',
      files: {
        '/etc/sysctl.conf': '# legacy\nnet.ipv4.tcp_syncookies = 1\nnet.ipv4.ip_forward = 0\n',
        '/etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' },
      },
      culprits: ['/etc/sysctl.conf:3'],
      models: ['system'],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const s = spec({ 'net.ipv4.ip_forward': 1 });
      const observed = await observedFor(s, c.files);
      const r = await rehearse(live, s, observed, blindEngine);
      if (r.status !== 'ran') throw new Error(r.reason);
      expect(r.engine.boot['net.ipv4.ip_forward']).toBe('1');
      for (const m of ['boot', 'system'] as SysctlModel[]) expect(r.enginePlan[m]['net.ipv4.ip_forward']).toBe(c.models.includes(m) ? '0' : '1');
      expect(r.culprits.map((x) => `${x.realPath}:${x.line}`).sort()).toEqual(c.culprits);
      expect(new Set(r.culprits.flatMap((x) => x.models))).toEqual(new Set(c.models));
      // With the culprits resolved, both programs give 1.
      expect(r.final.boot['net.ipv4.ip_forward']).toBe('1');
      expect(r.final.system['net.ipv4.ip_forward']).toBe('1');
      expect(r.unexplained).toEqual([]);
      // The plan resolves each culprit by the conflict policy: commented out in /etc, overridden from /etc for a vendor file.
      const changes = sysctlFileProvider.diff(s, { ...observed, rehearsal: r }, { live: true });
      for (const id of c.culprits) {
        const [file, line] = id.split(':') as [string, string];
        const target = file.startsWith('/etc/') ? file : `/etc/sysctl.d/${path.basename(file)}`;
        const ch = changes.find((x) => x.op.kind === 'resolve' && x.op.target === target);
        expect(ch?.summary).toContain(`${file}:${line}`);
        const after = ch!.file!.after!.split('\n');
        const original = (typeof c.files[file] === 'string' ? (c.files[file] as string) : '').split('\n')[Number(line) - 1]!;
        expect(after).toContain(`# ${original}`);
        expect(after).not.toContain(original);
      }
    });
  }

  it('a culprit the engine does not know becomes a resolution that says the rehearsal wins', async () => {
    // Pure: the rehearsal's record is written here by hand, as if the real programs had blamed line 2.
    const s = spec({ 'net.ipv4.ip_forward': 1 });
    const observed = await observedFor(s, { '/usr/lib/sysctl.d/zz-vendor.conf': 'net.ipv4.tcp_syncookies = 1\nnet.ipv4.conf.all.log_martians = 1\n' });
    expect(sysctlFileProvider.diff(s, observed, { live: true }).some((c) => c.op.kind === 'resolve')).toBe(false);
    const both = { 'net.ipv4.ip_forward': '1' };
    const changes = sysctlFileProvider.diff(
      s,
      {
        ...observed,
        rehearsal: {
          status: 'ran',
          ms: 1,
          runs: 3,
          programs: { boot: 'systemd-sysctl', system: 'sysctl --system' },
          notRehearsed: [],
          start: {},
          engine: { boot: both, system: both },
          enginePlan: { boot: { 'net.ipv4.ip_forward': '0' }, system: both },
          culprits: [
            {
              key: 'net.ipv4.ip_forward',
              wanted: '1',
              models: ['boot'],
              file: '/usr/lib/sysctl.d/zz-vendor.conf',
              line: 2,
              realPath: '/usr/lib/sysctl.d/zz-vendor.conf',
              text: 'net.ipv4.conf.all.log_martians = 1',
              value: '0',
            },
          ],
          final: { boot: both, system: both },
          unexplained: [],
        },
      },
      { live: true },
    );
    const ch = changes.find((c) => c.op.kind === 'resolve');
    expect(ch?.summary).toContain('bisection names /usr/lib/sysctl.d/zz-vendor.conf:2 (net.ipv4.conf.all.log_martians = 1); the rehearsal wins');
    expect(ch?.file?.path).toBe('/etc/sysctl.d/zz-vendor.conf');
    expect(ch?.file?.after).toContain('# disabled by k8s-host-reconcile: conflicts with /etc/sysctl.d/k8s.conf\n# net.ipv4.conf.all.log_martians = 1\n');
  });

  it('a boot-only coupled write and its later duplicate: the engine resolves both in one plan, and the rehearsal agrees', async () => {
    // At boot ip_forward keeps 10-router's slot (k8s.conf repeats the value), so 50-no-route's write lands after it;
    // zz-hardening's same write is hidden behind 50-no-route's until that one is gone.
    const s = spec({ 'net.ipv4.ip_forward': 1 });
    const observed = await observedFor(s, {
      '/etc/sysctl.d/10-router.conf': 'net.ipv4.ip_forward = 1\n',
      '/etc/sysctl.d/50-no-route.conf': '# no routing\nnet.ipv4.conf.all.forwarding = 0\n',
      '/etc/sysctl.d/zz-hardening.conf': 'net.ipv4.conf.all.send_redirects = 0\nnet.ipv4.conf.all.forwarding = 0\n',
    });
    const offline = sysctlFileProvider.diff(s, observed, { live: false });
    expect(offline.filter((c) => c.op.kind === 'resolve').map((c) => (c.op.kind === 'resolve' ? `${c.op.target}:${c.op.lines.join(',')}` : ''))).toEqual([
      '/etc/sysctl.d/50-no-route.conf:2',
      '/etc/sysctl.d/zz-hardening.conf:2',
    ]);
    const r = await rehearse(live, s, observed);
    if (r.status !== 'ran') throw new Error(r.reason);
    expect([r.enginePlan.boot['net.ipv4.ip_forward'], r.enginePlan.system['net.ipv4.ip_forward']]).toEqual(['1', '1']);
    expect(r.culprits).toEqual([]);
    // Without the engine's resolutions the real programs give 0 at boot (and 0 under sysctl --system from zz-hardening).
    const blind = await rehearse(live, s, observed, blindEngine);
    if (blind.status !== 'ran') throw new Error(blind.reason);
    expect([blind.enginePlan.boot['net.ipv4.ip_forward'], blind.enginePlan.system['net.ipv4.ip_forward']]).toEqual(['0', '0']);
    // The smallest sets: at boot one line is enough, 10-router's ip_forward = 1, whose slot puts ip_forward before
    // 50-no-route's write (without it k8s.conf's line takes the slot after 50-no-route, and zz-hardening repeats
    // 50-no-route's value, keeping that earlier slot); under sysctl --system only zz-hardening comes after k8s.conf.
    expect(blind.culprits.map((c) => `${c.realPath}:${c.line}:${c.models.join('+')}`).sort()).toEqual([
      '/etc/sysctl.d/10-router.conf:1:boot',
      '/etc/sysctl.d/zz-hardening.conf:2:system',
    ]);
    expect([blind.final.boot['net.ipv4.ip_forward'], blind.final.system['net.ipv4.ip_forward']]).toEqual(['1', '1']);
  });

  it('with the real engine the coupled key is found offline too, and the rehearsal agrees', async () => {
    const s = spec({ 'net.ipv4.ip_forward': 1 });
    const observed = await observedFor(s, { '/etc/sysctl.d/zz-hardening.conf': 'net.ipv4.conf.all.rp_filter = 1\nnet.ipv4.conf.all.forwarding = 0\n' });
    const offline = sysctlFileProvider.diff(s, observed, { live: false });
    const resolve = offline.find((x) => x.op.kind === 'resolve');
    expect(resolve?.summary).toContain(
      '/etc/sysctl.d/zz-hardening.conf:2 sets net.ipv4.conf.all.forwarding, which the kernel couples with net.ipv4.ip_forward',
    );
    const r = await rehearse(live, s, observed);
    if (r.status !== 'ran') throw new Error(r.reason);
    expect(r.enginePlan.boot['net.ipv4.ip_forward']).toBe('1');
    expect(r.enginePlan.system['net.ipv4.ip_forward']).toBe('1');
    expect(r.culprits).toEqual([]);
  });
});

describe('where there is nothing to rehearse', () => {
  it('a non-net key: nothing to rehearse, nothing run', async () => {
    const s = spec({ 'kernel.pid_max': 4194304 });
    const observed = await sysctlFileProvider.observe(new Host({ root: root({}) }), s);
    const r = await rehearse(
      new Host({
        root: '/',
        runner: async () => {
          throw new Error('no command may run');
        },
      }),
      s,
      observed,
    );
    expect(r).toEqual({ status: 'skipped', reason: "no net.* key to rehearse (kernel.pid_max); the engine's prediction stands" });
    expect(rehearsalNotes(s, { ...observed, rehearsal: r })).toEqual([
      "rehearsal skipped: no net.* key to rehearse (kernel.pid_max); the engine's prediction stands",
    ]);
  });
});

describe("apply's verification", () => {
  it('names each key the rehearsal shows wrong over the written files, with the program', () => {
    const r: SysctlRehearsal = {
      status: 'ran',
      ms: 1,
      runs: 1,
      programs: { boot: 'b', system: 's' },
      notRehearsed: [],
      start: {},
      engine: { boot: { 'net.ipv4.ip_forward': '1' }, system: { 'net.ipv4.ip_forward': '1' } },
      enginePlan: { boot: { 'net.ipv4.ip_forward': '0' }, system: { 'net.ipv4.ip_forward': '1' } },
      culprits: [],
      final: { boot: { 'net.ipv4.ip_forward': '0' }, system: { 'net.ipv4.ip_forward': '1' } },
      unexplained: [],
    };
    expect(rehearsalFailures(spec({ 'net.ipv4.ip_forward': 1 }), r)).toEqual(['rehearsal: net.ipv4.ip_forward comes out 0 at boot (systemd-sysctl), wanted 1']);
    expect(rehearsalFailures(spec({ 'net.ipv4.ip_forward': 1 }), { status: 'skipped', reason: 'x' })).toEqual([]);
  });
});
