// The CLI's commands and their flag forms, their help pages, and the one
// option table the help, the man page and the README are rendered from.
// Offline fixture roots only: nothing here touches this machine's state.
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { runCli } from './helpers/run-cli.js';
import { COMMANDS, OPTIONS, docRegions, programName, regionIn } from '../src/cli-options.js';
import { main } from '../src/cli.js';
import { captureIo } from './helpers/io.js';
import { swapModulesTree } from './helpers/swap-modules-tree.js';

const repo = path.resolve(import.meta.dirname, '..');
const works: string[] = [];
afterEach(() => {
  for (const w of works.splice(0)) rmSync(w, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli(args);

function tree() {
  const t = swapModulesTree('cli-options-');
  works.push(t.work);
  return { ...t, f: ['-f', path.join(t.work, 'desired.yaml'), '--root', t.root] };
}

const etc = (root: string) => ({
  fstab: readFileSync(path.join(root, 'etc/fstab'), 'utf8'),
  modules: readFileSync(path.join(root, 'etc/modules-load.d/k8s.conf'), 'utf8'),
});

describe('subcommands and their flag forms', () => {
  it('plan, apply and rollback: the same output, files and exit codes either way', async () => {
    const a = tree();
    const b = tree();
    const planSub = await cli(['plan', ...a.f]);
    const planFlag = await cli(['--plan', ...b.f]);
    expect(planSub.code).toBe(2);
    expect(planFlag.code).toBe(2);
    expect(planSub.stdout.replaceAll(a.root, 'ROOT')).toBe(planFlag.stdout.replaceAll(b.root, 'ROOT'));
    expect(planSub.stdout).toContain('--- /etc/fstab');

    const applySub = await cli(['apply', ...a.f]);
    const applyFlag = await cli(['--apply', ...b.f]);
    expect([applySub.code, applyFlag.code]).toEqual([0, 0]);
    expect(etc(a.root)).toEqual(etc(b.root));
    expect(etc(a.root).fstab).not.toMatch(/^\/swapfile/m);

    const previewSub = await cli(['rollback', '--plan', ...a.f]);
    const previewFlag = await cli(['--rollback', '--plan', ...b.f]);
    expect([previewSub.code, previewFlag.code]).toEqual([2, 2]);
    const runId = (root: string) => readdirSync(path.join(root, 'root/ks/preflight/runs'))[0]!;
    const norm = (s: string, root: string) => s.replaceAll(root, 'ROOT').replaceAll(runId(root), 'RUN');
    expect(norm(previewSub.stdout, a.root)).toBe(norm(previewFlag.stdout, b.root));

    const undoSub = await cli(['rollback', runId(a.root), ...a.f]);
    const undoFlag = await cli(['--rollback', runId(b.root), ...b.f]);
    expect([undoSub.code, undoFlag.code]).toEqual([0, 0]);
    expect(readFileSync(path.join(a.root, 'etc/fstab'), 'utf8')).toBe(readFileSync(path.join(b.root, 'etc/fstab'), 'utf8'));
    expect(readFileSync(path.join(a.root, 'etc/fstab'), 'utf8')).toMatch(/^\/swapfile/m);
  });

  it('options may come before the command', async () => {
    const a = tree();
    const b = tree();
    const sub = await cli(['--json', ...a.f, 'plan']);
    const flag = await cli(['--plan', '--json', ...b.f]);
    expect(sub.code).toBe(2);
    expect(JSON.parse(sub.stdout).mode).toBe('plan');
    expect(sub.stdout.replaceAll(a.root, 'ROOT')).toBe(flag.stdout.replaceAll(b.root, 'ROOT'));
  });

  it("a command refuses another command's options, naming the command and the option", async () => {
    for (const [args, message] of [
      [['plan', '--force'], 'reconcile plan: --force is not an option of plan'],
      [['facts', '--root', '/tmp'], 'reconcile facts: --root is not an option of facts'],
      [['first-boot', '--root', '/tmp'], 'reconcile first-boot: --root is not an option of first-boot'],
      [['apply', '--plan'], 'reconcile apply: --plan is not an option of apply'],
      [['plan', '--version'], 'reconcile plan: --version is not an option of plan'],
      [['plan', 'extra'], 'reconcile plan: unexpected argument extra'],
      [['rollback', 'r1', 'r2'], 'reconcile rollback: unexpected argument r2'],
      [['frobnicate'], 'no command frobnicate'],
      [[], 'give exactly one of --plan, --apply or --rollback, or a command (plan, apply, rollback, facts, first-boot, report)'],
    ] as const) {
      const r = await cli([...args]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain(message);
      expect(r.stdout).toBe('');
    }
  });

  it('the flag forms keep their own messages and exit codes', async () => {
    expect(await cli(['--plan', '--apply'])).toMatchObject({ code: 1 });
    expect((await cli(['--facts', '--root', '/tmp'])).stderr).toContain('--facts reads the running host');
    expect((await cli(['--plan', '--force'])).stderr).toContain('--force goes with --rollback');
    expect((await cli(['--plan', 'x'])).stderr).toContain('unexpected argument x (a run id goes with --rollback)');
  });
});

describe('help', () => {
  it('reconcile --help: a usage line, every command, the global options, exit 0', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('Usage: reconcile COMMAND [OPTIONS]');
    const commands = lines.slice(lines.indexOf('Commands:') + 1, lines.indexOf('', lines.indexOf('Commands:')));
    expect(commands.filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim().split(/\s{2,}/)[0])).toEqual([
      'plan',
      'apply',
      'rollback',
      'facts',
      'first-boot',
      'report',
      'help [COMMAND]',
    ]);
    for (const flag of ['-h, --help', '--version', '--providers']) expect(r.stdout).toContain(`\n  ${flag}`);
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(80);
    expect((await cli(['-h'])).stdout).toBe(r.stdout);
    expect((await cli(['help'])).stdout).toBe(r.stdout);
  });

  it('reconcile plan --help: its usage, its options, its exit codes; the same page for --plan --help and help plan', async () => {
    const r = await cli(['plan', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('Usage: reconcile plan [-f FILE] [--root DIR] [--json] [--accept NAME] [-q] [-v] [--color WHEN] [--no-color]');
    expect(r.stdout).toMatch(
      /^Options:\n {2}-f, --file FILE {2}desired state \(default \.\/desired-state\.yaml; the package's\n {19}program: \/etc\/k8s-host-reconcile\/desired-state\.yaml\)$/m,
    );
    expect(r.stdout).toMatch(/^Exit codes:\n {2}0 {2}the host is in sync\n {2}1 {2}error/m);
    expect(r.stdout).toMatch(/^ {2}2 {2}changes pending/m);
    expect(r.stdout).not.toContain('--force');
    expect((await cli(['--plan', '--help'])).stdout).toBe(r.stdout);
    expect((await cli(['help', 'plan'])).stdout).toBe(r.stdout);
    const rb = await cli(['rollback', '--help']);
    expect(rb.stdout.split('\n')[0]).toBe('Usage: reconcile rollback [RUN_ID] [--plan] [--force] [-f FILE] [--root DIR] [--json]');
    expect((await cli(['--rollback', '--plan', '--help'])).stdout).toBe(rb.stdout);
  });

  it('every option the parser accepts is on some help page, and every command has its page', async () => {
    const pages = [(await cli(['--help'])).stdout];
    for (const c of COMMANDS) {
      const r = await cli([c.name, '--help']);
      expect(r.code).toBe(0);
      pages.push(r.stdout);
    }
    const all = pages.join('\n');
    for (const o of OPTIONS) expect(all).toContain(`--${o.name}`);
    for (const c of COMMANDS) expect(all).toContain(c.alias ?? `reconcile ${c.name}`);
  });
});

describe('the program names itself as it was invoked', () => {
  it.each([
    ['/usr/bin/k8s-host-reconcile', false, 'k8s-host-reconcile'],
    ['/home/me/project/node_modules/.bin/reconcile', false, 'reconcile'],
    ['/work/repo/dist/reconcile.mjs', false, 'reconcile'],
    ['/usr/local/lib/k8s-host-reconcile/reconcile.mjs', false, 'reconcile'],
    // The package's own bundle run by its file name is still the package's program.
    ['/usr/libexec/k8s-host-reconcile/reconcile.mjs', true, 'k8s-host-reconcile'],
    ['/usr/bin/k8s-host-reconcile', true, 'k8s-host-reconcile'],
    ['/opt/tools/khr', false, 'khr'],
  ])('%s (packaged: %s) is %s', (script, packaged, name) => {
    expect(programName(script, packaged)).toBe(name);
  });

  it.each([
    [undefined, 'no argv[1]'],
    ['', 'an empty one'],
    ['/usr/bin/', 'a directory'],
    ['/tmp/evil\x1b[31mname', 'a control character'],
    ['/tmp/-rf', "a leading '-'"],
    ['/tmp/a b', 'a space'],
    [`/tmp/${'x'.repeat(65)}`, 'a name longer than 64'],
  ])('%j (%s) falls back to reconcile, or k8s-host-reconcile for the package', (script, _why) => {
    expect(programName(script)).toBe('reconcile');
    expect(programName(script, true)).toBe('k8s-host-reconcile');
  });

  it('--help, a command page, a refusal, a run error and its usage say the name given, never a hard-coded one', async () => {
    const as = async (program: string | undefined, args: string[]) => {
      const h = captureIo();
      const code = await main(args, program === undefined ? h.value : { ...h.value, program });
      return { code, out: h.stdout(), err: h.stderr() };
    };
    for (const program of ['k8s-host-reconcile', 'reconcile']) {
      const help = await as(program, ['--help']);
      expect(help.out.split('\n')[0]).toBe(`Usage: ${program} COMMAND [OPTIONS]`);
      expect(help.out).toContain(`\nRun '${program} COMMAND --help' for a command's options and exit codes.\n`);
      expect((await as(program, ['plan', '--help'])).out.split('\n')[0]).toMatch(new RegExp(`^Usage: ${program} plan \\[-f FILE\\]`));
      const refused = await as(program, ['plan', '--bogus']);
      expect(refused.code).toBe(1);
      expect(refused.err.split('\n')).toEqual([
        `${program}: unknown option --bogus`,
        expect.stringMatching(new RegExp(`^usage: ${program} plan `)),
        `Run '${program} plan --help' for more.`,
        '',
      ]);
      expect((await as(program, ['rollback', '--accept', 'X'])).err).toMatch(new RegExp(`^${program} rollback: --accept is not an option of rollback\n`));
      const missing = await as(program, ['plan', '-f', '/nonexistent/desired.yaml', '--root', '/nonexistent']);
      expect(missing.err.startsWith(`${program}: `)).toBe(true);
      expect((await as(program, ['report'])).err.split('\n').slice(0, 2)).toEqual([
        `${program} report: give at least one directory of fetched documents`,
        `usage: ${program} report [-o DIR] [--json] DIR...`,
      ]);
      // Under the other name nothing says this one.
      const other = program === 'reconcile' ? 'k8s-host-reconcile' : /(?<!k8s-host-)reconcile /;
      expect(help.out).not.toMatch(other);
      expect(refused.err).not.toMatch(other);
    }
    // Given no name (a caller of main that says none): the npm bin's.
    expect((await as(undefined, ['--help'])).out.split('\n')[0]).toBe('Usage: reconcile COMMAND [OPTIONS]');
  });

  it("--json: an error message under either name is the document's error without the name", async () => {
    for (const program of ['k8s-host-reconcile', 'reconcile']) {
      const h = captureIo();
      expect(await main(['report', '--json'], { ...h.value, program })).toBe(1);
      expect(JSON.parse(h.stdout()).error).toBe('give at least one directory of fetched documents');
    }
  });
});

describe('one option list: README.md and the man page are rendered from the CLI table', () => {
  // Run `npm run docs:usage` to rewrite them after a change to src/cli-options.ts.
  for (const r of docRegions()) {
    it(`${r.file}: ${r.begin.trim()}`, () => {
      const doc = readFileSync(path.join(repo, r.file), 'utf8');
      expect(regionIn(doc, r), `${r.file} has no ${r.begin.trim()} region`).not.toBeNull();
      expect(regionIn(doc, r)).toBe(r.text);
    });
  }

  it('the README and the man page name every option and command of the parser', () => {
    const readme = readFileSync(path.join(repo, 'README.md'), 'utf8');
    const man = readFileSync(path.join(repo, 'docs/reconcile.1.md'), 'utf8');
    for (const o of OPTIONS) {
      expect(readme).toContain(`--${o.name}`);
      expect(man).toContain(`**--${o.name}**`);
    }
    for (const c of COMMANDS) {
      expect(readme).toContain(`reconcile ${c.name}`);
      expect(man).toContain(`**${c.name}**`);
    }
  });
});
