// The fleet page at 5, 500 and 5,000 hosts in Debian's chromium (headless,
// puppeteer-core): it loads with no Content-Security-Policy violation, the
// verdict tiles and the cause groups count what the hosts' kinds imply, a
// column sort reorders the rows, the search box filters them, the header
// stays at the top while the table scrolls, host names do not wrap at their
// hyphens, an error keeps its line breaks, and a host's details show its
// diffs and link to its document. Every expectation is computed from the
// hosts' kinds (fleet-scale.ts), never read back from the page's own data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { main } from '../../src/cli.js';
import { captureIo } from '../helpers/io.js';
import { makeFleetDocuments } from '../helpers/fleet-documents.js';
import { scaledHosts, writeScaledFleet, type ScaledHost } from '../helpers/fleet-scale.js';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

let work: string;
let fetched: string;
let browser: Browser;
beforeAll(async () => {
  // Missing chromium fails the suite: a skipped browser test would say the page works untested.
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (scripts/ensure-debian-packages.sh unit installs it)`);
  work = mkdtempSync(path.join(tmpdir(), 'fleet-scale-'));
  fetched = await makeFleetDocuments(work);
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // As root, chromium refuses its sandbox; the page is our own file.
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'],
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

interface Opened {
  page: Page;
  violations: () => Promise<string[]>;
}

/** Opens a page from disk, recording every CSP violation (the event and the console's report) and every script error. */
async function open(file: string): Promise<Opened> {
  const page = await browser.newPage();
  await page.setViewport({ width: 900, height: 700 });
  const console: string[] = [];
  // A script error is as bad as a blocked script: the page would sort and filter nothing.
  page.on('pageerror', (e) => console.push(`page error: ${(e as Error).message}`));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) console.push(m.text());
  });
  await page.evaluateOnNewDocument(() => {
    const w = window as unknown as { cspViolations: string[] };
    w.cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => w.cspViolations.push(`${e.violatedDirective}: ${e.blockedURI}`));
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: 60_000 });
  const violations = async () => [...(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)), ...console];
  return { page, violations };
}

const visibleHosts = (page: Page) =>
  page.$$eval('#hosts tbody tr', (rows) => rows.filter((r) => !(r as HTMLElement).hidden).map((r) => r.querySelector('td.host')!.textContent!));
const codeUnitOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function makeReport(n: number): Promise<{ hosts: ScaledHost[]; html: string; out: string }> {
  const hosts = scaledHosts(n);
  const dir = writeScaledFleet(fetched, path.join(work, `fleet-${n}`), hosts);
  const out = path.join(work, `out-${n}`);
  const io = captureIo();
  const code = await main(['report', '-o', out, dir], io.value);
  expect(code, io.stderr()).toBe(2);
  return { hosts, html: path.join(out, 'fleet-report.html'), out };
}

it('notices a CSP violation when there is one (the listener works)', async () => {
  const { html } = await makeReport(5);
  const bad = path.join(path.dirname(html), 'tampered.html');
  // One byte of the inline script changed: its hash no longer matches the policy's.
  writeFileSync(bad, readFileSync(html, 'utf8').replace('apply();\n})();', 'apply(); \n})();'));
  const { page, violations } = await open(bad);
  expect((await violations()).join('\n')).toMatch(/script-src/);
  await page.close();
}, 60_000);

describe.each([5, 500, 5000])('the fleet page with %i hosts', (n) => {
  let hosts: ScaledHost[];
  let opened: Opened;
  let page: Page;
  beforeAll(async () => {
    const started = Date.now();
    const r = await makeReport(n);
    hosts = r.hosts;
    opened = await open(r.html);
    page = opened.page;
    process.stderr.write(`fleet page, ${n} hosts: report and load ${Date.now() - started} ms\n`);
  }, 120_000);
  afterAll(async () => page?.close());

  const namesWhere = (f: (h: ScaledHost) => boolean) => hosts.filter(f).map((h) => h.name);

  it('loads with no CSP violation, runs no host markup, and counts each verdict the hosts imply', async () => {
    expect(await opened.violations()).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    const counts = await page.$$eval('.tiles .count', (cs) => Object.fromEntries(cs.map((c) => [c.getAttribute('data-verdict'), Number(c.textContent)])));
    const implied = (v: string) => hosts.filter((h) => h.kind.expect === v).length;
    expect(counts).toEqual({
      all: n,
      unusable: 0,
      failed: implied('failed'),
      operator: implied('operator'),
      unknown: implied('unknown'),
      changes: implied('changes'),
      ready: implied('ready'),
    });
    expect((await visibleHosts(page)).sort(codeUnitOrder)).toEqual(hosts.map((h) => h.name).sort(codeUnitOrder));
    // The legend and every row name the verdict in a word beside its symbol: colour is never the only cue.
    expect(await page.$$eval('.legend li', (ls) => ls.map((l) => l.textContent))).toEqual([
      '⊘ unusable',
      '✖ failed',
      '! operator',
      '? unknown',
      '~ changes',
      '✓ ready',
    ]);
    const words = await page.$$eval('#hosts tbody tr', (rs) => rs.map((r) => [r.getAttribute('data-verdict'), r.querySelector('td.verdict')!.textContent]));
    for (const [v, text] of words) expect(text).toMatch(new RegExp(`^\\S ${v}$`));
  });

  it('groups the rc.local line by cause: one entry, every host it stands on linked to its row', async () => {
    const expected = namesWhere((h) => h.kind.names === '/etc/rc.local:2').sort(codeUnitOrder);
    const groups = await page.$$eval('li.cause', (ls) =>
      ls
        .filter((l) => l.querySelector('.cause-text')!.textContent!.startsWith('/etc/rc.local:2 sets net.ipv4.ip_forward = 0'))
        .map((l) => ({
          kind: l.getAttribute('data-kind'),
          count: l.querySelector('.cause-count')!.textContent,
          links: [...l.querySelectorAll('.cause-hosts a')].map((a) => {
            const row = document.getElementById(a.getAttribute('href')!.slice(1))!;
            return [a.textContent, row.querySelector('td.host')!.textContent];
          }),
        })),
    );
    expect(groups).toHaveLength(1);
    expect(groups[0]!.kind).toBe('operator');
    expect(groups[0]!.count).toBe(`${expected.length} host${expected.length === 1 ? '' : 's'}`);
    expect(groups[0]!.links.map((l) => l[0])).toEqual(expected);
    for (const [link, row] of groups[0]!.links) expect(row).toBe(link);
  });

  it('sorts by a column on a click and again from the keyboard', async () => {
    const names = hosts.map((h) => h.name);
    await page.click('#hosts th[data-col="0"] button');
    expect(await visibleHosts(page)).toEqual([...names].sort(codeUnitOrder));
    expect(await page.$eval('#hosts th[data-col="0"]', (t) => t.getAttribute('aria-sort'))).toBe('ascending');
    await page.focus('#hosts th[data-col="0"] button');
    await page.keyboard.press('Enter');
    expect(await visibleHosts(page)).toEqual([...names].sort(codeUnitOrder).reverse());
    expect(await page.$eval('#hosts th[data-col="0"]', (t) => t.getAttribute('aria-sort'))).toBe('descending');
  });

  it('filters by host name, verdict and check name in the search box', async () => {
    const search = async (q: string) => {
      // As a paste does: one input event; the page filters once the typing pauses.
      await page.$eval(
        '#search',
        (e, q) => {
          (e as HTMLInputElement).value = q;
          e.dispatchEvent(new Event('input'));
        },
        q,
      );
      await page.waitForFunction((q) => document.getElementById('hosts')!.getAttribute('data-filtered') === `all ${q.trim().toLowerCase()}`, {}, q);
      return (await visibleHosts(page)).sort(codeUnitOrder);
    };
    const named = (q: string) => namesWhere((h) => h.name.toLowerCase().includes(q.toLowerCase())).sort(codeUnitOrder);
    // A check name: the unknown rc.local line is filed under SwapOff (and the other two resources).
    expect(await search('swapoff')).toEqual(namesWhere((h) => h.kind.expect === 'unknown').sort(codeUnitOrder));
    expect(await search('operator')).toEqual(namesWhere((h) => h.kind.expect === 'operator').sort(codeUnitOrder));
    // Quotes and an ampersand: the attribute the search reads was escaped and means what the host's name says.
    expect(await search(`"U'O&`)).toEqual([`q"u'o&te`]);
    const last = hosts[hosts.length - 1]!.name;
    if (last.startsWith('rack-')) {
      expect(await search(last.toUpperCase())).toEqual(named(last));
      expect(await page.$eval('#shown', (e) => e.textContent)).toBe(String(named(last).length));
    }
    expect(await search('')).toHaveLength(n);
  });

  it('keeps the header at the top while the table scrolls, and host names on one line', async () => {
    // A short window, so even 5 hosts' table is taller than it; scrolled to 100 px into the table.
    await page.setViewport({ width: 900, height: 300 });
    await page.evaluate(() => window.scrollTo(0, document.getElementById('hosts')!.getBoundingClientRect().top + window.scrollY + 100));
    const at = await page.evaluate(() => [
      document.getElementById('hosts')!.getBoundingClientRect().top,
      document.querySelector('#hosts thead th')!.getBoundingClientRect().top,
    ]);
    expect(at[0]).toBeLessThan(-50);
    expect(Math.abs(at[1]!)).toBeLessThan(1);
    await page.setViewport({ width: 900, height: 700 });
    const lines = await page.$$eval('#hosts td.host bdi', (bs) => bs.map((b) => [b.textContent, b.getClientRects().length]));
    const rack = lines.filter(([name]) => String(name).startsWith('rack-'));
    expect(rack.length).toBe(hosts.filter((h) => h.name.startsWith('rack-')).length);
    for (const [name, rects] of rack) expect(rects, String(name)).toBe(1);
    await page.evaluate(() => window.scrollTo(0, 0));
  });

  it("shows a failed host's error with its line breaks, and a host's changes with diffs and its document linked", async () => {
    const failed = hosts.find((h) => h.kind.expect === 'failed');
    if (failed !== undefined) {
      // node-bad-desired: the CLI's error names the problem on a second line.
      const text = await page.$$eval('#hosts tr[data-verdict="failed"] .err', (es) => (es[0] as HTMLElement).innerText);
      expect(text.split('\n').length).toBeGreaterThanOrEqual(2);
      expect(text.split('\n')[1]).toMatch(/resources\[0\]\.persist: unknown key/);
    }
    const row = 'tr[data-verdict="changes"]';
    await page.click(`#hosts ${row} td.details summary`);
    const shown = await page.$eval(`#hosts ${row} td.details`, (td) => ({
      del: [...td.querySelectorAll('pre.diff span.del')].map((s) => s.textContent),
      add: [...td.querySelectorAll('pre.diff span.add')].map((s) => s.textContent),
      visible: td.querySelector('pre.diff')!.checkVisibility(),
      links: [...td.querySelectorAll('ul.docs a')].map((a) => (a as HTMLAnchorElement).href),
    }));
    expect(shown.visible).toBe(true);
    // The fstab's swap line commented out (test/helpers/swap-modules-tree.ts FSTAB).
    expect(shown.del).toContain('-/swapfile\tnone\tswap\tsw\t0\t0');
    expect(shown.add).toContain('+#/swapfile\tnone\tswap\tsw\t0\t0');
    expect(shown.links).toHaveLength(1);
    expect(readFileSync(fileURLToPath(shown.links[0]!), 'utf8')).toMatch(/"mode": "plan"/);
  });
});
