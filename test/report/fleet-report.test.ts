// `reconcile report`: documents the real CLI printed for small offline hosts
// (test/helpers/fleet-documents.ts) in; the verdicts are what each host's
// content implies. The CSV is read back with Python's csv module (the
// oracle for RFC 4180 quoting); tampered documents must be refused by file
// and field, with nothing written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { runCli } from '../helpers/run-cli.js';
import { FLEET, makeFleetDocuments } from '../helpers/fleet-documents.js';

let work: string;
let fetched: string;
beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'fleet-report-'));
  fetched = await makeFleetDocuments(work);
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const report = (args: string[]) => runCli(['report', ...args]);

/** Python's csv module reads the file: rows of cells. */
function pythonCsv(file: string): string[][] {
  const out = execFileSync(
    'python3',
    ['-c', 'import csv,json,sys; csv.field_size_limit(1 << 30); print(json.dumps(list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))))', file],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  return JSON.parse(out);
}

/** A copy of the fetched tree with one host's document changed by `edit`. */
function tampered(host: string, edit: (doc: any) => unknown, raw?: string): string {
  const dir = mkdtempSync(path.join(work, 'tampered-'));
  cpSync(fetched, dir, { recursive: true });
  const file = path.join(dir, host, 'reconcile.json');
  if (raw !== undefined) writeFileSync(file, raw);
  else {
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify(edit(doc) ?? doc));
  }
  return dir;
}

