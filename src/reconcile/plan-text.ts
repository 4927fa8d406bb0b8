// The text plan, for people: rendered from the plan document alone
// (plan-document.ts), never from the engine's own objects.
import { createTwoFilesPatch } from 'diff';
import { displayText } from '../bytes.js';
import { redactFileTexts } from '../redact.js';
import { terminalSafe } from '../untrusted-text.js';
import type { Finding } from '../findings.js';
import type { PlanPromise } from './promises.js';
import type { JsonChange, JsonResource, PlanDocument } from './plan-document.js';
import { describeWithdrawals, entryOf, mustDo, type MustDo } from './must-do.js';

/**
 * Host text (a path, a unit name, a command line, a diff line, a reason) for
 * the text plan: controls and format characters escaped (untrusted-text.ts),
 * a tab kept as the column it is. Escaped before any colour is added.
 */
export const safe = (s: string): string => s.split('\t').map(terminalSafe).join('\t');

export interface Palette {
  add(s: string): string;
  del(s: string): string;
  hunk(s: string): string;
  bold(s: string): string;
  warn(s: string): string;
  dim(s: string): string;
}

const plain: Palette = { add: (s) => s, del: (s) => s, hunk: (s) => s, bold: (s) => s, warn: (s) => s, dim: (s) => s };
const ansi = (code: string) => (s: string) => `\x1b[${code}m${s}\x1b[0m`;
const coloured: Palette = { add: ansi('32'), del: ansi('31'), hunk: ansi('36'), bold: ansi('1'), warn: ansi('33'), dim: ansi('2') };

export type ColorMode = 'auto' | 'always' | 'never';

/** auto: colour only on a terminal, and never when NO_COLOR is set (no-color.org); an explicit --color wins over NO_COLOR, as that page asks. */
export function paletteFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env, mode: ColorMode = 'auto'): Palette {
  if (mode !== 'auto') return mode === 'always' ? coloured : plain;
  return stream.isTTY && !('NO_COLOR' in env && env.NO_COLOR !== '') ? coloured : plain;
}

/** A unified diff of two byte strings, shown as text. */
export function unifiedDiff(path: string, before: string | null, after: string | null): string {
  const shown = redactFileTexts(path, { before: before === null ? null : displayText(before), after: after === null ? null : displayText(after) });
  return textDiff(path, shown.before, shown.after);
}

/** A unified diff of two texts already made display text (a document's before/after): the text plan's and the fleet page's. */
export function textDiff(path: string, before: string | null, after: string | null): string {
  const patch = createTwoFilesPatch(
    before === null ? '/dev/null' : path,
    after === null ? '/dev/null' : path,
    before ?? '',
    after ?? '',
    undefined,
    undefined,
    { context: 3 },
  );
  // Drop the "Index:"/"===" preamble the diff package adds; keep ---/+++ and hunks.
  return patch
    .split('\n')
    .filter((l) => !l.startsWith('Index: ') && !/^=+$/.test(l))
    .join('\n')
    .replace(/\n+$/, '\n');
}

/** How much the text shows: quiet, what a person must do and the summary; verbose, also the before-state and facts. */
export type Detail = 'quiet' | 'normal' | 'verbose';

// A mask is a link to /dev/null: it adds something, so it does not take a deletion's `-`.
const SYMBOL: Record<JsonChange['action'], string> = {
  create: '+',
  update: '~',
  delete: '-',
  runtime: '>',
  stop: '-',
  disable: '-',
  mask: '*',
  move: '→',
  operator: '!',
  deferred: '…',
};
const WORD: Record<JsonChange['action'], string> = {
  create: 'create',
  update: 'update',
  delete: 'remove',
  runtime: 'runtime step',
  stop: 'stop',
  disable: 'disable',
  mask: 'mask (a link to /dev/null)',
  move: 'move aside',
  operator: 'operator',
  deferred: 'at boot',
};
const LEGEND_ORDER = ['+', '~', '-', '→', '*', '>', '…'];

const kept = (pr: PlanPromise) => pr.after_apply && pr.at_boot;

/** One line naming the symbols this plan shows, and no other. */
function legend(shown: JsonChange[], promises: PlanPromise[]): string | null {
  const words = new Map<string, string[]>();
  for (const c of shown) {
    const w = words.get(SYMBOL[c.action]) ?? [];
    if (!w.includes(WORD[c.action])) w.push(WORD[c.action]);
    words.set(SYMBOL[c.action], w);
  }
  const parts = LEGEND_ORDER.filter((s) => words.has(s)).map((s) => `${s} ${words.get(s)!.join('/')}`);
  if (promises.some(kept)) parts.push('= promised');
  if (promises.some((pr) => !kept(pr))) parts.push('! not promised');
  return parts.length > 0 ? `Key: ${parts.join('  ')}` : null;
}

