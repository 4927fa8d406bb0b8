// `reconcile report … | head -1`: the reader closes the pipe after one line.
// The bundled CLI (built here as scripts/bundle.mjs builds it) must end with
// the report's own exit code and no EPIPE stack trace. The fleet is one real
// plan document (a host with changes pending: exit 2) copied to enough hosts
// that the table outgrows the pipe's buffer (64 KiB on Linux).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
// @ts-expect-error: a plain .mjs build script without type declarations
import { bundleOptions } from '../../scripts/bundle.mjs';
import { FLEET, makeFleetDocuments } from '../helpers/fleet-documents.js';

const HOSTS = 2000;
let work: string;
let bundle: string;
let fleet: string;
beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'report-pipe-'));
  mkdirSync(path.join(work, 'one'));
  bundle = path.join(work, 'reconcile.mjs');
  await build(bundleOptions(bundle));
  const fetched = await makeFleetDocuments(
    path.join(work, 'one'),
    FLEET.filter((h) => h.name === 'node-swap-plan'),
  );
  fleet = path.join(work, 'fleet');
  const doc = readFileSync(path.join(fetched, 'node-swap-plan', 'reconcile.json'));
  for (let i = 0; i < HOSTS; i++) {
    const dir = path.join(fleet, `host-${String(i).padStart(4, '0')}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'reconcile.json'), doc);
  }
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs the bundle, closes its stdout after the first chunk, and gives the exit code, stderr and what was read. */
function runClosingAfterFirstChunk(args: string[]): Promise<{ code: number | null; stderr: string; first: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let first = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.once('data', (d) => {
      first = String(d);
      child.stdout.destroy();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, first }));
  });
}

describe('report into a closed pipe', () => {
  it('ends quietly with the exit code of the report (2: hosts with changes), table or --json', async () => {
    for (const json of [false, true]) {
      const out = mkdtempSync(path.join(work, 'out-'));
      const r = await runClosingAfterFirstChunk(['report', ...(json ? ['--json'] : []), '-o', out, fleet]);
      expect(r.first).toMatch(json ? /^\{/ : /^HOST +VERDICT/);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(2);
      // The files were written before the table: the closed pipe cost none of them.
      expect(statSync(path.join(out, 'fleet-report.json')).size).toBeGreaterThan(64 * 1024);
    }
  });
});
