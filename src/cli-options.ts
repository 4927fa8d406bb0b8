// The CLI's surface, once: its commands, their options and exit codes. The
// parser (cli.ts), `--help`, the man page's SYNOPSIS/COMMANDS/OPTIONS/EXIT
// STATUS (docs/reconcile.1.md) and the README's usage tables are all rendered
// from these tables, so they cannot say different things
// (test/cli-options.test.ts compares the files with what renders here;
// `npm run docs:usage` rewrites them).

import { PACKAGED_DESIRED_STATE, PACKAGED_PROGRAM_NAME } from './version.js';
import { checkNameProblem } from './findings.js';

export type CommandName = 'plan' | 'apply' | 'rollback' | 'facts' | 'first-boot' | 'report';

export type OptionName =
  | 'file'
  | 'root'
  | 'json'
  | 'accept'
  | 'watch-next-boot'
  | 'quiet'
  | 'verbose'
  | 'color'
  | 'no-color'
  | 'force'
  | 'plan'
  | 'out'
  | 'help'
  | 'version'
  | 'providers';

export interface OptionSpec {
  readonly name: OptionName;
  readonly short?: string;
  /** The value's placeholder; none for a switch. */
  readonly value?: string;
  /** It may be given more than once (each value kept, in order). */
  readonly multiple?: boolean;
  /** One line, for `--help`. */
  readonly summary: string;
  /** What the man page and the README add to the summary (whole sentences). */
  readonly detail?: string;
}

export interface ExitCode {
  readonly code: 0 | 1 | 2;
  readonly meaning: string;
}

export interface CommandSpec {
  readonly name: CommandName;
  /** The flag form, kept as an alias with the same behaviour and exit codes (a command older than the subcommands has one). */
  readonly alias?: `--${string}`;
  /** Positional arguments in the synopsis (`[RUN_ID]`). */
  readonly operands?: string;
  /** At most this many operands. */
  readonly maxOperands: number;
  readonly summary: string;
  /** A paragraph for the command's own help and the man page. */
  readonly description: string;
  readonly options: readonly OptionName[];
  readonly exits: readonly ExitCode[];
}

export const OPTIONS: readonly OptionSpec[] = [
  {
    name: 'file',
    short: 'f',
    value: 'FILE',
    summary: `desired state (default ./desired-state.yaml; the package's program: ${PACKAGED_DESIRED_STATE})`,
    detail: 'That file is a conffile: edit it in place, and an upgrade keeps your edits.',
  },
  {
    name: 'root',
    value: 'DIR',
    summary: 'work on the unbooted root file system at DIR (an image) instead of the running host',
    detail:
      'DIR must be an existing directory other than / (an empty value, a missing path, a file, or a link to / is refused and never created). Nothing of the build machine is read or changed; runtime steps are deferred to boot.',
  },
  {
    name: 'json',
    summary: 'print one JSON document instead of text (plan, apply, rollback: format_version and per-resource changes; report: the fleet)',
    detail:
      'Exactly one document on every path: a refused command line, an unusable desired state or document, and a failed run print the error document (format_version, command, error: its message, error_detail: the message and, where known, file, line, column and key); the message also goes to standard error.',
  },
  {
    name: 'accept',
    value: 'NAME',
    multiple: true,
    summary: 'accept the findings of check NAME (NumCPU; a comma list, or repeated): shown as accepted, never hidden',
    detail:
      'The name is the one in brackets in the plan, compared case-insensitively; repeatable, and the desired state\'s accept list adds to it. An accepted finding no longer makes plan exit 2, but one kubespray\'s install stops on keeps exit 1: kubespray is not told (its kubeadm_ignore_preflight_errors is). A name no finding has is a warning; "all" and a name that is not a check name are refused.',
  },
  {
    name: 'watch-next-boot',
    summary: 'also install a one-boot watch: bpftrace records who breaks a promise at the next boot',
    detail:
      'Through the write door (journaled; --rollback removes it): a unit that attaches bpftrace before systemd-modules-load and systemd-sysctl and records every write of the promised sysctls, swapon, module removal and bind or listen on the control-plane ports, with pid, cmdline and unit, then removes itself. A plan on the booted host names the writer of each broken promise. Without bpftrace or BTF it installs nothing and says so (docs/boot-watch.md).',
  },
  {
    name: 'quiet',
    short: 'q',
    summary: 'print only what you must do, errors and the closing lines',
    detail:
      'Plan: What you must do, error findings, the summary and the next step; apply: the same, without the list of changes it makes. No effect on --json.',
  },
  {
    name: 'verbose',
    short: 'v',
    summary: "also print the host's before-state and facts (apply: the whole plan first)",
    detail:
      'The before: line (swap_total_kb, ip_forward, br_netfilter, busy_ports) and the facts kubespray judges the host by, which the default leaves out. No effect on --json.',
  },
  {
    name: 'color',
    value: 'WHEN',
    summary: 'colour the text: auto (the default: on a terminal, unless NO_COLOR is set), always or never',
    detail: 'The option wins over NO_COLOR (no-color.org).',
  },
  { name: 'no-color', summary: 'no colour, as --color=never' },
  {
    name: 'plan',
    summary: 'only show what the rollback would undo',
  },
  {
    name: 'force',
    summary: 'also put back files that changed after the run',
    detail: 'It also undoes what an incomplete journal records; it never restores a backup that is not what the run kept.',
  },
  {
    name: 'out',
    short: 'o',
    value: 'DIR',
    summary: 'where the report writes fleet-report.csv, .json and .html (default: the current directory)',
  },
  { name: 'help', short: 'h', summary: 'show this help' },
  { name: 'version', summary: 'print the version' },
  { name: 'providers', summary: 'print the resource types and report features this build supports, as a JSON array' },
];

