// The plan document (plan-document.ts) of a hand-made plan: its counts, each
// change as --json shows it (bytes that are not UTF-8 as U+FFFD, a line
// holding a credential redacted, an operator line's withdrawals), each
// resource's verdict, and the document against schema/plan.schema.json (the
// closed contract, written by hand, validated with ajv).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { jsonChanges, planDocument } from '../../src/reconcile/plan-document.js';
import type { Plan } from '../../src/reconcile/plan.js';
import type { AnyProvider } from '../../src/resources/index.js';
import type { Change } from '../../src/resources/types.js';
import type { Finding } from '../../src/findings.js';
import { FORMAT_VERSION, TOOL_VERSION } from '../../src/version.js';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
const schema = (name: string) => JSON.parse(readFileSync(path.join(repo, 'schema', `${name}.schema.json`), 'utf8'));
ajv.addSchema(schema('apply'));
const PLAN = ajv.compile(schema('plan'));
const valid = (doc: unknown) => (PLAN(doc) ? [] : PLAN.errors!.map((e) => `${e.instancePath} ${e.message}`));

const provider = {
  type: 'Toy',
  promised: () => [{ id: 'toy:on', kind: 'toy', subject: 'toy', expect: 'on' }],
  promiseKinds: { toy: { describe: () => 'toy on', judge: () => null } },
  summarize: () => ({ seen: 'summary' }),
  notes: () => ['a note'],
} as unknown as AnyProvider;
const resource = (name: string, changes: Change[]) => ({ name, type: 'Toy', spec: { type: 'Toy' }, provider, observed: { raw: true }, changes });
const plan = (...resources: ReturnType<typeof resource>[]): Plan => ({ live: false, root: '/img', resources });

const write: Change = {
  id: 'file',
  action: 'update',
  summary: 'rewrite /etc/fstab',
  file: { path: '/etc/fstab', before: 'LABEL=sw\xe4p none swap sw 0 0\n', after: '#LABEL=sw\xe4p none swap sw 0 0\n' },
  op: { k: 1 },
} as Change;
const secret: Change = {
  id: 'cifs',
  action: 'update',
  summary: 'rewrite /etc/fstab',
  file: {
    path: '/etc/fstab',
    before: '//nas/s /mnt cifs username=bob,password=hunter2 0 0\n',
    after: '#//nas/s /mnt cifs username=bob,password=hunter2 0 0\n',
  },
  op: null,
} as Change;
const operator: Change = { id: 'op', action: 'operator', summary: 'stop it', operator: 'run systemctl stop x', op: null } as Change;
const deferred: Change = { id: 'later', action: 'deferred', summary: 'at first boot: swapoff -a', runtime: true, op: null } as Change;

describe('jsonChanges', () => {
  it('file bytes as text for people: invalid UTF-8 as U+FFFD; the kind of change, runtime and deferred flags, the op as detail', () => {
    const [c] = jsonChanges([write]);
    expect(c).toEqual({
      id: 'file',
      action: 'update',
      summary: 'rewrite /etc/fstab',
      runtime: false,
      deferred: false,
      operator: null,
      withdraws: [],
      path: '/etc/fstab',
      before: 'LABEL=sw\ufffdp none swap sw 0 0\n',
      after: '#LABEL=sw\ufffdp none swap sw 0 0\n',
      redacted: false,
      detail: { k: 1 },
    });
    expect(jsonChanges([deferred])[0]).toMatchObject({ deferred: true, runtime: true, path: null, before: null, after: null });
  });

  it('a line holding a credential is redacted on both sides, and the change says so', () => {
    const [c] = jsonChanges([secret]);
    expect(JSON.stringify(c)).not.toContain('hunter2');
    expect(c!.redacted).toBe(true);
    expect(c!.before).toContain('(sensitive value');
  });

  it('only an operator line carries withdrawals: its own, else what the caller says', () => {
    const w = [{ promise: 'toy:on', from: 'apply' as const }];
    expect(jsonChanges([operator, write], () => w).map((c) => c.withdraws)).toEqual([w, []]);
    expect(jsonChanges([{ ...operator, withdraws: [{ promise: 'x', from: 'boot' }] } as Change])[0]!.withdraws).toEqual([{ promise: 'x', from: 'boot' }]);
  });
});

describe('planDocument', () => {
  const findings: Finding[] = [
    { level: 'error', message: 'kubespray stops', stops: true },
    { level: 'warning', message: 'accepted', accepted: true } as Finding,
    { level: 'info', message: 'fyi' },
  ];

  it('counts, resources, promises and findings of the plan; valid against the schema', () => {
    const doc = planDocument(plan(resource('a', [write, operator, deferred]), resource('b', [])), { findings });
    expect(doc).toMatchObject({
      format_version: FORMAT_VERSION,
      tool: { name: 'k8s-host-reconcile', version: TOOL_VERSION },
      mode: 'plan',
      live: false,
      root: '/img',
      before_state: null,
      pending_changes: 1,
      operator_required: 1,
      kubespray_preflight_failures: 1,
      accepted_findings: 1,
      findings,
    });
    expect(doc.resources.map((r) => [r.name, r.in_sync, r.changes.length, r.observed, r.notes])).toEqual([
      ['a', false, 3, { seen: 'summary' }, ['a note']],
      ['b', true, 0, { seen: 'summary' }, ['a note']],
    ]);
    // The operator line names no promise of its own: it takes back every promise of its resource.
    expect(doc.resources[0]!.changes[1]!.withdraws).toEqual([{ promise: 'toy:on', from: 'apply' }]);
    expect('reports' in doc).toBe(false);
    expect(valid(doc)).toEqual([]);
  });

  it('a resource with only an operator line is not in sync; the parts given override', () => {
    const doc = planDocument(plan(resource('a', [operator])), { mode: 'apply', operator: 0, reports: { 'facts.json': {} }, before: { swap_total_kb: 0 } });
    expect(doc.resources[0]!.in_sync).toBe(false);
    expect([doc.mode, doc.operator_required, doc.pending_changes, doc.before_state, doc.reports]).toEqual([
      'apply',
      0,
      0,
      { swap_total_kb: 0 },
      { 'facts.json': {} },
    ]);
  });

  it('a credential anywhere in the document is redacted', () => {
    const doc = planDocument(plan(resource('a', [secret])), { findings: [{ level: 'warning', message: '/etc/fstab:1: password=hunter2' }] });
    expect(JSON.stringify(doc)).not.toContain('hunter2');
  });
});
