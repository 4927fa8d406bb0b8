// The engine's plan (reconcile/plan.ts) on a registry of small recording providers written here: what
// order resources are observed and diffed in (each after the types it names in `after`, otherwise the
// desired state's order), what context a diff gets, how a derived resource is planned after the
// desired ones, the order apply takes, and what the plan tells: actionable changes, operator lines,
// warnings and unknowns naming their resource, and the host facts merged first-come.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import type { DesiredState } from '../../src/desired-state.js';
import type { AnyProvider, ProviderRegistry } from '../../src/resources/index.js';
import type { BaseSpec, Change, HostFacts } from '../../src/resources/types.js';
import {
  actionable,
  applyOrder,
  dependencyOrder,
  diffAll,
  makePlan,
  observeAll,
  operatorChanges,
  pendingCount,
  planFacts,
  planWarnings,
  type Plan,
} from '../../src/reconcile/plan.js';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});
const emptyRoot = () => {
  const r = mkdtempSync(path.join(tmpdir(), 'plan-'));
  roots.push(r);
  return r;
};

const change = (id: string, action: Change['action'], extra: Partial<Change> = {}): Change => ({ id, action, summary: id, op: null, ...extra }) as Change;

/** A provider that records what it was asked and diffs to the changes given. */
function toy(type: string, log: string[], over: Partial<AnyProvider> & { changes?: Change[] } = {}): AnyProvider {
  const { changes = [], ...rest } = over;
  return {
    type,
    observe: async (_h: unknown, spec: BaseSpec) => {
      log.push(`observe ${spec.name ?? spec.type}`);
      return { of: spec.name ?? spec.type };
    },
    diff: (spec: BaseSpec, observed: unknown, ctx: unknown) => {
      log.push(`diff ${spec.name ?? spec.type} ${JSON.stringify(observed)} ${JSON.stringify(ctx)}`);
      return changes;
    },
    ...rest,
  } as unknown as AnyProvider;
}
const spec = (type: string, name?: string): BaseSpec => (name ? { type, name } : { type });
const desired = (resources: BaseSpec[], root = '/nonexistent'): DesiredState =>
  ({ source: path.join(root, 'd.yaml'), reports_dir: '/r', facts: { source: 'native' }, first_boot: 'off', resources }) as DesiredState;

describe('dependencyOrder', () => {
  const log: string[] = [];
  const reg: ProviderRegistry = {
    A: toy('A', log),
    B: toy('B', log, { after: ['A'] } as Partial<AnyProvider>),
    C: toy('C', log, { after: ['B', 'Missing'] } as Partial<AnyProvider>),
  };

  it('puts each spec after every spec of the types it names, else keeps the given order', () => {
    const order = dependencyOrder([spec('C'), spec('B', 'b1'), spec('A', 'a1'), spec('A', 'a2'), spec('B', 'b2')], reg);
    expect(order.map((s) => s.name ?? s.type)).toEqual(['a1', 'a2', 'b1', 'b2', 'C']);
  });

  it('a type named in after that is not desired does not hold anything back; an unknown type keeps its place', () => {
    expect(dependencyOrder([spec('X'), spec('C'), spec('Y')], reg).map((s) => s.type)).toEqual(['X', 'C', 'Y']);
  });

  it('a cycle is an error naming the types', () => {
    const cyc: ProviderRegistry = { P: toy('P', log, { after: ['Q'] } as Partial<AnyProvider>), Q: toy('Q', log, { after: ['P'] } as Partial<AnyProvider>) };
    expect(() => dependencyOrder([spec('P'), spec('Q')], cyc)).toThrow('resource ordering has a cycle among: P, Q');
  });
});

describe('observeAll and diffAll', () => {
  it('observe in dependency order, then each diff gets its own observation and the run context', async () => {
    const log: string[] = [];
    const reg: ProviderRegistry = { A: toy('A', log), B: toy('B', log, { after: ['A'] } as Partial<AnyProvider>) };
    const obs = await observeAll(new Host({ root: emptyRoot() }), desired([spec('B'), spec('A')]), reg);
    expect(log).toEqual(['observe A', 'observe B']);
    expect(obs.map((o) => o.observed)).toEqual([{ of: 'A' }, { of: 'B' }]);
    const plan = diffAll(obs, { live: false, root: '/img', firstBoot: true }, reg);
    expect(log.slice(2)).toEqual(['diff A {"of":"A"} {"live":false,"firstBoot":true}', 'diff B {"of":"B"} {"live":false,"firstBoot":true}']);
    expect(plan.live).toBe(false);
    expect(plan.root).toBe('/img');
    expect(plan.resources.map((r) => [r.name, r.type])).toEqual([
      ['A', 'A'],
      ['B', 'B'],
    ]);
  });

  it('a type with no provider is an error naming it', async () => {
    await expect(observeAll(new Host({ root: emptyRoot() }), desired([spec('Nope')]), {})).rejects.toThrow('no provider is registered for resource type Nope');
    expect(() => diffAll([{ spec: spec('Nope'), observed: null }], { live: true, root: '/' }, {})).toThrow('no provider is registered for resource type Nope');
  });
});

