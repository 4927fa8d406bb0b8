// The reconciler's own rules, with fake providers: dependency order, a failed
// resource blocking the ones that need it, partial reports kept, verification.
import { describe, expect, it } from 'vitest';
import { dependencyOrder, diffAll } from '../../src/reconcile/plan.js';
import { applyPlan } from '../../src/reconcile/apply.js';
import { verifyConverged } from '../../src/reconcile/verify.js';
import type { ProviderRegistry } from '../../src/resources/index.js';
import type { Change, Provider } from '../../src/resources/types.js';
import type { ResourceSpec } from '../../src/resources/index.js';
import { Host } from '../../src/host.js';
import { afterEach, beforeEach } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type CommandRunner } from '../../src/host.js';
import { renderApplyResult } from '../../src/reconcile/apply-text.js';
import type { Palette } from '../../src/reconcile/plan-text.js';
import { PROVIDERS } from '../../src/resources/index.js';
import { applyContext } from '../helpers/door.js';
import { buildTree } from '../helpers/tree.js';

function fake(type: string, after: string[], behaviour: { fail?: boolean; partial?: boolean; log: string[] }): Provider {
  return {
    type,
    after,
    async observe() {
      return null;
    },
    diff(): Change[] {
      return [{ id: `${type}-1`, action: 'update', summary: `${type} change`, op: null }];
    },
    async apply() {
      behaviour.log.push(type);
      if (behaviour.fail) throw new Error(`${type} broke`);
      if (behaviour.partial) return { reports: { [`${type}.json`]: { done: 1 } }, error: `${type} half done` };
      return { reports: { [`${type}.json`]: { done: 2 } } };
    },
  };
}

const spec = (type: string) => ({ type }) as unknown as ResourceSpec;

describe('dependency order', () => {
  it('puts a provider after the types it names, keeping file order otherwise', () => {
    const registry = { A: { after: ['C'] }, B: { after: [] }, C: { after: [] } } as unknown as ProviderRegistry;
    expect(dependencyOrder([spec('A'), spec('B'), spec('C')], registry).map((s) => s.type)).toEqual(['B', 'C', 'A']);
  });

  it('ignores a dependency that is not in the desired state', () => {
    const registry = { A: { after: ['Z'] } } as unknown as ProviderRegistry;
    expect(dependencyOrder([spec('A')], registry).map((s) => s.type)).toEqual(['A']);
  });

  it('names a cycle instead of looping', () => {
    const registry = { A: { after: ['B'] }, B: { after: ['A'] } } as unknown as ProviderRegistry;
    expect(() => dependencyOrder([spec('A'), spec('B')], registry)).toThrow(/cycle among: A, B/);
  });

  it('applies ModulesLoad before SysctlFile', () => {
    const order = dependencyOrder([spec('SysctlFile'), spec('ModulesLoad')]).map((s) => s.type);
    expect(order).toEqual(['ModulesLoad', 'SysctlFile']);
  });
});

describe('apply', () => {
  it('skips what depends on a failed resource, converges the rest, and keeps partial reports', async () => {
    const log: string[] = [];
    const registry: ProviderRegistry = {
      FakeMods: fake('FakeMods', [], { fail: true, log }),
      FakeSysctl: fake('FakeSysctl', ['FakeMods'], { log }),
      FakePorts: fake('FakePorts', [], { partial: true, log }),
      FakeOther: fake('FakeOther', [], { log }),
    };
    const plan = diffAll(
      ['FakeMods', 'FakeSysctl', 'FakePorts', 'FakeOther'].map((t) => ({ spec: spec(t), observed: null })),
      { live: false, root: '/tmp/x' },
      registry,
    );
    const result = await applyPlan(new Host({ root: '/tmp/x' }), plan, { progress: () => {}, door: undefined as never });
    expect(log).toEqual(['FakeMods', 'FakePorts', 'FakeOther']);
    expect(result.failures).toEqual([
      { resource: 'FakeMods', message: 'FakeMods broke', changes: ['FakeMods-1'] },
      { resource: 'FakeSysctl', message: 'not applied: FakeMods, which it depends on, failed', changes: ['FakeSysctl-1'] },
      { resource: 'FakePorts', message: 'FakePorts half done', changes: ['FakePorts-1'] },
    ]);
    expect(result.reports).toEqual({ 'FakePorts.json': { done: 1 }, 'FakeOther.json': { done: 2 } });
    expect(result.applied).toEqual([{ resource: 'FakeOther', changes: ['FakeOther-1'] }]);
  });
});

