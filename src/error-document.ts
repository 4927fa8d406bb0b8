// The one JSON document `--json` prints when a command fails before (or
// instead of) its own document: option parsing, a bad desired state, a
// refused --root, a lock held, an internal error. Pure; the CLI edge
// (cli.ts) prints it on stdout and the same message on stderr, so a pipeline
// always has exactly one document to parse (docs/output.md, "Errors").
import { HostError, InputError, RunAbortedError, type InputIssue } from './errors.js';
import { FORMAT_VERSION, TOOL_VERSION } from './version.js';
import { redactDeep } from './redact.js';

/** One located problem: a desired-state key at file:line:column, or a fetched document's field. */
export interface ErrorIssue {
  message: string;
  file?: string;
  line?: number;
  column?: number;
  /** The key's path in the document (`resources[1].persist`); absent for the document itself. */
  key?: string;
}

export interface ErrorDetail extends ErrorIssue {
  /** Every located problem when there are several (a desired state with three mistakes); the first is also above. */
  issues?: ErrorIssue[];
}

export interface ErrorDocument {
  format_version: string;
  tool: { name: 'k8s-host-reconcile'; version: string };
  /** The command that failed (`plan`, `apply`, `rollback`, `facts`, `first-boot`, `report`), or null when none was recognised. */
  command: string | null;
  /**
   * The message, as a string: what the fleet report (src/report/document.ts) and the Ansible role
   * (contrib/ansible) read an error document by.
   */
  error: string;
  /** The same message with, where known, where the problem is. */
  error_detail: ErrorDetail;
  /** What a run had applied, and what failed, when it stopped after changing something (else empty). */
  applied: Array<{ resource: string; changes: string[] }>;
  failed: Array<{ resource: string; message: string }>;
}

export function inputIssue(i: InputIssue): ErrorIssue {
  return { message: i.message, file: i.file, line: i.line, column: i.column, ...(i.path ? { key: i.path } : {}) };
}

/** The error document of `message`; `e` (the error behind it) adds where it is known the file, line and key, and what a run applied. */
export function errorDocument(command: string | null, message: string, e?: unknown, more: Partial<ErrorDetail> = {}): ErrorDocument {
  let located: Partial<ErrorDetail> = {};
  if (e instanceof InputError && e.issues.length > 0) {
    const issues = e.issues.map(inputIssue);
    const { message: _first, ...where } = issues[0]!;
    located = { ...where, issues };
  } else if (e instanceof HostError && e.subject.startsWith('/')) located = { file: e.subject };
  // A message can quote a host's line: a credential in it is redacted, as in every document.
  return redactDeep({
    format_version: FORMAT_VERSION,
    tool: { name: 'k8s-host-reconcile', version: TOOL_VERSION },
    command,
    error: message,
    error_detail: { message, ...located, ...more },
    applied: e instanceof RunAbortedError ? e.applied : [],
    failed: e instanceof RunAbortedError ? e.failed : [],
  });
}
