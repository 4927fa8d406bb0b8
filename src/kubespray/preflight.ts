// kubespray's memory preflight, read from the checkout and evaluated for
// this host before anyone spends an hour on the install. Every release so
// far has it in roles/kubernetes/preinstall/tasks/00x0-verify-settings.yml:
//   - name: Stop if memory is too small for control plane nodes
//     assert: { that: ansible_facts['memtotal_mb'] >= minimal_master_memory_mb }
//     when: [not ignore_assert_errors, ('kube_control_plane' in group_names)]
// (older: `ansible_memtotal_mb`, `inventory_hostname in groups['kube_control_plane']`).
// The assert is found by reading `that` with the Jinja grammar: a comparison
// with the memtotal_mb fact under any of its names, for the message. Every
// assert of the role (memory or not, whatever its form) is also evaluated as
// Ansible's assert action does: its `when` (and tags, meta, ...), then each
// `that` item in order with the host's facts and variables; the first false
// one fails the host with fail_msg (or msg, or "Assertion failed").
import type { KubesprayCheckout } from './checkout.js';
import { childNodes, evaluateCondition, evaluateExpression, parseExpression } from '../ansible/jinja.js';
import type { ExprNode } from '../ansible/jinja.js';
import { buildVarContext } from './vars.js';
import type { FactMap, HostContext, VarsReader } from './vars.js';
import { evaluateAssert, includedRoleContexts, runStatus, setFactValue, stopAfter, taskContext } from './who-fixes.js';
import type { AssertVerdict, RunStatus, StopStatus } from './who-fixes.js';

export { evaluateAssert, type AssertVerdict } from './who-fixes.js';
import { walkRole } from './tasks.js';
import type { Task, TaskRef } from './tasks.js';
import type { VarContext } from './vars.js';

export { PREINSTALL_DEFAULTS } from './checkout.js';
export const PREINSTALL_ROLE = 'kubernetes/preinstall';

export interface MemoryAssert {
  ref: TaskRef;
  /** The `that` item as written. */
  that: string;
  /** The fact as written in it: ansible_memtotal_mb, ansible_facts['memtotal_mb'], ... */
  fact: string;
  /** What it is compared with, as written when it is a variable or a number. */
  variable: string;
  /** Its value for this host; null when it cannot be evaluated (reason says why). */
  minimum: number | null;
  minimumReason?: string;
  /** The group a membership test in `when` names, for messages. */
  group: string | null;
  when: string[];
}

export interface MemoryVerdict {
  assert: MemoryAssert;
  /** Whether the assert runs on this host. */
  status: RunStatus;
  /** true/false when it runs and `that` evaluates; null otherwise. */
  passes: boolean | null;
  /** Why `that` could not be evaluated. */
  reason?: string;
}

const isSym = (n: ExprNode | undefined, name?: string): boolean => n?.typename === 'Symbol' && (name === undefined || n.value === name);
const isLit = (n: ExprNode | undefined): boolean => n?.typename === 'Literal';

/** The memtotal_mb fact under any Ansible name, through filters such as |int; the name as written, or null. */
function memFact(n: ExprNode | undefined): string | null {
  if (!n) return null;
  if (isSym(n, 'ansible_memtotal_mb')) return 'ansible_memtotal_mb';
  if (n.typename === 'LookupVal' && isSym(n.target as ExprNode, 'ansible_facts') && isLit(n.val as ExprNode) && (n.val as ExprNode).value === 'memtotal_mb') {
    return "ansible_facts['memtotal_mb']";
  }
  if (n.typename === 'Filter') return memFact(((n.args as ExprNode).children as ExprNode[])[0]);
  return null;
}

function operandText(n: ExprNode): string | null {
  if (isSym(n)) return String(n.value);
  if (isLit(n) && typeof n.value === 'number') return String(n.value);
  if (n.typename === 'Filter') {
    const inner = operandText(((n.args as ExprNode).children as ExprNode[])[0]!);
    return inner === null ? null : `${inner} | ${String((n.name as ExprNode).value)}`;
  }
  return null;
}

