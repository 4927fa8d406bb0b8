// Whether an image needs a first-boot run and what it will do (first-boot/
// spec.ts), from a hand-made plan of the desired resources: deferred changes
// are work lines, a provider's own share (atFirstBoot) replaces its deferred
// lines and adds candidates and its longest wait; a running host, first_boot
// off or nothing to do derive nothing.
import { describe, expect, it } from 'vitest';
import { firstBootSpec, firstBootWork } from '../../../src/resources/first-boot/spec.js';
import type { AnyProvider } from '../../../src/resources/index.js';
import type { Change, DeriveInput, FirstBootPart, PlannedResource } from '../../../src/resources/types.js';
import type { DesiredState } from '../../../src/desired-state.js';

const change = (action: Change['action'], summary: string): Change => ({ id: summary, action, summary, op: null }) as Change;
const resource = (name: string, changes: Change[], part?: FirstBootPart): PlannedResource => ({
  name,
  type: name,
  spec: { type: name },
  provider: { type: name, ...(part ? { atFirstBoot: () => part } : {}) } as unknown as AnyProvider,
  changes,
});
const desired = (first_boot: DesiredState['first_boot']) =>
  ({ source: '/build/ds.yaml', reports_dir: '/r', facts: { source: 'native' }, first_boot, resources: [] }) as DesiredState;
const input = (over: Partial<DeriveInput>): DeriveInput => ({ desired: desired('apply'), live: false, resources: [], desiredBytes: () => 'bytes', ...over });

describe('firstBootWork', () => {
  it("each deferred change is a line named by its resource, without the plan's 'at first boot' lead; other changes are not work", () => {
    const work = firstBootWork([
      resource('SwapOff', [change('update', 'comment out /swapfile'), change('deferred', 'at first boot: swapoff -a')]),
      resource('SysctlFile', [change('deferred', 'at first boot sysctl --system'), change('operator', 'x'), change('deferred', 'load the values')]),
    ]);
    expect(work).toEqual(['SwapOff: swapoff -a', 'SysctlFile: sysctl --system', 'SysctlFile: load the values']);
  });

  it("a provider's own share replaces its deferred lines and comes after the others' lines", () => {
    const work = firstBootWork([
      resource('PortFree', [change('deferred', 'at first boot: free 6443')], {
        work: ['PortFree: free port 6443 once services run'],
        candidates: [],
        timeoutSec: 5,
      }),
      resource('SwapOff', [change('deferred', 'at first boot: swapoff -a')]),
    ]);
    expect(work).toEqual(['SwapOff: swapoff -a', 'PortFree: free port 6443 once services run']);
  });
});

describe('firstBootSpec', () => {
  const resources = [
    resource('SwapOff', [change('deferred', 'at first boot: swapoff -a')]),
    resource('PortFree', [], { work: ['PortFree: wait for b.service, a.service'], candidates: ['b.service', 'a.service'], timeoutSec: 30 }),
    resource('PortFree2', [], { work: ['PortFree2: wait'], candidates: ['a.service'], timeoutSec: 90 }),
  ];

  it('an image with work: the mode, the desired bytes, the candidates once and sorted, the longest wait', () => {
    let read = 0;
    const s = firstBootSpec(input({ resources, desiredBytes: () => (read++, 'reports_dir: /r\n') }));
    expect(s).toMatchObject({
      type: 'FirstBoot',
      name: 'FirstBoot',
      mode: 'apply',
      desired: { source: '/build/ds.yaml', bytes: 'reports_dir: /r\n' },
      candidates: ['a.service', 'b.service'],
      work: ['SwapOff: swapoff -a', 'PortFree: wait for b.service, a.service', 'PortFree2: wait'],
      portTimeoutSec: 90,
    });
    expect(read).toBe(1);
    // Run from the TypeScript sources, as here, there is no single file to copy.
    expect(s!.bundle).toBeNull();
    expect(firstBootSpec(input({ resources, desired: desired('verify') }))!.mode).toBe('verify');
  });

  it('no wait without a share: 0', () => {
    expect(firstBootSpec(input({ resources: [resources[0]!] }))!.portTimeoutSec).toBe(0);
  });

  it('nothing on a running host, with first_boot off, or with no work; the desired state is not read then', () => {
    const never = () => {
      throw new Error('read');
    };
    expect(firstBootSpec(input({ resources, live: true, desiredBytes: never }))).toBeNull();
    expect(firstBootSpec(input({ resources, desired: desired('off'), desiredBytes: never }))).toBeNull();
    expect(firstBootSpec(input({ resources: [resource('SwapOff', [change('update', 'x')])], desiredBytes: never }))).toBeNull();
  });
});
