// The fleet report as one self-contained HTML page: no network, no external
// asset. At the top, a tile per verdict with its count (pressing one filters
// the hosts); then every cause across the fleet once, with the hosts it stands
// on (links to their rows); then the host table: sortable columns, a search
// box, a sticky header, rows tinted by verdict with the verdict's symbol and
// word, and per host its errors (line breaks kept), its changes with their
// diffs, and links to its documents. Everything is rendered here (every host
// string escaped); the one inline script only hides and reorders rows. A
// Content-Security-Policy allows nothing but this page's own style and script
// (by their hashes, computed here), so a host string that slipped through
// escaping could still not load or run anything.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { VERDICTS, type HostChange, type HostSummary } from './document.js';
import { countsLine, orderHosts, verdictCounts } from './formats.js';
import { causeName, fleetCauses, type FleetCause } from './causes.js';
import { SCRIPT, VERDICT_LOOK, pageStyle } from './html-assets.js';
import { textDiff } from '../reconcile/plan-text.js';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const sha256 = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;

/**
 * A host string escaped and isolated: inside <bdi> the bidi controls and
 * right-to-left text a host wrote reorder nothing outside it (the Trojan
 * Source class), and markup is text.
 */
const bdi = (s: string) => `<bdi>${escapeHtml(s)}</bdi>`;

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** A document's link from the page in `outDir`: a relative path, each segment percent-encoded (a host's name is any text). */
export function documentHref(outDir: string, file: string): string {
  return path
    .relative(path.resolve(outDir), path.resolve(file))
    .split(path.sep)
    .map((seg) => encodeURIComponent(seg))
    .join('/');
}

/** A change's diff, one line per span so additions and removals are marked by class (and by their +/-), never by colour alone. */
function diffBlock(c: HostChange): string {
  if (c.path === null || (c.before === null && c.after === null)) return '';
  const lines = textDiff(c.path, c.before, c.after).replace(/\n$/, '').split('\n');
  const cls = (l: string) => (l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : 'ctx');
  return `<pre class="diff">${lines.map((l) => `<span class="${cls(l)}">${escapeHtml(l)}</span>`).join('\n')}</pre>`;
}

function detailsCell(h: HostSummary, outDir: string): string {
  const changes = h.change_details.map((c) => {
    const applied = c.applied === null ? '' : c.applied ? ' (applied)' : ' (not applied)';
    return `<div class="change"><code>${escapeHtml(c.action)}</code> ${bdi(`${c.resource}: ${c.summary}`)}${applied}</div>${diffBlock(c)}`;
  });
  const docs = h.documents.map((d) => `<li><a href="${escapeHtml(documentHref(outDir, d))}">${bdi(d)}</a></li>`);
  if (changes.length === 0 && docs.length === 0) return '<td class="details"></td>';
  // The plan's lines, deferred ones included: the changes column counts only what is pending or applied.
  const summary = `${plural(h.change_details.length, 'plan line')}, ${plural(h.documents.length, 'document')}`;
  return `<td class="details"><details><summary>${summary}</summary>${changes.join('')}${docs.length > 0 ? `<ul class="docs">${docs.join('')}</ul>` : ''}</details></td>`;
}

function findingsCell(h: HostSummary): string {
  const e = bdi;
  const operator = h.operator
    .map(
      (o) =>
        `<details class="operator"><summary>${e(`${o.resource}: ${o.summary}`)}</summary><div>reason: ${e(o.reason)}${o.withdraws.length > 0 ? `\nwithdraws: ${e(o.withdraws.join(', '))}` : ''}${o.carried ? '\ncarried past apply: apply hid it, its cause stays' : ''}</div></details>`,
    )
    .join('');
  const errors = h.errors.map((x) => `<div class="err">${e(x)}</div>`).join('');
  return `<td class="operator-lines" data-key="${h.operator.length + h.errors.length}">${operator}${errors}</td>`;
}

function hostRow(h: HostSummary, index: number, outDir: string): string {
  const e = bdi;
  const unknowns = h.unknowns
    .map((u) => `<details class="unknown"><summary>${e(u.length > 100 ? `${u.slice(0, 100)}…` : u)}</summary><div>${e(u)}</div></details>`)
    .join('');
  const accepted = h.accepted.map((x) => `<div class="accepted">${e(x)}</div>`).join('');
  const checks = [...new Set(h.causes.flatMap((c) => c.checks))];
  // Format characters (bidi controls) left out: an attribute is never shown, and the page keeps every one inside a <bdi>.
  const search = [h.host, h.verdict, ...checks]
    .join('\n')
    .toLowerCase()
    .replace(/\p{Cf}/gu, '');
  const look = VERDICT_LOOK[h.verdict];
  return [
    `<tr data-verdict="${h.verdict}" id="h-${index}" class="v-${h.verdict}" data-search="${escapeHtml(search)}">`,
    // Sorted by its text (the script reads textContent where a cell has no data-key).
    `<td class="host">${e(h.host)}</td>`,
    `<td class="verdict" data-key="${VERDICTS.indexOf(h.verdict)}"><span aria-hidden="true">${look.symbol}</span> ${h.verdict}</td>`,
    `<td data-key="${h.mode}">${h.mode}</td>`,
    `<td class="n changes" data-key="${h.changes}">${h.changes}</td>`,
    findingsCell(h),
    `<td class="unknowns" data-key="${h.unknowns.length}">${unknowns}</td>`,
    `<td class="accepted-findings" data-key="${h.accepted.length}">${accepted}</td>`,
    detailsCell(h, outDir),
    '</tr>',
  ].join('');
}