describe('makePlan', () => {
  it('firstBoot is on offline unless first_boot is off; a derived resource is planned after the desired ones', async () => {
    const log: string[] = [];
    const seen: string[][] = [];
    const reg: ProviderRegistry = {
      Derived: toy('Derived', log, {
        derive: (input: { resources: Array<{ name: string }> }) => {
          seen.push(input.resources.map((r) => r.name));
          return input.resources.length > 0 ? spec('Derived', 'the-derived') : null;
        },
      } as Partial<AnyProvider>),
      A: toy('A', log),
    };
    const root = emptyRoot();
    const d = { ...desired([spec('A')], root), first_boot: 'apply' } as DesiredState;
    const plan = await makePlan(new Host({ root }), d, reg);
    expect(plan.resources.map((r) => r.name)).toEqual(['A', 'the-derived']);
    expect(seen).toEqual([['A']]);
    expect(log).toEqual([
      'observe A',
      'diff A {"of":"A"} {"live":false,"firstBoot":true}',
      'observe the-derived',
      'diff the-derived {"of":"the-derived"} {"live":false}',
    ]);
    log.length = 0;
    await makePlan(new Host({ root }), desired([spec('A')], root), reg);
    expect(log[1]).toBe('diff A {"of":"A"} {"live":false,"firstBoot":false}');
  });
});

function planOf(resources: Array<{ name: string; changes: Change[]; provider?: Partial<AnyProvider> }>): Plan {
  return {
    live: false,
    root: '/',
    resources: resources.map((r) => ({
      name: r.name,
      type: r.name,
      spec: spec(r.name),
      provider: { type: r.name, ...(r.provider ?? {}) } as AnyProvider,
      observed: { of: r.name },
      changes: r.changes,
    })),
  };
}

describe('what the plan tells', () => {
  const plan = planOf([
    { name: 'Swap', changes: [change('s1', 'update'), change('s2', 'deferred'), change('s3', 'operator', { operator: 'remove it by hand' })] },
    { name: 'Ports', changes: [change('p1', 'stop'), change('p2', 'runtime')], provider: { applyFirst: true } as Partial<AnyProvider> },
  ]);

  it('actionable leaves out operator and deferred changes; pendingCount counts the rest', () => {
    expect(actionable(plan.resources[0]!.changes).map((c) => c.id)).toEqual(['s1']);
    expect(pendingCount(plan)).toBe(3);
  });

  it('operatorChanges names each operator line with its resource', () => {
    expect(operatorChanges(plan).map((o) => [o.resource, o.change.id])).toEqual([['Swap', 's3']]);
  });

  it('applyOrder puts an applyFirst provider first, otherwise the plan order', () => {
    expect(applyOrder(plan.resources).map((r) => r.name)).toEqual(['Ports', 'Swap']);
    expect(applyOrder(plan.resources.slice(0, 1)).map((r) => r.name)).toEqual(['Swap']);
  });

  it('planWarnings names the resource; unknowns are loud warnings carrying their withdrawals', () => {
    const p = planOf([
      {
        name: 'Sysctl',
        changes: [],
        provider: {
          warnings: (_s: unknown, o: unknown) => [`read ${JSON.stringify(o)}`],
          unknowns: () => [{ message: '/etc/rc.local:3: a program the tool cannot read', withdraws: [{ promise: 'sysctl:x', from: 'boot' }] }],
        } as unknown as Partial<AnyProvider>,
      },
      { name: 'Quiet', changes: [] },
    ]);
    expect(planWarnings(p)).toEqual([
      { level: 'warning', message: 'Sysctl: read {"of":"Sysctl"}' },
      {
        level: 'warning',
        message: 'Sysctl: /etc/rc.local:3: a program the tool cannot read',
        unknown: true,
        withdraws: [{ promise: 'sysctl:x', from: 'boot' }],
      },
    ]);
  });
});

describe('planFacts', () => {
  const facts = (f: HostFacts) => ({ facts: () => f }) as unknown as Partial<AnyProvider>;

  it('no plan, or no provider telling facts: no facts', () => {
    expect(planFacts(null)).toEqual({});
    expect(planFacts(planOf([{ name: 'A', changes: [] }]))).toEqual({});
  });

  it('the first resource to tell a fact gives it; a map key by key, first one winning; listeners add up', () => {
    const p = planOf([
      {
        name: 'A',
        changes: [],
        provider: facts({ swapTotalKb: 0, memTotalKb: null, sysctls: new Map([['net.ipv4.ip_forward', '1']]), listeners: { ports: [6443], busy: [] } }),
      },
      {
        name: 'B',
        changes: [],
        provider: facts({
          swapTotalKb: 2048,
          memTotalKb: 4096,
          kernelRelease: '6.1.0-13-amd64',
          sysctls: new Map<string, string | null>([
            ['net.ipv4.ip_forward', '0'],
            ['net.bridge.bridge-nf-call-iptables', null],
          ]),
          modules: new Map([['overlay', true]]),
          listeners: { ports: [10250], busy: [10250] },
        }),
      },
      {
        name: 'C',
        changes: [],
        provider: facts({
          modules: new Map([
            ['overlay', false],
            ['br_netfilter', false],
          ]),
        }),
      },
    ]);
    const f = planFacts(p);
    expect(f.swapTotalKb).toBe(0);
    expect(f.memTotalKb).toBeNull();
    expect(f.kernelRelease).toBe('6.1.0-13-amd64');
    expect(Object.fromEntries(f.sysctls!)).toEqual({ 'net.ipv4.ip_forward': '1', 'net.bridge.bridge-nf-call-iptables': null });
    expect(Object.fromEntries(f.modules!)).toEqual({ overlay: true, br_netfilter: false });
    expect(f.listeners).toEqual({ ports: [6443, 10250], busy: [10250] });
    expect('sysctlTree' in f).toBe(false);
  });
});
