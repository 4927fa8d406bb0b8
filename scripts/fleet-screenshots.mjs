#!/usr/bin/env node
// The fleet report's screenshots in docs/img/, reproducibly: the five hosts
// of test/fixtures/example-fleet (scripts/example-fleet.mjs) copied to 500
// host directories (which host gets which kind is fixed below), reported with
// the bundle, and the page photographed in Debian's chromium (headless,
// puppeteer-core): the verdict tiles and the findings grouped by cause, then
// the host table with one host's details open.
//
//   node scripts/bundle.mjs && node scripts/fleet-screenshots.mjs
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const EXAMPLE = path.join(repo, 'test/fixtures/example-fleet');
const IMG = path.join(repo, 'docs/img');
const HOSTS = 500;

/** Of every 20 hosts: 2 with the rc.local sysctl line, 1 running a Python program, 1 failed, 8 with swap to turn off, 8 ready. */
const KIND = [
  'node-03-rc-sysctl',
  'node-03-rc-sysctl',
  'node-04-rc-python',
  'node-05-bad-desired',
  ...Array(8).fill('node-01-swap'),
  ...Array(8).fill('node-02-applied'),
];

for (const need of [path.join(repo, 'dist/reconcile.mjs'), CHROMIUM, EXAMPLE])
  if (!existsSync(need)) {
    console.error(`${need} is missing (node scripts/bundle.mjs; apt-get install chromium; node scripts/example-fleet.mjs)`);
    process.exit(1);
  }
const work = mkdtempSync(path.join(tmpdir(), 'fleet-screenshots-'));
try {
  const fleet = path.join(work, 'fetched');
  for (let i = 0; i < HOSTS; i++) {
    const name = `rack-${String(Math.floor(i / 25) + 1).padStart(2, '0')}-node-${String(i + 1).padStart(3, '0')}`;
    cpSync(path.join(EXAMPLE, KIND[i % KIND.length]), path.join(fleet, name), { recursive: true });
  }
  const out = path.join(work, 'report');
  try {
    execFileSync(process.execPath, [path.join(repo, 'dist/reconcile.mjs'), 'report', '-o', out, fleet], { stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (e) {
    // 2: some host is not ready, as this fleet means.
    if (e.status !== 2) throw e;
  }
  mkdirSync(IMG, { recursive: true });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(pathToFileURL(path.join(out, 'fleet-report.html')).href, { waitUntil: 'load' });
    await page.screenshot({ path: path.join(IMG, 'fleet-report-causes.png') });
    // The table: sorted by verdict from the keyboard, one host's details open, scrolled so the sticky header is at the top.
    await page.focus('#hosts th[data-col="1"] button');
    await page.keyboard.press('Enter');
    await page.click('#hosts tr[data-verdict="changes"] td.details summary');
    await page.evaluate(() => {
      const row = document.querySelector('#hosts tr[data-verdict="changes"]');
      window.scrollTo(0, row.getBoundingClientRect().top + window.scrollY - 260);
    });
    await page.screenshot({ path: path.join(IMG, 'fleet-report-table.png') });
  } finally {
    await browser.close();
  }
  console.log(`wrote ${path.join(IMG, 'fleet-report-causes.png')} and ${path.join(IMG, 'fleet-report-table.png')} (${HOSTS} hosts)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