/** Options that go with no command. */
export const GLOBAL_OPTIONS: readonly OptionName[] = ['help', 'version', 'providers'];

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'plan',
    alias: '--plan',
    maxOperands: 0,
    summary: 'show what would change; changes nothing',
    description:
      'Observe the host, compare it with the desired state and print every change apply would make, with a unified diff of each file it would write, what is left to an operator, and what the plan promises after apply and after the next boot.',
    options: ['file', 'root', 'json', 'accept', 'quiet', 'verbose', 'color', 'no-color', 'help'],
    exits: [
      { code: 0, meaning: 'the host is in sync' },
      { code: 1, meaning: "error (bad input, unreadable host), or kubespray's own preflight will stop on this host" },
      { code: 2, meaning: 'changes pending, an operator must act, or an unknown takes back a promise' },
    ],
  },
  {
    name: 'apply',
    alias: '--apply',
    maxOperands: 0,
    summary: 'converge the host and verify',
    description:
      'Record the host as it was first (before.json), converge it through the write door (every change journaled), observe it again and verify that nothing is left to do. On a live host it needs root and is refused before anything happens otherwise.',
    options: ['file', 'root', 'json', 'accept', 'watch-next-boot', 'quiet', 'verbose', 'color', 'no-color', 'help'],
    exits: [
      { code: 0, meaning: 'converged and verified' },
      { code: 1, meaning: 'anything else: an error, operator action required, a promise not known to hold at the next boot, another run holding the lock' },
    ],
  },
  {
    name: 'rollback',
    alias: '--rollback',
    operands: '[RUN_ID]',
    maxOperands: 1,
    summary: 'undo a run from its journal (default: the newest apply that changed something)',
    description:
      'Undo a run in reverse order through the same write door: restore every file it changed, remove what it created, put back links and masks, and on a live host set sysctls back, turn swap back on and start the units it stopped. Modules are never unloaded.',
    options: ['plan', 'force', 'file', 'root', 'json', 'help'],
    exits: [
      { code: 0, meaning: 'undone, or nothing to undo (with --plan: nothing to undo)' },
      {
        code: 1,
        meaning:
          'a file changed after the run or an incomplete journal (without --force), a backup that is not what the run kept, a failed step, no such run, the lock held',
      },
      { code: 2, meaning: 'with --plan: steps to undo' },
    ],
  },
  {
    name: 'facts',
    alias: '--facts',
    maxOperands: 0,
    summary: 'print the facts kubespray judges this host by, and the memory verdict; plans nothing',
    description:
      'Gather facts.json for the running host as the ansible-core that will run kubespray would, and evaluate the memory check of its preflight. Reads only; plans and changes nothing.',
    options: ['file', 'json', 'help'],
    exits: [
      { code: 0, meaning: 'facts printed' },
      { code: 1, meaning: 'error' },
    ],
  },
  {
    name: 'first-boot',
    alias: '--first-boot',
    maxOperands: 0,
    summary: "the image's first-boot run (its unit runs it)",
    description:
      'Wait for candidate services to bind a wanted port or stop, then apply (first_boot: apply) or plan (first_boot: verify) on the booted host, write first-boot.json, and on success disable the unit.',
    options: ['file', 'json', 'help'],
    exits: [
      { code: 0, meaning: 'converged (apply) or in sync (verify); the unit is disabled' },
      { code: 1, meaning: 'anything else; the unit stays enabled and runs again at the next boot' },
    ],
  },
  {
    name: 'report',
    operands: 'DIR...',
    maxOperands: Number.POSITIVE_INFINITY,
    summary: 'one table of a fleet from the per-host documents the Ansible role fetched',
    description:
      'Read the fetched per-host documents (DIR/HOST/reconcile.json, or DIR/reconcile.json for one host) on the controller, print one table (host, verdict, changes, operator lines, unknowns; verdicts worst first: unusable, failed, operator, unknown, changes, ready) and write fleet-report.csv, fleet-report.json and one self-contained fleet-report.html (mode 0600). Every document is untrusted input and every entry of a fetch directory is a host: a link, a file, a directory without reconcile.json, an unreadable entry or a document that fails its checks is listed as unusable with the reason, and a reconcile.json beside host directories is refused by name.',
    options: ['out', 'json', 'help'],
    exits: [
      { code: 0, meaning: 'every host is ready' },
      { code: 1, meaning: 'some host is unusable (the files are written), or a DIR is no fetch directory or the files cannot be written (nothing is)' },
      { code: 2, meaning: 'some host is not ready' },
    ],
  },
];

