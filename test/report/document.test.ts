// readHostDocument over documents the real CLI printed (test/helpers/fleet-documents.ts):
// every plan and apply document, a failed apply, and an apply that carries an
// operator line past its second observation must be read, each with the
// verdict its host's content implies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readHostDocument } from '../../src/report/document.js';
import { FLEET, failedApplyDocument, makeFleetDocuments } from '../helpers/fleet-documents.js';

let work: string;
const docs = new Map<string, string>();
let failed: { text: string; code: number };
beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'report-document-'));
  const fetched = await makeFleetDocuments(work);
  for (const h of FLEET) docs.set(h.name, readFileSync(path.join(fetched, h.name, 'reconcile.json'), 'utf8'));
  failed = await failedApplyDocument(work);
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const kinds = (text: string): string[] =>
  (JSON.parse(text).promises_after ?? []).flatMap((p: { withdrawn_by: Array<{ by: string }> }) => p.withdrawn_by.map((w) => w.by));

describe('the documents the CLI writes', () => {
  it('reads every plan and apply document of the fleet, with the verdict its content implies', () => {
    for (const h of FLEET) {
      const r = readHostDocument(docs.get(h.name)!, h.name, 'x');
      expect(r.ok ? r.summary.verdict : r.issue, h.name).toBe(h.expect);
    }
  });

  it('reads a failed apply, whose promises_after is withdrawn by the failure: the host failed, naming the write', () => {
    // The CLI's own answer: the apply failed (exit 1), and its document has the withdrawal kind the report refused.
    expect(failed.code).toBe(1);
    expect(kinds(failed.text)).toContain('failure');
    const r = readHostDocument(failed.text, 'node-failed-apply', 'x');
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (!r.ok) return;
    expect(r.summary.verdict).toBe('failed');
    expect(r.summary.mode).toBe('apply');
    expect(r.summary.errors.join('\n')).toContain('/etc/modules-load.d/k8s.conf changed since the plan was made');
    // A failure's withdrawal is the failure itself, listed once among the errors, not as an unknown.
    expect(r.summary.unknowns).toEqual([]);
  });

  it('between them, the real documents carry every kind of withdrawal there is', () => {
    const seen = new Set([...docs.values(), failed.text].flatMap(kinds));
    // The kinds src/reconcile/promises.ts documents for WithdrawnBy.by.
    expect([...seen].sort()).toEqual(['failure', 'operator', 'unknown']);
  });

  it('reads an apply that carries an operator line past apply (counted in operator_required, gone from after)', () => {
    // A transient unit a boot script makes again (live only): apply stops the unit, so the second observation
    // no longer shows the line; run.ts counts it in operator_required and keeps its withdrawal in promises_after.
    // The rc.local host's real apply, with its operator line taken out of `after` as that observation would.
    const doc = JSON.parse(docs.get('node-rc-sysctl-apply')!);
    const line = doc.after
      .flatMap((r: { changes: Array<{ operator: string | null; id: string }> }) => r.changes)
      .find((c: { operator: string | null }) => c.operator !== null);
    for (const r of doc.after) r.changes = r.changes.filter((c: { id: string }) => c.id !== line.id);
    expect(doc.operator_required).toBe(1);
    const r = readHostDocument(JSON.stringify(doc), 'node-rc-sysctl-apply', 'x');
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (!r.ok) return;
    expect(r.summary.verdict).toBe('operator');
    expect(r.summary.operator).toHaveLength(1);
    expect(r.summary.operator[0]).toMatchObject({ id: line.id, reason: line.operator, carried: true });
    expect(r.summary.operator[0]!.reason).toContain('/etc/rc.local:2');
  });

  it('still refuses an operator count no line of the plan or of after accounts for', () => {
    const doc = JSON.parse(docs.get('node-rc-sysctl-apply')!);
    doc.operator_required = 2;
    const r = readHostDocument(JSON.stringify(doc), 'h', 'x');
    expect(r.ok ? r.summary : r.issue).toEqual({
      field: 'operator_required',
      message: 'says 2, but after lists 1 operator change(s) and the plan 0 more that apply could have carried',
    });
  });
});
