// The first boot's wait asks each desired resource's provider
// (Provider.firstBootWait) in the desired state's order, tells each what was
// already waited for, and names no resource itself: a registry of stand-ins
// shows it.
import { describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import type { DesiredState } from '../../src/desired-state.js';
import type { AnyProvider, ProviderRegistry } from '../../src/resources/index.js';
import type { FirstBootWait } from '../../src/resources/types.js';
import { waitForCandidates } from '../../src/first-boot/wait.js';

const desired = (types: string[]): DesiredState =>
  ({
    source: 'd.yaml',
    reports_dir: '/r',
    first_boot: 'apply',
    facts: { source: 'native' },
    resources: types.map((type, i) => ({ type, name: `r${i}` })),
  }) as never;

describe('first boot: each resource says what to wait for', () => {
  it('calls firstBootWait per spec in order, passing what earlier specs waited for; providers without it are skipped', async () => {
    const seen: Array<{ name: string; before: string[] }> = [];
    const waiter = (unit: string): AnyProvider =>
      ({
        firstBootWait: async (_h: Host, spec: { name: string }, ctx: { waited: readonly FirstBootWait[]; progress: (m: string) => void }) => {
          seen.push({ name: spec.name, before: ctx.waited.map((w) => w.unit) });
          ctx.progress(`waited for ${unit}`);
          return [{ unit, outcome: 'gone', seconds: 0 }];
        },
      }) as never;
    const registry: ProviderRegistry = { A: waiter('a.service'), B: {} as never, C: waiter('c.service') };
    const lines: string[] = [];
    const waited = await waitForCandidates(
      new Host({ root: '/nonexistent', live: true }),
      desired(['A', 'B', 'C', 'A']),
      (m) => lines.push(m),
      undefined,
      registry,
    );
    expect(waited.map((w) => w.unit)).toEqual(['a.service', 'c.service', 'a.service']);
    expect(seen).toEqual([
      { name: 'r0', before: [] },
      { name: 'r2', before: ['a.service'] },
      { name: 'r3', before: ['a.service', 'c.service'] },
    ]);
    expect(lines).toEqual(['waited for a.service', 'waited for c.service', 'waited for a.service']);
  });

  it('a desired state whose resources have no first-boot wait waits for nothing', async () => {
    expect(await waitForCandidates(new Host({ root: '/nonexistent', live: true }), desired(['B']), () => {}, undefined, { B: {} as never })).toEqual([]);
  });
});