/** --color's values. */
export const COLOR_WHEN: readonly string[] = ['auto', 'always', 'never'];

/** The flag form's option values, as parseArgs gives them (a subcommand's alias set). */
export type GivenOptions = Record<string, string | boolean | Array<string | boolean> | undefined>;

/**
 * Options that cannot go together in the flag form, beside the options they
 * govern: the first rule that holds is the refusal's message.
 */
export const OPTION_CONFLICTS: readonly { holds: (a: GivenOptions) => boolean; message: string }[] = [
  {
    holds: (a) => Boolean(a.facts) && Boolean(a.plan || a.apply || a.rollback || a.root !== undefined),
    message: '--facts reads the running host; it goes alone (with -f and --json)',
  },
  { holds: (a) => Boolean(a.rollback && a.apply), message: '--rollback undoes a run; it goes alone or with --plan to preview, not with --apply' },
  {
    holds: (a) => Boolean(a['first-boot']) && Boolean(a.plan || a.apply || a.rollback || a.facts || a.root !== undefined),
    message: "--first-boot is the image's first-boot run on the booted host; it goes alone (with -f and --json)",
  },
  {
    holds: (a) => !a.rollback && !a.facts && !a['first-boot'] && Boolean(a.plan) === Boolean(a.apply),
    message: `give exactly one of --plan, --apply or --rollback, or a command (${COMMANDS.map((c) => c.name).join(', ')})`,
  },
  { holds: (a) => Boolean(a.force) && !a.rollback, message: '--force goes with --rollback' },
  { holds: (a) => Boolean(a['watch-next-boot']) && !a.apply, message: '--watch-next-boot goes with apply (it installs the watch for the next boot)' },
  {
    holds: (a) => a.accept !== undefined && Boolean(a.rollback || a.facts || a['first-boot']),
    message: "--accept goes with plan and apply (a first boot takes the desired state's accept list)",
  },
  { holds: (a) => Boolean(a.quiet && a.verbose), message: '-q (--quiet) and -v (--verbose) say different things; give one' },
  {
    holds: (a) => a.color !== undefined && !COLOR_WHEN.includes(a.color as string),
    message: `--color takes ${COLOR_WHEN.slice(0, -1).join(', ')} or ${COLOR_WHEN.at(-1)} (--color=never, or --no-color)`,
  },
  { holds: (a) => Boolean(a['no-color']) && a.color !== undefined && a.color !== 'never', message: '--no-color and --color say different things; give one' },
];

/**
 * --accept's values (each NAME[,NAME...], spaces around a name dropped, as
 * kubeadm's --ignore-preflight-errors reads its list), or why one is refused.
 */
