// The fleet report as one self-contained HTML page: no network, no external
// asset. Rows are rendered here (every host string escaped); the one inline
// script only hides rows by verdict. A Content-Security-Policy allows nothing
// but this page's own style and script (by hash), so a host string that
// slipped through escaping could still not load or run anything.
import { createHash } from 'node:crypto';
import { VERDICTS, type HostSummary } from './document.js';
import { countsLine, orderHosts, verdictCounts } from './formats.js';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; }
nav button { margin: 0 .3em .6em 0; padding: .3em .7em; border: 1px solid #888; background: #f4f4f4; border-radius: 4px; cursor: pointer; }
nav button[aria-pressed="true"] { background: #234; color: #fff; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: .35em .5em; text-align: left; vertical-align: top; }
td.n { text-align: right; }
.v-unusable { color: #fff; background: #a00; font-weight: bold; } .v-failed { color: #a00; font-weight: bold; } .v-operator { color: #b60; font-weight: bold; }
.v-unknown { color: #850; } .v-changes { color: #035; } .v-ready { color: #070; }
details { margin: .15em 0; } summary { cursor: pointer; }
details div { margin: .2em 0 .4em 1.2em; color: #444; white-space: pre-wrap; }
.err { color: #a00; }
`;

const SCRIPT = `
(function () {
  var buttons = document.querySelectorAll('nav button[data-filter]');
  var rows = document.querySelectorAll('tbody tr[data-verdict]');
  var shown = document.getElementById('shown');
  function show(verdict) {
    var n = 0;
    for (var i = 0; i < rows.length; i++) {
      var on = verdict === 'all' || rows[i].getAttribute('data-verdict') === verdict;
      rows[i].hidden = !on;
      if (on) n++;
    }
    for (var j = 0; j < buttons.length; j++) buttons[j].setAttribute('aria-pressed', String(buttons[j].getAttribute('data-filter') === verdict));
    shown.textContent = String(n);
  }
  for (var k = 0; k < buttons.length; k++) {
    buttons[k].addEventListener('click', function (e) { show(e.currentTarget.getAttribute('data-filter')); });
  }
})();
`;

const sha256 = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;

/**
 * A host string escaped and isolated: inside <bdi> the bidi controls and
 * right-to-left text a host wrote reorder nothing outside it (the Trojan
 * Source class), and markup is text.
 */
const bdi = (s: string) => `<bdi>${escapeHtml(s)}</bdi>`;

function hostRow(h: HostSummary): string {
  const e = bdi;
  const operator = h.operator
    .map(
      (o) =>
        `<details class="operator"><summary>${e(`${o.resource}: ${o.summary}`)}</summary><div>reason: ${e(o.reason)}${o.withdraws.length > 0 ? `\nwithdraws: ${e(o.withdraws.join(', '))}` : ''}${o.carried ? '\ncarried past apply: apply hid it, its cause stays' : ''}</div></details>`,
    )
    .join('');
  const unknowns = h.unknowns
    .map((u) => `<details class="unknown"><summary>${e(u.length > 100 ? `${u.slice(0, 100)}…` : u)}</summary><div>${e(u)}</div></details>`)
    .join('');
  const errors = h.errors.map((x) => `<div class="err">${e(x)}</div>`).join('');
  const accepted = h.accepted.map((x) => `<div class="accepted">${e(x)}</div>`).join('');
  return [
    `<tr data-verdict="${h.verdict}">`,
    `<td class="host">${e(h.host)}</td>`,
    `<td class="verdict v-${h.verdict}">${h.verdict}</td>`,
    `<td>${h.mode}</td>`,
    `<td class="n changes">${h.changes}</td>`,
    `<td class="operator-lines">${operator}${errors}</td>`,
    `<td class="unknowns">${unknowns}</td>`,
    `<td class="accepted-findings">${accepted}</td>`,
    '</tr>',
  ].join('');
}

export function renderHtml(hosts: HostSummary[], title = 'k8s-host-reconcile fleet report'): string {
  const counts = verdictCounts(hosts);
  const csp = `default-src 'none'; style-src ${sha256(STYLE)}; script-src ${sha256(SCRIPT)}; img-src 'none'; form-action 'none'; base-uri 'none'`;
  const buttons = [
    `<button type="button" data-filter="all" aria-pressed="true">all <span class="count" data-verdict="all">${hosts.length}</span></button>`,
    ...VERDICTS.map(
      (v) => `<button type="button" data-filter="${v}" aria-pressed="false">${v} <span class="count" data-verdict="${v}">${counts[v]}</span></button>`,
    ),
  ].join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p id="summary">${escapeHtml(countsLine(hosts))}; showing <span id="shown">${hosts.length}</span>.</p>
<nav aria-label="filter by verdict">
${buttons}
</nav>
<table>
<thead><tr><th>host</th><th>verdict</th><th>mode</th><th>changes</th><th>operator lines</th><th>unknowns</th><th>accepted</th></tr></thead>
<tbody>
${orderHosts(hosts).map(hostRow).join('\n')}
</tbody>
</table>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
