// `reconcile report` as runReport drives it: its options, its exit codes (0 every host ready, 2 some
// host is not, 1 some host is unusable or a DIR is no fetch directory), the three files written whole
// or not at all, --json printing exactly the JSON file (or the CLI's error document on a failure), and
// its own outputs never read back as hosts when -o is inside a fetch directory. The documents are the
// real CLI's for two small offline hosts (test/helpers/fleet-documents.ts): a plan with a swap line in
// fstab (changes) and the same host applied (ready).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPORT_FILES, reportUsage, runReport } from '../../src/report/index.js';
import { FLEET, makeFleetDocuments } from '../helpers/fleet-documents.js';

let work: string;
let fetched: string;
beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'report-index-'));
  fetched = await makeFleetDocuments(
    work,
    FLEET.filter((h) => h.name === 'node-swap-plan' || h.name === 'node-swap-apply'),
  );
}, 60_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
/** A fresh copy of the fetch directory with only the named hosts. */
function fetchDir(hosts: string[]): string {
  const d = path.join(work, `fetch-${++n}`);
  for (const h of hosts) cpSync(path.join(fetched, h), path.join(d, h), { recursive: true });
  return d;
}
async function report(argv: string[], program?: string) {
  let stdout = '';
  let stderr = '';
  const code = await runReport(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) }, program });
  return { code, stdout, stderr };
}
const out = () => path.join(work, `out-${++n}`);

describe('runReport: options', () => {
  it('--help and -h print the usage under the name it was invoked by, exit 0', async () => {
    for (const flag of ['--help', '-h']) {
      const r = await report([flag], 'k8s-host-reconcile');
      expect(r).toEqual({ code: 0, stdout: reportUsage('k8s-host-reconcile'), stderr: '' });
    }
    expect(reportUsage('x')).toMatch(/^usage: x report \[-o DIR\] \[--json\] DIR\.\.\.\n/);
  });

  it('an unknown option or no directory: exit 1, the reason and the usage on stderr', async () => {
    const bad = await report(['--bogus', fetched]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.startsWith("reconcile report: Unknown option '--bogus'")).toBe(true);
    expect(bad.stderr.endsWith(reportUsage('reconcile'))).toBe(true);
    const none = await report(['-o', out()]);
    expect(none).toEqual({ code: 1, stdout: '', stderr: `reconcile report: give at least one directory of fetched documents\n${reportUsage('reconcile')}` });
  });
});

describe('runReport: exit codes and outputs', () => {
  it('every host ready: exit 0, the table and the files it wrote', async () => {
    const o = out();
    const r = await report(['-o', o, fetchDir(['node-swap-apply'])]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^node-swap-apply\s+ready\s/m);
    expect(r.stdout.endsWith(`wrote ${REPORT_FILES.map((f) => path.join(o, f)).join(', ')}\n`)).toBe(true);
    expect(readdirSync(o).sort()).toEqual(['fleet-report.csv', 'fleet-report.html', 'fleet-report.json']);
  });

  it('some host not ready: exit 2; --json prints exactly the JSON file, and no "wrote" line', async () => {
    const o = out();
    const r = await report(['--json', '-o', o, fetchDir(['node-swap-apply', 'node-swap-plan'])]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe(readFileSync(path.join(o, 'fleet-report.json'), 'utf8'));
    const doc = JSON.parse(r.stdout) as { counts: Record<string, number>; hosts: Array<{ host: string; verdict: string }> };
    expect(doc.counts['changes']).toBe(1);
    expect(doc.counts['ready']).toBe(1);
    expect(doc.hosts.map((h) => [h.host, h.verdict])).toEqual([
      ['node-swap-plan', 'changes'],
      ['node-swap-apply', 'ready'],
    ]);
  });

  it('an unusable host: exit 1, named on stderr with its file, and still in every file written', async () => {
    const d = fetchDir(['node-swap-apply']);
    mkdirSync(path.join(d, 'node-empty'));
    const o = out();
    const r = await report(['--json', '-o', o, d]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`reconcile report: ${path.join(d, 'node-empty')}`);
    const doc = JSON.parse(readFileSync(path.join(o, 'fleet-report.json'), 'utf8')) as { hosts: Array<{ host: string; verdict: string }> };
    expect(doc.hosts.map((h) => [h.host, h.verdict])).toEqual([
      ['node-empty', 'unusable'],
      ['node-swap-apply', 'ready'],
    ]);
    expect(readFileSync(path.join(o, 'fleet-report.csv'), 'utf8')).toContain('node-empty');
  });

  it('a DIR that is no fetch directory: exit 1 and nothing written; --json prints the error document', async () => {
    const o = out();
    const missing = path.join(work, 'no-such-dir');
    const r = await report(['--json', '-o', o, missing]);
    expect(r.code).toBe(1);
    expect(existsSync(o)).toBe(false);
    const doc = JSON.parse(r.stdout) as { command: string; error: string };
    expect(doc.command).toBe('report');
    expect(doc.error).toContain(missing);
    expect(doc.error.endsWith('; nothing was written')).toBe(true);
    expect(r.stderr).toContain('reconcile report: a directory given is no fetch directory; nothing was written\n');
    const two = await report(['-o', o, missing, path.join(work, 'neither')]);
    expect(two.stderr).toContain('reconcile report: 2 directories given are no fetch directory; nothing was written\n');
  });

  it('files that cannot be written: exit 1 with the reason, and --json an error document', async () => {
    const blocker = path.join(work, `blocker-${++n}`);
    writeFileSync(blocker, 'a file, not a directory\n');
    const r = await report(['--json', '-o', path.join(blocker, 'out'), fetchDir(['node-swap-apply'])]);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as { command: string; error: string };
    expect(doc.command).toBe('report');
    expect(r.stderr).toContain(`reconcile report: ${doc.error}`);
  });
});

describe('runReport: -o inside a fetch directory', () => {
  it('its own outputs and the output directory are never hosts, on a second run either', async () => {
    for (const inside of ['', 'report-out']) {
      const d = fetchDir(['node-swap-apply']);
      const o = path.join(d, inside);
      for (let run = 0; run < 2; run++) {
        const r = await report(['--json', '-o', o, d]);
        expect(r.code).toBe(0);
        const doc = JSON.parse(r.stdout) as { hosts: Array<{ host: string }> };
        expect(doc.hosts.map((h) => h.host)).toEqual(['node-swap-apply']);
      }
    }
    const d = fetchDir(['node-swap-apply']);
    await report(['-o', d, d]);
    // Only the exact names are the report's own: another file beside them is a host (unusable).
    writeFileSync(path.join(d, 'fleet-report.txt'), 'x\n');
    const r = await report(['--json', '-o', d, d]);
    expect(r.code).toBe(1);
    expect((JSON.parse(r.stdout) as { hosts: Array<{ host: string }> }).hosts.map((h) => h.host).sort()).toEqual(['fleet-report.txt', 'node-swap-apply']);
  });
});