export function acceptNames(given: GivenOptions['accept']): { names: string[] } | { problem: string } {
  const raw = given === undefined ? [] : (Array.isArray(given) ? given : [given]).map(String);
  const names: string[] = [];
  for (const value of raw)
    for (const part of value.split(',')) {
      const name = part.trim();
      const problem = checkNameProblem(name);
      if (problem) return { problem: `--accept ${JSON.stringify(value)}: ${name === value ? '' : `${JSON.stringify(name)} `}${problem}` };
      names.push(name);
    }
  return { names };
}

export const commandByName = (name: string): CommandSpec | undefined => COMMANDS.find((c) => c.name === name);
/** The commands that have a flag form. */
export const ALIASED = COMMANDS.filter((c): c is CommandSpec & { alias: `--${string}` } => c.alias !== undefined);
export const option = (name: OptionName): OptionSpec => {
  const o = OPTIONS.find((x) => x.name === name);
  if (!o) throw new Error(`no option ${name}`);
  return o;
};

/** node:util parseArgs's option table: every option, and every command's flag form. */
export function parseArgsOptions(): Record<string, { type: 'boolean' | 'string'; short?: string; multiple?: boolean }> {
  const table: Record<string, { type: 'boolean' | 'string'; short?: string; multiple?: boolean }> = {};
  for (const o of OPTIONS)
    table[o.name] = { type: o.value ? 'string' : 'boolean', ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
  for (const c of ALIASED) table[c.alias.slice(2)] = { type: 'boolean' };
  return table;
}

/**
 * Why parseArgs refused these arguments, in the CLI's own words (node's
 * message names its own API and quotes unevenly): the first option the table
 * does not have, a switch given a value, or an option whose value is missing.
 * null when none of those is the reason.
 */
export function argumentProblem(argv: readonly string[]): string | null {
  const table = parseArgsOptions();
  const byShort = new Map(Object.entries(table).flatMap(([n, o]) => (o.short ? [[o.short, n] as const] : [])));
  const needsValue = (name: string, said: string, next: string | undefined) =>
    next === undefined || next.startsWith('-')
      ? `${said} needs a value (${OPTIONS.find((o) => o.name === name)?.value ?? 'VALUE'})${next === undefined ? '' : `; a value that starts with "-" goes as --${name}=VALUE`}`
      : null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return null;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = a.slice(2, eq < 0 ? undefined : eq);
      const o = table[name];
      if (!o) return `unknown option --${name}`;
      if (o.type === 'boolean' && eq >= 0) return `--${name} takes no value`;
      if (o.type === 'string' && eq < 0 && needsValue(name, `--${name}`, argv[i + 1])) return needsValue(name, `--${name}`, argv[i + 1]);
      if (o.type === 'string' && eq < 0) i++;
    } else if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const name = byShort.get(a[j]!);
        if (name === undefined) return `unknown option -${a[j]}${a.length > 2 ? ` (in ${a})` : ''}`;
        if (table[name]!.type !== 'string') continue;
        if (j + 1 < a.length) break;
        const missing = needsValue(name, `-${a[j]}`, argv[i + 1]);
        if (missing) return missing;
        i++;
      }
    }
  }
  return null;
}

// ---- renderings ----

/** What the program calls itself when nothing else says: the npm bin's name (package.json "bin"). */
export const DEFAULT_PROGRAM = 'reconcile';
/** A name safe to print as the program's: no path, no control or shell characters, no leading '-'. */
const PROGRAM_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

/**
 * The program's name as it was invoked, for --help and error messages: the
 * base name of the script node ran (process.argv[1] keeps the name of the link
 * it was started through: /usr/bin/k8s-host-reconcile, the npm bin's
 * reconcile), without a .mjs/.js extension (`node dist/reconcile.mjs` is
 * reconcile). The package's bundle run by its own file name is still the
 * package's k8s-host-reconcile. A name that could not be printed safely, or
 * none, falls back to the default: argv[1] is whatever the caller chose.
 */
export function programName(script: string | undefined, packaged = false): string {
  const fallback = packaged ? PACKAGED_PROGRAM_NAME : DEFAULT_PROGRAM;
  const base = (script ?? '').slice((script ?? '').lastIndexOf('/') + 1).replace(/\.(mjs|cjs|js)$/, '');
  if (!PROGRAM_NAME.test(base)) return fallback;
  return packaged && base === DEFAULT_PROGRAM ? PACKAGED_PROGRAM_NAME : base;
}

