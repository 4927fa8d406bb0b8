// The CLI edge: arguments in, one clear message per error out, exit code.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { InputError, ReconcileError, RunAbortedError, describeFsError } from './errors.js';
import {
  ALIASED,
  COMMANDS,
  OPTIONS,
  OPTION_CONFLICTS,
  acceptNames,
  argumentProblem,
  commandByName,
  DEFAULT_PROGRAM,
  commandHelp,
  errorUsage,
  mainHelp,
  parseArgsOptions,
  programName,
  type CommandSpec,
  type GivenOptions,
} from './cli-options.js';
import { errorDocument, type ErrorDocument } from './error-document.js';
import { redactString } from './redact.js';
import { FORMAT_VERSION, PACKAGED_BUNDLE, PACKAGED_DESIRED_STATE, TOOL_VERSION } from './version.js';
import type { Io } from './reconcile/run.js';
import type { ColorMode } from './reconcile/plan-text.js';

/**
 * --json anywhere before a `--` (and `--json=…`, which the parser refuses):
 * read from the raw arguments, so that even arguments the parser refuses get
 * their answer as a JSON document.
 */
export function jsonRequested(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--json' || a.startsWith('--json=')) return true;
  }
  return false;
}

/** Options that take a value: the word after one is its value, never a command name. */
const VALUED = new Set(OPTIONS.filter((o) => o.value).flatMap((o) => [`--${o.name}`, ...(o.short ? [`-${o.short}`] : [])]));

/** The command the raw arguments name (its word, else --rollback, else a flag form), read without the parser. */
export function commandNamed(argv: readonly string[]): CommandSpec | undefined {
  let flag: CommandSpec | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (VALUED.has(a)) {
      i++;
      continue;
    }
    if (!a.startsWith('-')) {
      const c = commandByName(a);
      if (c) return c;
      continue;
    }
    const c = ALIASED.find((x) => x.alias === a);
    if (c && (flag === undefined || c.name === 'rollback')) flag = c;
  }
  return flag;
}

export async function main(argv: string[], io: Io): Promise<number> {
  if (!jsonRequested(argv)) return run(argv, io, null);
  // --json: whatever happens, stdout gets exactly one document. What the
  // command prints is held until it ends: an error after its document (a
  // first boot's record that failed after its plan) replaces it.
  const edge: JsonEdge = { out: [], error: null, said: [], command: commandNamed(argv)?.name ?? null };
  const tracked: Io = {
    ...io,
    stdout: {
      isTTY: io.stdout.isTTY,
      write: (s: string) => {
        edge.out.push(s);
        return true;
      },
    },
    stderr: {
      isTTY: io.stderr.isTTY,
      write: (s: string) => {
        edge.said.push(s);
        return io.stderr.write(s);
      },
    },
  };
  const code = await run(argv, tracked, edge);
  if (edge.error) io.stdout.write(JSON.stringify(edge.error, null, 2) + '\n');
  else if (edge.out.length > 0) io.stdout.write(edge.out.join(''));
  else {
    // A command that printed no document of its own (the fleet report over an
    // unusable document, a first boot with nothing to do): what it said on
    // stderr becomes the document.
    const said = edge.said.join('').split('\n');
    const usage = said.findIndex((l) => /^\s*usage: /.test(l));
    const prefix = `${io.program ?? DEFAULT_PROGRAM}: `;
    const sub = new RegExp(`^${(io.program ?? DEFAULT_PROGRAM).replace(/[.+]/g, '\\$&')} [a-z-]+: `);
    const lines = (usage < 0 ? said : said.slice(0, usage))
      .map((l) => (l.startsWith(prefix) ? l.slice(prefix.length) : l.replace(sub, '')))
      .filter((l) => l !== '');
    const doc =
      code === 0
        ? { format_version: FORMAT_VERSION, tool: TOOL, command: edge.command, messages: lines }
        : errorDocument(
            edge.command,
            lines[0] ?? `exit ${code} without a message`,
            undefined,
            lines.length > 1 ? { issues: lines.slice(1).map((message) => ({ message })) } : {},
          );
    io.stdout.write(JSON.stringify(doc, null, 2) + '\n');
  }
  return code;
}

const TOOL = { name: 'k8s-host-reconcile', version: TOOL_VERSION } as const;

/** With --json: what the command printed, its error document, what went to stderr, and the command the arguments name. */
interface JsonEdge {
  out: string[];
  error: ErrorDocument | null;
  said: string[];
  command: string | null;
}

