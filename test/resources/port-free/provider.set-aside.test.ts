// PortFree and a unit whose own file is in /etc/systemd/system (where admins
// write units), and units started by their triggers (which units trigger which
// is test/ports/triggers.test.ts). Offline on fixture
// trees, judged by systemd's own tools: `systemctl --root` (is-enabled, and
// its refusal to mask over the file), and `systemd --test` for what starts at
// boot (test/helpers/systemd-oracle.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, readlinkSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Host } from '../../../src/host.js';
import type { PortFreeSpec } from '../../../src/resources/port-free/spec.js';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';
import { planRollback, executeRollback } from '../../../src/reconcile/rollback.js';
import { WriteDoor } from '../../../src/door/door.js';
import { loadUnitGraph } from '../../../src/systemd/unit-loader.js';
import { applyContext } from '../../helpers/door.js';
import { snapshot } from '../../helpers/snapshot.js';
import { ETC, LIB, oracle, oracleStarted, systemctlRoot, unitTree } from '../../helpers/systemd-oracle.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function spec(extra: Partial<PortFreeSpec> = {}): PortFreeSpec {
  return { type: 'PortFree', ports: [6443], protected_units: [], stop_spawner_units: [], mask: 'auto', timeout_seconds: 5, disable_units: [], ...extra };
}

const API = `[Unit]\nDescription=Admin's own API\nDefaultDependencies=no\n[Service]\nExecStart=/usr/bin/python3 -m http.server 6443\n[Install]\nWantedBy=multi-user.target\n`;
const STACK = `[Unit]\nDescription=Admin's stack\nWants=api.service\nDefaultDependencies=no\n[Install]\nWantedBy=multi-user.target\n`;

/** api.service: a file in /etc, enabled, and wanted by the enabled stack.target. */
function adminTree(): string {
  return unitTree(roots, 'set-aside-', {
    [`${ETC}/api.service`]: API,
    [`${ETC}/stack.target`]: STACK,
    [`${ETC}/multi-user.target.wants/api.service`]: { link: '../api.service' },
    [`${ETC}/multi-user.target.wants/stack.target`]: { link: '../stack.target' },
  });
}

const unitsOnly = (p: string) => ['root', 'no-generators'].includes(p.split('/')[0]!) || p.startsWith('var/lib/reconcile-test');

async function offlinePlan(root: string, s: PortFreeSpec) {
  const host = new Host({ root, live: false });
  return portFreeProvider.diff(s, await portFreeProvider.observe(host, s), { live: false });
}

describe('PortFree offline: an admin unit file in /etc/systemd/system', () => {
  it('systemctl itself refuses to mask it (the premise)', async () => {
    const root = adminTree();
    const r = await systemctlRoot(root, 'mask', 'api.service');
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('already exists');
  });

  it('is masked with its file set aside out of the search path; systemd agrees it no longer starts; --rollback restores the tree exactly', async () => {
    const root = adminTree();
    expect(oracleStarted(await oracle(root)).has('api.service')).toBe(true);
    const before = snapshot(root, unitsOnly);
    const s = spec({ disable_units: ['api.service'] });
    const changes = await offlinePlan(root, s);
    expect(changes.map((c) => [c.id, c.action])).toEqual([
      ['disable-api.service', 'disable'],
      ['mask-api.service', 'mask'],
    ]);
    expect(changes[1]!.summary).toContain('/etc/systemd/system/api.service is moved to /var/lib/k8s-host-reconcile/set-aside/etc/systemd/system/api.service');
    const host = new Host({ root, live: false });
    const ctx = await applyContext(host, '/root/ks/preflight/runs/run-1');
    await portFreeProvider.apply(host, s, changes, ctx);
    await ctx.door.end('ok');
    expect(readlinkSync(path.join(root, ETC, 'api.service'))).toBe('/dev/null');
    expect((await systemctlRoot(root, 'is-enabled', 'api.service')).stdout.trim()).toBe('masked');
    expect(oracleStarted(await oracle(root)).has('api.service')).toBe(false);
    expect(oracleStarted(await oracle(root)).has('stack.target')).toBe(true);
    expect(readFileSync(path.join(root, 'var/lib/k8s-host-reconcile/set-aside/etc/systemd/system/api.service'), 'utf8')).toBe(API);
    expect(await offlinePlan(root, s)).toEqual([]);

    const plan = await planRollback(host, '/root/ks/preflight', 'run-1');
    const door = await WriteDoor.open(host, { runDir: '/root/ks/preflight/runs/rollback-1', runId: 'rollback-1', mode: 'rollback', tool: 'test' });
    const r = await executeRollback(door, plan);
    await door.end('ok');
    expect(r.failed).toEqual([]);
    expect(snapshot(root, (p) => unitsOnly(p) || p === 'var' || p.startsWith('var/'))).toEqual(
      Object.fromEntries(Object.entries(before).filter(([p]) => !p.startsWith('var'))),
    );
    expect((await systemctlRoot(root, 'is-enabled', 'api.service')).stdout.trim()).toBe('enabled');
  });
});
