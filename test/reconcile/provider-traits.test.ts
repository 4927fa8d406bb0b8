// A provider the engine has never heard of, registered with one line: the
// engine plans, applies and verifies it, asks its host checks before
// reading anything, and an image's first boot takes its deferred work.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import type { DesiredState } from '../../src/desired-state.js';
import type { ResourceSpec } from '../../src/resources/index.js';
import { PROVIDERS, type ProviderRegistry } from '../../src/resources/index.js';
import { actionable, applyOrder, makePlan } from '../../src/reconcile/plan.js';
import { applyPlan } from '../../src/reconcile/apply.js';
import { verifyConverged } from '../../src/reconcile/verify.js';
import { InputError } from '../../src/errors.js';
import { openDoor } from '../helpers/door.js';
import { hostnameProvider } from '../helpers/hostname-provider.js';
import type { FirstBootSpec } from '../../src/resources/first-boot/provider.js';
import type { BaseSpec } from '../../src/desired-state.js';

// The one line that adds it.
const REGISTRY: ProviderRegistry = { ...PROVIDERS, Hostname: hostnameProvider };

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function image(): { root: string; desired: (firstBoot: DesiredState['first_boot']) => DesiredState } {
  const root = mkdtempSync(path.join(tmpdir(), 'provider-traits-'));
  roots.push(root);
  mkdirSync(path.join(root, 'etc'));
  writeFileSync(path.join(root, 'etc/hostname'), 'debian\n');
  const source = path.join(root, 'desired-state.yaml');
  writeFileSync(source, 'the bytes the image gets a copy of\n');
  return {
    root,
    desired: (firstBoot) => ({
      source,
      reports_dir: '/root/ks/preflight',
      facts: { source: 'native' },
      first_boot: firstBoot,
      resources: [{ type: 'Hostname', hostname: 'node-1' } as unknown as ResourceSpec],
    }),
  };
}

describe('a provider registered with one line', () => {
  it('is planned, applied through the write door and verified by the engine', async () => {
    const { root, desired } = image();
    const host = new Host({ root });
    const plan = await makePlan(host, desired('off'), REGISTRY);
    expect(plan.resources.map((r) => [r.name, r.changes.map((c) => [c.id, c.action])])).toEqual([
      [
        'Hostname',
        [
          ['file', 'update'],
          ['running', 'deferred'],
        ],
      ],
    ]);

    const result = await applyPlan(host, plan, { progress: () => {}, door: await openDoor(host) });
    expect(result).toEqual({ applied: [{ resource: 'Hostname', changes: ['file'] }], failures: [], reports: {} });
    // hostname(5): one line, the name.
    expect(readFileSync(path.join(root, 'etc/hostname'), 'utf8')).toBe('node-1\n');

    const after = await makePlan(host, desired('off'), REGISTRY);
    expect(after.resources.flatMap((r) => actionable(r.changes))).toEqual([]);
    expect(verifyConverged(after)).toEqual([]);
  });

  it('the file it claims and its own host check are judged before anything is observed, as desired-state problems', async () => {
    const { root, desired } = image();
    rmSync(path.join(root, 'etc/hostname'));
    symlinkSync('/run/hostname', path.join(root, 'etc/hostname'));
    // dpkg's file list names the link: a package ships it.
    mkdirSync(path.join(root, 'var/lib/dpkg/info'), { recursive: true });
    writeFileSync(path.join(root, 'var/lib/dpkg/info/netbase.list'), '/.\n/etc\n/etc/hostname\n');
    const err = await makePlan(new Host({ root }), desired('off'), REGISTRY).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).issues.map((i) => i.message)).toEqual([
      "/etc/hostname is netbase's link to /run/hostname: replacing it with our file would stop /run/hostname from applying at boot; choose another file name (e.g. k8s.conf)",
      '/etc/hostname is a symbolic link; replace it with a file first',
    ]);
  });

  it("in image mode its deferred change is the first boot's work, and the first-boot install is applied first", async () => {
    const { desired, root } = image();
    const plan = await makePlan(new Host({ root }), desired('apply'), REGISTRY);
    expect(plan.resources.map((r) => r.type)).toEqual(['Hostname', 'FirstBoot']);
    expect(applyOrder(plan.resources).map((r) => r.type)).toEqual(['FirstBoot', 'Hostname']);
    const firstBoot = { spec: plan.resources[1]!.spec as BaseSpec as FirstBootSpec };
    expect(firstBoot.spec.work).toEqual(['Hostname: the kernel takes node-1 from /etc/hostname']);
    expect(readFileSync(desired('apply').source, 'utf8')).toBe('the bytes the image gets a copy of\n');
    expect(firstBoot.spec.desired.bytes).toBe('the bytes the image gets a copy of\n');
  });
});