describe('verify', () => {
  it('names every resource that still differs, and ignores operator and deferred changes', () => {
    const mk = (name: string, changes: Array<Partial<Change> & Pick<Change, 'action'>>) => ({
      name,
      type: name,
      spec: spec(name),
      provider: {} as Provider,
      observed: null,
      changes: changes.map((c, i) => ({ id: `${i}`, summary: `s${i}`, op: null, ...c }) as Change),
    });
    const errors = verifyConverged({
      live: true,
      root: '/',
      resources: [
        mk('SwapOff', [{ action: 'update', summary: 'swapoff /swapfile' }]),
        mk('PortFree', [{ action: 'operator', operator: 'not a unit' }]),
        mk('ModulesLoad', [{ action: 'deferred' }]),
      ],
    });
    expect(errors.map((e) => e.message)).toEqual(['SwapOff: not converged after apply: swapoff /swapfile']);
  });

  it('names what a provider sees unconverged in the new observation, with no change left', () => {
    const provider = { unconverged: (_s: unknown, o: unknown) => (o === 'wrong' ? ['rehearsal: k comes out 0'] : []) } as unknown as Provider;
    const res = (name: string, observed: string) => ({ name, type: 'SysctlFile', spec: spec('SysctlFile'), provider, observed, changes: [] });
    const errors = verifyConverged({ live: true, root: '/', resources: [res('a', 'wrong'), res('b', 'right')] });
    expect(errors.map((e) => e.message)).toEqual(['a: not converged after apply: rehearsal: k comes out 0']);
  });
});

