// reconcile --facts: the facts kubespray judges this host by, without a plan.
// Read-only on this machine; the expectations come from the kernel directly.
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { release, tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../src/cli.js';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) }, env: {} } };
}

describe('reconcile --facts', () => {
  it('prints facts.json for this host as one JSON document, and plans nothing', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'facts-cli-'));
    const desired = path.join(dir, 'd.yaml');
    writeFileSync(desired, 'reports_dir: /tmp/never-written\nfacts:\n  source: native\nresources: []\n');
    const t = io();
    expect(await main(['--facts', '--json', '-f', desired], t.io)).toBe(0);
    const doc = JSON.parse(t.out.join(''));
    const memKb = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]);
    expect(doc).toMatchObject({ format_version: '1.0', mode: 'facts' });
    expect(doc.facts.memtotal_mb).toBe(Math.floor(memKb / 1024));
    expect(doc.facts.kernel).toBe(release());
    expect(doc).not.toHaveProperty('resources');
  });

  it('refuses --root and a mode alongside it', async () => {
    for (const args of [['--facts', '--root', '/tmp'], ['--facts', '--plan']]) {
      const t = io();
      expect(await main(args, t.io)).toBe(1);
      expect(t.err.join('')).toContain('--facts reads the running host');
    }
  });
});
