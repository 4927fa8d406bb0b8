// A CIFS mount's password and credentials file in /etc/fstab: plan and apply
// (text and --json) show them nowhere, not on stdout, not in any file of the
// reports directory but the run's backup; apply keeps the line's bytes and
// rollback restores the original file byte for byte. The run's own files are
// the owner's alone. Offline fixture roots only (--root).
import { afterEach, describe, expect, it } from 'vitest';
import { lstatSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCli } from './helpers/run-cli.js';
import { FSTAB, swapModulesTree } from './helpers/swap-modules-tree.js';

const PASSWORD = 'S3cr3t!';
const CREDENTIALS = '/root/.smb';
const CIFS = `//srv/share /mnt cifs username=u,password=${PASSWORD},vers=3.0 0 0`;
const CIFS_CREDENTIALS = `//srv/other\t/mnt/other\tcifs\tcredentials=${CREDENTIALS},uid=1000\t0\t0`;
// The swap line SwapOff comments out sits between the two: both are diff context.
const PLANTED = FSTAB.replace('/swapfile', `${CIFS}\n/swapfile`).replace('tmpfs /tmp', `${CIFS_CREDENTIALS}\ntmpfs /tmp`);

const works: string[] = [];
afterEach(() => {
  for (const w of works.splice(0)) rmSync(w, { recursive: true, force: true });
});
function tree() {
  const t = swapModulesTree('cli-secrets-');
  works.push(t.work);
  writeFileSync(path.join(t.root, 'etc/fstab'), PLANTED);
  return { ...t, f: ['-f', path.join(t.work, 'desired.yaml'), '--root', t.root] };
}
const cli = (args: string[]) => runCli(args, true);

/** Every regular file under `dir`, relative, with its text. */
function files(dir: string, rel = ''): Array<{ rel: string; text: string }> {
  const out: Array<{ rel: string; text: string }> = [];
  for (const name of readdirSync(path.join(dir, rel))) {
    const r = path.join(rel, name);
    const st = lstatSync(path.join(dir, r));
    if (st.isDirectory()) out.push(...files(dir, r));
    else if (st.isFile()) out.push({ rel: r, text: readFileSync(path.join(dir, r), 'utf8') });
  }
  return out;
}

const leaks = (s: string) => [PASSWORD, CREDENTIALS].filter((x) => s.includes(x));

describe('credentials in /etc/fstab', () => {
  it('plan --json: the fstab change is marked redacted, before and after show no credential, other lines exact', async () => {
    const t = tree();
    const r = await cli(['plan', '--json', ...t.f]);
    expect(r.code).toBe(2);
    expect(leaks(r.stdout + r.stderr)).toEqual([]);
    const doc = JSON.parse(r.stdout);
    const change = doc.resources.flatMap((x: { changes: unknown[] }) => x.changes).find((c: { path: string | null }) => c.path === '/etc/fstab');
    expect(change.redacted).toBe(true);
    const before = change.before.split('\n');
    // The CIFS entries keep device, mount point and type; their options field is hidden.
    expect(before).toContain('//srv/share /mnt cifs (sensitive value 1) 0 0');
    expect(before).toContain('//srv/other\t/mnt/other\tcifs\t(sensitive value 2)\t0\t0');
    // Every line without a credential is shown exactly.
    const plain = PLANTED.split('\n').filter((l) => !l.startsWith('//srv/'));
    for (const l of plain) expect(before).toContain(l);
    expect(change.after.split('\n')).toContain('//srv/share /mnt cifs (sensitive value 1) 0 0');
    // Changes without a file are not marked.
    expect(
      doc.resources
        .flatMap((x: { changes: Array<{ path: string | null; redacted: boolean }> }) => x.changes)
        .filter((c: { path: string | null; redacted: boolean }) => c.path === null && c.redacted),
    ).toEqual([]);
  });

  it('the text plan: the diff shows the markers and says so; no credential', async () => {
    const t = tree();
    const r = await cli(['plan', ...t.f]);
    expect(r.code).toBe(2);
    expect(leaks(r.stdout + r.stderr)).toEqual([]);
    expect(r.stdout).toMatch(/^ {6} \/\/srv\/share \/mnt cifs \(sensitive value 1\) 0 0$/m);
    expect(r.stdout).toMatch(/^ {6}-\/swapfile\tnone\tswap\tsw\t0\t0$/m);
    expect(r.stdout).toContain('(sensitive values hidden;');
  });

  it('apply (text and --json) and rollback: no credential shown or stored but in the backup; the line kept byte for byte; rollback restores the bytes', async () => {
    for (const json of [false, true]) {
      const t = tree();
      const apply = await cli(['apply', ...(json ? ['--json'] : []), ...t.f]);
      expect(apply.code).toBe(0);
      expect(leaks(apply.stdout + apply.stderr)).toEqual([]);
      if (json) expect(JSON.parse(apply.stdout).after).toBeDefined();

      // On disk: the swap line commented out, both CIFS lines exactly as they were.
      const fstab = readFileSync(path.join(t.root, 'etc/fstab'), 'utf8');
      expect(fstab.split('\n')).toContain(CIFS);
      expect(fstab.split('\n')).toContain(CIFS_CREDENTIALS);
      expect(fstab).not.toMatch(/^\/swapfile/m);

      const reports = path.join(t.root, 'root/ks/preflight');
      const [run] = readdirSync(path.join(reports, 'runs'));
      const stored = files(reports);
      expect(stored.map((f) => f.rel)).toEqual(expect.arrayContaining([`runs/${run}/plan.json`, `runs/${run}/result.json`, `runs/${run}/journal`]));
      for (const f of stored) {
        if (f.rel === `runs/${run}/backup/etc/fstab`) expect(f.text).toBe(PLANTED);
        else expect(leaks(f.text), f.rel).toEqual([]);
      }

      const undo = await cli(['rollback', ...(json ? ['--json'] : []), ...t.f]);
      expect(undo.code).toBe(0);
      expect(leaks(undo.stdout + undo.stderr)).toEqual([]);
      expect(readFileSync(path.join(t.root, 'etc/fstab'), 'utf8')).toBe(PLANTED);
    }
  });

  it("the run's journal, backups and documents are the owner's alone: 0600 files in 0700 directories", async () => {
    const t = tree();
    expect((await cli(['apply', ...t.f])).code).toBe(0);
    const runs = path.join(t.root, 'root/ks/preflight/runs');
    const [run] = readdirSync(runs);
    const dir = path.join(runs, run!);
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    for (const name of ['journal', 'plan.json', 'result.json']) expect(lstatSync(path.join(dir, name)).mode & 0o777, name).toBe(0o600);
  });
});
