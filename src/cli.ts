// The CLI edge: arguments in, one clear message per error out, exit code.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { InputError, ReconcileError } from './errors.js';
import { runReconcile, TOOL_VERSION } from './reconcile/run.js';
import type { Io } from './reconcile/run.js';
import { providers } from './resources/index.js';
import { REPORT_FEATURES } from './reconcile/host-reports.js';

const USAGE = `usage: reconcile --plan | --apply [-f FILE] [--root DIR] [--json]

  --plan        show what would change (exit 0 in sync, 2 changes pending, 1 error)
  --apply       converge the host and verify (exit 0 converged and verified, 1 otherwise)
  -f, --file    desired state (default ./desired-state.yaml)
  --root DIR    converge an unbooted root file system instead of the running host
  --json        print one JSON document (format_version, per-resource changes)
  --providers   print the resource types this build supports, as JSON
  --version     print the version
`;

export async function main(argv: string[], io: Io): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      options: {
        plan: { type: 'boolean' },
        apply: { type: 'boolean' },
        file: { type: 'string', short: 'f' },
        root: { type: 'string' },
        json: { type: 'boolean' },
        providers: { type: 'boolean' },
        version: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    io.stderr.write(`reconcile: ${(e as Error).message}\n${USAGE}`);
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
    io.stdout.write(JSON.stringify([...Object.keys(providers), ...REPORT_FEATURES]) + '\n');
    return 0;
  }
  if (Boolean(args.plan) === Boolean(args.apply)) {
    io.stderr.write(`reconcile: give exactly one of --plan or --apply\n${USAGE}`);
    return 1;
  }
  try {
    return await runReconcile(
      { mode: args.plan ? 'plan' : 'apply', file: args.file ?? 'desired-state.yaml', root: args.root, json: Boolean(args.json) },
      io,
    );
  } catch (e) {
    if (e instanceof InputError) {
      io.stderr.write(`reconcile: ${e.issues.length} problem${e.issues.length === 1 ? '' : 's'} in the desired state; nothing was changed\n${e.message}\n`);
    } else if (e instanceof ReconcileError) {
      io.stderr.write(`reconcile: ${e.message}\n`);
    } else {
      io.stderr.write(`reconcile: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
    }
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
