// One host's --json document (plan, apply, or the CLI's error document), read
// as untrusted input: every field the verdict depends on is checked, and a
// problem names the field by its path. Pure: text in, a summary or an issue out.
import { FORMAT_VERSION } from '../version.js';
import type { WithdrawnBy } from '../reconcile/promises.js';

/**
 * What a host needs, worst first: `unusable` (no document the report can
 * read: a link, a file where the host's directory should be, no reconcile.json,
 * unreadable, or a document that fails its checks), `failed` (the run failed or kubespray's own
 * preflight will stop), `operator` (a person must act), `unknown` (something
 * that decides a promise could not be judged), `changes` (the tool will fix it:
 * a plan with pending changes), `ready` (nothing pending; an apply verified).
 */
export type Verdict = 'unusable' | 'failed' | 'operator' | 'unknown' | 'changes' | 'ready';
export const VERDICTS: readonly Verdict[] = ['unusable', 'failed', 'operator', 'unknown', 'changes', 'ready'];

export interface OperatorLine {
  resource: string;
  /** The change's id in its resource (e.g. "boot-script:/etc/rc.local:3"). */
  id: string;
  summary: string;
  /** Why the tool leaves it to a person. */
  reason: string;
  /** The promises it takes back, e.g. "port:6443 (after apply and at boot)". */
  withdraws: string[];
  /**
   * apply only: a line of the plan that outlives apply (apply hid what showed
   * it, its cause stays: a boot script makes the unit again), counted in
   * operator_required though the second observation (`after`) no longer has it.
   */
  carried: boolean;
}

export interface HostSummary {
  host: string;
  /** The document this summary was read from, as given on the command line. */
  file: string;
  /** 'none': no usable document (verdict `unusable`, the reason in `errors`). */
  mode: 'plan' | 'apply' | 'error' | 'none';
  verdict: Verdict;
  /** plan: changes pending; apply: changes applied. */
  changes: number;
  operator: OperatorLine[];
  /** Lines that could not be judged (each names file and line), deduplicated. */
  unknowns: string[];
  /** Why a host failed: the CLI's error, apply failures, kubespray preflight stops; or why it is unusable. */
  errors: string[];
  /**
   * Findings a person accepted by their check name, "NAME (where): message":
   * never hidden, never an unknown; one kubespray stops on stays in `errors` too.
   */
  accepted: string[];
  /**
   * What stands on this host, each cause once, read from the document's
   * structured fields (a change's summary and operator text, a finding's
   * check name and message, a withdrawal's resource and line): the fleet
   * report groups hosts by these (causes.ts).
   */
  causes: HostCause[];
  /** The plan's changes with their file contents (the document's display text), for the page's per-host details. */
  change_details: HostChange[];
  /**
   * The host's documents as the report found them (paths as given on the
   * command line): its reconcile.json, then the fetched reports the tool
   * writes (reports/before.json, reports/runs/ID/plan.json, …) that are
   * regular files. Empty for an unusable host.
   */
  documents: string[];
}

/** One cause on one host. Two hosts share a cause when kind, text and fix are equal. */
export interface HostCause {
  kind: 'unusable' | 'failed' | 'operator' | 'unknown' | 'accepted';
  /**
   * The stable names it is filed under: a finding's `check`, else the
   * resources it concerns (an operator change's resource; the resource an
   * unknown's message or withdrawal names). Empty when the document names none.
   */
  checks: string[];
  /**
   * The cause: an operator change's summary; an unknown's message without
   * its resource (as the plan's must-do list reads it); an error's message;
   * an accepted finding's message.
   */
  text: string;
  /** An operator line's fix (the change's `operator`); null otherwise. */
  fix: string | null;
}

export interface HostChange {
  resource: string;
  id: string;
  action: string;
  summary: string;
  /** The file it writes, and its contents before and after (null: absent); null when it writes no file. */
  path: string | null;
  before: string | null;
  after: string | null;
  /** apply only: whether apply lists it as applied; null in a plan. */
  applied: boolean | null;
}