/** `fact >= X` (or `X <= fact`) somewhere in a `that` item. */
function findComparison(n: ExprNode | null): { fact: string; other: ExprNode } | null {
  if (!n) return null;
  if (n.typename === 'Compare') {
    const ops = n.ops as { type: string; expr: ExprNode }[];
    if (ops.length === 1) {
      const left = n.expr as ExprNode;
      const right = ops[0]!.expr;
      const op = ops[0]!.type;
      // Any order comparison, in any direction or under `not`: the message only names its parts; the verdict evaluates the item.
      if (['>=', '>', '<=', '<', 'gt', 'ge', 'lt', 'le'].includes(op)) {
        const lf = memFact(left);
        if (lf) return { fact: lf, other: right };
        const rf = memFact(right);
        if (rf) return { fact: rf, other: left };
      }
    }
  }
  for (const c of childNodes(n)) {
    const hit = findComparison(c);
    if (hit) return hit;
  }
  return null;
}

/** The group in `'g' in group_names` or `inventory_hostname in groups['g']` (any form), for messages. */
function groupOf(n: ExprNode | null): string | null {
  if (!n) return null;
  if (n.typename === 'In') {
    const l = n.left as ExprNode;
    const r = n.right as ExprNode;
    if (isLit(l) && isSym(r, 'group_names')) return String(l.value);
    if (isSym(l, 'inventory_hostname') && r.typename === 'LookupVal' && isSym(r.target as ExprNode, 'groups') && isLit(r.val as ExprNode))
      return String((r.val as ExprNode).value);
    if (isSym(l, 'inventory_hostname') && r.typename === 'FunCall') {
      const callee = r.name as ExprNode;
      const arg = ((r.args as ExprNode).children as ExprNode[])[0];
      if (callee.typename === 'LookupVal' && isSym(callee.target as ExprNode, 'groups') && isLit(arg)) return String(arg!.value);
    }
  }
  for (const c of childNodes(n)) {
    const g = groupOf(c);
    if (g) return g;
  }
  return null;
}

export interface PreflightOptions {
  facts?: FactMap;
  host?: HostContext;
  reader?: VarsReader;
}

/** One assert task of the preflight, evaluated for this host. */

export interface MemoryAudit {
  verdicts: MemoryVerdict[];
  /** Every assert task of the role, memory or not. */
  asserts: AssertVerdict[];
  /** minimal_master_memory_mb as this host will see it; null when it cannot be evaluated. */
  minimalMasterMemoryMb: { value: number; file: string; line: number } | null;
  minimalReason?: string;
  /** Files of the preinstall role read. */
  files: string[];
  /** Task files that could not be read or includes that could not be followed (an assert may be in them). */
  gaps: string[];
}

function asNumber(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^\s*\d+\s*$/.test(v)) return Number(v);
  return null;
}