const CAUSE_EDGE: Record<FleetCause['kind'], string> = {
  unusable: VERDICT_LOOK.unusable.edge,
  failed: VERDICT_LOOK.failed.edge,
  operator: VERDICT_LOOK.operator.edge,
  unknown: VERDICT_LOOK.unknown.edge,
  accepted: VERDICT_LOOK.ready.edge,
};
const CAUSE_SYMBOL: Record<FleetCause['kind'], string> = { ...Object.fromEntries(VERDICTS.map((v) => [v, VERDICT_LOOK[v].symbol])), accepted: 'a' } as Record<
  FleetCause['kind'],
  string
>;

/** The causes, worst first; each lists its hosts as links to their rows. */
function causesSection(causes: FleetCause[], rowOf: Map<string, number>): string {
  if (causes.length === 0) return '<section id="causes"><h2>Findings by cause</h2><p>No finding on any host.</p></section>';
  const items = causes.map((c) => {
    const hosts = c.hosts.map((n) => `<li><a href="#h-${rowOf.get(n)}">${bdi(n)}</a></li>`).join('');
    const fix = c.fix === null ? '' : `<div class="fix">fix: ${bdi(c.fix)}</div>`;
    return (
      `<li class="cause k-${c.kind}" data-kind="${c.kind}" data-hosts="${c.hosts.length}">` +
      `<div class="cause-head"><span aria-hidden="true">${CAUSE_SYMBOL[c.kind]}</span> ${c.kind}${c.checks.length > 0 ? ` · ${bdi(causeName(c))}` : ''}: ` +
      `<span class="cause-count">${plural(c.hosts.length, 'host')}</span></div>` +
      `<div class="cause-text">${bdi(c.text)}</div>${fix}<ul class="cause-hosts" aria-label="hosts">${hosts}</ul></li>`
    );
  });
  return `<section id="causes"><h2>Findings by cause (${causes.length})</h2><ol class="causes">${items.join('\n')}</ol></section>`;
}

/** The cause list's border colours: part of the style, so of its hash. */
export const CAUSE_STYLE = Object.entries(CAUSE_EDGE)
  .map(([k, c]) => `ol.causes > li.k-${k} { border-left-color: ${c}; }`)
  .join('\n');

function tilesAndLegend(hosts: HostSummary[]): string {
  const counts = verdictCounts(hosts);
  const tile = (v: string, n: number, label: string) =>
    `<button type="button" class="t-${v}" data-filter="${v}" aria-pressed="${v === 'all'}">${label} <span class="count" data-verdict="${v}">${n}</span></button>`;
  const tiles = [
    tile('all', hosts.length, 'all'),
    ...VERDICTS.map((v) => tile(v, counts[v], `<span aria-hidden="true">${VERDICT_LOOK[v].symbol}</span> ${v}`)),
  ];
  const legend = VERDICTS.map((v) => `<li class="t-${v}"><span aria-hidden="true">${VERDICT_LOOK[v].symbol}</span> ${v}</li>`).join('');
  return `<nav class="tiles" aria-label="hosts by verdict (press to filter)">\n${tiles.join('\n')}\n</nav>\n<ul class="legend" aria-label="legend">${legend}</ul>`;
}

const COLUMNS: Array<[name: string, type: 'text' | 'number' | null]> = [
  ['host', 'text'],
  ['verdict', 'number'],
  ['mode', 'text'],
  ['changes', 'number'],
  ['operator lines', 'number'],
  ['unknowns', 'number'],
  ['accepted', 'number'],
  ['details', null],
];

function tableHead(): string {
  const th = COLUMNS.map(([name, type], i) =>
    type === null ? `<th>${name}</th>` : `<th data-col="${i}" data-type="${type}" aria-sort="none"><button type="button">${name}</button></th>`,
  );
  const cols = ['host', 'verdict', 'mode', 'n', 'wide', 'wide', 'n', 'details'].map((c) => `<col class="c-${c}">`).join('');
  return `<colgroup>${cols}</colgroup><thead><tr>${th.join('')}</tr></thead>`;
}

export interface HtmlOptions {
  title?: string;
  /** Where the page is written: its links to the hosts' documents are relative to it. */
  outDir?: string;
}

export function renderHtml(hosts: HostSummary[], opts: HtmlOptions = {}): string {
  const title = opts.title ?? 'k8s-host-reconcile fleet report';
  const style = pageStyle() + CAUSE_STYLE + '\n';
  const csp = `default-src 'none'; style-src ${sha256(style)}; script-src ${sha256(SCRIPT)}; img-src 'none'; form-action 'none'; base-uri 'none'`;
  const ordered = orderHosts(hosts);
  const rowOf = new Map<string, number>();
  ordered.forEach((h, i) => rowOf.has(h.host) || rowOf.set(h.host, i));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p id="summary">${escapeHtml(countsLine(hosts))}; showing <span id="shown">${hosts.length}</span>.</p>
${tilesAndLegend(hosts)}
${causesSection(fleetCauses(hosts), rowOf)}
<h2>Hosts</h2>
<div class="controls"><label>search <input type="search" id="search" placeholder="host name, verdict or check"></label></div>
<table id="hosts">
${tableHead()}
<tbody>
${ordered.map((h, i) => hostRow(h, i, opts.outDir ?? '.')).join('\n')}
</tbody>
</table>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
