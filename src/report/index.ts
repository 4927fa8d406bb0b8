// `reconcile report DIR…`: the fetched per-host documents of a fleet in, one
// table on stdout and fleet-report.{csv,json,html} in the output directory.
// A host whose entry or document is unusable is in every output with the
// verdict `unusable` and the reason: a fleet report that leaves hosts out
// would say the fleet is better than it is. Only a directory given on the
// command line that is no fetch directory stops it, with nothing written.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { errorDocument as cliErrorDocument } from '../error-document.js';
import { writeOutputs } from './write.js';
import { fleetDocument, renderCsv, renderTable } from './formats.js';
import { renderHtml } from './html.js';
import { formatReportIssue, loadFleet, type LoadOptions } from './load.js';
import { terminalSafe } from '../untrusted-text.js';

export interface ReportIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** The program's name as invoked (cli-options.ts programName); `reconcile` when not given. */
  program?: string;
}

/** The report's usage, naming the program as it was invoked. */
export const reportUsage = (program: string): string => `usage: ${program} report [-o DIR] [--json] DIR...

  Reads the per-host documents fetched by the Ansible role (DIR/HOST/reconcile.json,
  or DIR/reconcile.json for one host), prints one table (host, verdict, changes,
  operator lines, unknowns), and writes fleet-report.csv, fleet-report.json and
  fleet-report.html (one self-contained page) to the output directory. Every
  entry of a fetch directory is a host: one without a usable document is
  listed as unusable, with the reason.

  -o, --out DIR  where the three files go (default: the current directory)
  --json         print the JSON document instead of the table
  verdicts       unusable, failed, operator, unknown, changes, ready (worst first)
  exit           0 every host ready, 2 some host is not, 1 some host is unusable
                 (the files are written) or a DIR is no fetch directory (nothing is)
`;

export const REPORT_FILES = ['fleet-report.csv', 'fleet-report.json', 'fleet-report.html'] as const;
/** The outputs and their temporary files. */
const OUTPUT_NAME = /^(fleet-report\.(csv|json|html)|\.fleet-report\.(csv|json|html)\.\d+\.tmp)$/;

/** --json on a failure: one document still, the CLI's error document (schema/error.schema.json). */
const errorDocument = (message: string) => JSON.stringify(cliErrorDocument('report', message), null, 2) + '\n';

export async function runReport(argv: string[], io: ReportIo, load: Pick<LoadOptions, 'fs'> = {}): Promise<number> {
  const me = `${io.program ?? 'reconcile'} report`;
  const usage = reportUsage(io.program ?? 'reconcile');
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { out: { type: 'string', short: 'o' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: true,
    });
  } catch (e) {
    io.stderr.write(`${me}: ${(e as Error).message}\n${usage}`);
    return 1;
  }
  if (parsed.values.help) {
    io.stdout.write(usage);
    return 0;
  }
  if (parsed.positionals.length === 0) {
    io.stderr.write(`${me}: give at least one directory of fetched documents\n${usage}`);
    return 1;
  }
  const out = parsed.values.out ?? '.';
  const outAbs = path.resolve(out);
  const fleet = loadFleet(parsed.positionals, {
    ...load,
    // -o inside (or at) a fetch directory: the report's own outputs are no hosts.
    ignore: (p, isDirectory) => p === outAbs || (!isDirectory && path.dirname(p) === outAbs && OUTPUT_NAME.test(path.basename(p))),
  });
  if (!fleet.ok) {
    if (parsed.values.json) io.stdout.write(errorDocument(`${fleet.issues.map(formatReportIssue).join('; ')}; nothing was written`));
    io.stderr.write(
      `${me}: ${fleet.issues.length === 1 ? 'a directory given is' : `${fleet.issues.length} directories given are`} no fetch directory; nothing was written\n`,
    );
    for (const i of fleet.issues) io.stderr.write(`${me}: ${terminalSafe(formatReportIssue(i))}\n`);
    return 1;
  }
  const unusable = fleet.hosts.filter((h) => h.verdict === 'unusable');
  for (const h of unusable) io.stderr.write(`${me}: ${terminalSafe(`${h.file}: ${h.errors.join('; ')}`)}\n`);
  const doc = fleetDocument(fleet.hosts);
  const contents: Record<(typeof REPORT_FILES)[number], string> = {
    'fleet-report.csv': renderCsv(fleet.hosts),
    'fleet-report.json': JSON.stringify(doc, null, 2) + '\n',
    'fleet-report.html': renderHtml(fleet.hosts, { outDir: out }),
  };
  // Whole files only, all or none: a reader never sees half a report, nor one file of this run beside two of the last.
  const written = writeOutputs(out, Object.entries(contents));
  if (!written.ok) {
    if (parsed.values.json) io.stdout.write(errorDocument(written.message));
    io.stderr.write(`${me}: ${terminalSafe(written.message)}\n`);
    return 1;
  }
  io.stdout.write(parsed.values.json ? contents['fleet-report.json'] : renderTable(fleet.hosts));
  if (!parsed.values.json) io.stdout.write(`wrote ${REPORT_FILES.map((f) => path.join(out, f)).join(', ')}\n`);
  return unusable.length > 0 ? 1 : fleet.hosts.every((h) => h.verdict === 'ready') ? 0 : 2;
}