/** A problem in a document: the field's path ("resources[2].changes[0].operator"), empty for the document. */
export interface DocumentIssue {
  field: string;
  message: string;
}

class FieldError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

type Json = unknown;

const kind = (v: Json): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

function obj(v: Json, at: string): Record<string, Json> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new FieldError(at, `expected an object, found ${kind(v)}`);
  return v as Record<string, Json>;
}
function arr(v: Json, at: string): Json[] {
  if (!Array.isArray(v)) throw new FieldError(at, `expected an array, found ${kind(v)}`);
  return v;
}
function str(v: Json, at: string): string {
  if (typeof v !== 'string') throw new FieldError(at, `expected a string, found ${kind(v)}`);
  return v;
}
function bool(v: Json, at: string): boolean {
  if (typeof v !== 'boolean') throw new FieldError(at, `expected true or false, found ${kind(v)}`);
  return v;
}
function count(v: Json, at: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new FieldError(at, `expected a count (a whole number >= 0), found ${typeof v === 'number' ? v : kind(v)}`);
  return v;
}
const join = (base: string, key: string | number) => (typeof key === 'number' ? `${base}[${key}]` : base ? `${base}.${key}` : key);
/** A field that must be present. */
const field = <T>(o: Record<string, Json>, base: string, key: string, read: (v: Json, at: string) => T): T => {
  if (!Object.hasOwn(o, key)) throw new FieldError(join(base, key), 'missing');
  return read(o[key], join(base, key));
};
/** A field that may be absent (older documents, optional keys); null when absent. */
const optional = <T>(o: Record<string, Json>, base: string, key: string, read: (v: Json, at: string) => T): T | null =>
  Object.hasOwn(o, key) && o[key] !== undefined ? read(o[key], join(base, key)) : null;
const each = <T>(v: Json, at: string, read: (v: Json, at: string) => T): T[] => arr(v, at).map((x, i) => read(x, join(at, i)));

/**
 * Every kind of withdrawal the CLI writes (src/reconcile/promises.ts
 * WithdrawnBy): a kind added there fails to compile here until the report
 * says what it means. 'operator' lines are read from the resources, 'unknown'
 * lines become the host's unknowns, 'failure' lines repeat the apply's
 * `failures` (read from there).
 */
const WITHDRAWN_BY = { operator: true, unknown: true, failure: true } as const satisfies Record<WithdrawnBy['by'], true>;
const isWithdrawnBy = (s: string): s is WithdrawnBy['by'] => Object.hasOwn(WITHDRAWN_BY, s);
function withdrawText(v: Json, at: string): string {
  const w = obj(v, at);
  const promise = field(w, at, 'promise', str);
  const from = field(w, at, 'from', str);
  if (from !== 'apply' && from !== 'boot') throw new FieldError(join(at, 'from'), `expected "apply" or "boot", found ${JSON.stringify(from)}`);
  return `${promise} (${from === 'apply' ? 'after apply and at boot' : 'at the next boot'})`;
}