const flagWords = (o: OptionSpec): string => `${o.short ? `-${o.short}, ` : ''}--${o.name}${o.value ? ` ${o.value}` : ''}`;
const synopsisWord = (o: OptionSpec): string => `[${o.short ? `-${o.short}` : `--${o.name}`}${o.value ? ` ${o.value}` : ''}]`;
const commandOptions = (c: CommandSpec): OptionSpec[] => c.options.filter((n) => n !== 'help').map(option);

/** One usage line per command: `reconcile plan [-f FILE] [--root DIR] [--json]`. */
export function usageLine(c: CommandSpec, program = DEFAULT_PROGRAM): string {
  return [program, c.name, ...(c.operands ? [c.operands] : []), ...commandOptions(c).map(synopsisWord)].join(' ');
}

// Two columns, the second wrapped under itself to stay within 80 columns.
function columns(rows: [string, string][], indent = 2): string {
  const width = Math.max(...rows.map(([a]) => a.length)) + 2;
  const hang = ' '.repeat(indent + width);
  return rows
    .map(
      ([a, b]) =>
        `${' '.repeat(indent)}${a.padEnd(width)}${wrap(b, 79 - indent - width)
          .split('\n')
          .join(`\n${hang}`)}`,
    )
    .join('\n');
}

/** `reconcile --help`, naming the program as it was invoked. */
export function mainHelp(program = DEFAULT_PROGRAM): string {
  return `Usage: ${program} COMMAND [OPTIONS]

Make a used Debian host or image safe to install Kubernetes on with kubespray:
swap off, overlay and br_netfilter loaded, the forwarding sysctls at 1, the
control-plane ports free; now, and at every later boot.

Commands:
${columns([...COMMANDS.map((c): [string, string] => [c.name, c.summary]), ['help [COMMAND]', 'show the help of a command']])}

Global options:
${columns(GLOBAL_OPTIONS.map((n): [string, string] => [flagWords(option(n)), n === 'help' ? 'show this help, or with a command its own' : option(n).summary]))}

Each command also has a flag form, with the same behaviour and exit codes:
  ${ALIASED.map((c) => c.alias).join(', ')}
  (${program} --plan -f FILE runs as ${program} plan -f FILE does).

Run '${program} COMMAND --help' for a command's options and exit codes.
`;
}

/** `reconcile COMMAND --help`. */
export function commandHelp(c: CommandSpec, program = DEFAULT_PROGRAM): string {
  return `Usage: ${usageLine(c, program)}

${wrap(c.description, 78)}

Options:
${columns(c.options.map((n): [string, string] => [flagWords(option(n)), option(n).summary]))}

Exit codes:
${columns(c.exits.map((e): [string, string] => [String(e.code), e.meaning]))}

${c.alias ? `\nFlag form: ${program} ${c.alias}${c.operands ? ` ${c.operands}` : ''} [OPTIONS]\n` : ''}`;
}

function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join('\n');
}

/** The short usage shown under an error: the command's line, or every command's. */
export function errorUsage(c: CommandSpec | undefined, program = DEFAULT_PROGRAM): string {
  const lines = (c ? [c] : COMMANDS).map((x) => usageLine(x, program));
  return `usage: ${lines.join('\n       ')}\nRun '${program} ${c ? `${c.name} ` : ''}--help' for more.\n`;
}

// The man page (go-md2man's Markdown): two generated regions of docs/reconcile.1.md.
// Only the Debian package installs it, so it names the command the package installs.
const MAN_PROGRAM = PACKAGED_PROGRAM_NAME;
const manFlag = (o: OptionSpec): string => `${o.short ? `**-${o.short}**, ` : ''}**--${o.name}**${o.value ? ` *${o.value}*` : ''}`;
const manSynopsisWord = (o: OptionSpec): string => `[${o.short ? `**-${o.short}**` : `**--${o.name}**`}${o.value ? ` *${o.value}*` : ''}]`;
const sentence = (s: string): string => `${s.charAt(0).toUpperCase()}${s.slice(1)}${s.endsWith('.') ? '' : '.'}`;
/** Where an option goes, in words: the commands that take it, or alone. */
const optionPlace = (o: OptionSpec): string =>
  o.name === 'help'
    ? 'every command, and alone'
    : GLOBAL_OPTIONS.includes(o.name)
      ? 'alone'
      : COMMANDS.filter((c) => c.options.includes(o.name))
          .map((c) => c.name)
          .join(', ');

