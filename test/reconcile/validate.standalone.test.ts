// The desired-state validator is ajv standalone code generated from the
// schema at build time: a run validates without compiling the schema, and
// the bundle carries none of ajv's compiler.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it, vi } from 'vitest';
// @ts-expect-error: a plain .mjs build script without type declarations
import { bundleOptions } from '../../scripts/bundle.mjs';

// Loading ajv itself (its compiler) fails this file: validate.ts must not need it at run time.
vi.mock('ajv', () => {
  throw new Error('ajv (the schema compiler) was loaded at run time');
});

describe('the desired-state validator', () => {
  it('validates and fills defaults without loading ajv', async () => {
    const { validateAgainstSchema } = await import('../../src/reconcile/validate.js');
    const doc: Record<string, unknown> = { reports_dir: '/var/lib/r', resources: [{ type: 'SwapOff' }] };
    expect(validateAgainstSchema(doc)).toEqual([]);
    expect(doc.facts).toEqual({ source: 'native' });
    expect(validateAgainstSchema({ reports_dir: '/r', resources: [], extra: 1 })).toEqual([
      {
        pointer: ['extra'],
        path: 'extra',
        message: 'unknown key (allowed: reports_dir, reports_mode, kubespray, facts, first_boot, accept, resources)',
        atKey: true,
      },
    ]);
  });

  it("leaves ajv's schema compiler out of the bundle", async () => {
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'validator-bundle-')), 'reconcile.mjs');
    await build(bundleOptions(out));
    const text = readFileSync(out, 'utf8');
    // Messages only ajv's compiler (core.js, compile/) throws.
    for (const compilerOnly of ['schema must be object or boolean', 'ajv implementation error', '$schema must be a string']) {
      expect(text.includes(compilerOnly), compilerOnly).toBe(false);
    }
    // ...while the generated validator and its runtime helpers are there.
    expect(text).toContain('https://k8s-host-reconcile.invalid/schema/desired-state.schema.json');
  }, 60_000);
});
