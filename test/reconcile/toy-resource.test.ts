// A resource is one folder and one registry line (ARCHITECTURE.md, "Adding a
// resource"): test/helpers/toy-resource/ holds a toy that reboots N seconds
// after a kernel panic: its spec and schema branch, its promise kind, what a
// boot script can do to it, its provider. Registered with the one line below,
// it is in the schema, the plan's text and --json, and the boot farm's judge,
// and a boot script that undoes it takes its promise back. Expectations are
// written from what the toy says and what runs at boot
// (systemd-rc-local-generator runs an executable /etc/rc.local after
// systemd-sysctl: `sysctl -w kernel.panic=0` there leaves 0).
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { Host } from '../../src/host.js';
import type { DesiredState } from '../../src/desired-state.js';
import { PROVIDERS, type ProviderRegistry } from '../../src/resources/index.js';
import { desiredStateSchema } from '../../src/resources/schema.js';
import { promiseJudge } from '../../src/resources/promise-judge.js';
import { makePlan } from '../../src/reconcile/plan.js';
import { planDocument } from '../../src/reconcile/plan-document.js';
import { paletteFor, renderPlan } from '../../src/reconcile/plan-text.js';
import { planExitCode } from '../../src/reconcile/run.js';
import { buildTree } from '../helpers/tree.js';
import { panicRebootProvider } from '../helpers/toy-resource/provider.js';
// @ts-expect-error: a plain .mjs module without type declarations
import { judgePromises } from '../boot/lib/judge.mjs';

// The one line that adds it.
const REGISTRY: ProviderRegistry = { ...PROVIDERS, PanicReboot: panicRebootProvider };

// No terminal: no colour.
const plain = paletteFor({ isTTY: false });

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function image(rcLocal: string | null): string {
  const root = mkdtempSync(path.join(tmpdir(), 'toy-resource-'));
  roots.push(root);
  buildTree(root, { 'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n', 'etc/systemd/system/.keep': '' });
  if (rcLocal !== null) {
    writeFileSync(path.join(root, 'etc/rc.local'), rcLocal);
    chmodSync(path.join(root, 'etc/rc.local'), 0o755);
  }
  return root;
}

const desired = (root: string): DesiredState => ({
  source: path.join(root, 'desired.yaml'),
  reports_dir: '/root/ks/preflight',
  facts: { source: 'native' },
  first_boot: 'off',
  resources: [{ type: 'PanicReboot', seconds: 10 } as DesiredState['resources'][number]],
});

async function planOf(root: string) {
  const plan = await makePlan(new Host({ root }), desired(root), REGISTRY);
  const doc = planDocument(plan);
  return { plan, doc, text: renderPlan(doc, plain), rc: planExitCode(doc.pending_changes, doc.operator_required, []) };
}

function compiled(registry: ProviderRegistry) {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, allowUnionTypes: true });
  ajv.addVocabulary(['x-message']);
  return ajv.compile(desiredStateSchema(registry));
}

describe('a toy resource, one folder and one registry line', () => {
  it('is in the schema the registry assembles, with its branch; the default registry refuses the type', () => {
    const doc = (seconds: unknown) => ({ reports_dir: '/r', resources: [{ type: 'PanicReboot', seconds }] });
    const withToy = compiled(REGISTRY);
    expect(withToy(doc(10))).toBe(true);
    expect(withToy(doc('ten'))).toBe(false);
    expect(withToy.errors?.some((e) => e.instancePath === '/resources/0/seconds')).toBe(true);
    expect(compiled(PROVIDERS)(doc(10))).toBe(false);
  });

  it('plans its change and its promise in the text plan and --json, in its own words', async () => {
    const { doc, text, rc } = await planOf(image(null));
    expect(doc.resources.map((r) => [r.name, r.changes.map((c) => [c.id, c.action])])).toEqual([['PanicReboot', [['file', 'create']]]]);
    expect(doc.promises).toEqual([
      {
        id: 'panic:reboot',
        kind: 'panic',
        subject: 'kernel.panic',
        expect: '10',
        resource: 'PanicReboot',
        what: 'reboot 10 s after a kernel panic',
        after_apply: true,
        at_boot: true,
        held_by: null,
        withdrawn_by: [],
      },
    ]);
    expect(text).toContain('  = reboot 10 s after a kernel panic: after apply and at the next boot\n');
    expect(rc).toBe(2);
  });

  it('a boot script that undoes it is an operator line naming file:line, and takes its promise back at boot', async () => {
    const { doc, text } = await planOf(image('#!/bin/sh -e\nsysctl -w kernel.panic=0\nexit 0\n'));
    const changes = doc.resources[0]!.changes;
    const script = changes.find((c) => c.operator !== null);
    expect(script?.summary).toContain('/etc/rc.local:2');
    expect(script?.summary).toContain('sets kernel.panic = 0, undoing the reboot 10 s after a panic');
    expect(doc.promises[0]).toMatchObject({ id: 'panic:reboot', after_apply: true, at_boot: false });
    expect(doc.promises[0]!.withdrawn_by).toEqual([expect.objectContaining({ by: 'operator', resource: 'PanicReboot', from: 'boot' })]);
    expect(text).toContain('  ! reboot 10 s after a kernel panic: after apply; not promised at the next boot; withdrawn by What you must do: 1\n');
    expect(text).toContain('What you must do\n  1. PanicReboot: /etc/rc.local:2 sets kernel.panic = 0, undoing the reboot 10 s after a panic');
  });

  it("the boot farm's judge holds a booted host against its promise with its kind's judge", async () => {
    const judge = promiseJudge(REGISTRY);
    const kept = await planOf(image(null));
    const args = (doc: unknown, rc: number, atBoot: string) => ({
      plan: doc,
      planRc: rc,
      apply: null,
      applyRc: 1,
      afterApply: { ports: new Map(), sysctl: { 'kernel.panic': '10' } },
      atBoot: { ports: new Map(), sysctl: { 'kernel.panic': atBoot } },
      judge,
    });
    // Promised at boot, and 0 after the reboot: a broken promise, in the toy's words.
    expect(judgePromises(args(kept.doc, kept.rc, '0')).broken).toEqual([
      { promise: 'panic:reboot', phase: 'at boot', observed: 'kernel.panic = 0, so no reboot 10 s after a panic' },
    ]);
    expect(judgePromises(args(kept.doc, kept.rc, '10')).broken).toEqual([]);
    // Taken back at boot by the rc.local line: 0 after the reboot breaks nothing the plan still promised.
    const undone = await planOf(image('#!/bin/sh -e\nsysctl -w kernel.panic=0\nexit 0\n'));
    expect(judgePromises(args(undone.doc, undone.rc, '0')).broken).toEqual([]);
    // The default registry's judge has never heard of the kind, and says so.
    expect(judgePromises({ ...args(kept.doc, kept.rc, '10'), judge: promiseJudge(PROVIDERS) }).broken).toEqual([
      { promise: 'panic:reboot', phase: 'after apply', observed: 'a promise of kind panic this judge cannot check' },
      { promise: 'panic:reboot', phase: 'at boot', observed: 'a promise of kind panic this judge cannot check' },
    ]);
  });
});
