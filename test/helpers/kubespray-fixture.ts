// A kubespray checkout written in kubespray's layout into a temporary root
// (removed after each test), and the who-fixes audit of the two roles the
// audit reads, for the kubespray domain suites.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { Host } from '../../src/host.js';
import { KubesprayCheckout } from '../../src/kubespray/checkout.js';
import { auditWhoFixes, type WhoFixes } from '../../src/kubespray/who-fixes.js';
import type { KubesprayNode } from '../../src/kubespray/report.js';
import { buildVarContext } from '../../src/kubespray/vars.js';
import { buildTree } from './tree.js';

export const KS = 'opt/ks/kubespray';
export const P = 'roles/kubernetes/preinstall';
export const N = 'roles/kubernetes/node';
export const PM = `${P}/tasks/main.yml`;
export const NM = `${N}/tasks/main.yml`;

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A checkout holding `files` (paths relative to the checkout). */
export async function checkout(files: Record<string, string>): Promise<KubesprayCheckout> {
  const root = await mkdtemp(path.join(tmpdir(), 'ks-fixture-'));
  temps.push(root);
  buildTree(root, Object.fromEntries(Object.entries(files).map(([k, v]) => [`${KS}/${k}`, v])));
  return new KubesprayCheckout(new Host({ root }), `/${KS}`);
}

/** who-fixes over a checkout whose preinstall and node roles hold these task lists (YAML text, without the leading ---). */
export async function audit(preinstall: string, node = '', extra: Record<string, string> = {}): Promise<WhoFixes> {
  return auditWhoFixes(await checkout({ [PM]: `---\n${preinstall || '[]\n'}`, [NM]: `---\n${node || '[]\n'}`, ...extra }));
}

/** A node of a fixture checkout holding `files`, its variables read as for any task of a role (no inventory, no facts). */
export async function fixtureNode(files: Record<string, string>, groups: string[] = ['kube_control_plane']): Promise<KubesprayNode> {
  const ck = await checkout(files);
  return {
    checkout: ck,
    groups,
    memoryStops: false,
    vars: (role) => buildVarContext({ ck, role }),
    audit: { facts: undefined, host: undefined, reader: undefined } as unknown as KubesprayNode['audit'],
  };
}
