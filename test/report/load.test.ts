// What `reconcile report` reads from a fetch directory: every entry in it is a
// host in the table, the CSV, the JSON and the HTML (a link, a file or a fifo
// where a host directory should be, a directory without reconcile.json, one the
// report cannot read), never dropped; a reconcile.json at the top of a fetch
// directory, or one level too deep, is refused by name and never stands for
// the fleet. The entries are planted here, each with the verdict it implies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, copyFileSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../src/cli.js';
import { runReport } from '../../src/report/index.js';
import { captureIo } from '../helpers/io.js';
import { FLEET, makeFleetDocuments } from '../helpers/fleet-documents.js';

let work: string;
let fetched: string;
beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'report-load-'));
  // Two real hosts are enough here: a plan with changes and a verified apply.
  fetched = await makeFleetDocuments(
    work,
    FLEET.filter((h) => h.name === 'node-swap-plan' || h.name === 'node-swap-apply'),
  );
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const eaccesError = (p: string) => Object.assign(new Error(`EACCES: permission denied, scandir '${p}'`), { code: 'EACCES', path: p });

/** A fetch directory: the two real hosts and one of each kind of entry that is no usable host. */
function plantedFleet(): { dir: string; expected: Record<string, RegExp> } {
  const dir = mkdtempSync(path.join(work, 'fleet-'));
  cpSync(fetched, dir, { recursive: true });
  symlinkSync(path.join(dir, 'node-swap-plan'), path.join(dir, 'linked-host'));
  mkdirSync(path.join(dir, 'no-document'));
  mkdirSync(path.join(dir, 'nested', 'sub'), { recursive: true });
  copyFileSync(path.join(dir, 'node-swap-apply', 'reconcile.json'), path.join(dir, 'nested', 'sub', 'reconcile.json'));
  writeFileSync(path.join(dir, 'a-file'), 'not a host\n');
  execFileSync('mkfifo', [path.join(dir, 'a-fifo')]);
  // Readable to root whatever its mode: the EACCES comes from the reader (runReport's fs seam).
  mkdirSync(path.join(dir, 'locked'));
  copyFileSync(path.join(dir, 'node-swap-apply', 'reconcile.json'), path.join(dir, 'locked', 'reconcile.json'));
  return {
    dir,
    expected: {
      'linked-host': /symbolic link/,
      'no-document': /no reconcile\.json in it$/,
      nested: /no reconcile\.json in it; not read, one level too deep: sub\/reconcile\.json$/,
      'a-file': /a regular file where a host directory should be/,
      'a-fifo': /a fifo where a host directory should be/,
      locked: /permission denied|EACCES/,
    },
  };
}

/** Python's csv module reads the file: rows of cells. */
function pythonCsv(file: string): string[][] {
  const out = execFileSync(
    'python3',
    ['-c', 'import csv,json,sys; print(json.dumps(list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))))', file],
    { encoding: 'utf8' },
  );
  return JSON.parse(out);
}

