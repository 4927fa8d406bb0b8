// --json prints exactly one JSON document on stdout on every path, the
// refusals of the command line and of the fleet report included: a pipeline
// always has one document to parse. The human message stays on stderr.
// Offline fixture roots only (swapModulesTree): nothing of this machine is read.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from './helpers/run-cli.js';
import { DESIRED, swapModulesTree } from './helpers/swap-modules-tree.js';

const works: string[] = [];
afterEach(() => {
  for (const w of works.splice(0)) rmSync(w, { recursive: true, force: true });
});
function tree() {
  const t = swapModulesTree('cli-json-');
  works.push(t.work);
  return { ...t, desired: path.join(t.work, 'desired.yaml') };
}

const cli = (args: string[]) => runCli(args, true);

/** stdout as exactly one JSON document: JSON.parse refuses two documents, or a document and text. */
function oneDocument(stdout: string): Record<string, unknown> & { error?: string; error_detail?: { message: string } & Record<string, unknown> } {
  expect(stdout.trim()).not.toBe('');
  const doc = JSON.parse(stdout);
  // An error document: the message as a string (what the fleet report and the role read) and with its place.
  if (Object.hasOwn(doc, 'error')) expect(doc.error).toBe(doc.error_detail.message);
  return doc;
}

describe('--json on a refused command line', () => {
  it.each<[string, string[], string | null, RegExp]>([
    ['an unknown option', ['plan', '--json', '--bogus'], 'plan', /(^|: )unknown option --bogus$/m],
    ['an unknown option, flag form', ['--plan', '--json', '--bogus'], 'plan', /(^|: )unknown option --bogus$/m],
    ['--json with a value', ['apply', '--json=yes'], 'apply', /--json/],
    ['-f without a value', ['plan', '--json', '-f'], 'plan', /-f/],
    ['an option of another command', ['facts', '--json', '--root', '/tmp'], 'facts', /--root is not an option of facts/],
    ['too many operands', ['rollback', '--json', 'a', 'b'], 'rollback', /unexpected argument b/],
    ['no command', ['--json'], null, /give exactly one of --plan, --apply or --rollback/],
    ['a word that is no command', ['--json', 'plna'], null, /no command plna/],
    ['--plan with --apply', ['--json', '--plan', '--apply'], 'plan', /give exactly one/],
    ['--rollback with --apply', ['--json', '--apply', '--rollback'], 'rollback', /not with --apply/],
    ['--force without --rollback', ['--json', '--plan', '--force'], 'plan', /--force goes with --rollback/],
    ['--facts with --root', ['--json', '--facts', '--root', '/tmp'], 'facts', /--facts reads the running host/],
    [
      '--first-boot with --plan (the first flag form names the command)',
      ['--json', '--first-boot', '--plan'],
      'first-boot',
      /--first-boot is the image's first-boot run/,
    ],
    ['help with an option', ['help', 'plan', '--json'], 'plan', /help takes one command name and no option/],
  ])('%s: one error document naming the command, the message on stderr too', async (_what, args, command, message) => {
    const r = await cli(args);
    expect(r.code).toBe(1);
    const doc = oneDocument(r.stdout);
    expect(doc).toMatchObject({ format_version: '1.0', tool: { name: 'k8s-host-reconcile' }, command, applied: [], failed: [] });
    expect(doc.error!).toMatch(message);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('usage: reconcile');
  });

  it('without --json nothing goes to stdout (the human form is unchanged)', async () => {
    const r = await cli(['plan', '--bogus']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^reconcile: unknown option --bogus\nusage: reconcile plan /);
  });

  it('a --json after -- is an operand, not the option', async () => {
    const r = await cli(['plan', '--', '--json']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
  });

  it('--help and --version with --json are one document each', async () => {
    const help = await cli(['plan', '--help', '--json']);
    expect(help.code).toBe(0);
    const h = oneDocument(help.stdout);
    expect(h).toMatchObject({ format_version: '1.0', command: 'plan' });
    expect(h.help).toMatch(/^Usage: reconcile plan /);
    const version = await cli(['--version', '--json']);
    expect(version.code).toBe(0);
    expect(oneDocument(version.stdout)).toMatchObject({ format_version: '1.0', tool: { name: 'k8s-host-reconcile', version: expect.any(String) } });
  });
});

describe('--json on a failed run', () => {
  it('a bad desired state: the error names the file, line, column and key of each problem', async () => {
    const t = tree();
    const bad = path.join(t.work, 'bad.yaml');
    const text = DESIRED.replace('modules: [overlay, br_netfilter]', 'modules: [overlay, br_netfilter]\n    persist: yes');
    writeFileSync(bad, text);
    // Where the stray key is, from the text itself.
    const before = text.slice(0, text.indexOf('persist:'));
    const line = before.split('\n').length;
    const column = before.length - before.lastIndexOf('\n');
    const r = await cli(['apply', '--json', '-f', bad, '--root', t.root]);
    expect(r.code).toBe(1);
    const doc = oneDocument(r.stdout);
    expect(doc.command).toBe('apply');
    expect(doc.error_detail).toMatchObject({ file: bad, line, column, key: 'resources[1].persist' });
    expect(doc.error_detail!.issues).toEqual([{ file: bad, line, column, key: 'resources[1].persist', message: expect.stringMatching(/unknown key/) }]);
    expect(doc.error!).toMatch(/^1 problem in the desired state; nothing was changed/);
    expect(r.stderr).toContain(`${bad}:${line}:${column} resources[1].persist: unknown key`);
  });

  it('a desired state that does not exist: one error document naming the file', async () => {
    const t = tree();
    const missing = path.join(t.work, 'missing.yaml');
    const r = await cli(['plan', '--json', '-f', missing, '--root', t.root]);
    expect(r.code).toBe(1);
    const doc = oneDocument(r.stdout);
    expect(doc.error_detail).toMatchObject({ file: missing, line: 1, column: 1 });
  });

  it('--root that does not exist, and rollback with no run to undo: error documents', async () => {
    const t = tree();
    const gone = await cli(['plan', '--json', '-f', t.desired, '--root', path.join(t.work, 'nope')]);
    expect(gone.code).toBe(1);
    expect(oneDocument(gone.stdout).error!).toMatch(/does not exist; it is never created/);
    const none = await cli(['rollback', '--json', '-f', t.desired, '--root', t.root, 'no-such-run']);
    expect(none.code).toBe(1);
    const doc = oneDocument(none.stdout);
    expect(doc.command).toBe('rollback');
    expect(doc.error!).toContain('no-such-run');
    expect(none.stderr).toContain(doc.error!);
  });

  it('a plan and an apply that succeed still print exactly one document', async () => {
    const t = tree();
    const plan = await cli(['plan', '--json', '-f', t.desired, '--root', t.root]);
    expect(plan.code).toBe(2);
    expect(oneDocument(plan.stdout)).toMatchObject({ mode: 'plan' });
    const apply = await cli(['apply', '--json', '-f', t.desired, '--root', t.root]);
    expect(apply.code).toBe(0);
    expect(oneDocument(apply.stdout)).toMatchObject({ mode: 'apply', verified: true });
  });
});

describe('report --json', () => {
  const fleet = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cli-json-fleet-'));
    works.push(dir);
    return dir;
  };

  it('over an unusable document: one document, the fleet report with that host marked unusable and named', async () => {
    // One host's unusable document marks that host, never the fleet (issue 51): the report is written.
    const dir = fleet();
    mkdirSync(path.join(dir, 'node-1'));
    const doc = path.join(dir, 'node-1', 'reconcile.json');
    writeFileSync(doc, '{"format_version": "1.0", "mode": "plan"'); // cut short
    const out = path.join(dir, 'out');
    const r = await cli(['report', '--json', '-o', out, dir]);
    expect(r.code).toBe(1);
    const e = oneDocument(r.stdout) as unknown as { format_version: string; hosts: { host: string; file: string; verdict: string; errors: string[] }[] };
    expect(e.format_version).toBe('1.0');
    expect(e.hosts.map((h) => [h.host, h.file, h.verdict])).toEqual([['node-1', doc, 'unusable']]);
    expect(e.hosts[0]!.errors.join('\n')).toMatch(/^not JSON: /);
    expect(r.stderr).toContain(doc);
    expect(readdirSync(out).sort()).toEqual(['fleet-report.csv', 'fleet-report.html', 'fleet-report.json']);
  });

  it('with no directory: one error document', async () => {
    const r = await cli(['report', '--json']);
    expect(r.code).toBe(1);
    const e = oneDocument(r.stdout);
    expect(e.command).toBe('report');
    expect(e.error!).toMatch(/give at least one directory/);
    // The usage text is for a person: not in the document.
    expect(JSON.stringify(e)).not.toContain('usage:');
  });
});
