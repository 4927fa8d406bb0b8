// The reconciler's own rules, with fake providers: dependency order, a failed
// resource blocking the ones that need it, partial reports kept, verification.
import { describe, expect, it } from 'vitest';
import { dependencyOrder, diffAll } from '../src/reconcile/plan.js';
import { applyPlan } from '../src/reconcile/apply.js';
import { verifyConverged } from '../src/reconcile/verify.js';
import type { ProviderRegistry } from '../src/resources/index.js';
import type { Change, Provider } from '../src/resources/types.js';
import type { ResourceSpec } from '../src/desired-state.js';
import { Host } from '../src/host.js';

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
      resources: [mk('SwapOff', [{ action: 'update', summary: 'swapoff /swapfile' }]), mk('PortFree', [{ action: 'operator', operator: 'not a unit' }]), mk('ModulesLoad', [{ action: 'deferred' }])],
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
