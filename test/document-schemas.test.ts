// The published JSON Schemas of the --json documents (schema/plan, apply and
// error .schema.json) hold for what the bundle really prints and writes: on a
// tree with changes, with an operator line and an unknown, with a kubespray
// checkout (who-fixes.json), converged, accepted, live (before_state and
// facts.json, a plan only reads), after an apply (its stdout, plan.json,
// result.json, who-fixes.json in reports_dir) and when a run is refused. The
// schemas are strict: a real document missing a required field, or with a
// field it does not name, fails.
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { chmodSync, cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { buildTree } from './helpers/tree.js';
import { DESIRED, FSTAB } from './helpers/swap-modules-tree.js';
import { FORMAT_VERSION } from '../src/version.js';
import { CHECK_NAME_PATTERN } from '../src/findings.js';

const repo = path.resolve(new URL('..', import.meta.url).pathname);
const schema = (name: string) => JSON.parse(readFileSync(path.join(repo, 'schema', `${name}.schema.json`), 'utf8'));

// Strict: an unknown keyword or a loose type in the schemas themselves is an error, not a warning.
const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
ajv.addSchema(schema('plan'));
ajv.addSchema(schema('apply'));
ajv.addSchema(schema('error'));
const validator = (id: string): ValidateFunction => ajv.getSchema(`https://k8s-host-reconcile.invalid/schema/${id}`)!;
const PLAN = validator('plan.schema.json');
const APPLY = validator('apply.schema.json');
const ERROR = validator('error.schema.json');

function expectValid(v: ValidateFunction, doc: unknown): void {
  const ok = v(doc);
  expect(ok ? [] : v.errors!.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`)).toEqual([]);
}

let work: string;
const bundle = (args: string[], env: Record<string, string> = {}) =>
  execa('node', [path.join(repo, 'dist/reconcile.mjs'), ...args], { reject: false, env: { ...env, NO_COLOR: '1' } });
const json = async (args: string[]) => {
  const r = await bundle([...args, '--json']);
  return { code: r.exitCode, doc: JSON.parse(r.stdout) as Record<string, unknown> };
};

/** A used server: a swap line, an rc.local that turns swap on (an operator line) and runs a python script (an unknown). */
function usedServer(dir: string): { root: string; f: string[] } {
  const root = path.join(dir, 'root');
  buildTree(root, {
    'etc/fstab': FSTAB,
    'etc/rc.local': '#!/bin/sh\n/usr/local/bin/tune.sh\nswapon /swapfile\nsysctl -w net.ipv4.ip_forward=0\nexit 0\n',
    'usr/local/bin/tune.sh': '#!/usr/bin/python3\nprint("tuned")\n',
    'etc/sysctl.d/zz-legacy.conf': 'net.ipv4.ip_forward = 0\n',
    'etc/systemd/system/.keep': '',
  });
  chmodSync(path.join(root, 'etc/rc.local'), 0o755);
  chmodSync(path.join(root, 'usr/local/bin/tune.sh'), 0o755);
  writeFileSync(
    path.join(dir, 'desired.yaml'),
    [
      'reports_dir: /root/ks/preflight',
      'first_boot: off',
      'resources:',
      '  - type: SwapOff',
      '  - type: ModulesLoad',
      '    modules: [overlay, br_netfilter]',
      '  - type: SysctlFile',
      '    settings:',
      '      net.ipv4.ip_forward: 1',
      '  - type: PortFree',
      '    ports: [6443, 10250]',
      '',
    ].join('\n'),
  );
  return { root, f: ['-f', path.join(dir, 'desired.yaml'), '--root', root] };
}

/** The swap tree with a kubespray checkout and inventory: the plan's reports hold who-fixes.json. */
function withCheckout(dir: string): { root: string; f: string[] } {
  const root = path.join(dir, 'root');
  buildTree(root, {
    'etc/fstab': FSTAB,
    'etc/systemd/system/.keep': '',
    'root/ks/inventory/lab/inventory.ini': '[kube_control_plane]\nnode1\n\n[k8s_cluster:children]\nkube_control_plane\n',
  });
  cpSync(path.join(repo, 'test/fixtures/kubespray-basic'), path.join(root, 'opt/ks/kubespray'), { recursive: true });
  writeFileSync(
    path.join(dir, 'desired.yaml'),
    `${DESIRED}kubespray: { dir: /opt/ks/kubespray, inventory: /root/ks/inventory/lab/inventory.ini, node: node1 }\n`,
  );
  return { root, f: ['-f', path.join(dir, 'desired.yaml'), '--root', root] };
}

beforeAll(async () => {
  await execa('node', ['scripts/bundle.mjs'], { cwd: repo });
  work = mkdtempSync(path.join(tmpdir(), 'document-schemas-'));
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the schemas themselves', () => {
  it('compile in ajv strict mode, and their format_version is the one the code writes', () => {
    expect(schema('plan').$defs.format_version).toEqual({ description: expect.any(String), const: FORMAT_VERSION });
    // The apply and error documents take it from the plan schema, not a copy of their own.
    expect(schema('apply').properties.format_version).toEqual({ $ref: 'plan.schema.json#/$defs/format_version' });
    expect(schema('error').properties.format_version).toEqual({ $ref: 'plan.schema.json#/$defs/format_version' });
    // A finding's check name has the grammar --accept takes.
    expect(schema('plan').$defs.finding.properties.check.pattern).toBe(CHECK_NAME_PATTERN);
  });
});

describe('real plan documents validate against schema/plan.schema.json', () => {
  it('a used server: changes, an operator line, an unknown (exit 2)', async () => {
    const t = usedServer(mkdtempSync(path.join(work, 'used-')));
    const { code, doc } = await json(['plan', ...t.f]);
    expect(code).toBe(2);
    // The tree is what the test says it is: each shape the schema describes is there to be checked.
    const changes = (doc.resources as Array<{ changes: Array<{ action: string; withdraws: unknown[] }> }>).flatMap((r) => r.changes);
    expect(changes.some((c) => c.action === 'operator' && c.withdraws.length > 0)).toBe(true);
    expect(changes.some((c) => c.action === 'mask')).toBe(true);
    expect((doc.findings as Array<{ unknown?: boolean; withdraws?: unknown[] }>).some((f) => f.unknown && f.withdraws!.length > 0)).toBe(true);
    expect((doc.promises as Array<{ withdrawn_by: unknown[] }>).some((p) => p.withdrawn_by.length > 0)).toBe(true);
    expectValid(PLAN, doc);
  });

  it('with a kubespray checkout: reports holds who-fixes.json', async () => {
    const t = withCheckout(mkdtempSync(path.join(work, 'ks-')));
    const { doc } = await json(['plan', ...t.f]);
    expect(Object.keys(doc.reports as object)).toEqual(['who-fixes.json']);
    expectValid(PLAN, doc);
  });

  it('live (a plan reads this machine and writes nothing): before_state and facts.json', async () => {
    const dir = mkdtempSync(path.join(work, 'live-'));
    writeFileSync(path.join(dir, 'desired.yaml'), `reports_dir: ${dir}/never-written\nfirst_boot: off\nresources:\n  - type: SwapOff\n`);
    const { doc } = await json(['plan', '-f', path.join(dir, 'desired.yaml')]);
    expect(doc.live).toBe(true);
    expect(doc.before_state).not.toBeNull();
    expect(Object.keys(doc.reports as object)).toContain('facts.json');
    expectValid(PLAN, doc);
    expect(readdirSync(dir)).toEqual(['desired.yaml']);
  }, 60_000);

  it('apply: its stdout and result.json against apply.schema.json, plan.json against plan.schema.json, who-fixes.json against its $defs; then a converged plan and an accepted finding', async () => {
    const t = withCheckout(mkdtempSync(path.join(work, 'apply-')));
    const { code, doc } = await json(['apply', ...t.f]);
    expect(code).toBe(0);
    expect((doc.applied as unknown[]).length).toBeGreaterThan(0);
    expect((doc.backups as unknown[]).length).toBeGreaterThan(0);
    expectValid(APPLY, doc);
    const reports = path.join(t.root, 'root/ks/preflight');
    const [run] = readdirSync(path.join(reports, 'runs'));
    const read = (p: string) => JSON.parse(readFileSync(path.join(reports, p), 'utf8'));
    expectValid(APPLY, read(`runs/${run}/result.json`));
    expectValid(PLAN, read(`runs/${run}/plan.json`));
    expect(read(`runs/${run}/plan.json`).mode).toBe('apply');
    expectValid(validator('plan.schema.json#/$defs/who-fixes.json'), read('who-fixes.json'));

    const again = await json(['plan', ...t.f]);
    expect(again.doc.pending_changes).toBe(0);
    expectValid(PLAN, again.doc);

    // A former node's kubeconfig: the FormerNode finding, accepted by name.
    buildTree(t.root, { 'etc/kubernetes/kubelet.conf': 'apiVersion: v1\n' });
    const accepted = await json(['plan', ...t.f, '--accept', 'FormerNode']);
    expect(accepted.doc.accepted_findings).toBe(1);
    expectValid(PLAN, accepted.doc);
  }, 60_000);
});

describe('refused runs print an error document that validates against schema/error.schema.json', () => {
  it.each([
    ['a desired state with an unknown key (located issues)', (d: string) => ['plan', '-f', path.join(d, 'bad.yaml'), '--root', d]],
    ['an unknown option', () => ['plan', '--no-such-option']],
    ['a missing desired state', (d: string) => ['apply', '-f', path.join(d, 'none.yaml'), '--root', d]],
    ['a fleet report over a directory that is not there', (d: string) => ['report', '-o', d, path.join(d, 'no-such-dir')]],
  ])('%s', async (_what, args) => {
    const dir = mkdtempSync(path.join(work, 'error-'));
    writeFileSync(path.join(dir, 'bad.yaml'), 'reports_dir: /r\nresources:\n  - type: SwapOff\n    persist: yes\n');
    const { code, doc } = await json(args(dir));
    expect(code).toBe(1);
    expect(typeof doc.error).toBe('string');
    expectValid(ERROR, doc);
  });
});

describe('the schemas are strict enough to refuse a wrong document', () => {
  let plan: Record<string, unknown>;
  let applied: Record<string, unknown>;
  beforeAll(async () => {
    const t = usedServer(mkdtempSync(path.join(work, 'strict-')));
    plan = (await json(['plan', ...t.f])).doc;
    applied = (await json(['apply', ...t.f])).doc;
  }, 60_000);
  const without = (doc: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(doc).filter(([k]) => k !== key));

  it.each(['format_version', 'resources', 'promises', 'findings', 'pending_changes'])('a plan document without %s fails', (key) => {
    expect(PLAN(plan)).toBe(true);
    expect(PLAN(without(plan, key))).toBe(false);
  });

  it('a plan document with a field the schema does not name, or another format_version, fails', () => {
    expect(PLAN({ ...plan, extra: 1 })).toBe(false);
    expect(PLAN({ ...plan, format_version: '2.0' })).toBe(false);
    const resources = plan.resources as Array<{ changes: Array<Record<string, unknown>> }>;
    const first = resources.find((r) => r.changes.length > 0)!;
    const bent = { ...first, changes: [{ ...first.changes[0], colour: 'red' }] };
    expect(PLAN({ ...plan, resources: [bent] })).toBe(false);
    expect(PLAN({ ...plan, findings: [{ level: 'fatal', message: 'x' }] })).toBe(false);
  });

  it('an apply document without verified or journal, or with an unknown field, fails; a plan document is no apply document', () => {
    // An apply that leaves operator lines and an unknown: not verified, and still the schema's document.
    expect(applied.verified).toBe(false);
    expect(APPLY(applied)).toBe(true);
    expect(APPLY(without(applied, 'verified'))).toBe(false);
    expect(APPLY(without(applied, 'journal'))).toBe(false);
    expect(APPLY({ ...applied, surprise: true })).toBe(false);
    expect(APPLY(plan)).toBe(false);
  });
});
