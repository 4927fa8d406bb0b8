// The CLI edge: arguments in, one clear message per error out, exit code.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { InputError, ReconcileError, RunAbortedError, describeFsError } from './errors.js';
import { FORMAT_VERSION, TOOL_VERSION } from './version.js';
import type { Io } from './reconcile/run.js';

const USAGE = `usage: reconcile --plan | --apply [-f FILE] [--root DIR] [--json]
       reconcile --first-boot [-f FILE] [--json]
       reconcile --rollback [RUN_ID] [--plan] [--force] [-f FILE] [--root DIR] [--json]
       reconcile --facts [-f FILE] [--json]

  --plan        show what would change (exit 0 in sync, 2 changes pending, 1 error)
  --apply       converge the host and verify (exit 0 converged and verified, 1 otherwise)
  --rollback    undo a run (default: the last applied run with changes); with --plan, preview it
  --force       with --rollback: overwrite files that changed after the run
  --facts       print the facts kubespray judges this host by (facts.json), and the memory verdict; plans nothing
  -f, --file    desired state (default ./desired-state.yaml)
  --root DIR    converge an unbooted root file system instead of the running host
  --json        print one JSON document (format_version, per-resource changes)
  --first-boot  the image's first-boot run (its unit runs it): wait for candidate services,
                then --apply (first_boot: apply) or --plan (verify), then disable the unit
  --providers   print the resource types this build supports, as JSON
  --version     print the version
`;

export async function main(argv: string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        plan: { type: 'boolean' },
        apply: { type: 'boolean' },
        file: { type: 'string', short: 'f' },
        root: { type: 'string' },
        json: { type: 'boolean' },
        rollback: { type: 'boolean' },
        'first-boot': { type: 'boolean' },
        facts: { type: 'boolean' },
        force: { type: 'boolean' },
        providers: { type: 'boolean' },
        version: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (e) {
    io.stderr.write(`reconcile: ${(e as Error).message}\n${USAGE}`);
    return 1;
  }
  const args = parsed.values;
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
  if (parsed.positionals.length > (args.rollback ? 1 : 0)) {
    io.stderr.write(`reconcile: unexpected argument ${parsed.positionals.at(-1)}${args.rollback ? '' : ' (a run id goes with --rollback)'}\n${USAGE}`);
    return 1;
  }
  if (args.help) {
    io.stdout.write(USAGE);
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
    io.stderr.write(`reconcile: give exactly one of --plan, --apply or --rollback\n${USAGE}`);
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
        file: args.file ?? 'desired-state.yaml',
        root: args.root,
        json,
        ...(args.rollback ? { rollback: { run: parsed.positionals[0], force: Boolean(args.force) } } : {}),
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
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return fail(`${describeFsError(e)}${(e as NodeJS.ErrnoException).path ? `: ${(e as NodeJS.ErrnoException).path}` : ''}`);
    io.stderr.write(`reconcile: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
    if (json) io.stdout.write(JSON.stringify({ format_version: FORMAT_VERSION, error: `internal error: ${(e as Error)?.message ?? String(e)}`, applied: [], failed: [] }, null, 2) + '\n');
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
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then((code) => {
    process.exitCode = code;
  });
}