/** The resources list of a plan (or an apply's `after`): its changes' operator lines and the pending count. */
interface Resources {
  operator: OperatorLine[];
  pending: number;
  names: string[];
  changes: HostChange[];
}
const text = (x: Json, a: string) => (x === null ? null : str(x, a));
function readResources(v: Json, at: string): Resources {
  const operator: OperatorLine[] = [];
  const names: string[] = [];
  const changes: HostChange[] = [];
  let pending = 0;
  each(v, at, (r, rAt) => {
    const res = obj(r, rAt);
    const name = field(res, rAt, 'name', str);
    names.push(name);
    each(
      field(res, rAt, 'changes', (x) => x),
      join(rAt, 'changes'),
      (c, cAt) => {
        const ch = obj(c, cAt);
        const summary = field(ch, cAt, 'summary', str);
        const op = field(ch, cAt, 'operator', text);
        const action = field(ch, cAt, 'action', str);
        const id = field(ch, cAt, 'id', str);
        // Older documents may lack path/before/after: no file shown then.
        const file = optional(ch, cAt, 'path', text);
        changes.push({
          resource: name,
          id,
          action,
          summary,
          path: file,
          before: file === null ? null : optional(ch, cAt, 'before', text),
          after: file === null ? null : optional(ch, cAt, 'after', text),
          applied: null,
        });
        if (op !== null)
          operator.push({
            resource: name,
            id,
            summary,
            reason: op,
            withdraws: each(optional(ch, cAt, 'withdraws', (x) => x) ?? [], join(cAt, 'withdraws'), withdrawText),
            carried: false,
          });
        // As the CLI counts pending_changes: every action but an operator's or one deferred to boot.
        if (action !== 'operator' && action !== 'deferred') pending++;
      },
    );
  });
  return { operator, pending, names, changes };
}

interface Finding {
  message: string;
  /** The finding's stable check name, when it has one. */
  check: string | null;
  unknown: boolean;
  stops: boolean;
  /** An accepted finding: "NAME (where)"; null when it is not accepted. */
  accepted: string | null;
}
function readFindings(v: Json, at: string): Finding[] {
  return each(v, at, (f, fAt) => {
    const o = obj(f, fAt);
    const accepted = optional(o, fAt, 'accepted', bool) ?? false;
    // Only a finding with a check name can be accepted (src/findings.ts acceptFindings).
    const check = accepted ? field(o, fAt, 'check', str) : optional(o, fAt, 'check', str);
    const by = accepted
      ? each(
          field(o, fAt, 'accepted_by', (x) => x),
          join(fAt, 'accepted_by'),
          str,
        )
      : [];
    return {
      message: field(o, fAt, 'message', str),
      unknown: optional(o, fAt, 'unknown', bool) ?? false,
      stops: optional(o, fAt, 'stops', bool) ?? false,
      check,
      accepted: accepted ? `${check} (${by.join(', ')})` : null,
    };
  });
}

/** The accepted findings of a document, checked against its accepted_findings (absent from documents before it). */
function acceptedOf(d: Record<string, Json>, findings: Finding[]): string[] {
  const accepted = findings.flatMap((f) => (f.accepted === null ? [] : [`${f.accepted}: ${f.message}`]));
  const claimed = optional(d, '', 'accepted_findings', count);
  if (claimed !== null && claimed !== accepted.length)
    throw new FieldError('accepted_findings', `says ${claimed}, but findings has ${accepted.length} finding(s) with accepted: true`);
  return accepted;
}

/** The withdrawals of `promises_after`: the unknowns' lines, and the operator lines' resource and change id. */
function withdrawalsAfter(v: Json, at: string): { unknowns: string[]; causes: HostCause[]; operators: Set<string> } {
  const lines: string[] = [];
  const causes: HostCause[] = [];
  const operators = new Set<string>();
  each(v, at, (p, pAt) => {
    each(
      field(obj(p, pAt), pAt, 'withdrawn_by', (x) => x),
      join(pAt, 'withdrawn_by'),
      (w, wAt) => {
        const o = obj(w, wAt);
        const by = field(o, wAt, 'by', str);
        if (!isWithdrawnBy(by))
          throw new FieldError(
            join(wAt, 'by'),
            `expected ${Object.keys(WITHDRAWN_BY)
              .map((k) => JSON.stringify(k))
              .join(', ')}, found ${JSON.stringify(by)}`,
          );
        const resource = field(o, wAt, 'resource', str);
        const line = field(o, wAt, 'line', str);
        if (by === 'unknown') {
          lines.push(`${resource}: ${line}`);
          causes.push({ kind: 'unknown', checks: [resource], text: line, fix: null });
        } else if (by === 'operator') operators.add(lineKey(resource, line));
      },
    );
  });
  return { unknowns: lines, causes, operators };
}

