// How `reconcile report` writes its three files: private (0600 in the 0700
// directories it makes), whole or not at all, never through a link planted at
// a temporary or an output name, and a failed write leaves the last outputs as
// they were with no temporary file behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/run-cli.js';
import { FLEET, makeFleetDocuments } from '../helpers/fleet-documents.js';

const FILES = ['fleet-report.csv', 'fleet-report.json', 'fleet-report.html'];
let work: string;
let fetched: string;
beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'report-write-'));
  fetched = await makeFleetDocuments(
    work,
    FLEET.filter((h) => h.name === 'node-swap-plan' || h.name === 'node-swap-apply'),
  );
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const report = (args: string[]) => runCli(['report', ...args]);
const snapshot = (out: string) => Object.fromEntries(FILES.map((f) => [f, readFileSync(path.join(out, f), 'utf8')]));
/** A second fleet, so a second report differs from the first: the verified host alone. */
const other = () => path.join(fetched, 'node-swap-apply');

describe('the report files', () => {
  it('are 0600, in directories the report makes 0700', async () => {
    const base = mkdtempSync(path.join(work, 'modes-'));
    const out = path.join(base, 'a', 'b');
    const r = await report(['-o', out, fetched]);
    expect(r.code, r.stderr).toBe(2);
    for (const f of FILES) expect((statSync(path.join(out, f)).mode & 0o777).toString(8), f).toBe('600');
    expect((statSync(path.join(base, 'a')).mode & 0o777).toString(8)).toBe('700');
    expect((statSync(out).mode & 0o777).toString(8)).toBe('700');
    expect(readdirSync(out).sort()).toEqual([...FILES].sort());
  });

  it('never write through a link planted at the temporary name; the last outputs stay', async () => {
    const out = mkdtempSync(path.join(work, 'planted-tmp-'));
    expect((await report(['-o', out, fetched])).code).toBe(2);
    const before = snapshot(out);
    const victim = path.join(work, 'victim-tmp');
    writeFileSync(victim, 'precious\n');
    // In-process: the report's pid is this one.
    const planted = path.join(out, `.fleet-report.html.${process.pid}.tmp`);
    symlinkSync(victim, planted);
    const r = await report(['-o', out, other()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot create ${planted}`);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(planted).isSymbolicLink()).toBe(true);
    expect(snapshot(out)).toEqual(before);
    // The temporary files this run made are gone; the planted link is not the report's to remove.
    expect(readdirSync(out).sort()).toEqual([path.basename(planted), ...FILES].sort());
  });

  it('replace a link planted at an output name, never its target', async () => {
    const out = mkdtempSync(path.join(work, 'planted-out-'));
    const victim = path.join(work, 'victim-out');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, path.join(out, 'fleet-report.csv'));
    const r = await report(['-o', out, fetched]);
    expect(r.code, r.stderr).toBe(2);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    const st = lstatSync(path.join(out, 'fleet-report.csv'));
    expect(st.isFile()).toBe(true);
    expect(readFileSync(path.join(out, 'fleet-report.csv'), 'utf8')).toMatch(/^host,verdict,/);
  });

  it('a directory where fleet-report.json should be: nothing is replaced, no temporary file is left', async () => {
    const out = mkdtempSync(path.join(work, 'dir-at-json-'));
    expect((await report(['-o', out, fetched])).code).toBe(2);
    const before = snapshot(out);
    rmSync(path.join(out, 'fleet-report.json'));
    mkdirSync(path.join(out, 'fleet-report.json'));
    const r = await report(['-o', out, other()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot write ${path.join(out, 'fleet-report.json')}: it is not a file; nothing was replaced`);
    expect(readFileSync(path.join(out, 'fleet-report.csv'), 'utf8')).toBe(before['fleet-report.csv']);
    expect(readFileSync(path.join(out, 'fleet-report.html'), 'utf8')).toBe(before['fleet-report.html']);
    expect(readdirSync(out).sort()).toEqual([...FILES].sort());
    // --json still prints one document: the error.
    const j = await report(['--json', '-o', out, other()]);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout).error).toContain('it is not a file; nothing was replaced');
  });
});

it('the second fleet differs from the first, so a kept output is the first run’s', async () => {
  // The tests above compare outputs across two runs; they would prove nothing if both runs wrote the same bytes.
  const a = mkdtempSync(path.join(work, 'cmp-a-'));
  const b = mkdtempSync(path.join(work, 'cmp-b-'));
  await report(['-o', a, fetched]);
  await report(['-o', b, other()]);
  expect(snapshot(a)['fleet-report.csv']).not.toBe(snapshot(b)['fleet-report.csv']);
  expect(snapshot(a)['fleet-report.html']).not.toBe(snapshot(b)['fleet-report.html']);
});