// ---------------------------------------------------------------------------
// One module that will not load stops only what needs it. The
// kernel has /proc/sys/net/bridge only once br_netfilter is loaded, so the two
// bridge keys' runtime writes need it; ip_forward, the sysctl.d file and the
// other module do not. The fixture root's /proc is plain files, and modprobe
// answers as the kernel does for a module on the command line's
// module_blacklist= (EPERM, "Operation not permitted").
describe('a module that will not load', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'apply-needs-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const MODULES = { type: 'ModulesLoad', file: '/etc/modules-load.d/k8s.conf', modules: ['overlay', 'br_netfilter'] } as ResourceSpec;
  const SYSCTL = {
    type: 'SysctlFile',
    file: '/etc/sysctl.d/k8s.conf',
    settings: { 'net.ipv4.ip_forward': 1, 'net.bridge.bridge-nf-call-iptables': 1, 'net.bridge.bridge-nf-call-ip6tables': 1 },
    conflict_policy: 'resolve',
  } as ResourceSpec;

  const id = (s: string) => s;
  const palette: Palette = { add: id, del: id, hunk: id, bold: id, warn: id, dim: id };

  describe('apply: a change waits only for what it needs', () => {
    it('a blocked br_netfilter leaves ip_forward, the files and overlay converged; only the bridge keys are not applied', async () => {
      buildTree(root, {
        'proc/modules': 'nf_conntrack 172032 0 - Live 0x0\n',
        'proc/sys/kernel/osrelease': '6.1.0-test\n',
        'proc/sys/net/ipv4/ip_forward': '0\n',
        'lib/modules/6.1.0-test/modules.builtin': '',
        'lib/modules/6.1.0-test/modules.dep': 'kernel/fs/overlayfs/overlay.ko:\nkernel/net/bridge/br_netfilter.ko: kernel/net/bridge/bridge.ko\n',
      });
      const ran: string[] = [];
      const runner: CommandRunner = async (cmd, args) => {
        ran.push(`${cmd} ${args.join(' ')}`);
        if (cmd === 'modprobe' && args[0] === 'br_netfilter') {
          return {
            command: `${cmd} ${args.join(' ')}`,
            exitCode: 1,
            stdout: '',
            stderr: "modprobe: ERROR: could not insert 'br_netfilter': Operation not permitted",
          };
        }
        if (cmd === 'modprobe') writeFileSync(path.join(root, 'proc/modules'), `${args[0]} 32768 0 - Live 0x0\n`, { flag: 'a' });
        return { command: cmd, exitCode: 0, stdout: '', stderr: '' };
      };
      // Observation as the engine makes it (the rehearsal runs its own programs); apply with the fake modprobe.
      const seeing = new Host({ root, live: true });
      const observations = [];
      for (const spec of [MODULES, SYSCTL]) observations.push({ spec, observed: await PROVIDERS[spec.type]!.observe(seeing, spec as never) });
      const plan = diffAll(observations, { live: true, root }, PROVIDERS);
      const ids = plan.resources.map((r) => r.changes.map((c) => c.id));
      expect(ids[0]).toEqual(['file:/etc/modules-load.d/k8s.conf', 'modprobe:overlay', 'modprobe:br_netfilter']);
      expect(ids[1]).toEqual(
        expect.arrayContaining([
          'file:/etc/sysctl.d/k8s.conf',
          'runtime:net.ipv4.ip_forward',
          'runtime:net.bridge.bridge-nf-call-iptables',
          'runtime:net.bridge.bridge-nf-call-ip6tables',
        ]),
      );

      const applying = new Host({ root, live: true, runner });
      const result = await applyPlan(applying, plan, await applyContext(applying, '/bk'));

      // The kernel's state as the fixture now holds it: overlay loaded, ip_forward 1, no bridge keys written.
      expect(ran).toEqual(['modprobe overlay', 'modprobe br_netfilter']);
      expect(readFileSync(path.join(root, 'proc/sys/net/ipv4/ip_forward'), 'utf8')).toBe('1\n');
      expect(existsSync(path.join(root, 'proc/sys/net/bridge'))).toBe(false);
      expect(readFileSync(path.join(root, 'etc/sysctl.d/k8s.conf'), 'utf8')).toContain('net.ipv4.ip_forward = 1\n');
      expect(readFileSync(path.join(root, 'etc/modules-load.d/k8s.conf'), 'utf8')).toBe('overlay\nbr_netfilter\n');

      expect(result.applied).toEqual([
        { resource: 'ModulesLoad', changes: ['file:/etc/modules-load.d/k8s.conf', 'modprobe:overlay'] },
        { resource: 'SysctlFile', changes: ids[1]!.filter((id) => !id.startsWith('runtime:net.bridge.')) },
      ]);
      expect(result.failures).toEqual([
        // Each failure takes back what it left undone in promises_after: br_netfilter and the bridge keys, not overlay or ip_forward.
        {
          resource: 'ModulesLoad',
          message: expect.stringContaining('modprobe br_netfilter:'),
          changes: ['modprobe:br_netfilter'],
          promises: ['module:br_netfilter'],
        },
        {
          resource: 'SysctlFile',
          message:
            "runtime:net.bridge.bridge-nf-call-iptables, runtime:net.bridge.bridge-nf-call-ip6tables not applied: ModulesLoad's module:br_netfilter, which they depend on, failed",
          changes: ['runtime:net.bridge.bridge-nf-call-iptables', 'runtime:net.bridge.bridge-nf-call-ip6tables'],
          promises: ['sysctl:net.bridge.bridge-nf-call-iptables', 'sysctl:net.bridge.bridge-nf-call-ip6tables'],
        },
      ]);

      // The summary counts what happened: applied, failed or blocked; never "everything else was converged" after an error.
      const applied = result.applied.reduce((n, r) => n + r.changes.length, 0);
      const text = renderApplyResult(result, [], 1, palette, []);
      expect(text).toContain(`Apply incomplete: ${applied} changes applied, 3 failed or not applied, 1 for an operator; see the errors above.`);
      expect(text).not.toContain('everything else was converged');
    });

    it('a provider without needs still waits for the whole of every type in `after`', async () => {
      const log: string[] = [];
      const mk = (type: string, after: string[], fail: boolean, needs?: Provider['needs']): Provider => ({
        type,
        after,
        observe: async () => null,
        diff: () => [
          { id: `${type}-a`, action: 'update', summary: 'a', op: 'a' },
          { id: `${type}-b`, action: 'update', summary: 'b', op: 'b' },
        ],
        ...(needs ? { needs } : {}),
        apply: async (_h, _s, changes) => {
          log.push(`${type}:${changes.map((c) => c.id).join(',')}`);
          if (fail) return { error: `${type}-b broke`, failedChanges: [`${type}-b`], failedFacts: ['b'] };
        },
      });
      const registry = {
        Base: mk('Base', [], true),
        Fine: mk('Fine', ['Base'], false, (_s, c) => [{ type: 'Base', fact: c.op as string }]),
        Coarse: mk('Coarse', ['Base'], false),
      } as never;
      const plan = diffAll(
        ['Base', 'Fine', 'Coarse'].map((type) => ({ spec: { type } as ResourceSpec, observed: null })),
        { live: false, root },
        registry,
      );
      const result = await applyPlan(new Host({ root }), plan, { progress: () => {}, door: undefined as never });
      expect(log).toEqual(['Base:Base-a,Base-b', 'Fine:Fine-a']);
      expect(result.applied).toEqual([
        { resource: 'Base', changes: ['Base-a'] },
        { resource: 'Fine', changes: ['Fine-a'] },
      ]);
      expect(result.failures.map((f) => [f.resource, f.changes])).toEqual([
        ['Base', ['Base-b']],
        ['Fine', ['Fine-b']],
        ['Coarse', ['Coarse-a', 'Coarse-b']],
      ]);
      expect(result.failures[2]!.message).toBe('not applied: Base, which it depends on, failed');
    });
  });
});