const lineKey = (resource: string, id: string) => `${resource}\0${id}`;

/**
 * The operator lines apply carried past its second observation: operator_required
 * counts them (src/reconcile/run.ts), `after` does not list them. Each is an
 * operator line of the plan (`resources`) missing from `after`; promises_after
 * names the ones that take a promise back. When it does not name them all and
 * the plan's missing lines are more than the count, the rest is one line saying so.
 */
function carriedLines(planned: OperatorLine[], left: OperatorLine[], claimed: number, named: Set<string>): OperatorLine[] | string {
  const missing = left.length > claimed ? -1 : claimed - left.length;
  const still = new Set(left.map((o) => lineKey(o.resource, o.id)));
  const candidates = planned.filter((o) => !still.has(lineKey(o.resource, o.id)));
  if (missing < 0 || missing > candidates.length)
    return `says ${claimed}, but after lists ${left.length} operator change(s) and the plan ${candidates.length} more that apply could have carried`;
  const carried = (o: OperatorLine): OperatorLine => ({ ...o, carried: true });
  if (missing === 0) return [];
  if (missing === candidates.length) return candidates.map(carried);
  const sure = candidates.filter((o) => named.has(lineKey(o.resource, o.id)));
  if (sure.length > missing) return `says ${claimed}, but promises_after names ${sure.length} carried operator line(s) beside the ${left.length} of after`;
  const rest = candidates.filter((o) => !named.has(lineKey(o.resource, o.id)));
  if (sure.length === missing) return sure.map(carried);
  const unnamed = missing - sure.length;
  return [
    ...sure.map(carried),
    {
      resource: 'apply',
      id: '',
      summary: `${unnamed} more operator line(s) carried past apply, one of: ${rest.map((o) => `${o.resource} ${o.id}`).join(', ')}`,
      reason: 'operator_required counts it; the document does not say which line of the plan it is',
      withdraws: [],
      carried: true,
    },
  ];
}

const uniq = (xs: string[]) => [...new Set(xs)];

function worst(s: { errors: string[]; operator: OperatorLine[]; unknowns: string[]; changes: number }, mode: 'plan' | 'apply'): Verdict {
  if (s.errors.length > 0) return 'failed';
  if (s.operator.length > 0) return 'operator';
  if (s.unknowns.length > 0) return 'unknown';
  return mode === 'plan' && s.changes > 0 ? 'changes' : 'ready';
}