/** Every memory assert of the preinstall role, evaluated for this host (facts and inventory when given). */
export async function auditMemory(ck: KubesprayCheckout, o: PreflightOptions = {}): Promise<MemoryAudit> {
  const ctx = await buildVarContext({ ck, role: PREINSTALL_ROLE, ...o });
  const scoped = includedRoleContexts({ ck, role: PREINSTALL_ROLE, ...o }, ctx);
  const role = await walkRole(ck, PREINSTALL_ROLE, (value, conditions) => {
    const st = runStatus(conditions, ctx);
    if (st.runs === 'no') return { reason: 'not included' };
    const t = ctx.template(value);
    return t.ok && typeof t.value === 'string' ? { value: t.value } : { reason: t.ok ? 'not a file name' : t.reason };
  });
  const verdicts: MemoryVerdict[] = [];
  const asserts: AssertVerdict[] = [];
  // A failing assert ends the host: the asserts after it are not reached (stopAfter).
  let stop: StopStatus | null = null;
  for (const t of role.tasks) {
    const tctx = await scoped(t);
    // set_fact before an assert changes what it reads, as the who-fixes walk does.
    if (t.module === 'set_fact') applySetFact(t, tctx, ctx);
    // A registered result is known only at run time: an assert reading it says so instead of "undefined".
    if (t.register && runStatus(t.conditions, taskVars(t, tctx)).runs !== 'no') {
      ctx.set({ name: t.register, runtime: true, file: t.ref.file, line: t.ref.line, how: `(registered by "${t.ref.name}")` });
    }
    if (t.module !== 'assert') continue;
    const judged = evaluateAssert(t, tctx, o.facts !== undefined);
    const reached: AssertVerdict = !stop
      ? judged
      : stop.runs === 'no'
        ? { ...judged, status: stop, result: 'skipped', failed: undefined, reason: `not reached: ${String(stop.because.expr)}` }
        : {
            ...judged,
            status: stop,
            result: 'unknown',
            failed: undefined,
            reason: `whether it is reached cannot be evaluated: ${String(stop.because.expr)}: ${stop.reason}`,
          };
    asserts.push(reached);
    const mctx = taskVars(t, tctx);
    const that = Array.isArray(t.args.that) ? t.args.that : [t.args.that];
    for (const cond of that) {
      const hit = findComparison(parseExpression(String(cond)));
      if (!hit) continue;
      const variable = operandText(hit.other) ?? String(cond);
      let minimum: number | null = null;
      let minimumReason: string | undefined;
      if (isLit(hit.other)) minimum = asNumber(hit.other.value);
      else if (operandText(hit.other) !== null) {
        const r = evaluateExpression(operandText(hit.other)!, mctx.resolver);
        minimum = r.ok ? asNumber(r.value) : null;
        if (!r.ok) minimumReason = r.reason;
        else if (minimum === null) minimumReason = `${variable} is ${JSON.stringify(r.value)}, not a number`;
      } else minimumReason = `the right side of ${String(cond)} is not a variable or a number`;
      const group = t.conditions.map((c) => groupOf(parseExpression(String(c.expr)))).find((g) => g !== null) ?? null;
      const a: MemoryAssert = { ref: t.ref, that: String(cond), fact: hit.fact, variable, minimum, minimumReason, group, when: t.when };
      const status = stop ?? runStatus(t.conditions, mctx);
      let passes: boolean | null = null;
      let reason: string | undefined;
      if (status.runs === 'yes') {
        if (o.facts) {
          const r = evaluateCondition(cond, mctx.resolver);
          if (r.ok) passes = r.value;
          else reason = r.reason;
        } else reason = 'no facts';
      }
      verdicts.push({ assert: a, status, passes, reason });
    }
    if (!stop && reached.result === 'fail') stop = stopAfter(t, reached, mctx);
  }
  let minimalMasterMemoryMb: MemoryAudit['minimalMasterMemoryMb'] = null;
  let minimalReason: string | undefined;
  const r = ctx.template('{{ minimal_master_memory_mb }}');
  const n = r.ok ? asNumber(r.value) : null;
  const def = r.trail[0];
  if (n !== null && def) minimalMasterMemoryMb = { value: n, file: def.file, line: def.line };
  else minimalReason = r.ok ? `minimal_master_memory_mb is ${JSON.stringify(r.value)}, not a number` : r.reason;
  const gaps = role.issues.filter((i) => i.unfollowed || i.message.includes(': ')).map((i) => `${i.ref.file}:${i.ref.line} ${i.message}`);
  for (const a of asserts) a.memory = verdicts.some((v) => v.assert.ref.file === a.ref.file && v.assert.ref.line === a.ref.line);
  return { verdicts, asserts, minimalMasterMemoryMb, minimalReason, files: role.files, gaps };
}

function taskVars(t: Task, ctx: VarContext): VarContext {
  return taskContext(ctx, t);
}

function applySetFact(t: Task, tctx: VarContext, ctx: VarContext): void {
  const c = taskVars(t, tctx);
  const st = runStatus(t.conditions, c);
  for (const [name, raw] of Object.entries(t.args)) {
    if (name === 'cacheable' || name === '_raw_params') continue;
    const r = c.template(raw);
    if (st.runs === 'yes' && r.ok) ctx.set({ name, value: setFactValue(r.value), file: t.ref.file, line: t.ref.line });
    else if (st.runs !== 'no') ctx.set({ name, runtime: true, file: t.ref.file, line: t.ref.line, how: `(set_fact "${t.ref.name}")` });
  }
}