describe('every input of a fetch directory is accounted for', () => {
  it('lists a linked, a document-less, a nested, a file, a fifo and an unreadable entry as unusable, in every output', async () => {
    const { dir, expected } = plantedFleet();
    const out = path.join(work, 'out-planted');
    const io = captureIo();
    const locked = path.join(dir, 'locked', 'reconcile.json');
    const code = await runReport(['-o', out, dir], io.value, {
      fs: {
        lstat: (p) => {
          if (p === locked) throw eaccesError(p);
          return lstatSync(p);
        },
      },
    });
    // Some host is unusable: exit 1, and the reports are written all the same.
    expect(code, io.stderr()).toBe(1);
    const all = { ...expected, 'node-swap-plan': null, 'node-swap-apply': null };
    const names = Object.keys(all).sort();

    const json = JSON.parse(readFileSync(path.join(out, 'fleet-report.json'), 'utf8'));
    expect(json.hosts.map((h: { host: string }) => h.host).sort()).toEqual(names);
    expect(json.counts).toEqual({ unusable: 6, failed: 0, operator: 0, unknown: 0, changes: 1, ready: 1 });
    for (const [host, reason] of Object.entries(expected)) {
      const h = json.hosts.find((x: { host: string }) => x.host === host);
      expect(h.verdict, host).toBe('unusable');
      expect(h.errors[0], host).toMatch(reason);
    }

    const table = io.stdout();
    for (const host of names) expect(table, host).toMatch(new RegExp(`^${host} +${host.startsWith('node-') ? '(changes|ready)' : 'unusable'} `, 'm'));
    expect(table).toContain('8 hosts: 6 unusable, 1 changes, 1 ready');
    // Each reason is printed under its host in the table.
    for (const [host, reason] of Object.entries(expected)) {
      const lines = table.split('\n');
      const at = lines.findIndex((l) => l.startsWith(`${host} `));
      expect(lines[at + 1], host).toMatch(/^ {4}x /);
      expect(lines[at + 1]!.slice(6), host).toMatch(reason);
    }

    const csv = pythonCsv(path.join(out, 'fleet-report.csv'));
    expect(
      csv
        .slice(1)
        .map((r) => r[0])
        .sort(),
    ).toEqual(names);
    for (const [host, reason] of Object.entries(expected)) {
      const row = csv.find((r) => r[0] === host)!;
      expect(row[1]).toBe('unusable');
      expect(row[8]).toMatch(reason);
    }

    const html = readFileSync(path.join(out, 'fleet-report.html'), 'utf8');
    for (const host of names) expect(html, host).toContain(`<bdi>${host}</bdi></td>`);
    expect(html.match(/<tr data-verdict="unusable"[ >]/g)).toHaveLength(6);
  });

  it('refuses a reconcile.json at the top of a fetch directory by name, and reads every host under it', async () => {
    // Before, this single file made the report ignore every host directory: "1 host: 1 ready", exit 0.
    const dir = mkdtempSync(path.join(work, 'stray-'));
    cpSync(fetched, dir, { recursive: true });
    copyFileSync(path.join(dir, 'node-swap-apply', 'reconcile.json'), path.join(dir, 'reconcile.json'));
    const io = captureIo();
    const code = await main(['report', '--json', '-o', path.join(work, 'out-stray'), dir], io.value);
    expect(code).toBe(1);
    const json = JSON.parse(io.stdout());
    expect(json.hosts.map((h: { host: string; verdict: string }) => `${h.host} ${h.verdict}`).sort()).toEqual(
      [`${path.basename(dir)} unusable`, 'node-swap-apply ready', 'node-swap-plan changes'].sort(),
    );
    const stray = json.hosts.find((h: { verdict: string }) => h.verdict === 'unusable');
    expect(stray.file).toBe(path.join(dir, 'reconcile.json'));
    expect(stray.errors[0]).toMatch(/beside host directories .*; not read$/);
    expect(io.stderr()).toContain(`${path.join(dir, 'reconcile.json')}: a reconcile.json beside host directories`);
  });

  it('a host directory given alone is one host, its fetched reports beside its document not hosts', async () => {
    const one = path.join(work, 'one-host');
    cpSync(path.join(fetched, 'node-swap-apply'), one, { recursive: true });
    mkdirSync(path.join(one, 'reports', 'runs'), { recursive: true });
    writeFileSync(path.join(one, 'reports', 'facts.json'), '{}\n');
    const io = captureIo();
    const code = await main(['report', '-o', path.join(work, 'out-one'), one], io.value);
    expect(code, io.stderr()).toBe(0);
    expect(io.stdout()).toContain('1 host: 1 ready');
  });

  it("does not take the report's own outputs for hosts when -o is the fetch directory", async () => {
    const dir = mkdtempSync(path.join(work, 'self-'));
    cpSync(fetched, dir, { recursive: true });
    for (let run = 0; run < 2; run++) {
      const io = captureIo();
      const code = await main(['report', '-o', dir, dir], io.value);
      expect(code, io.stderr()).toBe(2);
      expect(io.stdout()).toContain('2 hosts: 1 changes, 1 ready');
    }
  });
});