function summarize(doc: Json, host: string, file: string): HostSummary {
  const d = obj(doc, '');
  const version = field(d, '', 'format_version', str);
  // A newer major version may mean something else by the same fields: refuse rather than guess.
  if (version.split('.')[0] !== FORMAT_VERSION.split('.')[0]) {
    throw new FieldError('format_version', `this report reads format ${FORMAT_VERSION.split('.')[0]}.x, found ${JSON.stringify(version)}`);
  }
  const base = { host, file };
  if (Object.hasOwn(d, 'error')) {
    const error = field(d, '', 'error', str);
    const failed = each(optional(d, '', 'failed', (x) => x) ?? [], 'failed', resourceFailure);
    const causes = mergeCauses([{ kind: 'failed', checks: [], text: error, fix: null }, ...failed.map((f) => f.cause)]);
    const errors = [error, ...failed.map((f) => f.message)];
    return {
      ...base,
      mode: 'error',
      verdict: 'failed',
      changes: 0,
      operator: [],
      unknowns: [],
      errors,
      accepted: [],
      causes,
      change_details: [],
      documents: [file],
    };
  }
  const mode = field(d, '', 'mode', str);
  if (mode !== 'plan' && mode !== 'apply') throw new FieldError('mode', `expected "plan" or "apply" (or an "error" document), found ${JSON.stringify(mode)}`);
  const findings = readFindings(
    field(d, '', 'findings', (x) => x),
    'findings',
  );
  // Accepted here or not, kubespray stops on it: the host fails, and the line says it was accepted.
  const stopping = findings.filter((f) => f.stops);
  const stops = stopping.map((f) => `kubespray's preflight stops${f.accepted ? ` (accepted here: ${f.accepted})` : ''}: ${f.message}`);
  const accepted = acceptedOf(d, findings);
  const claimedStops = field(d, '', 'kubespray_preflight_failures', count);
  if (claimedStops !== stops.length) {
    throw new FieldError('kubespray_preflight_failures', `says ${claimedStops}, but findings has ${stops.length} finding(s) with stops: true`);
  }
  const planned = readResources(
    field(d, '', 'resources', (x) => x),
    'resources',
  );
  const claimedPending = field(d, '', 'pending_changes', count);
  if (claimedPending !== planned.pending) {
    throw new FieldError('pending_changes', `says ${claimedPending}, but resources lists ${planned.pending} pending change(s)`);
  }
  const claimedOperator = field(d, '', 'operator_required', count);
  const findingCauses = { stops: stopping.map(stopCause), accepted: findings.flatMap(acceptedCause) };
  if (mode === 'apply') return summarizeApply(d, { ...base, accepted }, planned, claimedOperator, { lines: stops, ...findingCauses });
  if (claimedOperator !== planned.operator.length) {
    throw new FieldError('operator_required', `says ${claimedOperator}, but resources lists ${planned.operator.length} operator change(s)`);
  }
  const unknownFindings = findings.filter((f) => f.unknown && f.accepted === null);
  const unknowns = uniq(unknownFindings.map((f) => f.message));
  const causes = mergeCauses([
    ...findingCauses.stops,
    ...planned.operator.map(operatorCause),
    ...unknownFindings.map((f) => unknownCause(f, planned.names)),
    ...findingCauses.accepted,
  ]);
  const s = { ...base, mode: 'plan' as const, changes: planned.pending, operator: planned.operator, unknowns, errors: stops, accepted };
  return { ...s, verdict: worst(s, mode), causes, change_details: planned.changes, documents: [file] };
}

const resourceFailure = (f: Json, at: string): { message: string; cause: HostCause } => {
  const o = obj(f, at);
  const resource = field(o, at, 'resource', str);
  const message = field(o, at, 'message', str);
  return { message: `${resource}: ${message}`, cause: { kind: 'failed', checks: [resource], text: message, fix: null } };
};
const resourceMessage = (f: Json, at: string): string => resourceFailure(f, at).message;

const operatorCause = (o: OperatorLine): HostCause => ({ kind: 'operator', checks: [o.resource], text: o.summary, fix: o.reason });
const stopCause = (f: Finding): HostCause => ({
  kind: 'failed',
  checks: f.check === null ? [] : [f.check],
  text: `kubespray's preflight stops: ${f.message}`,
  fix: null,
});
const acceptedCause = (f: Finding): HostCause[] =>
  f.accepted === null ? [] : [{ kind: 'accepted', checks: f.check === null ? [] : [f.check], text: f.message, fix: null }];

/**
 * An unknown finding, filed under its check name, else under the resource
 * its message starts with ("SwapOff: unknown: …", as plan.ts writes it and
 * must-do.ts reads it): the cause is what follows, the text an apply's
 * withdrawal carries as its line. The resource names are the document's own.
 */
function unknownCause(f: Finding, resources: string[]): HostCause {
  const r = resources.find((n) => f.message.startsWith(`${n}: `));
  const checks = f.check !== null ? [f.check] : r === undefined ? [] : [r];
  return { kind: 'unknown', checks, text: r === undefined ? f.message : f.message.slice(r.length + 2), fix: null };
}