function diffLines(path: string, before: string | null, after: string | null, p: Palette, indent: string): string[] {
  // The document's contents are already display text (jsonChanges): diff them as they are.
  return textDiff(path, before, after)
    .trimEnd()
    .split('\n')
    .map((raw) => {
      const l = safe(raw);
      const styled =
        l.startsWith('+++') || l.startsWith('---')
          ? p.bold(l)
          : l.startsWith('+')
            ? p.add(l)
            : l.startsWith('-')
              ? p.del(l)
              : l.startsWith('@@')
                ? p.hunk(l)
                : l;
      return `${indent}${styled}`;
    });
}

/** A change's one line: its symbol, its summary (after `about`), and whether it is deferred or a runtime step. */
export function changeHead(c: JsonChange, p: Palette, about = ''): string {
  const tag = c.deferred ? p.dim(' [deferred to boot]') : c.runtime ? p.dim(' [runtime]') : '';
  return `  ${SYMBOL[c.action]} ${safe(`${about}${c.summary}`)}${tag}`;
}

/** A change apply makes (or defers to boot); an operator line is listed under "What you must do" instead. */
function renderChange(c: JsonChange, p: Palette): string[] {
  const lines = [changeHead(c, p)];
  if (c.redacted) lines.push(p.dim(`      (sensitive values hidden; apply writes and rollback restores the file's own bytes)`));
  if (c.path !== null) lines.push(...diffLines(c.path, c.before, c.after, p, '      '));
  return lines;
}

function describePromise(p: PlanPromise): string {
  const what = p.what;
  const when = p.after_apply && p.at_boot ? 'after apply and at the next boot' : p.after_apply ? 'after apply; not promised at the next boot' : 'not promised';
  // An unknown's line is its finding's message (it starts "unknown:"); an operator line's is its change id.
  const by = p.withdrawn_by.map((w) =>
    w.by === 'unknown' ? `${w.resource}: ${w.line}` : w.by === 'failure' ? `apply's failure ${w.resource}: ${w.line}` : `operator line ${w.resource} ${w.line}`,
  );
  return `${what}: ${when}${by.length > 0 ? `; withdrawn by ${by.join('; ')}` : ''}`;
}

const isPending = (c: JsonChange) => c.operator === null && !c.deferred;

function resourceLines(r: JsonResource, items: MustDo[], p: Palette): string[] {
  const todo = r.changes.filter(isPending).length;
  const ops = r.changes.filter((c) => c.operator !== null).length;
  const entries = items.flatMap((m, i) => (m.kind === 'operator' && m.resources.includes(r.name) ? [i + 1] : []));
  const deferred = r.changes.filter((c) => c.deferred).length;
  const status = [
    todo ? `${todo} change${todo === 1 ? '' : 's'}` : null,
    ops ? p.warn(`${ops} for an operator (What you must do: ${entries.join(', ')})`) : null,
    deferred ? `${deferred} deferred to boot` : null,
  ].filter(Boolean);
  const out = [`${p.bold(safe(r.name))}: ${status.length ? status.join(', ') : 'in sync'}`];
  for (const n of r.notes) out.push(p.dim(`  ${safe(n)}`));
  for (const c of r.changes) if (c.operator === null) out.push(...renderChange(c, p));
  return out;
}

/** A promise; what "What you must do" lists is named by its number there rather than repeated. */
function promiseLine(pr: PlanPromise, items: MustDo[], p: Palette): string {
  const entry = pr.withdrawn_by.map((w) => entryOf(items, w));
  const rest = { ...pr, withdrawn_by: pr.withdrawn_by.filter((_, i) => entry[i] === null) };
  const named = [...new Set(entry.filter((n): n is number => n !== null))];
  const text = `${describePromise(rest)}${named.length ? `; withdrawn by What you must do: ${named.join(', ')}` : ''}`;
  return `  ${kept(pr) ? '=' : p.warn('!')} ${safe(text)}`;
}

function findingLines(findings: Finding[], p: Palette): string[] {
  if (findings.length === 0) return [];
  const out = ['', p.bold('Findings')];
  for (const f of findings) {
    // An accepted finding keeps its place and its text; its label says it was accepted, and the next line by whom and what that leaves.
    const label = f.accepted ? p.hunk('accepted') : f.level === 'info' ? 'info' : f.level === 'warning' ? p.warn('warning') : p.del('error');
    out.push(`  ${label}${f.check ? ` [${f.check}]` : ''}: ${safe(f.message)}`);
    if (f.accepted) out.push(`      ${safe(`by ${(f.accepted_by ?? []).join(', ')}; ${f.accepted_note ?? ''}`)}`);
    for (const e of f.evidence ?? []) out.push(p.dim(`      ${safe(e)}`));
  }
  return out;
}