describe('reconcile report', () => {
  it('gives every host the verdict its content implies, in the table, the CSV and the JSON', async () => {
    const out = path.join(work, 'out');
    const r = await report(['-o', out, fetched]);
    // Some host is not ready: exit 2, as --plan does for pending work.
    expect(r.code, r.stderr).toBe(2);
    const rows = r.stdout
      .split('\n')
      .filter((l) => /^node-/.test(l))
      .map((l) => l.split(/\s+/));
    expect(Object.fromEntries(rows.map((c) => [c[0], c[1]]))).toEqual(Object.fromEntries(FLEET.map((h) => [h.name, h.expect])));
    // Worst first.
    expect(rows.map((c) => c[1])).toEqual(['failed', 'operator', 'operator', 'unknown', 'unknown', 'changes', 'ready']);
    expect(r.stdout).toContain('7 hosts: 1 failed, 2 operator, 2 unknown, 1 changes, 1 ready');

    const csv = pythonCsv(path.join(out, 'fleet-report.csv'));
    expect(csv[0]).toEqual([
      'host',
      'verdict',
      'mode',
      'changes',
      'operator_count',
      'unknown_count',
      'operator_lines',
      'unknowns',
      'errors',
      'accepted_count',
      'accepted',
      'file',
    ]);
    const byHost = new Map(csv.slice(1).map((row) => [row[0]!, row]));
    expect(byHost.size).toBe(FLEET.length);
    for (const h of FLEET) {
      const row = byHost.get(h.name)!;
      expect(row[1], h.name).toBe(h.expect);
      expect(row[2], h.name).toBe(h.invalidDesired ? 'error' : h.mode);
      if (h.expect === 'operator') {
        expect(Number(row[4])).toBe(1);
        expect(row[6]).toContain(h.names);
      }
      if (h.expect === 'unknown') {
        expect(Number(row[5])).toBeGreaterThan(0);
        // One unknown per line of the cell: each names the script.
        for (const line of row[7]!.split('\n')) expect(line).toContain(h.names);
      }
      if (h.expect === 'failed') expect(row[8]).toMatch(/resources\[0\]\.persist: unknown key/);
    }
    // The plan of the swap host counts what the tool would do; the apply counts what it did (the same work).
    expect(Number(byHost.get('node-swap-plan')![3])).toBeGreaterThan(0);
    expect(byHost.get('node-swap-apply')![3]).toBe(byHost.get('node-swap-plan')![3]);

    const json = JSON.parse(readFileSync(path.join(out, 'fleet-report.json'), 'utf8'));
    expect(json.counts).toEqual({ unusable: 0, failed: 1, operator: 2, unknown: 2, changes: 1, ready: 1 });
    expect(json.hosts.map((h: { host: string }) => h.host).sort()).toEqual(FLEET.map((h) => h.name).sort());
    const html = readFileSync(path.join(out, 'fleet-report.html'), 'utf8');
    expect(html).toMatch(/^<!DOCTYPE html>/);
    // Self-contained: no URL to fetch anything from. Links only go to a host's row
    // (#h-N) or to one of the fetched documents, by a relative path from the page.
    expect(html).not.toMatch(/\bsrc=|https?:|url\(/i);
    const hrefs = [...html.matchAll(/\bhref="([^"]*)"/g)].map((m) => m[1]!);
    const docs = hrefs.filter((h) => !/^#h-\d+$/.test(h));
    expect(docs.length).toBeGreaterThanOrEqual(FLEET.length);
    for (const h of docs) {
      expect(h).not.toMatch(/^[a-z]+:|^\//i);
      expect(existsSync(path.resolve(out, decodeURIComponent(h))), h).toBe(true);
    }
  }, 60_000);

  it('exits 0 when every host is ready', async () => {
    const r = await report(['-o', path.join(work, 'out-ready'), path.join(fetched, 'node-swap-apply')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('1 host: 1 ready');
  });

  it('quotes untrusted text for the CSV and the terminal: commas, quotes, newlines, formulas, escapes', async () => {
    const dir = tampered('node-rc-sysctl-plan', (d) => {
      const c = d.resources.flatMap((r: any) => r.changes).find((x: any) => x.operator !== null);
      c.summary = 'a "quoted", multi\nline \x1b[31mred\x1b[0m summary';
    });
    // A host name a spreadsheet would run as a formula.
    cpSync(path.join(dir, 'node-swap-plan'), path.join(dir, '=HYPERLINK("x")'), { recursive: true });
    const out = path.join(work, 'out-quoted');
    const r = await report(['-o', out, dir]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).not.toContain('\x1b');
    // The line break is kept, the next line indented under its host (never at column 0, where a host row starts); ESC stays escaped.
    expect(r.stdout).toContain('    ! SysctlFile: a "quoted", multi\n      line \\x1b[31mred\\x1b[0m summary');
    expect(r.stdout).not.toContain('\\x0a');
    const csv = pythonCsv(path.join(out, 'fleet-report.csv'));
    const row = csv.find((x) => x[0] === 'node-rc-sysctl-plan')!;
    expect(row[6]).toContain('a "quoted", multi\nline \x1b[31mred\x1b[0m summary');
    expect(csv.some((x) => x[0] === `'=HYPERLINK("x")`)).toBe(true);
    expect(csv.every((x) => x.length === 12)).toBe(true);
    const html = readFileSync(path.join(out, 'fleet-report.html'), 'utf8');
    expect(html).toContain('a &#34;quoted&#34;, multi');
  });

  it('shows bidi and other format characters escaped in every host string of the table and stderr; the HTML isolates them', async () => {
    const RLO = '\u202e';
    const dir = tampered('node-rc-sysctl-plan', (d) => {
      const c = d.resources.flatMap((r: any) => r.changes).find((x: any) => x.operator !== null);
      c.summary = `summary ${RLO}dessap\u202c`;
      c.operator = `reason \u2066isolated\u2069 zero\u200bwidth`;
      d.findings.push({ message: `unknown ${RLO}line`, unknown: true });
    });
    // A host name, an error document's error and an unusable entry's name, each with a bidi control.
    cpSync(path.join(dir, 'node-swap-plan'), path.join(dir, `node-${RLO}lave`), { recursive: true });
    const bad = JSON.parse(readFileSync(path.join(dir, 'node-bad-desired', 'reconcile.json'), 'utf8'));
    bad.error = `error ${RLO}txet`;
    writeFileSync(path.join(dir, 'node-bad-desired', 'reconcile.json'), JSON.stringify(bad));
    mkdirSync(path.join(dir, `empty-${RLO}`));
    const out = path.join(dir, 'out');
    const r = await report(['-o', out, dir]);
    expect(r.code).toBe(1);
    const FORMAT = /\p{Cf}/u;
    expect(r.stdout).not.toMatch(FORMAT);
    expect(r.stderr).not.toMatch(FORMAT);
    for (const shown of [
      'node-\\u{202E}lave',
      'summary \\u{202E}dessap\\u{202C}',
      'reason \\u{2066}isolated\\u{2069} zero\\u{200B}width',
      'unknown \\u{202E}line',
      'x error \\u{202E}txet',
      'empty-\\u{202E}',
    ])
      expect(r.stdout).toContain(shown);
    expect(r.stderr).toContain('empty-\\u{202E}');
    const html = readFileSync(path.join(out, 'fleet-report.html'), 'utf8');
    // In the page the text is the host's, each string inside its own <bdi>: it reorders nothing around it.
    for (const isolated of [
      `<td class="host"><bdi>node-${RLO}lave</bdi>`,
      `summary ${RLO}dessap\u202c</bdi></summary>`,
      `reason: <bdi>reason \u2066isolated\u2069 zero\u200bwidth</bdi>`,
      `<bdi>unknown ${RLO}line</bdi>`,
      `<div class="err"><bdi>error ${RLO}txet</bdi>`,
      `<td class="host"><bdi>empty-${RLO}</bdi>`,
    ])
      expect(html).toContain(isolated);
    const bidi = /[\u202a-\u202e\u2066-\u2069]/gu;
    // Every bidi control in the page is inside a <bdi> element.
    const outside = html.replace(/<bdi>[^<]*<\/bdi>/g, '');
    expect(outside.match(bidi)).toBeNull();
    expect(html.match(bidi)!.length).toBeGreaterThanOrEqual(8);
  });

  const refusals: Array<[string, string, (d: any) => unknown, string | undefined, RegExp]> = [
    [
      'an operator count that disagrees with the lines',
      'node-rc-sysctl-plan',
      (d) => void (d.operator_required = 0),
      undefined,
      /: operator_required: says 0, but resources lists 1 operator change/,
    ],
    ['a change without its list', 'node-swap-plan', (d) => void delete d.resources[0].changes, undefined, /: resources\[0\]\.changes: missing$/],
    [
      'a count that is a string',
      'node-swap-plan',
      (d) => void (d.pending_changes = '4'),
      undefined,
      /: pending_changes: expected a count \(a whole number >= 0\), found a string$/,
    ],
    [
      'an apply that says verified while an operator line is left',
      'node-rc-sysctl-apply',
      (d) => void (d.verified = true),
      undefined,
      /: verified: says true, but the document lists 0 failure\(s\), 1 operator change\(s\)/,
    ],
    [
      'an unknown kind of withdrawal',
      'node-python-apply',
      (d) => void (d.promises_after[0].withdrawn_by[0].by = 'nobody'),
      undefined,
      /: promises_after\[0\]\.withdrawn_by\[0\]\.by: expected "operator", "unknown", "failure", found "nobody"$/,
    ],
    ['a newer format', 'node-swap-plan', (d) => void (d.format_version = '2.0'), undefined, /: format_version: this report reads format 1\.x, found "2\.0"$/],
    [
      'a mode it does not know',
      'node-swap-plan',
      (d) => void (d.mode = 'facts'),
      undefined,
      /: mode: expected "plan" or "apply" \(or an "error" document\), found "facts"$/,
    ],
    ['not JSON', 'node-swap-plan', () => undefined, '{"format_version": "1.0", ', /: not JSON: /],
    ['not an object', 'node-swap-plan', () => undefined, '[]', /reconcile\.json: expected an object, found an array$/],
  ];
  // One host's unusable document marks that host, never the fleet: the report is written with every
  // other host, the unusable one listed with the file and field (exit 1).
  for (const [what, host, edit, raw, message] of refusals) {
    it(`refuses ${what}, naming file and field, as that host's verdict; the other hosts are reported`, async () => {
      const dir = tampered(host, edit, raw);
      const out = path.join(dir, 'out');
      const r = await report(['-o', out, dir]);
      expect(r.code).toBe(1);
      const line = r.stderr.split('\n').find((l) => l.includes(path.join(dir, host, 'reconcile.json')));
      expect(line, r.stderr).toMatch(message);
      const json = JSON.parse(readFileSync(path.join(out, 'fleet-report.json'), 'utf8'));
      const verdicts = Object.fromEntries(json.hosts.map((h: { host: string; verdict: string }) => [h.host, h.verdict]));
      expect(verdicts).toEqual(Object.fromEntries(FLEET.map((h) => [h.name, h.name === host ? 'unusable' : h.expect])));
      const row = json.hosts.find((h: { host: string }) => h.host === host);
      expect(row.mode).toBe('none');
      expect(`${row.file}: ${row.errors[0]}`).toMatch(message);
      expect(r.stdout).toMatch(new RegExp(`^${host} +unusable `, 'm'));
    });
  }

  it('refuses a missing directory on the command line, writing nothing', async () => {
    const out = path.join(work, 'out-absent');
    const r = await report(['-o', out, path.join(fetched, 'node-swap-plan'), path.join(work, 'absent')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${path.join(work, 'absent')}: no such directory`);
    expect(r.stderr).toContain('nothing was written');
    expect(existsSync(out)).toBe(false);
  });

  it('lists a document that is a symbolic link, and a host given twice, as unusable', async () => {
    const dir = mkdtempSync(path.join(work, 'links-'));
    mkdirSync(path.join(dir, 'evil'));
    symlinkSync('/etc/hostname', path.join(dir, 'evil', 'reconcile.json'));
    const out = path.join(dir, 'out');
    const r = await report(['-o', out, dir, path.join(fetched, 'node-swap-plan'), path.join(fetched, 'node-swap-plan')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/evil\/reconcile\.json: .*symbolic link/);
    expect(r.stderr).toMatch(/host "node-swap-plan" again/);
    const json = JSON.parse(readFileSync(path.join(out, 'fleet-report.json'), 'utf8'));
    expect(json.hosts.map((h: { host: string; verdict: string }) => `${h.host} ${h.verdict}`).sort()).toEqual([
      'evil unusable',
      'node-swap-plan changes',
      'node-swap-plan unusable',
    ]);
  });

  it('renders a host with 200,000 unknown findings: no stack trace, the table bounded, every finding in the files', async () => {
    // Under the 8 MiB document cap (about 7.6 MiB compact); before, 130,000 overflowed the table renderer's stack.
    const n = 200_000;
    const dir = tampered('node-swap-plan', (d) => {
      d.findings = Array.from({ length: n }, (_, i) => ({ message: `/x:${i}`, unknown: true }));
      d.kubespray_preflight_failures = 0;
    });
    expect(statSync(path.join(dir, 'node-swap-plan', 'reconcile.json')).size).toBeLessThan(8 * 1024 * 1024);
    const out = path.join(dir, 'out');
    const r = await report(['-o', out, dir]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('node-swap-plan '));
    expect(lines[at]!.split(/\s+/)).toEqual(['node-swap-plan', 'unknown', lines[at]!.split(/\s+/)[2], '0', String(n), '0']);
    // The first 50 of its lines, then one saying how many were left out.
    expect(lines.slice(at + 1, at + 51).every((l) => l.startsWith('    ? /x:'))).toBe(true);
    expect(lines[at + 51]).toBe(`    … ${n - 50} more lines for this host, left out here (all are in fleet-report.csv, .json and .html)`);
    expect(lines.filter((l) => l.startsWith('    ? /x:'))).toHaveLength(50);
    const json = JSON.parse(readFileSync(path.join(out, 'fleet-report.json'), 'utf8'));
    expect(json.hosts.find((h: { host: string }) => h.host === 'node-swap-plan').unknowns).toHaveLength(n);
    const csv = pythonCsv(path.join(out, 'fleet-report.csv'));
    const row = csv.find((x) => x[0] === 'node-swap-plan')!;
    expect(row[5]).toBe(String(n));
    expect(row[7]!.split('\n')).toHaveLength(n);
    const htmlRow = readFileSync(path.join(out, 'fleet-report.html'), 'utf8')
      .split('\n')
      .find((l) => l.includes('<td class="host"><bdi>node-swap-plan</bdi></td>'))!;
    expect(htmlRow.match(/<details class="unknown">/g)).toHaveLength(n);
  }, 60_000);

  it('has its own --help and needs a directory', async () => {
    const help = await report(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: reconcile report /);
    const none = await report([]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('give at least one directory');
  });
});
