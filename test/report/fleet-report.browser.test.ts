// The fleet report's HTML page in a real browser: Debian's chromium, headless,
// driven by puppeteer-core (it drives an installed browser and downloads
// none). The page is opened from disk with every request other than the page
// itself counted (a self-contained page makes none); the counts and one
// filter are checked against the verdicts the hosts' content implies, and a
// host string carrying markup must stay text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { main } from '../../src/cli.js';
import { captureIo } from '../helpers/io.js';
import { FLEET, makeFleetDocuments } from '../helpers/fleet-documents.js';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const MARKUP = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';

let work: string;
let browser: Browser;
let page: Page;
const requests: string[] = [];
beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (scripts/ensure-debian-packages.sh installs it)`);
  work = mkdtempSync(path.join(tmpdir(), 'fleet-browser-'));
  const fetched = await makeFleetDocuments(work);
  // One operator line carries markup, as a hostile host could write into a summary.
  const file = path.join(fetched, 'node-rc-sysctl-plan', 'reconcile.json');
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  doc.resources
    .flatMap((r: { changes: { operator: string | null; summary: string }[] }) => r.changes)
    .find((c: { operator: string | null }) => c.operator !== null).summary += MARKUP;
  writeFileSync(file, JSON.stringify(doc));
  const io = captureIo();
  const code = await main(['report', '-o', path.join(work, 'out'), fetched], io.value);
  expect(code, io.stderr()).toBe(2);
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // As root in CI, chromium refuses its sandbox; the page is our own file.
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage();
  await page.setRequestInterception(true);
  const url = pathToFileURL(path.join(work, 'out', 'fleet-report.html')).href;
  page.on('request', (req) => {
    if (req.url() !== url) requests.push(req.url());
    void (req.url() === url ? req.continue() : req.abort());
  });
  await page.goto(url, { waitUntil: 'load' });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const expected = (v: string) => FLEET.filter((h) => h.expect === v).length;
const visibleHosts = () =>
  page.$$eval('tbody tr', (rows) =>
    rows
      .filter((r) => !(r as HTMLElement).hidden && (r as HTMLElement).offsetParent !== null)
      .map((r) => [r.querySelector('.host')!.textContent, r.getAttribute('data-verdict')]),
  );

describe('fleet-report.html in chromium', () => {
  it('loads nothing but itself and runs no host markup', async () => {
    expect(requests).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    // The markup is shown as text in the operator line's summary.
    const summaries = await page.$$eval('tr[data-verdict="operator"] details.operator summary', (s) => s.map((x) => x.textContent));
    expect(summaries.some((s) => s!.endsWith(MARKUP))).toBe(true);
  });

  it('shows the count of each verdict the hosts imply', async () => {
    const counts = await page.$$eval('nav .count', (cs) => Object.fromEntries(cs.map((c) => [c.getAttribute('data-verdict'), Number(c.textContent)])));
    expect(counts).toEqual({
      all: FLEET.length,
      unusable: 0,
      failed: expected('failed'),
      operator: expected('operator'),
      unknown: expected('unknown'),
      changes: expected('changes'),
      ready: expected('ready'),
    });
    expect(await visibleHosts()).toHaveLength(FLEET.length);
  });

  it('filters to the operator hosts, and an operator line opens to its reason', async () => {
    await page.click('nav button[data-filter="operator"]');
    const shown = await visibleHosts();
    expect(shown.map((r) => r[0]).sort()).toEqual(
      FLEET.filter((h) => h.expect === 'operator')
        .map((h) => h.name)
        .sort(),
    );
    expect(shown.every((r) => r[1] === 'operator')).toBe(true);
    expect(await page.$eval('#shown', (e) => e.textContent)).toBe(String(expected('operator')));

    const reason = 'tr[data-verdict="operator"]:not([hidden]) details.operator div';
    // Closed: the reason is not shown.
    expect(await page.$eval(reason, (d) => [d.closest('details')!.open, d.checkVisibility()])).toEqual([false, false]);
    await page.click('tr[data-verdict="operator"]:not([hidden]) details.operator summary');
    const opened = await page.$eval(reason, (d) => ({ open: d.closest('details')!.open, visible: d.checkVisibility(), text: (d as HTMLElement).innerText }));
    expect(opened.open).toBe(true);
    expect(opened.visible).toBe(true);
    expect(opened.text).toMatch(/^reason: \/etc\/rc\.local:2: remove or comment out that line/);

    await page.click('nav button[data-filter="all"]');
    expect(await visibleHosts()).toHaveLength(FLEET.length);
  });
});