/** One closing line naming every accepted finding and where it was accepted; null when none is. */
export function acceptedLine(findings: Finding[], p: Palette): string | null {
  const accepted = findings.filter((f) => f.accepted);
  if (accepted.length === 0) return null;
  const names = accepted.map((f) => `${f.check} (${(f.accepted_by ?? []).join(', ')})`).join(', ');
  const stops = accepted.filter((f) => f.stops).map((f) => f.check);
  return p.hunk(
    safe(
      `Accepted: ${names}; marked "accepted" above, not fixed. kubespray is not told: its kubeadm_ignore_preflight_errors is what kubeadm ignores` +
        (stops.length > 0 ? `, and without ${stops.join(', ')} there the install still stops.` : '.'),
    ),
  );
}

/** Numbered, each once: an operator line with its own fix text, an unknown with every promise it takes back. */
export function mustDoLines(items: MustDo[], p: Palette): string[] {
  if (items.length === 0) return [];
  const out = ['', p.bold('What you must do')];
  items.forEach((m, i) => {
    const n = `${i + 1}.`;
    const pad = ' '.repeat(n.length + 3);
    const about = safe(`${m.resources.length ? `${m.resources.join(', ')}: ` : ''}${m.what}`);
    if (m.kind === 'operator') {
      out.push(`  ${n} ${about}${p.warn(' [operator action required]')}`, `${pad}${safe(m.fix ?? '')}`);
      if (m.withdraws.length > 0) out.push(`${pad}withdraws: ${safe(describeWithdrawals(m.withdraws))}`);
      if (m.file) out.push(...diffLines(m.file.path, m.file.before, m.file.after, p, pad));
    } else {
      out.push(`  ${n} ${about}; withdraws ${safe(describeWithdrawals(m.withdraws))}`);
      out.push(`${pad}read it: if it can undo these at boot, remove it or make it leave them alone; then plan again`);
    }
  });
  return out;
}

/** The text plan, from the plan document alone (and the program's name as invoked, for the next command). */
export function renderPlan(plan: PlanDocument, p: Palette, detail: Detail = 'normal', program = 'reconcile'): string {
  const items = mustDo(plan);
  const out = [...planBody(plan, p, detail, items), ...mustDoLines(items, p)];
  // Quiet has no header for the first section's blank line to set it apart from.
  if (detail === 'quiet' && out[0] === '') out.shift();
  if (out.length > 0) out.push('');
  out.push(summaryLine(plan, items, p));
  const accepted = acceptedLine(plan.findings, p);
  if (accepted) out.push(accepted);
  out.push(nextStep(plan, items, program));
  if (!plan.live && detail !== 'quiet') {
    const deferred = plan.resources.some((r) => r.changes.some((c) => c.deferred));
    out.push(p.dim(`Offline: runtime steps (swapoff, modprobe, /proc/sys writes, unit stops) are skipped${deferred ? '; see the deferred lines' : ''}.`));
  }
  return out.join('\n') + '\n';
}

/** Everything above "What you must do": the header, each resource's changes, the promises and the findings (quiet: the errors alone). */
export function planBody(plan: PlanDocument, p: Palette, detail: Detail, items: MustDo[] = mustDo(plan), verb = 'plan'): string[] {
  // An unknown that takes promises back is listed once, under "What you must do", not once per resource.
  // An accepted finding is never hidden, quiet or not.
  const findings = plan.findings.filter((f) => !(f.unknown && f.withdraws) && (detail !== 'quiet' || f.level === 'error' || f.accepted));
  if (detail === 'quiet') return findingLines(findings, p);
  const out = headerLines(plan, p, detail, verb);
  for (const r of plan.resources) out.push(...resourceLines(r, items, p));
  if (plan.promises.length > 0) out.push('', p.bold('Promises'), ...plan.promises.map((pr) => promiseLine(pr, items, p)));
  return [...out, ...findingLines(findings, p)];
}

/** The run's first line; verbose, the before-state and facts; the symbols' key (only those the changes and promises show). */
export function headerLines(plan: PlanDocument, p: Palette, detail: Detail, verb = 'plan', promises = plan.promises): string[] {
  const out = [p.bold(`k8s-host-reconcile ${verb}: ${plan.live ? 'live host' : `offline image ${safe(plan.root)}`}`)];
  const facts = (plan.reports?.['facts.json'] as Record<string, unknown> | undefined) ?? null;
  if (detail === 'verbose' && plan.before_state) {
    const b = plan.before_state;
    out.push(
      p.dim(
        `  before: ${Object.entries(b)
          .map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(', ')}]` : v}`)
          .join(' ')}`,
      ),
    );
  }
  if (detail === 'verbose' && facts) {
    const f = Object.entries(facts)
      .map(([k, v]) => safe(`${k}=${v}`))
      .join(' ');
    out.push(p.dim(`  facts (as kubespray sees them): ${f}`));
  }
  const key = legend(
    plan.resources.flatMap((r) => r.changes.filter((c) => c.operator === null)),
    promises,
  );
  if (key) out.push(p.dim(key));
  out.push('');
  return out;
}

