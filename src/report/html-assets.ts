// The fleet page's one inline style and one inline script, and how each
// verdict looks. Both are constants so html.ts can hash them for the page's
// Content-Security-Policy at render time; nothing host-provided is ever part
// of them (host text only reaches the page as escaped markup and attributes).
import type { Verdict } from './document.js';

/**
 * Each verdict's symbol, word and row tint. Colour is never the only cue:
 * every row and the legend carry the symbol and the word. The tints differ
 * in lightness as well as hue (Okabe and Ito's colour-blind-safe hues:
 * vermillion, yellow, reddish purple, sky blue, lightened, and a grey), so
 * they stay apart under deuteranopia; no orange beside olive.
 * test/report/html-assets.test.ts simulates deuteranopia on them.
 */
export const VERDICT_LOOK: Record<Verdict, { symbol: string; tint: string; edge: string }> = {
  unusable: { symbol: '⊘', tint: '#9e9e9e', edge: '#000000' },
  failed: { symbol: '✖', tint: '#f2b48a', edge: '#a33f00' },
  operator: { symbol: '!', tint: '#fbf5b0', edge: '#8a7d00' },
  unknown: { symbol: '?', tint: '#dcaed0', edge: '#8c3d70' },
  changes: { symbol: '~', tint: '#d4ecfa', edge: '#0072b2' },
  ready: { symbol: '✓', tint: '#ffffff', edge: '#9e9e9e' },
};

export function pageStyle(): string {
  const tints = Object.entries(VERDICT_LOOK)
    .map(
      ([v, l]) =>
        `tr.v-${v} > td { background: ${l.tint}; } tr.v-${v} > td:first-child { border-left: 6px solid ${l.edge}; } .t-${v} { background: ${l.tint}; border-left: 6px solid ${l.edge}; }`,
    )
    .join('\n');
  return `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin: 1.2em 0 .4em; }
.tiles { display: flex; flex-wrap: wrap; gap: .5em; margin: .5em 0 1em; }
.tiles button { min-width: 7.5em; padding: .4em .7em; border: 1px solid #888; border-radius: 4px; cursor: pointer; text-align: left; font: inherit; color: #111; }
.tiles button .count { display: block; font-size: 1.6em; font-weight: bold; }
.tiles button[aria-pressed="true"] { outline: 3px solid #222; outline-offset: 1px; }
.legend { margin: 0 0 1em; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: .4em 1.2em; }
.legend li { padding: .1em .5em; }
ol.causes { padding-left: 0; list-style: none; }
ol.causes > li { margin: .3em 0; padding: .3em .6em; border-left: 6px solid #888; background: #f6f6f6; }
.cause-head { font-weight: bold; } .cause-text, .fix { white-space: pre-wrap; }
.cause-hosts { max-height: 6.5em; overflow: auto; margin: .2em 0 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: .1em .8em; }
.cause-hosts a, td.host { white-space: nowrap; }
.controls { display: flex; gap: 1em; align-items: center; margin: .5em 0; }
#search { font: inherit; padding: .3em .5em; min-width: 22em; }
table { border-collapse: separate; border-spacing: 0; width: 100%; }
/* Fixed layout: the widths come from the column elements, so sorting or filtering 5,000 rows never measures every cell. */
#hosts { table-layout: fixed; min-width: 70em; }
col.c-host { width: 16em; } col.c-verdict { width: 7.5em; } col.c-mode { width: 4.5em; } col.c-n { width: 5.5em; } col.c-details { width: 26em; }
td.host { overflow-x: auto; }
td { overflow-wrap: anywhere; }
thead th { position: sticky; top: 0; z-index: 1; background: #fff; border-bottom: 2px solid #444; }
th, td { border-bottom: 1px solid #ccc; padding: .35em .5em; text-align: left; vertical-align: top; }
th button { font: inherit; font-weight: bold; border: 0; background: none; padding: 0; cursor: pointer; }
th[aria-sort="ascending"] button::after { content: " ▲"; } th[aria-sort="descending"] button::after { content: " ▼"; }
td.n { text-align: right; } td.verdict { white-space: nowrap; font-weight: bold; }
tr:target > td { outline: 2px solid #000; }
${tints}
details { margin: .15em 0; } summary { cursor: pointer; }
details div, .err { margin: .2em 0 .4em 1.2em; white-space: pre-wrap; }
.err { color: #7a0000; font-weight: bold; }
pre.diff { margin: .2em 0 .5em 1.2em; padding: .3em; background: #fafafa; border: 1px solid #ddd; overflow: auto; max-height: 20em; }
.diff .add { color: #005a8c; } .diff .del { color: #8c3d70; }
`;
}