/** From `# SYNOPSIS` up to the next section. */
export function manSynopsis(): string {
  const lines = COMMANDS.map((c) =>
    [`**${MAN_PROGRAM}**`, `**${c.name}**`, ...(c.operands ? [c.operands.replace(/([A-Z_]+)/, '*$1*')] : []), ...commandOptions(c).map(manSynopsisWord)].join(
      ' ',
    ),
  );
  return (
    `# SYNOPSIS\n\n${[...lines, `**${MAN_PROGRAM}** **--help** | **--version** | **--providers**`, `**${MAN_PROGRAM}** *COMMAND* **--help**`].join('\n\n')}\n\n` +
    `Each command also has a flag form, with the same behaviour and exit codes: ${ALIASED.map((c) => `**${c.alias}** for **${c.name}**`).join(', ')}.\n`
  );
}

/** From `# COMMANDS` up to `# ENVIRONMENT`: commands, options and exit status. */
export function manReference(): string {
  const commands = COMMANDS.map(
    (c) =>
      `**${c.name}**${c.operands ? ` ${c.operands.replace(/([A-Z_]+)/, '*$1*')}` : ''}\n:   ${sentence(c.summary)} ${c.description} Options: ${c.options.map((n) => `**--${n}**`).join(', ')}.${c.alias ? ` Flag form: **${c.alias}**.` : ''}`,
  );
  const options = OPTIONS.map((o) => `${manFlag(o)}\n:   ${sentence(o.summary)}${o.detail ? ` ${o.detail}` : ''} With: ${optionPlace(o)}.`);
  const exits = COMMANDS.map((c) => `**${c.name}**\n:   ${c.exits.map((e) => `${e.code}: ${e.meaning}`).join('; ')}.`);
  return `# COMMANDS\n\n${commands.join('\n\n')}\n\n# OPTIONS\n\n${options.join('\n\n')}\n\n# EXIT STATUS\n\n${exits.join('\n\n')}\n`;
}

// The README's usage tables (between its `<!-- usage:table -->` markers).
const cell = (s: string): string => s.replace(/\|/g, '\\|');
export function readmeUsage(): string {
  const commands = COMMANDS.map(
    (c) => `| \`reconcile ${c.name}${c.operands ? ` ${c.operands}` : ''}\` | ${c.alias ? `\`${c.alias}\`` : '—'} | ${cell(c.summary)} |`,
  );
  const options = OPTIONS.map((o) => {
    return `| \`${flagWords(o)}\` | ${optionPlace(o)} | ${cell(sentence(o.summary))}${o.detail ? ` ${cell(o.detail)}` : ''} |`;
  });
  return ['| command | flag form | what it does |', '|---|---|---|', ...commands, '', '| option | with | meaning |', '|---|---|---|', ...options].join('\n');
}

/**
 * The generated regions of the project's documents: from `begin` (included)
 * up to `end`, the file holds exactly `text`.
 */
export interface DocRegion {
  readonly file: string;
  readonly begin: string;
  readonly end: string;
  readonly text: string;
}

export function docRegions(): DocRegion[] {
  return [
    { file: 'README.md', begin: '<!-- usage:table -->\n', end: '<!-- /usage:table -->', text: `<!-- usage:table -->\n${readmeUsage()}\n` },
    { file: 'docs/reconcile.1.md', begin: '# SYNOPSIS\n', end: '# DESCRIPTION\n', text: `${manSynopsis()}\n` },
    { file: 'docs/reconcile.1.md', begin: '# COMMANDS\n', end: '# ENVIRONMENT\n', text: `${manReference()}\n` },
  ];
}

/** A document's current text of a region, or null when a marker is missing. */
export function regionIn(doc: string, r: DocRegion): string | null {
  const at = doc.indexOf(r.begin);
  const to = at < 0 ? -1 : doc.indexOf(r.end, at + r.begin.length);
  return to < 0 ? null : doc.slice(at, to);
}

/** The document with the region rewritten (the markers must be there). */
export function withRegion(doc: string, r: DocRegion): string {
  const now = regionIn(doc, r);
  if (now === null) throw new Error(`${r.file}: no ${JSON.stringify(r.begin.trim())} ... ${JSON.stringify(r.end.trim())} region`);
  const at = doc.indexOf(r.begin);
  return doc.slice(0, at) + r.text + doc.slice(at + now.length);
}