/** The plan's closing line: what is pending, what needs an operator, what could not be judged, what stops kubespray. */
function summaryLine(plan: PlanDocument, items: MustDo[], p: Palette): string {
  const findings = plan.findings;
  const all = plan.resources.flatMap((r) => r.changes);
  const pending = all.filter(isPending).length;
  const operator = all.filter((c) => c.operator !== null).length;
  const unknown = findings.filter((f) => f.unknown && !f.withdraws && !f.check).length;
  // The tool's own checks that cannot call the host ready (a former node), by name; an accepted one is told by the Accepted line.
  const checks = [...new Set(findings.filter((f) => f.unknown && !f.withdraws && f.check && !f.accepted).map((f) => f.check!))];
  // An unknown boot-time line the scan cannot judge withdraws promises: the next boot is not known to be safe. Counted by cause, as listed.
  const withdrawing = items.filter((m) => m.kind === 'unknown').length;
  const stops = findings.filter((f) => f.stops).length;
  const unknownText = [
    unknown ? `${unknown} kubespray finding${unknown === 1 ? '' : 's'} could not be judged` : null,
    checks.length ? `${checks.join(', ')} ${checks.length === 1 ? 'is' : 'are'} not known to pass` : null,
    withdrawing ? `${withdrawing} unknown${withdrawing === 1 ? '' : 's'} withdraw${withdrawing === 1 ? 's' : ''} promises for the next boot` : null,
  ]
    .filter((x): x is string => x !== null)
    .join(', ');
  if (stops > 0) {
    // --plan exits 1 for these, whatever else is pending. kubeadm's checks (src/acceptance) by name: kubespray's run stops in kubeadm's preflight.
    const asserts = findings.filter((f) => f.stops && !f.check).length;
    const kubeadm = [...new Set(findings.filter((f) => f.stops && f.check).map((f) => `${f.check!}${f.accepted ? ' (accepted here, still stops)' : ''}`))];
    const why = [
      asserts > 0 ? `${asserts} failing assert${asserts === 1 ? '' : 's'}` : null,
      kubeadm.length > 0 ? `kubeadm's preflight fails ${kubeadm.join(', ')}` : null,
    ].filter((x): x is string => x !== null);
    return (
      p.del(`Error: kubespray's preflight will stop on this host (${why.join('; ')}, the errors above).`) +
      ` Plan: ${pending} change${pending === 1 ? '' : 's'} pending` +
      (operator ? `, ${operator} need${operator === 1 ? 's' : ''} an operator` : '') +
      (unknownText ? `, ${unknownText}` : '') +
      '.'
    );
  } else if (pending === 0 && operator === 0 && unknown === 0 && withdrawing === 0 && checks.length === 0)
    return p.add('No changes. The host matches the desired state.');
  else if (pending === 0 && operator === 0) {
    // --plan exits 2 for these: say why the exit code is not 0, and where they are.
    const warned = unknown > 0 || checks.length > 0;
    const where =
      warned && withdrawing ? 'the "unknown" warnings and What you must do, above' : warned ? 'the "unknown" warnings above' : 'What you must do, above';
    return p.warn(`No changes, but ${unknownText} (${where}).`);
  } else {
    return (
      `Plan: ${pending} change${pending === 1 ? '' : 's'} pending` +
      (operator ? `, ${p.warn(`${operator} need${operator === 1 ? 's' : ''} an operator`)}` : '') +
      (unknownText ? `, ${p.warn(unknownText)}` : '') +
      '.'
    );
  }
}

/** What to do next, in one line; `program` is the name the user invoked, so the command can be pasted. */
function nextStep(plan: PlanDocument, items: MustDo[], program: string): string {
  const pending = plan.resources.flatMap((r) => r.changes).filter(isPending).length;
  const yours = items.length > 0 ? `What you must do (${items.length}) is left to you` : null;
  const unjudged = plan.findings.some((f) => f.unknown && !f.withdraws && !f.accepted);
  if (plan.findings.some((f) => f.stops)) return "Next: kubespray's preflight stops whatever apply does; resolve the errors above, then plan again.";
  if (pending > 0) {
    const run = `run \`${program} apply\` with the same options to make ${pending === 1 ? 'this change' : `these ${pending} changes`}`;
    return `Next: ${run}${yours ? `; ${yours}` : ''}.`;
  }
  if (yours) return `Next: ${yours}; then plan again.`;
  return unjudged ? 'Nothing for apply to do; the "unknown" warnings above are for you to judge.' : 'Nothing to do.';
}
