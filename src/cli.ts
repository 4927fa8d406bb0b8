// The CLI edge: arguments in, one clear message per error out, exit code.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { InputError, ReconcileError, RunAbortedError, describeFsError } from './errors.js';
import { ALIASED, COMMANDS, commandByName, commandHelp, errorUsage, mainHelp, parseArgsOptions } from './cli-options.js';
import { FORMAT_VERSION, TOOL_VERSION } from './version.js';
import type { Io } from './reconcile/run.js';

export async function main(argv: string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: parseArgsOptions(), strict: true, allowPositionals: true });
  } catch (e) {
    io.stderr.write(`reconcile: ${(e as Error).message}\n${errorUsage(undefined)}`);
    return 1;
  }
  const given = Object.keys(parsed.values);
  // `reconcile help [COMMAND]`: the same pages as --help.
  if (parsed.positionals[0] === 'help') {
    const named = parsed.positionals[1];
    const c = named === undefined ? undefined : commandByName(named);
    if (parsed.positionals.length > 2 || (named !== undefined && !c) || given.length > 0) {
      io.stderr.write(
        `reconcile: help takes one command name and no option${named !== undefined && !c ? ` (there is no command ${named})` : ''}\n${errorUsage(undefined)}`,
      );
      return 1;
    }
    io.stdout.write(c ? commandHelp(c) : mainHelp());
    return 0;
  }
  // The subcommand form becomes its flag form once its own options are checked:
  // `reconcile plan -f X` runs exactly as `reconcile --plan -f X` does.
  const sub = parsed.positionals[0] === undefined ? undefined : commandByName(parsed.positionals[0]);
  if (sub) {
    const stray = given.find((name) => !(sub.options as readonly string[]).includes(name));
    if (stray !== undefined) {
      io.stderr.write(`reconcile ${sub.name}: --${stray} is not an option of ${sub.name}\n${errorUsage(sub)}`);
      return 1;
    }
    if (parsed.positionals.length - 1 > sub.maxOperands) {
      io.stderr.write(`reconcile ${sub.name}: unexpected argument ${parsed.positionals.at(-1)}\n${errorUsage(sub)}`);
      return 1;
    }
  }
  // A command without a flag form runs here, on its own: the fleet report
  // reads documents on the controller, not a host (src/report/).
  if (sub?.name === 'report') {
    if (parsed.values.help) {
      io.stdout.write(commandHelp(sub));
      return 0;
    }
    const { runReport } = await import('./report/index.js');
    const out = parsed.values.out;
    return runReport([...(typeof out === 'string' ? ['--out', out] : []), ...(parsed.values.json ? ['--json'] : []), '--', ...parsed.positionals.slice(1)], io);
  }
  const args: Record<string, string | boolean | undefined> = sub?.alias ? { ...parsed.values, [sub.alias.slice(2)]: true } : parsed.values;
  const operands = sub ? parsed.positionals.slice(1) : parsed.positionals;
  // The command a flag form names (rollback's --plan previews a rollback, so rollback first).
  const command = sub ?? (args.rollback ? commandByName('rollback') : ALIASED.find((c) => args[c.alias.slice(2)]));
  const USAGE = errorUsage(command);
  const json = Boolean(args.json);
  const fail = (message: string, e?: unknown): number => {
    const applied = e instanceof RunAbortedError ? e.applied : [];
    const failed = e instanceof RunAbortedError ? e.failed : [];
    if (json) io.stdout.write(JSON.stringify({ format_version: FORMAT_VERSION, error: message, applied, failed }, null, 2) + '\n');
    io.stderr.write(`reconcile: ${message}\n`);
    if (e instanceof RunAbortedError) {
      for (const a of applied) io.stderr.write(`reconcile: applied ${a.resource}: ${a.changes.join(', ')}\n`);
      for (const f of failed) io.stderr.write(`reconcile: failed ${f.resource}: ${f.message}\n`);
      if (applied.length === 0 && failed.length === 0) io.stderr.write('reconcile: no change had been applied\n');
    }
    return 1;
  };
  if (operands.length > (args.rollback ? 1 : 0)) {
    const word = operands.at(-1)!;
    const why = command
      ? args.rollback
        ? ''
        : ' (a run id goes with --rollback)'
      : ` (no command ${word}; the commands: ${COMMANDS.map((c) => c.name).join(', ')})`;
    io.stderr.write(`reconcile: unexpected argument ${word}${why}\n${USAGE}`);
    return 1;
  }
  if (args.help) {
    io.stdout.write(command ? commandHelp(command) : mainHelp());
    return 0;
  }
  if (args.version) {
    io.stdout.write(`k8s-host-reconcile ${TOOL_VERSION}\n`);
    return 0;
  }
  if (args.providers) {
    // The engine loads only for what needs it: --version and --help stay at node's own start-up cost.
    const [{ desiredTypes }, { REPORT_FEATURES }] = await Promise.all([import('./resources/index.js'), import('./reconcile/host-reports.js')]);
    io.stdout.write(JSON.stringify([...desiredTypes(), ...REPORT_FEATURES]) + '\n');
    return 0;
  }
  if (args.facts && (args.plan || args.apply || args.rollback || args.root !== undefined)) {
    io.stderr.write(`reconcile: --facts reads the running host; it goes alone (with -f and --json)\n${USAGE}`);
    return 1;
  }
  if (args.rollback && args.apply) {
    io.stderr.write(`reconcile: --rollback undoes a run; it goes alone or with --plan to preview, not with --apply\n${USAGE}`);
    return 1;
  }
  const firstBoot = Boolean(args['first-boot']);
  if (firstBoot && (args.plan || args.apply || args.rollback || args.facts || args.root !== undefined)) {
    io.stderr.write(`reconcile: --first-boot is the image's first-boot run on the booted host; it goes alone (with -f and --json)\n${USAGE}`);
    return 1;
  }
  if (!args.rollback && !args.facts && !firstBoot && Boolean(args.plan) === Boolean(args.apply)) {
    io.stderr.write(`reconcile: give exactly one of --plan, --apply or --rollback, or a command (${COMMANDS.map((c) => c.name).join(', ')})\n${USAGE}`);
    return 1;
  }
  if (args.force && !args.rollback) {
    io.stderr.write(`reconcile: --force goes with --rollback\n${USAGE}`);
    return 1;
  }
  try {
    // --first-boot: the image's one-shot first-boot run (live; what it does comes from first_boot).
    const run = firstBoot ? (await import('./first-boot/run.js')).firstBootRun : (await import('./reconcile/run.js')).runReconcile;
    return await run(
      {
        mode: args.facts ? 'facts' : args.plan ? 'plan' : 'apply',
        file: typeof args.file === 'string' ? args.file : 'desired-state.yaml',
        root: typeof args.root === 'string' ? args.root : undefined,
        json,
        ...(args.rollback ? { rollback: { run: operands[0], force: Boolean(args.force) } } : {}),
      },
      io,
    );
  } catch (e) {
    if (e instanceof InputError) {
      return fail(`${e.issues.length} problem${e.issues.length === 1 ? '' : 's'} in the desired state; nothing was changed\n${e.message}`);
    }
    if (e instanceof ReconcileError) return fail(e.message, e);
    // An fs error that escaped a module's own wrapping still gets one line, not a stack.
    const code = (e as NodeJS.ErrnoException)?.code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code))
      return fail(`${describeFsError(e)}${(e as NodeJS.ErrnoException).path ? `: ${(e as NodeJS.ErrnoException).path}` : ''}`);
    io.stderr.write(`reconcile: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
    if (json)
      io.stdout.write(
        JSON.stringify({ format_version: FORMAT_VERSION, error: `internal error: ${(e as Error)?.message ?? String(e)}`, applied: [], failed: [] }, null, 2) +
          '\n',
      );
    return 1;
  }
}

// Run only as the program itself, not when imported by tests.
function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}
if (invokedDirectly() || process.env.RECONCILE_CLI_MAIN === '1') {
  // A closed pipe (reconcile report … | head -1) ends the output, not the run: no EPIPE stack trace, the exit code stays the run's.
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') throw e;
    });
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then((code) => {
    process.exitCode = code;
  });
}
