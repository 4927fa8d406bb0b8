// The text plan, for people: rendered from the plan document alone
// (plan-document.ts), never from the engine's own objects.
import { createTwoFilesPatch } from 'diff';
import { displayText } from '../bytes.js';
import { redactFileTexts } from '../redact.js';
import { terminalSafe } from '../untrusted-text.js';
import type { Finding } from '../findings.js';
import type { Withdrawal } from '../promises.js';
import type { PlanPromise } from './promises.js';
import type { JsonChange, PlanDocument } from './plan-document.js';

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

/** Colour only on a terminal, and never when NO_COLOR is set (no-color.org). */
export function paletteFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Palette {
  return stream.isTTY && !('NO_COLOR' in env && env.NO_COLOR !== '') ? coloured : plain;
}

/** A unified diff of two byte strings, shown as text. */
export function unifiedDiff(path: string, before: string | null, after: string | null): string {
  const shown = redactFileTexts(path, { before: before === null ? null : displayText(before), after: after === null ? null : displayText(after) });
  return textDiff(path, shown.before, shown.after);
}

function textDiff(path: string, before: string | null, after: string | null): string {
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

const SYMBOL: Record<JsonChange['action'], string> = {
  create: '+',
  update: '~',
  delete: '-',
  runtime: '>',
  stop: '-',
  disable: '-',
  mask: '-',
  operator: '!',
  deferred: '…',
};

function renderChange(c: JsonChange, p: Palette): string[] {
  const tag = c.operator !== null ? p.warn(' [operator action required]') : c.deferred ? p.dim(' [deferred to boot]') : c.runtime ? p.dim(' [runtime]') : '';
  const lines = [`  ${c.operator !== null ? p.warn('!') : SYMBOL[c.action]} ${safe(c.summary)}${tag}`];
  if (c.operator !== null) lines.push(`      reason: ${safe(c.operator)}`);
  if (c.withdraws.length > 0) lines.push(`      withdraws: ${safe(describeWithdrawals(c.withdraws))}`);
  if (c.redacted) lines.push(p.dim(`      (sensitive values hidden; apply writes and rollback restores the file's own bytes)`));
  if (c.path !== null) {
    // The document's contents are already display text (jsonChanges): diff them as they are.
    for (const raw of textDiff(c.path, c.before, c.after).trimEnd().split('\n')) {
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
      lines.push(`      ${styled}`);
    }
  }
  return lines;
}

function describeWithdrawals(ws: Withdrawal[]): string {
  return ws.map((w) => `${w.promise} (${w.from === 'apply' ? 'after apply and at boot' : 'at the next boot'})`).join(', ');
}

function describePromise(p: PlanPromise): string {
  const what =
    p.kind === 'port' ? `port ${p.subject} free` : p.kind === 'sysctl' ? `${p.subject} = ${p.expect}` : p.kind === 'swap' ? 'swap off' : `${p.subject} loaded`;
  const when = p.after_apply && p.at_boot ? 'after apply and at the next boot' : p.after_apply ? 'after apply; not promised at the next boot' : 'not promised';
  // An unknown's line is its finding's message (it starts "unknown:"); an operator line's is its change id.
  const by = p.withdrawn_by.map((w) =>
    w.by === 'unknown' ? `${w.resource}: ${w.line}` : w.by === 'failure' ? `apply's failure ${w.resource}: ${w.line}` : `operator line ${w.resource} ${w.line}`,
  );
  return `${what}: ${when}${by.length > 0 ? `; withdrawn by ${by.join('; ')}` : ''}`;
}

const isPending = (c: JsonChange) => c.operator === null && !c.deferred;

/** The text plan, from the plan document alone. */
export function renderPlan(plan: PlanDocument, p: Palette): string {
  const extras = { findings: plan.findings, facts: (plan.reports?.['facts.json'] as Record<string, unknown> | undefined) ?? null };
  const out: string[] = [];
  out.push(p.bold(`k8s-host-reconcile plan: ${plan.live ? 'live host' : `offline image ${safe(plan.root)}`}`));
  if (plan.before_state) {
    const b = plan.before_state;
    out.push(
      p.dim(`  before: swap_total_kb=${b.swap_total_kb} ip_forward=${b.ip_forward} br_netfilter=${b.br_netfilter} busy_ports=[${b.busy_ports.join(', ')}]`),
    );
  }
  if (extras.facts) {
    const f = Object.entries(extras.facts)
      .map(([k, v]) => safe(`${k}=${v}`))
      .join(' ');
    out.push(p.dim(`  facts (as kubespray sees them): ${f}`));
  }
  out.push('');
  for (const r of plan.resources) {
    const todo = r.changes.filter(isPending).length;
    const ops = r.changes.filter((c) => c.operator !== null).length;
    const deferred = r.changes.filter((c) => c.deferred).length;
    const status = [
      todo ? `${todo} change${todo === 1 ? '' : 's'}` : null,
      ops ? p.warn(`${ops} for an operator`) : null,
      deferred ? `${deferred} deferred to boot` : null,
    ].filter(Boolean);
    out.push(`${p.bold(safe(r.name))}: ${status.length ? status.join(', ') : 'in sync'}`);
    for (const n of r.notes) out.push(p.dim(`  ${safe(n)}`));
    for (const c of r.changes) out.push(...renderChange(c, p));
  }
  if (plan.promises.length > 0) {
    out.push('', p.bold('Promises'));
    for (const pr of plan.promises) {
      const kept = pr.after_apply && pr.at_boot;
      out.push(`  ${kept ? '=' : p.warn('!')} ${safe(describePromise(pr))}`);
    }
  }
  if (extras.findings?.length) {
    out.push('', p.bold('Findings'));
    for (const f of extras.findings) {
      const label = f.level === 'info' ? 'info' : f.level === 'warning' ? p.warn('warning') : p.del('error');
      out.push(`  ${label}${f.check ? ` [${f.check}]` : ''}: ${safe(f.message)}`);
      for (const e of f.evidence ?? []) out.push(p.dim(`      ${safe(e)}`));
    }
  }
  out.push('', summaryLine(plan, extras.findings ?? [], p));
  if (!plan.live) out.push(p.dim('Offline: runtime steps (swapoff, modprobe, /proc/sys writes, unit stops) are skipped; see the deferred lines.'));
  return out.join('\n') + '\n';
}

/** The plan's last line: what is pending, what needs an operator, what could not be judged, what stops kubespray. */
function summaryLine(plan: PlanDocument, findings: Finding[], p: Palette): string {
  const all = plan.resources.flatMap((r) => r.changes);
  const pending = all.filter(isPending).length;
  const operator = all.filter((c) => c.operator !== null).length;
  const unknown = findings.filter((f) => f.unknown && !f.withdraws && !f.check).length;
  // The tool's own checks that cannot call the host ready (a former node), by name.
  const checks = [...new Set(findings.filter((f) => f.unknown && !f.withdraws && f.check).map((f) => f.check!))];
  // An unknown boot-time line the scan cannot judge withdraws promises: the next boot is not known to be safe.
  const withdrawing = findings.filter((f) => f.unknown && f.withdraws).length;
  const stops = findings.filter((f) => f.stops).length;
  const unknownText = [
    unknown ? `${unknown} kubespray finding${unknown === 1 ? '' : 's'} could not be judged` : null,
    checks.length ? `${checks.join(', ')} ${checks.length === 1 ? 'is' : 'are'} not known to pass` : null,
    withdrawing ? `${withdrawing} unknown${withdrawing === 1 ? '' : 's'} withdraw${withdrawing === 1 ? 's' : ''} promises for the next boot` : null,
  ]
    .filter((x): x is string => x !== null)
    .join(', ');
  if (stops > 0) {
    // --plan exits 1 for these, whatever else is pending.
    return (
      p.del(`Error: kubespray's preflight will stop on this host (${stops} failing assert${stops === 1 ? '' : 's'}, the errors above).`) +
      ` Plan: ${pending} change${pending === 1 ? '' : 's'} pending` +
      (operator ? `, ${operator} need${operator === 1 ? 's' : ''} an operator` : '') +
      (unknownText ? `, ${unknownText}` : '') +
      '.'
    );
  } else if (pending === 0 && operator === 0 && unknown === 0 && withdrawing === 0 && checks.length === 0)
    return p.add('No changes. The host matches the desired state.');
  else if (pending === 0 && operator === 0) {
    // --plan exits 2 for these: say why the exit code is not 0.
    return p.warn(`No changes, but ${unknownText} (the "unknown" warnings above).`);
  } else {
    return (
      `Plan: ${pending} change${pending === 1 ? '' : 's'} pending` +
      (operator ? `, ${p.warn(`${operator} need${operator === 1 ? 's' : ''} an operator`)}` : '') +
      (unknownText ? `, ${p.warn(unknownText)}` : '') +
      '.'
    );
  }
}