/** How the CLI answers: a refusal, a help page, an internal error, a run's error; with --json each as one document. */
interface Answers {
  /** The program's name as invoked: every message and usage line names it. */
  program: string;
  /** `who`: the command the message is about ('' for the program itself). */
  refuse: (who: string, message: string, usage: string) => number;
  help: (page: string) => number;
  internal: (e: unknown) => number;
  fail: (text: string, e?: unknown) => number;
}

function answers(io: Io, edge: JsonEdge | null): Answers {
  const program = io.program ?? DEFAULT_PROGRAM;
  return {
    program,
    // One refusal of the arguments: the message (and usage) on stderr; with --json, the error document on stdout.
    refuse: (who, message, usage) => {
      io.stderr.write(`${who === '' ? program : `${program} ${who}`}: ${message}\n${usage}`);
      if (edge) edge.error = errorDocument(edge.command, message);
      return 1;
    },
    help: (page) => {
      io.stdout.write(edge ? JSON.stringify({ format_version: FORMAT_VERSION, tool: TOOL, command: edge.command, help: page }, null, 2) + '\n' : page);
      return 0;
    },
    // An error the code did not expect: its stack on stderr, never a bare crash.
    internal: (e) => {
      io.stderr.write(`${program}: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
      if (edge) edge.error = errorDocument(edge.command, `internal error: ${(e as Error)?.message ?? String(e)}`);
      return 1;
    },
    // A run's error: the message on stderr (with what a run had applied); with --json, the error document on stdout.
    fail: (text, e) => {
      // A message can quote a host's line: a credential in it is redacted here too (redact.ts).
      const message = redactString(text);
      if (edge) edge.error = errorDocument(edge.command, message, e);
      io.stderr.write(`${program}: ${message}\n`);
      if (e instanceof RunAbortedError) {
        for (const a of e.applied) io.stderr.write(`${program}: applied ${a.resource}: ${a.changes.join(', ')}\n`);
        for (const f of e.failed) io.stderr.write(`${program}: failed ${f.resource}: ${f.message}\n`);
        if (e.applied.length === 0 && e.failed.length === 0) io.stderr.write(`${program}: no change had been applied\n`);
      }
      return 1;
    },
  };
}

async function run(argv: string[], io: Io, edge: JsonEdge | null): Promise<number> {
  const say = answers(io, edge);
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: parseArgsOptions(), strict: true, allowPositionals: true });
  } catch (e) {
    const why = argumentProblem(argv) ?? `cannot read the arguments: ${(e as Error).message}`;
    return say.refuse('', why, errorUsage(commandNamed(argv), say.program));
  }
  const given = Object.keys(parsed.values);
  // `reconcile help [COMMAND]`: the same pages as --help.
  if (parsed.positionals[0] === 'help') {
    const named = parsed.positionals[1];
    const c = named === undefined ? undefined : commandByName(named);
    if (parsed.positionals.length > 2 || (named !== undefined && !c) || given.length > 0) {
      return say.refuse(
        '',
        `help takes one command name and no option${named !== undefined && !c ? ` (there is no command ${named})` : ''}`,
        errorUsage(undefined, say.program),
      );
    }
    return say.help(c ? commandHelp(c, say.program) : mainHelp(say.program));
  }
  // The subcommand form becomes its flag form once its own options are checked:
  // `reconcile plan -f X` runs exactly as `reconcile --plan -f X` does.
  const sub = parsed.positionals[0] === undefined ? undefined : commandByName(parsed.positionals[0]);
  if (sub) {
    const stray = given.find((name) => !(sub.options as readonly string[]).includes(name));
    if (stray !== undefined) {
      return say.refuse(sub.name, `--${stray} is not an option of ${sub.name}`, errorUsage(sub, say.program));
    }
    if (parsed.positionals.length - 1 > sub.maxOperands) {
      return say.refuse(sub.name, `unexpected argument ${parsed.positionals.at(-1)}`, errorUsage(sub, say.program));
    }
  }
  // A command without a flag form runs here, on its own: the fleet report
  // reads documents on the controller, not a host (src/report/).
  if (sub?.name === 'report') {
    if (parsed.values.help) return say.help(commandHelp(sub, say.program));
    const { runReport } = await import('./report/index.js');
    const out = parsed.values.out;
    try {
      return await runReport(
        [...(typeof out === 'string' ? ['--out', out] : []), ...(parsed.values.json ? ['--json'] : []), '--', ...parsed.positionals.slice(1)],
        io,
      );
    } catch (e) {
      return say.internal(e);
    }
  }
  const args: GivenOptions = sub?.alias ? { ...parsed.values, [sub.alias.slice(2)]: true } : parsed.values;
  return runFlagForm(args, sub ? parsed.positionals.slice(1) : parsed.positionals, sub, io, edge !== null, say);
}

/** The flag form (`--plan`, `--apply`, `--rollback [RUN]`, `--facts`, `--first-boot`): its conflicts, then the engine. */
async function runFlagForm(args: GivenOptions, operands: string[], sub: CommandSpec | undefined, io: Io, json: boolean, say: Answers): Promise<number> {
  // The command a flag form names (rollback's --plan previews a rollback, so rollback first).
  const command = sub ?? (args.rollback ? commandByName('rollback') : ALIASED.find((c) => args[c.alias.slice(2)]));
  const USAGE = errorUsage(command, say.program);
  if (operands.length > (args.rollback ? 1 : 0)) {
    const word = operands.at(-1)!;
    const why = command
      ? args.rollback
        ? ''
        : ' (a run id goes with --rollback)'
      : ` (no command ${word}; the commands: ${COMMANDS.map((c) => c.name).join(', ')})`;
    return say.refuse('', `unexpected argument ${word}${why}`, USAGE);
  }
  if (args.help) return say.help(command ? commandHelp(command, say.program) : mainHelp(say.program));
  if (args.version) {
    io.stdout.write(json ? JSON.stringify({ format_version: FORMAT_VERSION, tool: TOOL }, null, 2) + '\n' : `k8s-host-reconcile ${TOOL_VERSION}\n`);
    return 0;
  }
  if (args.providers) {
    // The engine loads only for what needs it: --version and --help stay at node's own start-up cost.
    const [{ desiredTypes }, { REPORT_FEATURES }] = await Promise.all([import('./resources/index.js'), import('./reconcile/host-reports.js')]);
    io.stdout.write(JSON.stringify([...desiredTypes(), ...REPORT_FEATURES]) + '\n');
    return 0;
  }
  const conflict = OPTION_CONFLICTS.find((c) => c.holds(args));
  if (conflict) return say.refuse('', conflict.message, USAGE);
  const accept = acceptNames(args.accept);
  if ('problem' in accept) return say.refuse('', accept.problem, USAGE);
  try {
    // --first-boot: the image's one-shot first-boot run (live; what it does comes from first_boot).
    const run = args['first-boot'] ? (await import('./first-boot/run.js')).firstBootRun : (await import('./reconcile/run.js')).runReconcile;
    return await run(
      {
        mode: args.facts ? 'facts' : args.plan ? 'plan' : 'apply',
        file: typeof args.file === 'string' ? args.file : defaultDesiredState(),
        root: typeof args.root === 'string' ? args.root : undefined,
        json,
        detail: args.quiet ? 'quiet' : args.verbose ? 'verbose' : 'normal',
        color: args['no-color'] ? 'never' : ((args.color as ColorMode | undefined) ?? 'auto'),
        ...(accept.names.length > 0 ? { accept: accept.names } : {}),
        ...(args['watch-next-boot'] ? { watchNextBoot: true } : {}),
        ...(args.rollback ? { rollback: { run: operands[0], force: Boolean(args.force) } } : {}),
      },
      io,
    );
  } catch (e) {
    return runError(e, say);
  }
}

/** A run's error as one line: the desired state's problems, the engine's own errors, an escaped fs error, else internal. */
function runError(e: unknown, say: Answers): number {
  if (e instanceof InputError) {
    return say.fail(`${e.issues.length} problem${e.issues.length === 1 ? '' : 's'} in the desired state; nothing was changed\n${e.message}`, e);
  }
  if (e instanceof ReconcileError) return say.fail(e.message, e);
  // An fs error that escaped a module's own wrapping still gets one line, not a stack.
  const code = (e as NodeJS.ErrnoException)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code))
    return say.fail(`${describeFsError(e)}${(e as NodeJS.ErrnoException).path ? `: ${(e as NodeJS.ErrnoException).path}` : ''}`);
  return say.internal(e);
}

/**
 * -f's default: the package's conffile when this is the packaged program (its
 * own file is the package's bundle; node gives the real file behind the
 * /usr/bin link), so an installed `k8s-host-reconcile plan` works from any
 * directory; ./desired-state.yaml for every other run (a checkout, the bundle).
 */
function defaultDesiredState(url: string = import.meta.url): string {
  return url === pathToFileURL(PACKAGED_BUNDLE).href ? PACKAGED_DESIRED_STATE : 'desired-state.yaml';
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
  const program = programName(process.argv[1], import.meta.url === pathToFileURL(PACKAGED_BUNDLE).href);
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, program }).then((code) => {
    process.exitCode = code;
  });
}