/**
 * Filters (verdict tiles, the search box: host name, verdict or check name,
 * case-insensitive substring), column sort (header buttons: the keyboard
 * reaches and presses them; aria-sort says the order), and a link to a host's
 * row that is filtered out clears the filters first.
 */
export const SCRIPT = `
(function () {
  var table = document.getElementById('hosts');
  var tbody = table.querySelector('tbody');
  var rows = Array.prototype.slice.call(tbody.querySelectorAll('tr[data-verdict]'));
  var tiles = document.querySelectorAll('.tiles button[data-filter]');
  var search = document.getElementById('search');
  var shown = document.getElementById('shown');
  var verdict = 'all';
  function apply() {
    var q = search.value.trim().toLowerCase(), n = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var on = (verdict === 'all' || r.getAttribute('data-verdict') === verdict) && (q === '' || r.getAttribute('data-search').indexOf(q) >= 0);
      if (r.hidden === on) r.hidden = !on;
      if (on) n++;
    }
    // What the rows show now, for a reader (and a test) that waits for the filter to apply.
    table.setAttribute('data-filtered', verdict + ' ' + q);
    for (var j = 0; j < tiles.length; j++) tiles[j].setAttribute('aria-pressed', String(tiles[j].getAttribute('data-filter') === verdict));
    shown.textContent = String(n);
  }
  for (var k = 0; k < tiles.length; k++)
    tiles[k].addEventListener('click', function (e) { verdict = e.currentTarget.getAttribute('data-filter'); apply(); });
  // Typing into a 5,000-row table: filter once the typing pauses, not on every key.
  var timer = null;
  search.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(apply, 150); });
  var heads = document.querySelectorAll('#hosts thead th[data-col]');
  function sortBy(th) {
    var col = Number(th.getAttribute('data-col')), numeric = th.getAttribute('data-type') === 'number';
    var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
    for (var h = 0; h < heads.length; h++) heads[h].setAttribute('aria-sort', 'none');
    th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
    var keyed = rows.map(function (r, i) {
      var cell = r.children[col], k = cell.hasAttribute('data-key') ? cell.getAttribute('data-key') : cell.textContent;
      return { r: r, k: numeric ? Number(k) : k, i: i };
    });
    keyed.sort(function (a, b) { return (a.k < b.k ? -1 : a.k > b.k ? 1 : 0) * dir || a.i - b.i; });
    var frag = document.createDocumentFragment();
    rows = keyed.map(function (x) { frag.appendChild(x.r); return x.r; });
    tbody.appendChild(frag);
  }
  for (var m = 0; m < heads.length; m++)
    heads[m].querySelector('button').addEventListener('click', function (e) { sortBy(e.currentTarget.parentNode); });
  var links = document.querySelectorAll('a[href^="#h-"]');
  for (var l = 0; l < links.length; l++)
    links[l].addEventListener('click', function (e) {
      var row = document.getElementById(e.currentTarget.getAttribute('href').slice(1));
      if (row && row.hidden) { verdict = 'all'; search.value = ''; apply(); }
    });
  apply();
})();
`;
