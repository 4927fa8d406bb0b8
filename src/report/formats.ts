// The fleet report's text table, CSV and JSON, from the host summaries. Pure.
// Every string in a summary came from a host: the text form shows control
// characters escaped (no terminal escape reaches the operator's screen), the
// CSV quotes per RFC 4180 and keeps spreadsheet formulas out.
import { FORMAT_VERSION } from '../version.js';
import { VERDICTS, type HostSummary, type Verdict } from './document.js';
import { terminalSafe } from '../untrusted-text.js';
import { causeName, fleetCauses, type FleetCause } from './causes.js';

export function verdictCounts(hosts: HostSummary[]): Record<Verdict, number> {
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  for (const h of hosts) counts[h.verdict]++;
  return counts;
}

/** Worst verdict first, then by host name (byte order, as `sort` in the C locale). */
export function orderHosts(hosts: HostSummary[]): HostSummary[] {
  const rank = (v: Verdict) => VERDICTS.indexOf(v);
  return [...hosts].sort((a, b) => rank(a.verdict) - rank(b.verdict) || (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
}

export function operatorText(o: HostSummary['operator'][number]): string {
  return `${o.resource}: ${o.summary} (reason: ${o.reason})${o.carried ? ' (carried past apply)' : ''}`;
}

/** Accepted findings across the fleet, counted apart from the verdicts (an accepted finding is no verdict's, and never hidden). */
export function acceptedCounts(hosts: HostSummary[]): { findings: number; hosts: number } {
  let findings = 0;
  let on = 0;
  for (const h of hosts) {
    findings += h.accepted.length;
    if (h.accepted.length > 0) on++;
  }
  return { findings, hosts: on };
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

export function countsLine(hosts: HostSummary[]): string {
  const c = verdictCounts(hosts);
  const a = acceptedCounts(hosts);
  const verdicts = VERDICTS.filter((v) => c[v] > 0).map((v) => `${c[v]} ${v}`);
  const accepted = a.findings > 0 ? `; ${plural(a.findings, 'finding')} accepted on ${plural(a.hosts, 'host')}` : '';
  return `${plural(hosts.length, 'host')}: ${verdicts.join(', ') || 'none'}${accepted}`;
}

/** At most this many lines (errors, operator lines, unknowns) under a host in the table; the files have them all. */
export const TABLE_LINES_PER_HOST = 50;

/**
 * A text that may hold line breaks (a failed run's error, a command's
 * output): each line terminal-safe, the lines after the first indented under
 * it, so an error keeps its lines instead of showing \x0a. Other control
 * characters (CR among them) stay escaped.
 */
export function multiline(s: string, indent: string): string {
  return s
    .split('\n')
    .map((l) => terminalSafe(l))
    .join(`\n${indent}`);
}

/** At most this many causes in the table's list; the JSON and the page have them all. */
export const TABLE_CAUSES = 30;

/** The causes across the fleet, each once with how many hosts it stands on (the host names are in the JSON and the page). */
export function causesText(causes: readonly FleetCause[]): string[] {
  if (causes.length === 0) return [];
  const mark = { unusable: 'x', failed: 'x', operator: '!', unknown: '?', accepted: 'a' } as const;
  const out = ['', `CAUSES (${causes.length}, each once; the hosts are in fleet-report.json and .html)`];
  for (const c of causes.slice(0, TABLE_CAUSES)) {
    out.push(`  ${mark[c.kind]} ${terminalSafe(causeName(c))}: ${multiline(c.text, '      ')} — ${c.hosts.length} host${c.hosts.length === 1 ? '' : 's'}`);
    if (c.fix !== null) out.push(`      fix: ${multiline(c.fix, '      ')}`);
  }
  if (causes.length > TABLE_CAUSES) out.push(`  … ${causes.length - TABLE_CAUSES} more causes, left out here`);
  return out;
}

/**
 * The table: one row per host, its errors (x), operator lines (!),
 * unknowns (?) and accepted findings (a) indented under it, at most TABLE_LINES_PER_HOST of them, then
 * how many were left out. Loops only (no spread, no recursion): a host may
 * have hundreds of thousands of findings.
 */
export function renderTable(hosts: HostSummary[]): string {
  const head = ['HOST', 'VERDICT', 'CHANGES', 'OPERATOR', 'UNKNOWNS', 'ACCEPTED'];
  const ordered = orderHosts(hosts);
  const rows = ordered.map((h) => [
    terminalSafe(h.host),
    h.verdict,
    String(h.changes),
    String(h.operator.length),
    String(h.unknowns.length),
    String(h.accepted.length),
  ]);
  const width = head.map((t) => t.length);
  for (const cells of rows) for (let i = 0; i < cells.length; i++) width[i] = Math.max(width[i]!, cells[i]!.length);
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(width[i]!))).join('  ');
  const out = [line(head)];
  ordered.forEach((h, i) => {
    out.push(line(rows[i]!));
    let shown = 0;
    const detail = (mark: string, texts: readonly string[]) => {
      for (let k = 0; k < texts.length && shown < TABLE_LINES_PER_HOST; k++, shown++) out.push(`    ${mark} ${multiline(texts[k]!, '      ')}`);
    };
    detail('x', h.errors);
    detail('!', h.operator.slice(0, TABLE_LINES_PER_HOST).map(operatorText));
    detail('?', h.unknowns);
    detail('a', h.accepted);
    const left = h.errors.length + h.operator.length + h.unknowns.length + h.accepted.length - shown;
    if (left > 0) out.push(`    … ${left} more line${left === 1 ? '' : 's'} for this host, left out here (all are in fleet-report.csv, .json and .html)`);
  });
  out.push(...causesText(fleetCauses(hosts)), '', countsLine(hosts));
  return out.join('\n') + '\n';
}

/**
 * A CSV cell (RFC 4180): quoted when it holds a comma, quote, CR or LF. A
 * cell a spreadsheet would run as a formula (= + - @, tab, CR first) gets a
 * leading apostrophe (OWASP's advice on CSV injection); host text is untrusted.
 */
export function csvCell(s: string): string {
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const CSV_COLUMNS = [
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
] as const;

/** One row per host; a list cell holds its items one per line. CRLF line ends, as RFC 4180 says. */
export function renderCsv(hosts: HostSummary[]): string {
  const rows = orderHosts(hosts).map((h) => [
    h.host,
    h.verdict,
    h.mode,
    String(h.changes),
    String(h.operator.length),
    String(h.unknowns.length),
    h.operator.map(operatorText).join('\n'),
    h.unknowns.join('\n'),
    h.errors.join('\n'),
    String(h.accepted.length),
    h.accepted.join('\n'),
    h.file,
  ]);
  return [CSV_COLUMNS as readonly string[], ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

export interface FleetDocument {
  format_version: string;
  counts: Record<Verdict, number>;
  /** Accepted findings and the hosts that have any, apart from the verdicts (each host's are in its `accepted`). */
  accepted: { findings: number; hosts: number };
  /** Each cause across the fleet once, with the hosts it stands on (causes.ts). */
  causes: FleetCause[];
  hosts: HostSummary[];
}

export function fleetDocument(hosts: HostSummary[]): FleetDocument {
  return {
    format_version: FORMAT_VERSION,
    counts: verdictCounts(hosts),
    accepted: acceptedCounts(hosts),
    causes: fleetCauses(hosts),
    hosts: orderHosts(hosts),
  };
}