/** Each cause once: the same text from two resources (one rc.local line that may undo three) is one cause filed under both. */
function mergeCauses(causes: HostCause[]): HostCause[] {
  const out = new Map<string, HostCause>();
  for (const c of causes) {
    const key = causeKey(c);
    const seen = out.get(key);
    if (seen === undefined) out.set(key, { ...c, checks: [...c.checks] });
    else for (const n of c.checks) if (!seen.checks.includes(n)) seen.checks.push(n);
  }
  return [...out.values()];
}

/** What makes two causes one: their kind, text and fix (the names they are filed under are merged). */
export const causeKey = (c: Pick<HostCause, 'kind' | 'text' | 'fix'>): string => JSON.stringify([c.kind, c.text, c.fix]);

/** The apply's `applied`: how many changes, and which (resource and change id). */
function appliedChanges(v: Json): { count: number; ids: Set<string> } {
  const ids = new Set<string>();
  let count = 0;
  each(v, 'applied', (a, at) => {
    const o = obj(a, at);
    // Only to mark the details' changes as applied: a document without it is still counted.
    const resource = optional(o, at, 'resource', str);
    for (const id of each(
      field(o, at, 'changes', (x) => x),
      join(at, 'changes'),
      str,
    )) {
      count++;
      if (resource !== null) ids.add(lineKey(resource, id));
    }
  });
  return { count, ids };
}

/** An apply document: what is left is what the second observation (`after`) found, not the plan's. */
function summarizeApply(
  d: Record<string, Json>,
  base: { host: string; file: string; accepted: string[] },
  planned: ReturnType<typeof readResources>,
  claimedOperator: number,
  stops: { lines: string[]; stops: HostCause[]; accepted: HostCause[] },
): HostSummary {
  const left = readResources(
    field(d, '', 'after', (x) => x),
    'after',
  );
  const withdrawals = withdrawalsAfter(
    field(d, '', 'promises_after', (x) => x),
    'promises_after',
  );
  const carried = carriedLines(planned.operator, left.operator, claimedOperator, withdrawals.operators);
  if (typeof carried === 'string') throw new FieldError('operator_required', carried);
  const operator = [...left.operator, ...carried];
  const applied = appliedChanges(field(d, '', 'applied', (x) => x));
  const failed = each(
    field(d, '', 'failures', (x) => x),
    'failures',
    resourceFailure,
  );
  const failures = failed.map((f) => f.message);
  const unknowns = uniq(withdrawals.unknowns);
  const verified = field(d, '', 'verified', bool);
  const errors = [...stops.lines, ...failures];
  // The CLI's verified is the conjunction of these; a document that says otherwise is not trusted.
  const clean = failures.length === 0 && claimedOperator === 0 && unknowns.length === 0;
  if (verified !== clean) {
    throw new FieldError(
      'verified',
      `says ${verified}, but the document lists ${failures.length} failure(s), ${claimedOperator} operator change(s) and ${unknowns.length} unknown(s) after apply`,
    );
  }
  const causes = mergeCauses([...stops.stops, ...failed.map((f) => f.cause), ...operator.map(operatorCause), ...withdrawals.causes, ...stops.accepted]);
  const s = { ...base, mode: 'apply' as const, changes: applied.count, operator, unknowns, errors };
  const change_details = planned.changes.map((c) => ({ ...c, applied: applied.ids.has(lineKey(c.resource, c.id)) }));
  return { ...s, verdict: worst(s, 'apply'), causes, change_details, documents: [base.file] };
}

/** Reads one document's text. `host` and `file` only label the result. */
export function readHostDocument(text: string, host: string, file: string): { ok: true; summary: HostSummary } | { ok: false; issue: DocumentIssue } {
  let doc: Json;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { ok: false, issue: { field: '', message: `not JSON: ${(e as Error).message}` } };
  }
  try {
    return { ok: true, summary: summarize(doc, host, file) };
  } catch (e) {
    if (e instanceof FieldError) return { ok: false, issue: { field: e.field, message: e.message } };
    throw e;
  }
}
