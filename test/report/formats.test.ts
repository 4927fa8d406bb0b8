// The fleet report's text table, CSV and JSON. The CSV is read back by
// python's csv module (an RFC 4180 reader, as a spreadsheet import is); the
// rest is worked by hand from the host summaries below.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import {
  acceptedCounts,
  countsLine,
  CSV_COLUMNS,
  csvCell,
  fleetDocument,
  multiline,
  orderHosts,
  renderCsv,
  renderTable,
  TABLE_LINES_PER_HOST,
  verdictCounts,
} from '../../src/report/formats.js';
import { FORMAT_VERSION } from '../../src/version.js';
import { hostSummary as host } from '../helpers/host-summary.js';

const OP = { resource: 'PortFree/6443', id: 'p', summary: 'stop apache2', reason: 'a unit we do not own', withdraws: [], carried: false };

/** The rows python's csv module reads from `text`. */
function pythonCsv(text: string): string[][] {
  const py = 'import csv, io, json, sys\nprint(json.dumps(list(csv.reader(io.StringIO(sys.stdin.read(), newline="")))))';
  return JSON.parse(execFileSync('python3', ['-c', py], { input: text, encoding: 'utf8' })) as string[][];
}

describe('counting and ordering', () => {
  const hosts = [
    host('b', 'ready'),
    host('a', 'ready', { accepted: ['x', 'y'] }),
    host('Z', 'ready'),
    host('c', 'failed'),
    host('d', 'unknown', { accepted: ['z'] }),
  ];
  it('counts every verdict, zeros included', () => {
    expect(verdictCounts(hosts)).toEqual({ unusable: 0, failed: 1, operator: 0, unknown: 1, changes: 0, ready: 3 });
  });
  it('orders worst verdict first, then names in byte order (upper case first)', () => {
    expect(orderHosts(hosts).map((h) => h.host)).toEqual(['c', 'd', 'Z', 'a', 'b']);
  });
  it('counts accepted findings and the hosts that have any, and says so in the counts line', () => {
    expect(acceptedCounts(hosts)).toEqual({ findings: 3, hosts: 2 });
    expect(countsLine(hosts)).toBe('5 hosts: 1 failed, 1 unknown, 3 ready; 3 findings accepted on 2 hosts');
    expect(countsLine([host('a', 'ready')])).toBe('1 host: 1 ready');
    expect(countsLine([])).toBe('0 hosts: none');
  });
});

describe('multiline', () => {
  it('indents the lines after the first, and escapes other control characters', () => {
    expect(multiline('one\ntwo\r\x1b[31m', '  ')).toBe('one\n  two\\x0d\\x1b[31m');
  });
});

describe('the CSV', () => {
  it('quotes only cells with a comma, quote, CR or LF, and disarms formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('-x,y')).toBe(`"'-x,y"`);
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('a=b')).toBe('a=b');
  });
  it('reads back, through an RFC 4180 reader, as the header and one row per host in report order', () => {
    const hosts = [
      host('web,"1"\nx', 'ready'),
      host('=cmd|calc', 'operator', { operator: [OP], unknowns: ['a:1 x', 'b:2 y'], errors: [] }),
      host('db', 'failed', { mode: 'error', errors: ['boom\r\nline 2'] }),
    ];
    const text = renderCsv(hosts);
    expect(text.endsWith('\r\n')).toBe(true);
    const rows = pythonCsv(text);
    expect(rows[0]).toEqual([...CSV_COLUMNS]);
    expect(rows.slice(1).map((r) => r[0])).toEqual(['db', "'=cmd|calc", 'web,"1"\nx']);
    const op = rows[2]!;
    expect(op).toHaveLength(CSV_COLUMNS.length);
    expect(op[CSV_COLUMNS.indexOf('operator_lines')]).toBe('PortFree/6443: stop apache2 (reason: a unit we do not own)');
    expect(op[CSV_COLUMNS.indexOf('unknowns')]).toBe('a:1 x\nb:2 y');
    expect(op[CSV_COLUMNS.indexOf('unknown_count')]).toBe('2');
    expect(rows[1]![CSV_COLUMNS.indexOf('errors')]).toBe('boom\r\nline 2');
  });
});

describe('the table', () => {
  it('aligns the columns, lists details under each host, and ends with the counts line', () => {
    const t = renderTable([host('node-long-name', 'ready'), host('db', 'operator', { operator: [{ ...OP, carried: true }], unknowns: ['f:3 odd'] })]);
    const lines = t.split('\n');
    expect(lines[0]).toBe('HOST            VERDICT   CHANGES  OPERATOR  UNKNOWNS  ACCEPTED');
    expect(lines[1]).toBe('db              operator  0        1         1         0');
    expect(lines[2]).toBe('    ! PortFree/6443: stop apache2 (reason: a unit we do not own) (carried past apply)');
    expect(lines[3]).toBe('    ? f:3 odd');
    expect(lines[4]).toBe('node-long-name  ready     0        0         0         0');
    expect(t.endsWith('\n2 hosts: 1 operator, 1 ready\n')).toBe(true);
  });
  it(`shows at most ${TABLE_LINES_PER_HOST} detail lines for a host and says how many more there are`, () => {
    const unknowns = Array.from({ length: TABLE_LINES_PER_HOST + 7 }, (_, i) => `f:${i} u`);
    const lines = renderTable([host('h', 'unknown', { errors: ['e'], unknowns })]).split('\n');
    expect(lines.filter((l) => l.startsWith('    ? ')).length).toBe(TABLE_LINES_PER_HOST - 1);
    expect(lines).toContain('    … 8 more lines for this host, left out here (all are in fleet-report.csv, .json and .html)');
  });
  it("escapes a host name's terminal controls", () => {
    expect(renderTable([host('evil\x1b]0;owned\x07', 'ready')])).not.toMatch(/\x1b|\x07/);
  });
});

describe('the JSON document', () => {
  it('carries the format version, the counts and the hosts in report order', () => {
    const d = fleetDocument([host('b', 'ready'), host('a', 'changes', { changes: 1 })]);
    expect(d.format_version).toBe(FORMAT_VERSION);
    expect(d.counts.changes).toBe(1);
    expect(d.accepted).toEqual({ findings: 0, hosts: 0 });
    expect(d.causes).toEqual([]);
    expect(d.hosts.map((h) => h.host)).toEqual(['a', 'b']);
  });
});
